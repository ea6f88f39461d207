//! The library's own items, as one registry: every kind of item singletable writes besides
//! the user's entities, where it lives, and the entity attribute it carries.
//!
//! Every read path tells these items from the user's through this registry: entity reads
//! filter on the entity attribute (which no entity's name can equal: each kind's starts with
//! `_` or ends with `#latest`, and the `Entity` derive refuses a name with either), and the
//! stream sources, which may see only keys, also match the key.

use crate::item::Item;
use crate::schema::TableSchema;
use aws_sdk_dynamodb::types::AttributeValue;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// One kind of the library's own items.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct RecordKind {
    /// What the items are, for messages.
    pub(crate) description: &'static str,
    /// Where they are kept.
    pub(crate) place: Place,
    /// The entity attribute they carry.
    pub(crate) entity: EntityTag,
}

/// Where a kind's items are kept.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// In partitions of their own, whose partition key starts with this prefix.
    Partition(&'static str),
    /// Beside an entity's items, under a sort key `<entity><suffix>`.
    BesideEntity(&'static str),
}

/// The entity attribute a kind's items carry.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum EntityTag {
    /// This value.
    Exact(&'static str),
    /// The entity's name followed by this suffix.
    EntitySuffix(&'static str),
}

/// Migration records (`_MIGRATION#<entity>`: a completion record per schema version, and one
/// of the keys each version was applied with, sort key `DESIGN`).
pub(crate) const MIGRATION_MARKER: RecordKind = RecordKind {
    description: "migration record",
    place: Place::Partition("_MIGRATION#"),
    entity: EntityTag::Exact("_migration"),
};

/// Stream checkpoints (`_STREAM#<consumer>`, one item per shard).
pub(crate) const STREAM_CHECKPOINT: RecordKind = RecordKind {
    description: "stream checkpoint",
    place: Place::Partition("_STREAM#"),
    entity: EntityTag::Exact("_stream_checkpoint"),
};

/// Unique-value sentinels (`_UNIQUE#<entity>#<name>#<value>`).
pub(crate) const UNIQUE_SENTINEL: RecordKind = RecordKind {
    description: "unique-value sentinel",
    place: Place::Partition("_UNIQUE#"),
    entity: EntityTag::Exact("_unique"),
};

/// A distributed sweep's plan and segment leases (`_SWEEP#<name>`).
pub(crate) const DISTRIBUTED_SWEEP: RecordKind = RecordKind {
    description: "distributed sweep record",
    place: Place::Partition("_SWEEP#"),
    entity: EntityTag::Exact("_sweep"),
};

/// An append's latest pointer, in its entity's partition (`SK = "<entity>#LATEST"`).
pub(crate) const APPEND_POINTER: RecordKind = RecordKind {
    description: "append pointer",
    place: Place::BesideEntity("#LATEST"),
    entity: EntityTag::EntitySuffix("#latest"),
};

/// Every kind.
pub(crate) const KINDS: [&RecordKind; 5] = [
    &MIGRATION_MARKER,
    &STREAM_CHECKPOINT,
    &UNIQUE_SENTINEL,
    &DISTRIBUTED_SWEEP,
    &APPEND_POINTER,
];

impl RecordKind {
    /// The partition-key prefix of a kind kept in partitions of its own.
    pub(crate) const fn partition_prefix(&self) -> &'static str {
        match self.place {
            Place::Partition(prefix) => prefix,
            Place::BesideEntity(_) => "",
        }
    }

    /// The sort key of `entity`'s item of a kind kept beside an entity's items (for a kind
    /// kept apart, the entity's name alone).
    pub(crate) fn sort_key(&self, entity: &str) -> String {
        match self.place {
            Place::BesideEntity(suffix) => format!("{entity}{suffix}"),
            Place::Partition(_) => entity.to_owned(),
        }
    }

    /// The entity attribute of a kind kept apart, or the suffix after the entity's name of
    /// a kind kept beside an entity: what names the kind where a `&'static str` must.
    pub(crate) const fn tag(&self) -> &'static str {
        self.entity.value()
    }

    /// The entity attribute value of this kind's items (of `entity`'s, for a kind kept beside
    /// an entity).
    pub(crate) fn entity_value(&self, entity: &str) -> String {
        match self.entity {
            EntityTag::Exact(value) => value.to_owned(),
            EntityTag::EntitySuffix(suffix) => format!("{entity}{suffix}"),
        }
    }

    /// The entity attribute as the value an item stores.
    pub(crate) fn entity_attribute(&self, entity: &str) -> AttributeValue {
        AttributeValue::S(self.entity_value(entity))
    }

    /// Whether an entity attribute of `value` is this kind's.
    fn tags(&self, value: &str) -> bool {
        match self.entity {
            EntityTag::Exact(tag) => value == tag,
            EntityTag::EntitySuffix(suffix) => {
                value.len() > suffix.len() && value.ends_with(suffix)
            }
        }
    }

    /// Whether a key of this partition and sort key is this kind's.
    fn keys(&self, table: &TableSchema, partition: &str, sort: Option<&str>) -> bool {
        match self.place {
            Place::Partition(prefix) => partition.starts_with(prefix),
            // In a table without a sort key the library keeps no item beside an entity's.
            Place::BesideEntity(suffix) => {
                let entity = sort.and_then(|sort| sort.strip_suffix(suffix));
                table.sort_key.is_some() && entity.is_some_and(could_be_entity_name)
            }
        }
    }
}

/// Whether `name` could be an entity's: not empty, not starting with `_`, without `#`, as the
/// `Entity` derive requires of names (`check_name` in `macros/src/valid.rs`).
fn could_be_entity_name(name: &str) -> bool {
    !name.is_empty() && !name.starts_with('_') && !name.contains('#')
}

/// The entity attributes of every kind, as a filter that leaves the library's items out reads
/// them.
pub(crate) fn entity_tags() -> impl Iterator<Item = &'static EntityTag> {
    KINDS.into_iter().map(|kind| &kind.entity)
}

impl EntityTag {
    /// The exact value, or the suffix.
    pub(crate) const fn value(&self) -> &'static str {
        match self {
            EntityTag::Exact(value) | EntityTag::EntitySuffix(value) => value,
        }
    }
}

/// The kind whose entity attribute is `value`, if any.
pub(crate) fn kind_of_entity(value: &str) -> Option<&'static RecordKind> {
    KINDS.into_iter().find(|kind| kind.tags(value))
}

/// The kind of the item with these key attributes (only a key is needed; other attributes
/// are ignored), if it is one of the library's.
pub(crate) fn kind_of_key(table: &TableSchema, key: &Item) -> Option<&'static RecordKind> {
    let text = |name: &str| match key.get(name) {
        Some(AttributeValue::S(text)) => Some(text.as_str()),
        _ => None,
    };
    let partition = text(table.partition_key)?;
    let sort = table.sort_key.and_then(text);
    KINDS
        .into_iter()
        .find(|kind| kind.keys(table, partition, sort))
}

/// The kind of `item`, if it is one of the library's: by its entity attribute, or, for an
/// item without one (a keys-only image), by its key.
pub(crate) fn kind_of_item(table: &TableSchema, item: &Item) -> Option<&'static RecordKind> {
    match item.get(table.entity_attribute) {
        Some(AttributeValue::S(entity)) => kind_of_entity(entity),
        _ => kind_of_key(table, item),
    }
}

/// The key of one of the library's items: `PK = partition`, `SK = sort`, or
/// `PK = "<partition>#<sort>"` in a table without a sort key.
pub(crate) fn key(table: &TableSchema, partition: String, sort: String) -> Item {
    match table.sort_key {
        Some(sort_key) => Item::from([
            (table.partition_key.to_owned(), AttributeValue::S(partition)),
            (sort_key.to_owned(), AttributeValue::S(sort)),
        ]),
        None => Item::from([(
            table.partition_key.to_owned(),
            AttributeValue::S(format!("{partition}#{sort}")),
        )]),
    }
}

/// The key of an item of `kind`, kept in partitions of its own, named `name` (`_SWEEP#<name>`),
/// with sort key `sort`.
pub(crate) fn record_key(table: &TableSchema, kind: &RecordKind, name: &str, sort: String) -> Item {
    key(table, format!("{}{name}", kind.partition_prefix()), sort)
}

/// A kind of library record's attributes besides its key and entity attribute, as a serde
/// struct: written and read through serde_dynamo, as entities are.
pub(crate) trait LibraryRecord: Serialize + DeserializeOwned {
    /// The kind.
    const KIND: &'static RecordKind;
}

/// `record` as the item stored at `key`, with its kind's entity attribute.
pub(crate) fn record_item<R: LibraryRecord>(
    table: &TableSchema,
    key: Item,
    record: &R,
) -> Result<Item, crate::item::EncodeError> {
    let mut item: Item =
        serde_dynamo::to_item(record).map_err(|error| crate::item::EncodeError::Serialize {
            entity: R::KIND.description,
            message: error.to_string(),
        })?;
    item.extend(key);
    item.insert(
        table.entity_attribute.to_owned(),
        R::KIND.entity_attribute(""),
    );
    Ok(item)
}

/// The record `item` holds (its key and entity attribute are ignored); a record some other
/// writer left in another shape is a decode error naming it.
pub(crate) fn read_record<T: crate::Table, R: LibraryRecord>(
    item: Item,
) -> Result<R, crate::item::DecodeError> {
    let key = crate::item::key_text::<T>(&item);
    serde_dynamo::from_item(item).map_err(|error| crate::item::DecodeError::Attribute {
        entity: R::KIND.description,
        key,
        attribute: ".".to_owned(),
        message: error.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(sort_key: Option<&'static str>) -> TableSchema {
        TableSchema {
            type_name: "App",
            name: "app",
            partition_key: "PK",
            sort_key,
            entity_attribute: "_type",
            schema_version_attribute: "_sv",
            indexes: &[],
            ttl_attribute: None,
            stream: None,
        }
    }

    #[test]
    fn every_kind_is_recognised_by_its_entity_attribute_and_by_its_key() {
        let table = table(Some("SK"));
        for kind in KINDS {
            let entity = kind.entity_value("Ticket");
            assert_eq!(kind_of_entity(&entity), Some(kind), "{entity}");
            let key = match kind.place {
                Place::Partition(_) => record_key(&table, kind, "x", "S".into()),
                Place::BesideEntity(suffix) => {
                    key(&table, "TICKET#1".into(), format!("Ticket{suffix}"))
                }
            };
            assert_eq!(kind_of_key(&table, &key), Some(kind), "{key:?}");
            let mut item = key.clone();
            item.insert(
                table.entity_attribute.into(),
                kind.entity_attribute("Ticket"),
            );
            assert_eq!(kind_of_item(&table, &item), Some(kind), "{item:?}");
        }
    }

    #[test]
    fn entities_and_their_keys_are_no_kind() {
        let table = table(Some("SK"));
        for entity in ["Ticket", "latest", "#latest", "Sweep", "migration"] {
            assert_eq!(kind_of_entity(entity), None, "{entity}");
        }
        let ticket = key(&table, "TICKET#1".into(), "TICKET".into());
        assert_eq!(kind_of_key(&table, &ticket), None);
        // Without a sort key, a partition key ending like a pointer's sort key is an entity's.
        let table = self::table(None);
        let ticket = Item::from([("PK".into(), AttributeValue::S("T#Ticket#LATEST".into()))]);
        assert_eq!(kind_of_key(&table, &ticket), None);
    }

    /// A pointer's sort key is an entity's name and `#LATEST`, and a name holds no `#` and
    /// does not start with `_`: a key that ends the same way after more parts is an entity's
    /// item, also where only keys are seen (a keys-only stream).
    #[test]
    fn a_sort_key_ending_like_a_pointers_after_more_parts_is_no_kind() {
        let table = table(Some("SK"));
        for sort in ["STATUS#open#LATEST", "#LATEST", "v#2#LATEST", "_x#LATEST"] {
            let item = key(&table, "DOC#1".into(), sort.into());
            assert_eq!(kind_of_key(&table, &item), None, "{sort}");
        }
        let pointer = key(&table, "DOC#1".into(), "Doc#LATEST".into());
        assert_eq!(kind_of_key(&table, &pointer), Some(&APPEND_POINTER));
    }
}
