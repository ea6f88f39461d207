//! Operations: each builder can show the exact request it will send (`params`) and send it.

pub mod delete;
pub mod get;
pub mod put;
pub mod table;
pub mod update;

use crate::error::{Error, KeyText};
use crate::item::Item;

/// Maps a conditional check failure: with no current item and an implicit existence check,
/// the item was missing; otherwise a condition failed on the item that is there.
pub(crate) fn condition_failure(
    entity: &'static str,
    key: KeyText,
    current: Option<&Item>,
    requires_existing: bool,
) -> Error {
    match current {
        None if requires_existing => Error::NotFound { entity, key },
        current => Error::ConditionFailed {
            entity,
            key,
            current: current.cloned().map(Box::new),
        },
    }
}
