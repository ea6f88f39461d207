//! A stream record as every source gives it, before it is typed: the event, the keys, the
//! images and who made the change. The Lambda event and the Streams API both convert into it.

use crate::item::Item;
use crate::schema::TableSchema;
use aws_sdk_dynamodb::types::AttributeValue;

/// The partition keys of the library's own items that live in partitions of their own:
/// migration records (`_MIGRATION#<entity>`), stream checkpoints (`_STREAM#<consumer>`) and
/// unique-value sentinels (`_UNIQUE#<entity>#<field>#<value>`) and distributed sweeps
/// (`_SWEEP#<name>`).
pub(crate) const LIBRARY_PARTITIONS: [&str; 4] = ["_MIGRATION#", "_STREAM#", "_UNIQUE#", "_SWEEP#"];

/// The sort key suffix and entity attribute suffix of an append's latest pointer, which lives
/// in its entity's partition (`SK = "<entity>#LATEST"`, entity attribute `<entity>#latest`).
pub(crate) const POINTER_SORT_SUFFIX: &str = "#LATEST";
pub(crate) const POINTER_ENTITY_SUFFIX: &str = "#latest";

/// The entity attributes of the library's items that are no entity's.
pub(crate) const LIBRARY_ENTITIES: [&str; 3] = ["_migration", "_stream_checkpoint", "_unique"];

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
    /// its entity attribute; a keys-only record by the key.
    pub fn is_library_item(&self, table: &TableSchema) -> bool {
        let text = |item: &Item, name: &str| match item.get(name) {
            Some(AttributeValue::S(text)) => Some(text.clone()),
            _ => None,
        };
        if let Some(image) = self.new_image.as_ref().or(self.old_image.as_ref()) {
            return text(image, table.entity_attribute).is_some_and(|entity| {
                LIBRARY_ENTITIES.contains(&entity.as_str())
                    || entity.ends_with(POINTER_ENTITY_SUFFIX)
            });
        }
        let partition = text(&self.keys, table.partition_key).unwrap_or_default();
        let sort = table.sort_key.and_then(|name| text(&self.keys, name));
        LIBRARY_PARTITIONS
            .iter()
            .any(|prefix| partition.starts_with(prefix))
            || sort.is_some_and(|sort| sort.ends_with(POINTER_SORT_SUFFIX))
    }

    /// Whether a `userIdentity` of this type and principal is DynamoDB's time to live.
    pub fn is_ttl_identity(kind: Option<&str>, principal: Option<&str>) -> bool {
        kind == Some("Service") && principal == Some(TTL_PRINCIPAL)
    }
}
