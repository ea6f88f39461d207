//! A stream record as every source gives it, before it is typed: the event, the keys, the
//! images and who made the change. The Lambda event and the Streams API both convert into it.

use crate::item::Item;
use crate::schema::TableSchema;

/// What happened to the item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventName {
    /// A new item was written.
    Insert,
    /// An existing item changed.
    Modify,
    /// The item was deleted.
    Remove,
}

impl EventName {
    /// The event of DynamoDB's `eventName` (`INSERT`, `MODIFY`, `REMOVE`).
    pub fn parse(name: &str) -> Option<EventName> {
        match name {
            "INSERT" => Some(EventName::Insert),
            "MODIFY" => Some(EventName::Modify),
            "REMOVE" => Some(EventName::Remove),
            _ => None,
        }
    }
}

/// The principal DynamoDB names as the `userIdentity` of the deletes its time to live makes.
pub const TTL_PRINCIPAL: &str = "dynamodb.amazonaws.com";

/// One stream record, untyped.
#[derive(Debug, Clone, PartialEq)]
pub struct RawRecord {
    /// The record's unique id (`eventID`).
    pub event_id: String,
    /// What happened.
    pub event: EventName,
    /// The position of the record in its shard (`SequenceNumber`).
    pub sequence_number: String,
    /// The item's primary key attributes.
    pub keys: Item,
    /// The item after the change, when the view carries it.
    pub new_image: Option<Item>,
    /// The item before the change, when the view carries it.
    pub old_image: Option<Item>,
    /// Whether DynamoDB's time to live made the change: a `userIdentity` of type `Service` and
    /// principal `dynamodb.amazonaws.com`.
    pub by_ttl: bool,
}

impl RawRecord {
    /// Whether the record is of one of the library's own items (a migration record, a stream
    /// checkpoint, an append's latest pointer), which consumers never see. An image tells by
    /// its entity attribute, and its key only where it has none: a user's item at a key like
    /// a library record's (a sort key such as `Release#LATEST`, an append pointer's) is the
    /// user's. A keys-only record tells by the key alone, where a pointer's sort key is an
    /// entity name (no `#`, no leading `_`) and `#LATEST`.
    pub fn is_library_item(&self, table: &TableSchema) -> bool {
        match self.new_image.as_ref().or(self.old_image.as_ref()) {
            Some(image) => crate::library::kind_of_item(table, image).is_some(),
            None => crate::library::kind_of_key(table, &self.keys).is_some(),
        }
    }

    /// Whether a `userIdentity` of this type and principal is DynamoDB's time to live.
    pub fn is_ttl_identity(kind: Option<&str>, principal: Option<&str>) -> bool {
        kind == Some("Service") && principal == Some(TTL_PRINCIPAL)
    }
}
