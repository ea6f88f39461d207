//! Operations: each builder can show the exact request it will send (`params`) and send it.

pub mod append;
pub mod batch;
pub mod delete;
pub mod get;
pub mod put;
pub mod query;
pub mod rekey;
pub mod scan;
pub mod table;
pub mod transact;
pub mod update;

use crate::error::{Error, KeyText};
use crate::item::Item;

/// What a write's implicit conditions were, to explain a conditional check failure.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Expectations {
    /// The write required an existing item.
    pub requires_existing: bool,
    /// The write expected this version (attribute, version).
    pub version: Option<(&'static str, u64)>,
}

/// Maps a conditional check failure to what went wrong: a version that moved on, a missing
/// item the write required, or a condition that failed on the item that is there.
pub(crate) fn condition_failure(
    entity: &'static str,
    key: KeyText,
    current: Option<&Item>,
    expectations: Expectations,
) -> Error {
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
