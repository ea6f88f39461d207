//! Code generation: static schema data plus thin calls into `singletable-runtime`.

mod collection;
mod entity;
mod key_part;
mod markers;
mod projection;
mod queries;
mod table;
mod test;
mod tokens;
mod update_state;

pub use collection::derive_collection;
pub use entity::derive_entity;
pub use key_part::derive_key_part;
pub use projection::derive_projection;
pub use table::derive_table;
pub use test::test;
pub use tokens::private_scope;
