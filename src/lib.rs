pub use singletable_runtime::*;
