//! Runtime of [singletable](https://docs.rs/singletable): key templates, expressions,
//! operations and errors. Users depend on the `singletable` facade crate, which re-exports
//! this crate and the derives.
#![warn(missing_docs)]
// On docs.rs (nightly, `--cfg docsrs`), each feature-gated item says which feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod admin;
mod codec;
mod const_text;
pub mod cost;
mod cursor;
mod design_check;
pub mod error;
pub mod expr;
mod index_projection;
pub mod infra;
pub mod item;
pub mod key;
mod library;
#[cfg(feature = "local")]
#[cfg_attr(docsrs, doc(cfg(feature = "local")))]
pub mod local;
pub mod managed;
pub mod migrate;
pub mod op;
pub mod rate;
pub mod retry;
pub mod schema;
mod send;
pub mod stream;
#[cfg(feature = "local")]
#[cfg_attr(docsrs, doc(cfg(feature = "local")))]
pub mod testing;
mod trace;
pub mod ttl;
pub mod unique;
pub mod wire;
pub mod workbench;

pub use admin::Admin;
pub use error::{Error, OptionalExt};
pub use expr::Condition;
pub use item::Item;
pub use item::{DecodeError, EncodeError, LimitError};
pub use key::primary::Key;
pub use key::KeyText;
pub use key::{KeyError, KeyField, KeyPart, KeyTemplate};
pub use rate::Rate;
pub use retry::RetryPolicy;
pub use schema::{Entity, Table};
pub use send::{Consumed, Db};
pub use wire::Request;

/// The modules behind features, for the facade to re-export whatever this crate was built with
/// (a feature of a dependency, such as the `local` a test enables, is not the facade's own).
#[doc(hidden)]
pub mod gated {
    #[cfg(feature = "local")]
    #[cfg_attr(docsrs, doc(cfg(feature = "local")))]
    pub use crate::{local, testing};
}

#[doc(hidden)]
pub mod __private;
