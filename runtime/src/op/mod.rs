//! Operations: each builder can show the exact request it will send (`params`), with its
//! estimated cost (`explain`), and send it.
//!
//! # The verbs that send
//!
//! One family, named by what comes back:
//!
//! | verb | sends | returns |
//! |---|---|---|
//! | `send()` | one operation: a write, a get, a transaction, a batch, a table change, a sweep | its result |
//! | `send_returning_old()`, `send_returning_updated_new()` | the same write | what DynamoDB returns of the item |
//! | `page(cursor)` | one `Query` request | a [`Page`](query::Page) and the cursor after it |
//! | `full_page(size, cursor)` | as many requests as fill `size` items | a [`Page`](query::Page) |
//! | `pages()` | every page, as the stream is polled | a `Stream` of pages |
//! | `items()` | every page, as the stream is polled | a `Stream` of items |
//! | `all()` | every page, at once | a `Vec` of the items |
//! | `count()` | `Select: COUNT` over every page | the number of items |
//! | `entries(..)` | the items of index entries read earlier (a lean index) | the items |
//!
//! A stream reader's [`poll`](crate::stream::StreamReader::poll) reads one page of records and
//! [`commit`](crate::stream::StreamReader::commit) saves the position after it. Nothing sends
//! until one of these is called.

pub mod append;
pub mod batch;
pub mod delete;
pub mod get;
pub mod put;
pub mod query;
pub(crate) mod read_options;
pub mod rekey;
pub mod scan;
pub mod table;
pub mod transact;
pub mod update;

use crate::error::Error;
use crate::item::Item;
use crate::key::KeyText;

/// `value` as the `i32` DynamoDB's parameter takes, if it is within `1..=max`.
pub(crate) fn in_range(parameter: &'static str, value: u32, max: u32) -> Result<i32, Error> {
    match i32::try_from(value) {
        Ok(value) if (1..).contains(&value) && value.unsigned_abs() <= max => Ok(value),
        _ => Err(Error::OutOfRange {
            parameter,
            value: value.into(),
            min: 1,
            max: max.into(),
        }),
    }
}

/// A read's `Limit`, which DynamoDB takes between 1 and `i32::MAX`.
pub(crate) fn page_limit(limit: Option<u32>) -> Result<Option<i32>, Error> {
    limit
        .map(|items| in_range("Limit", items, i32::MAX.unsigned_abs()))
        .transpose()
}

/// The item a write replaced or deleted (`ALL_OLD`), if there was one.
fn decode_old<E: crate::Entity>(old: Option<Item>) -> Result<Option<E>, Error> {
    match old {
        Some(item) if !item.is_empty() => Ok(Some(crate::item::decode(item)?)),
        _ => Ok(None),
    }
}

/// What a write's implicit conditions were, to explain a conditional check failure.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Expectations {
    /// The write required an existing item.
    pub requires_existing: bool,
    /// The write expected this version (attribute, version).
    pub version: Option<(&'static str, u64)>,
    /// The write counts the version up, so it fails on an item at this largest version
    /// (attribute, version).
    pub version_max: Option<(&'static str, u64)>,
    /// Items expired by this rule are absent to the write, as to reads.
    pub(crate) expiry: crate::ttl::Expiry,
}

/// Maps a conditional check failure to what went wrong: a version that moved on, a missing
/// item the write required, or a condition that failed on the item that is there.
pub(crate) fn condition_failure(
    entity: &'static str,
    key: KeyText,
    current: Option<&Item>,
    expectations: Expectations,
) -> Error {
    // An expired item is absent to writes as to reads.
    let current = current.filter(|item| !expectations.expiry.has_expired(item));
    if let Some((attribute, max)) = expectations.version_max {
        let found = crate::managed::version_of(current.and_then(|item| item.get(attribute)));
        if found >= max {
            return Error::VersionOverflow {
                entity,
                key,
                version: found,
            };
        }
    }
    if let Some((attribute, expected)) = expectations.version {
        let found = crate::managed::version_of(current.and_then(|item| item.get(attribute)));
        if found != expected {
            return Error::VersionConflict {
                entity,
                key,
                expected,
                found,
                current: current.cloned().map(Box::new),
            };
        }
    }
    match current {
        None if expectations.requires_existing => Error::NotFound { entity, key },
        current => Error::ConditionFailed {
            entity,
            key,
            current: current.cloned().map(Box::new),
        },
    }
}
