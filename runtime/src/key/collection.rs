//! A key of any entity of a collection.

use super::KeyText;

/// The key of an item of a [`Collection`](crate::op::query::Collection)'s entities: which
/// entity, and the key. A stream record's key, and a mixed batch read's unprocessed key (which
/// [`BatchGet::keys`](crate::op::batch::BatchGet::keys) takes back).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectionKey {
    /// The entity.
    pub entity: &'static str,
    /// The key.
    pub key: KeyText,
}
