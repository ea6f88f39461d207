//! Runtime of [singletable](https://docs.rs/singletable): key templates, expressions,
//! operations and errors. Users depend on the `singletable` facade crate, which re-exports
//! this crate and the derives.
#![warn(missing_docs)]

mod db;
pub mod error;
pub mod expr;
pub mod item;
pub mod key;
#[cfg(feature = "local")]
pub mod local;
pub mod op;
mod primary_key;
pub mod schema;
pub mod wire;

pub use db::Db;
pub use error::{DecodeError, EncodeError, Error, KeyText, LimitError, OptionalExt};
pub use expr::Condition;
pub use key::{KeyError, KeyField, KeyPart, KeyTemplate};
pub use primary_key::Key;
pub use schema::{Entity, Table};
pub use wire::Request;

/// What generated code calls; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::key::{KeyPart, KeyTemplate, KeyField, PartContext, PartError, Segment};
    pub use crate::schema::index;
    pub use crate::schema::{
        DeclaresIndex, EntityIndex, EntitySchema, HasNoSortKey, HasSortKey, IndexHasNoSortKey,
        IndexHasSortKey, IndexKind, IndexSchema, TableSchema,
    };
    pub use crate::{Entity, Item, Key, KeyError, Table};
    pub use aws_sdk_dynamodb::types::AttributeValue;
    pub use std::option::Option::{None, Some};
    pub use std::result::Result::{self, Err, Ok};
    pub use std::string::String;
}

pub use item::Item;
