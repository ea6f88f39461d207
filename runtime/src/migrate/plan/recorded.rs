//! The keys each schema version of an entity was applied with, recorded in the table by apply
//! (`PK = "_MIGRATION#<entity>"`, `SK = "DESIGN"`, an attribute `keys_v<version>` per version): DynamoDB keeps
//! no key templates, only the items written with them, so this record is what a later plan
//! compares the declaration with. A template or shard count changed without a new schema
//! version leaves items where the new keys do not look, and no sweep finds them.

use super::super::design::{entity_rows, Spelling};
use super::{Blocker, Note, Plan, PlanAction};
use crate::error::Error;
use crate::expr::condition::Node;
use crate::expr::update::{Action, SetValue};
use crate::expr::AttrPath;
use crate::item::{DecodeError, EncodeError, Item};
use crate::key::field::FieldSchema;
use crate::key::template::Segment;
use crate::key::KeyTemplate;
use crate::library::{record_key, MIGRATION_MARKER};
use crate::schema::{EntitySchema, Table};
use crate::send::write::{Resend, Write, Written};
use crate::Db;
use aws_sdk_dynamodb::types::AttributeValue;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// An entity's keys on the table or on one index, as a schema version was applied with them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct RecordedKeys {
    /// The index, or `None` for the table's own keys.
    index: Option<String>,
    /// The partition key template, in one spelling ([`spelled`]).
    partition: String,
    /// The sort key template, if any.
    sort: Option<String>,
    /// The sparse index rule, if any.
    when: Option<String>,
}

/// Each recorded schema version's keys, of one entity.
pub(super) type Recorded = BTreeMap<u32, Vec<RecordedKeys>>;

/// The sort key of the record, beside the entity's completion records (`V#<version>`).
const DESIGN: &str = "DESIGN";

/// The start of the attribute that holds a version's keys (`keys_v2`): unlike the table's
/// key and entity attributes, whatever the table names those.
const VERSION_PREFIX: &str = "keys_v";

/// The attribute that holds a version's keys.
fn version_attribute(version: u32) -> String {
    format!("{VERSION_PREFIX}{version}")
}

/// `entity`'s keys as this code declares them.
pub(super) fn declared<T: Table>(entity: &'static EntitySchema) -> Vec<RecordedKeys> {
    let spelling = Spelling {
        template: |template: &KeyTemplate| spelled(template, entity.fields),
        by_attribute: true,
    };
    entity_rows(T::SCHEMA, entity, spelling)
        .into_iter()
        .map(|row| RecordedKeys {
            index: row.index.map(str::to_owned),
            partition: row.partition_template,
            sort: row.sort_template,
            when: row.rule.map(str::to_owned),
        })
        .collect()
}

/// A template in one spelling, whatever spaces or field names it was written with: each field
/// by its attribute and the width its integers are written at (`{team:3}`), each shard part
/// with its count (`{shard(id, 8)}`). A field whose type changes its width (`u32` to `u64`)
/// changes the keys, and so the spelling.
fn spelled(template: &KeyTemplate, fields: &[FieldSchema]) -> String {
    let field = |name: &str| fields.iter().find(|field| field.name == name);
    let mut text = String::new();
    for segment in template.segments {
        match *segment {
            Segment::Literal(literal) => text.push_str(literal),
            Segment::Field { name, width, .. } => {
                let field = field(name);
                let attribute = field.map_or(name, |field| field.attribute);
                let type_width = field
                    .and_then(|field| field.key_part.as_ref())
                    .and_then(|part| part.shape.width);
                match width.or(type_width) {
                    Some(width) => write!(text, "{{{attribute}:{width}}}"),
                    None => write!(text, "{{{attribute}}}"),
                }
                .unwrap_or_default();
            }
            Segment::Shard { name, count, .. } => {
                let attribute = field(name).map_or(name, |field| field.attribute);
                write!(text, "{{shard({attribute}, {count})}}").unwrap_or_default();
            }
        }
    }
    text
}

/// The shard count a spelled template names, if any (a recorded one is read from the table,
/// so nothing here can panic on what it holds).
fn shards(spelled: &str) -> Option<&str> {
    let (_, after) = spelled.split_once("{shard(")?;
    let (_, count) = after.split_once(", ")?;
    count.split_once(")}").map(|(count, _)| count)
}

/// What differs between the keys `recorded` and `declared`, one sentence each; empty when
/// they are the same. An index in `hinted`, which the plan creates and says to backfill, is
/// not named again as one the entity now writes.
pub(super) fn changes(
    recorded: &[RecordedKeys],
    declared: &[RecordedKeys],
    hinted: &[&str],
) -> Vec<String> {
    let place = |index: &Option<String>| match index {
        Some(index) => format!("index {index}"),
        None => "the table".to_owned(),
    };
    let mut changes = Vec::new();
    for keys in recorded {
        let Some(now) = declared.iter().find(|now| now.index == keys.index) else {
            changes.push(format!(
                "no longer written to {} (the entries of items written before stay in it)",
                place(&keys.index)
            ));
            continue;
        };
        let mut compare = |what: &str, was: Option<&str>, is: Option<&str>| {
            if was == is {
                return;
            }
            let text = |value: Option<&str>| value.map_or("none".to_owned(), |v| format!("`{v}`"));
            let mut change = format!(
                "{what} of {} was {}, now {}",
                place(&keys.index),
                text(was),
                text(is)
            );
            let (before, after) = (was.and_then(shards), is.and_then(shards));
            if before != after {
                let count = |count: Option<&str>| count.unwrap_or("no").to_owned();
                write!(change, " ({} shards, now {})", count(before), count(after))
                    .unwrap_or_default();
            }
            if keys.index.is_none() {
                // A sweep rewrites index keys in place; an item's own key is its identity.
                change.push_str(" (a sweep refuses to move items to new table keys: copy each to its new key, `Db::rekey`)");
            }
            changes.push(change);
        };
        compare(
            "the partition key",
            Some(&keys.partition),
            Some(&now.partition),
        );
        compare("the sort key", keys.sort.as_deref(), now.sort.as_deref());
        compare("the rule", keys.when.as_deref(), now.when.as_deref());
    }
    for keys in declared {
        let hinted = (keys.index.as_deref()).is_some_and(|index| hinted.contains(&index));
        if !hinted && !recorded.iter().any(|was| was.index == keys.index) {
            changes.push(format!("now written to {}", place(&keys.index)));
        }
    }
    changes
}

impl Plan {
    /// Compares `entity`'s declared keys with those the table records for its versions
    /// (`recorded`): a difference from its own version's blocks; one from the latest version
    /// below it is a note until the migration to its version is marked complete; its version
    /// not recorded yet is an action.
    pub(super) async fn compare_recorded_keys<T: Table>(
        &mut self,
        db: &Db<T>,
        entity: &'static EntitySchema,
        recorded: &Recorded,
    ) -> Result<(), Error> {
        let declared = declared::<T>(entity);
        let schema_version = entity.schema_version;
        match recorded.get(&schema_version) {
            Some(keys) => {
                let changes = changes(keys, &declared, &[]);
                if !changes.is_empty() {
                    self.blockers.push(Blocker::KeysChanged {
                        entity: entity.name,
                        schema_version,
                        changes,
                    });
                }
            }
            None => self.actions.push(PlanAction::RecordKeys {
                entity: entity.name,
                schema_version,
            }),
        }
        if let Some((&recorded_version, keys)) = recorded.range(..schema_version).next_back() {
            let hinted: Vec<&str> = (self.backfills.iter())
                .filter(|hint| hint.entity == entity.name)
                .flat_map(|hint| hint.indexes.iter().copied())
                .collect();
            let changes = changes(keys, &declared, &hinted);
            if !changes.is_empty() && !db.admin().migration_marker(entity).is_complete().await? {
                self.notes.push(Note::KeysChanged {
                    entity: entity.name,
                    recorded_version,
                    schema_version,
                    changes,
                });
            }
        }
        Ok(())
    }
}

fn key<T: Table>(entity: &str) -> Item {
    record_key(T::SCHEMA, &MIGRATION_MARKER, entity, DESIGN.to_owned())
}

/// Every version of `entity`'s keys the table records (a strongly consistent read).
pub(super) async fn read<T: Table>(db: &Db<T>, entity: &str) -> Result<Recorded, Error> {
    match db
        .raw_get(MIGRATION_MARKER.description, key::<T>(entity), true)
        .await?
    {
        Some(item) => Ok(versions::<T>(item)?),
        None => Ok(Recorded::new()),
    }
}

/// The versions an item of the record holds (its other attributes ignored).
fn versions<T: Table>(item: Item) -> Result<Recorded, DecodeError> {
    let key = crate::item::key_text::<T>(&item);
    let mut recorded = Recorded::new();
    for (attribute, value) in item {
        let version = attribute.strip_prefix(VERSION_PREFIX);
        let Some(version) = version.and_then(|version| version.parse::<u32>().ok()) else {
            continue;
        };
        let keys =
            serde_dynamo::from_attribute_value(value).map_err(|error| DecodeError::Attribute {
                entity: MIGRATION_MARKER.description,
                key: key.clone(),
                attribute: attribute.clone(),
                message: error.to_string(),
            })?;
        recorded.insert(version, keys);
    }
    Ok(recorded)
}

/// Records `entity`'s declared keys under its schema version, unless a version of that
/// number is recorded already: then what stops it, when the keys recorded differ from these
/// (another deployment applied the same version with other keys since the plan read them).
pub(in crate::migrate) async fn record<T: Table>(
    db: &Db<T>,
    entity: &'static EntitySchema,
) -> Result<Option<Blocker>, Error> {
    let declared = declared::<T>(entity);
    let attribute = version_attribute(entity.schema_version);
    let keys =
        serde_dynamo::to_attribute_value(&declared).map_err(|error| EncodeError::Serialize {
            entity: MIGRATION_MARKER.description,
            message: error.to_string(),
        })?;
    let set = |name: String, value: AttributeValue| {
        Action::Set(AttrPath::attribute(name), SetValue::Value(value))
    };
    let actions = vec![
        set(attribute.clone(), keys),
        // The key names the entity; the entity attribute, the kind of record.
        set(
            T::SCHEMA.entity_attribute.to_owned(),
            MIGRATION_MARKER.entity_attribute(""),
        ),
    ];
    let write = Write::update(MIGRATION_MARKER.description, key::<T>(entity.name), actions)
        .condition(&Node::NotExists(AttrPath::attribute(attribute)))
        .resend(Resend::Guarded);
    match db.write(write).await? {
        Written::Applied { .. } | Written::ConditionFailed { current: None, .. } => Ok(None),
        Written::ConditionFailed {
            current: Some(item),
            ..
        } => {
            let recorded = versions::<T>(item)?.remove(&entity.schema_version);
            let changes = changes(&recorded.unwrap_or_default(), &declared, &[]);
            Ok((!changes.is_empty()).then_some(Blocker::KeysChanged {
                entity: entity.name,
                schema_version: entity.schema_version,
                changes,
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(index: Option<&str>, partition: &str, when: Option<&str>) -> RecordedKeys {
        RecordedKeys {
            index: index.map(str::to_owned),
            partition: partition.to_owned(),
            sort: Some("TASK#{id:3}".to_owned()),
            when: when.map(str::to_owned),
        }
    }

    #[test]
    fn the_same_keys_are_no_change() {
        let table = [keys(None, "TEAM#{team:3}", None)];
        assert!(changes(&table, &table, &[]).is_empty());
    }

    #[test]
    fn a_shard_count_a_rule_and_indexes_come_and_gone_are_each_a_change() {
        let recorded = [
            keys(None, "TEAM#{team:3}", None),
            keys(
                Some("gsi1"),
                "OPEN#{team:3}#{shard(id, 4)}",
                Some("Task::is_open(open)"),
            ),
            keys(Some("gsi2"), "OWNER#{owner:3}", None),
        ];
        let declared = [
            keys(None, "TEAM#{team:3}", None),
            keys(Some("gsi1"), "OPEN#{team:3}#{shard(id, 8)}", None),
            keys(Some("gsi4"), "TEAMOWNER#{team:3}", None),
        ];
        assert_eq!(
            changes(&recorded, &declared, &[]),
            [
                "the partition key of index gsi1 was `OPEN#{team:3}#{shard(id, 4)}`, now \
                 `OPEN#{team:3}#{shard(id, 8)}` (4 shards, now 8)",
                "the rule of index gsi1 was `Task::is_open(open)`, now none",
                "no longer written to index gsi2 (the entries of items written before stay in it)",
                "now written to index gsi4",
            ]
        );
        // An index the plan creates and says to backfill is not named twice.
        assert_eq!(changes(&recorded, &declared, &["gsi4"]).len(), 3);
    }

    /// The plan tests' table.
    struct App;

    impl Table for App {
        const SCHEMA: &'static crate::schema::TableSchema = &super::super::tests::SCHEMA;
        type Stream = crate::schema::NoStream;
    }

    #[test]
    fn a_record_is_read_by_version_and_a_malformed_one_is_a_typed_error(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let declared = vec![keys(None, "TEAM#{team:3}", None)];
        let mut item = key::<App>("Task");
        let stored = serde_dynamo::to_attribute_value(&declared)?;
        item.insert(version_attribute(2), stored);
        item.insert("_type".into(), AttributeValue::S("_migration".into()));
        let recorded = versions::<App>(item.clone())?;
        assert_eq!(recorded, Recorded::from([(2, declared)]));
        item.insert(version_attribute(3), AttributeValue::S("not keys".into()));
        let Err(error) = versions::<App>(item) else {
            return Err("a version that holds no keys was read".into());
        };
        assert!(
            matches!(&error, DecodeError::Attribute { attribute, .. } if attribute == "keys_v3"),
            "{error:?}"
        );
        Ok(())
    }

    #[test]
    fn a_shard_part_added_says_so() {
        let recorded = [keys(Some("gsi1"), "OPEN#{team:3}", None)];
        let declared = [keys(Some("gsi1"), "OPEN#{team:3}#{shard(id, 4)}", None)];
        let changes = changes(&recorded, &declared, &[]);
        let added = changes
            .first()
            .is_some_and(|change| change.ends_with("(no shards, now 4)"));
        assert!(added, "{changes:?}");
    }
}
