//! Expression building: every attribute name and value goes through a placeholder.
//!
//! Names become `#n0`, `#n1`, … and values `:v0`, `:v1`, … in the order they are first used,
//! so the same request always renders to the same text and nothing a user supplies is ever
//! spliced into expression text.

// The expression trees and their placeholders are this crate's; generated code, the
// property tests and the benches reach them through `__private`.
pub(crate) mod as_read;
pub(crate) mod condition;
pub(crate) mod field;
#[doc(hidden)]
pub mod field_role;
pub(crate) mod path;
pub(crate) mod placeholders;
pub(crate) mod sets;
pub(crate) mod shape;
#[doc(hidden)]
pub mod state;
pub(crate) mod update;

pub use condition::{AttributeType, Comparison, Condition};
pub use field::{Field, Nested, MAX_IN_OPERANDS};
// The rules compile errors name: public, so that an error names them by a path a user can
// read, but undocumented.
#[doc(hidden)]
pub use field::{
    Addable, Container, FieldPath, GuardPath, IntoField, ListType, MapType, NoTypedPath, Optional,
    Searchable, SetType, ValueFor,
};
pub(crate) use path::AttrPath;
pub(crate) use placeholders::{check_expression, render, Expression, Name, Placeholders, Sink};
pub use placeholders::{MAX_EXPRESSION_BYTES, MAX_SUBSTITUTION_BYTES};
