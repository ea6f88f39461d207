//! Keys: how an entity's fields become the text of a key attribute, and back.
//!
//! This folder holds every key concept: the template and its segments, how each type is
//! written into a key ([`KeyPart`]) and the contract an implementation keeps
//! ([`check_key_part`]), why a key could not be rendered ([`KeyError`]), whether two templates
//! can render the same key ([`may_overlap`]), and, inside the crate, that check applied to the
//! entities of a table, the attributes no field may be stored as, the rendered primary key of
//! an item ([`Key`](crate::Key)) and a key as text for messages ([`KeyText`]).
//!
//! A template such as `"STATUS#{status}#TICKET#{id}"` is parsed by the derive at compile time
//! into a static [`KeyTemplate`]; at run time [`KeyTemplate::render`] writes each field with its
//! [`KeyPart`] encoding and [`KeyTemplate::split`] splits a stored key back into the raw text of
//! each field. Rendering refuses any value that would make the key ambiguous, so every key that
//! can be written can also be read back exactly: a string part may not contain a separator of
//! its template (a character of its constant text that is not a letter or digit), so that no
//! value renders the key of another value or of another entity's template.

mod collection;
mod contract;
mod error;
pub(crate) mod field;
mod overlap;
pub(crate) mod part;
pub(crate) mod primary;
pub(crate) mod shape;
pub(crate) mod shard;
pub(crate) mod template;
pub(crate) mod text;

pub use collection::CollectionKey;
pub use contract::{check_key_part, check_prefix_free, KeyPartViolation};
pub use error::{EntityKeys, KeyError, Overlap, OverlappingKey, PartError};
pub use overlap::may_overlap;
pub(crate) use overlap::{renderings_may_overlap, Rendering};
pub(crate) use part::AnyValue;
pub(crate) use part::HIGHEST_CHARACTER;
pub use part::{KeyField, KeyPart, PartContext, PrefixFree};
pub use shard::MAX_SHARDS;
pub use template::KeyTemplate;
pub(crate) use template::Segment;
pub use text::KeyText;
