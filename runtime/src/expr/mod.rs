//! Expression building: every attribute name and value goes through a placeholder.
//!
//! Names become `#n0`, `#n1`, … and values `:v0`, `:v1`, … in the order they are first used,
//! so the same request always renders to the same text and nothing a user supplies is ever
//! spliced into expression text.

pub mod condition;
pub mod field;
#[doc(hidden)]
pub mod field_role;
pub mod path;
mod placeholders;
pub(crate) mod sets;
pub(crate) mod shape;
#[doc(hidden)]
pub mod state;
pub mod update;

pub use condition::{AttributeType, Comparison, Condition};
pub use field::Field;
#[doc(hidden)]
pub use field::NoTypedPath;
pub use path::AttrPath;
pub(crate) use placeholders::{check_expression, render, Expression, Name, Sink};
pub use placeholders::{Names, Placeholders, Values, MAX_EXPRESSION_BYTES};
