//! Comparing the declared table with the live one (`DescribeTable`): what to create, what is
//! there but no longer declared, and what cannot be changed online.

use super::apply::{ApplyEvent, ApplyOptions};
use crate::error::Error;
use crate::op::table::{CreateTable, Protection};
use crate::schema::{EntitySchema, IndexKind, IndexSchema, ScalarType, Table, TableSchema};
use crate::stream::StreamViewType;
use crate::Admin;
use crate::Db;
use aws_sdk_dynamodb::types::{
    BillingMode, GlobalSecondaryIndexDescription, KeySchemaElement, KeyType,
    LocalSecondaryIndexDescription, TableDescription,
};
use serde::{Serialize, Serializer};
use std::fmt;
use std::time::Duration;

mod display;
mod live;
mod recorded;
mod settings;
#[cfg(test)]
mod tests;

use live::declared_keys;
pub use live::{LiveIndex, LiveTable};
pub(super) use recorded::record as record_keys;

/// One change that [`TableMigration::send`] makes; serialized as
/// `{"action": "create_index", ..}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum PlanAction {
    /// The table does not exist: create it with every declared index (`CreateTable`).
    CreateTable {
        /// The global indexes it gets.
        global_indexes: Vec<&'static str>,
        /// The local indexes it gets.
        local_indexes: Vec<&'static str>,
    },
    /// Add a global index (`UpdateTable`, one index per call), then wait until it is active.
    CreateIndex(IndexChange),
    /// The index exists but is not active yet (an earlier apply stopped waiting): wait.
    AwaitIndex {
        /// The index.
        index: &'static str,
        /// Its status now.
        status: String,
    },
    /// Delete a global index the code no longer declares (only with `delete_unused`).
    DeleteIndex {
        /// The index.
        index: String,
    },
    /// Turn on time to live for the declared attribute (`UpdateTimeToLive`).
    EnableTtl {
        /// The TTL attribute.
        attribute: &'static str,
    },
    /// Turn on the declared stream (`UpdateTable` with a `StreamSpecification`).
    EnableStream {
        /// The view.
        view: StreamViewType,
    },
    /// Record the entity's keys at its schema version in the table (an item beside its
    /// migration records, `_MIGRATION#<entity>`), which later plans compare the declaration
    /// with: DynamoDB keeps no key templates, only items written with them.
    RecordKeys {
        /// The entity.
        entity: &'static str,
        /// Its schema version.
        schema_version: u32,
    },
}

impl PlanAction {
    /// Whether the action changes the table itself (not one of the library's records in it).
    pub(super) fn changes_table(&self) -> bool {
        !matches!(self, PlanAction::RecordKeys { .. })
    }
}

/// A global index to add.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IndexChange {
    /// The declared index (serialized as its name and key attributes).
    #[serde(flatten, serialize_with = "index_keys")]
    pub index: &'static IndexSchema,
    /// Key attributes the table has no definition for yet, with their declared types (added
    /// in the same call).
    #[serde(serialize_with = "attribute_definitions")]
    pub new_attribute_definitions: Vec<(&'static str, ScalarType)>,
    /// The given entities that write keys for it, with their schema versions.
    #[serde(serialize_with = "entity_versions")]
    pub written_by: Vec<(&'static str, u32)>,
}

// The index change's fields as named JSON, where the Rust fields are a schema reference and
// tuples.

fn index_keys<S: Serializer>(index: &&IndexSchema, serializer: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Keys {
        index: &'static str,
        partition_key: &'static str,
        sort_key: Option<&'static str>,
    }
    Keys {
        index: index.name,
        partition_key: index.partition_key,
        sort_key: index.sort_key,
    }
    .serialize(serializer)
}

fn attribute_definitions<S: Serializer>(
    definitions: &[(&'static str, ScalarType)],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Definition {
        name: &'static str,
        #[serde(rename = "type")]
        kind: &'static str,
    }
    serializer.collect_seq(definitions.iter().map(|&(name, kind)| Definition {
        name,
        kind: kind.code(),
    }))
}

fn entity_versions<S: Serializer>(
    entities: &[(&'static str, u32)],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Writer {
        entity: &'static str,
        schema_version: u32,
    }
    serializer.collect_seq(entities.iter().map(|&(entity, schema_version)| Writer {
        entity,
        schema_version,
    }))
}

/// Something that differs and is left alone; serialized as `{"note": "unused_index", ..}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "note", rename_all = "snake_case")]
pub enum Note {
    /// A global index on the live table that the code does not declare; deleted only when
    /// asked (`delete_unused`), since another deployment may still query it.
    UnusedIndex {
        /// The index.
        index: String,
        /// Whether this plan deletes it.
        deleted: bool,
    },
    /// A local index the code does not declare; local indexes cannot be deleted.
    UnusedLocalIndex {
        /// The index.
        index: String,
    },
    /// A declared index none of the given entities writes keys for.
    IndexNotWritten {
        /// The index.
        index: &'static str,
    },
    /// Time to live is on for an attribute the code does not declare; left on.
    UndeclaredTtl {
        /// The live TTL attribute.
        attribute: String,
    },
    /// The table has a stream the code does not declare; left on, since consumers may read it.
    UndeclaredStream {
        /// The live view.
        view: String,
    },
    /// The entity's keys differ from those an earlier schema version was applied with: the
    /// items that version wrote are behind until a sweep to this version rewrites them, and a
    /// query of the new keys does not find them. Shown until the migration to this version is
    /// marked complete ([`MigrationMarker`](crate::migrate::MigrationMarker)).
    KeysChanged {
        /// The entity.
        entity: &'static str,
        /// The version whose keys differ (the latest recorded below this one).
        recorded_version: u32,
        /// This code's version.
        schema_version: u32,
        /// What differs, one sentence each.
        changes: Vec<String>,
    },
    /// A setting of the table's infrastructure code that the live table lacks (deletion
    /// protection, point-in-time recovery, encryption with KMS, throughput): the
    /// infrastructure code sets it (`CreateTable::cloudformation`, `terraform`, the CLI's
    /// `infra`), not apply.
    Setting {
        /// `deletion_protection`, `point_in_time_recovery`, `encryption`,
        /// `on_demand_maximum` or `warm_throughput`.
        setting: &'static str,
        /// What the infrastructure code says.
        expected: String,
        /// What the live table has.
        found: String,
    },
}

/// A difference no `UpdateTable` can fix; [`TableMigration::send`] refuses to start.
///
/// Serialized as its text, which says what to do, as [`MigrationError::Blocked`](super::MigrationError::Blocked) does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(into = "String")]
pub enum Blocker {
    /// The table's primary key differs from the declaration (a new table is needed).
    KeySchema {
        /// Declared, as text.
        expected: String,
        /// Live, as text.
        found: String,
    },
    /// A declared local index is missing: local indexes can only be created with the table.
    LocalIndexMissing {
        /// The index.
        index: &'static str,
    },
    /// An index with the declared name has other keys (declare it under a new name, or
    /// delete it first).
    IndexKeys {
        /// The index.
        index: &'static str,
        /// Declared, as text.
        expected: String,
        /// Live, as text.
        found: String,
    },
    /// A key attribute already defined with another type than the declaration's.
    AttributeType {
        /// The attribute.
        attribute: &'static str,
        /// The declared type (`S`, `N`, `B`).
        expected: &'static str,
        /// Its live type.
        found: String,
    },
    /// A declared index is being deleted; apply again once it is gone.
    IndexDeleting {
        /// The index.
        index: &'static str,
    },
    /// Time to live is on for another attribute: DynamoDB must turn it off first, and allows
    /// one change of it per hour.
    TtlAttribute {
        /// The declared attribute.
        expected: &'static str,
        /// The live one, and its status.
        found: String,
    },
    /// An index with the declared name projects other attributes: DynamoDB cannot change an
    /// index's projection, so the new one needs a new index.
    IndexProjection {
        /// The index.
        index: &'static str,
        /// Declared (`KEYS_ONLY`, `INCLUDE [a, b]`, `ALL`).
        expected: String,
        /// Live.
        found: String,
    },
    /// The entity's keys differ from those its schema version was applied with: items
    /// written before are where the new keys do not look, and a sweep of this version passes
    /// them by as current. A new schema version is needed.
    KeysChanged {
        /// The entity.
        entity: &'static str,
        /// Its schema version.
        schema_version: u32,
        /// What differs, one sentence each.
        changes: Vec<String>,
    },
    /// The stream has another view: changing it means turning the stream off, which ends it
    /// for its consumers, and on again, which starts a new stream with a new ARN.
    StreamView {
        /// The declared view.
        expected: StreamViewType,
        /// The live one.
        found: String,
    },
}

impl fmt::Display for Blocker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Blocker::KeySchema { expected, found } => write!(
                f,
                "the table's key is {found}, the declaration's is {expected}: a different key \
                 needs a new table and a copy"
            ),
            Blocker::IndexProjection {
                index,
                expected,
                found,
            } => write!(
                f,
                "index {index} projects {found}, the declaration says {expected}: DynamoDB cannot \
                 change an index's projection; declare it under a new index name (the plan \
                 creates it and backfills it), move reads to it, then drop the old one"
            ),
            Blocker::LocalIndexMissing { index } => write!(
                f,
                "local index {index} is missing: local indexes can only be created with the \
                 table; declare a global index instead"
            ),
            Blocker::IndexKeys {
                index,
                expected,
                found,
            } => write!(
                f,
                "index {index} has keys {found}, the declaration says {expected}: declare the \
                 new keys under a new index name"
            ),
            Blocker::AttributeType {
                attribute,
                expected,
                found,
            } => write!(
                f,
                "attribute {attribute} is defined as type {found}, the declaration says {expected}"
            ),
            Blocker::IndexDeleting { index } => {
                write!(
                    f,
                    "index {index} is being deleted; apply again once it is gone"
                )
            }
            Blocker::TtlAttribute { expected, found } => write!(
                f,
                "time to live reads {found}, the declaration says {expected}: turn it off \
                 first (DynamoDB allows one change per hour), then apply"
            ),
            Blocker::KeysChanged {
                entity,
                schema_version,
                changes,
            } => write!(
                f,
                "{entity}'s keys differ from those schema version {schema_version} was applied \
                 with: {}. Items written before keep the old keys, where reads of the new ones \
                 do not look: declare schema_version = {} and sweep {entity}",
                changes.join("; "),
                schema_version + 1,
            ),
            Blocker::StreamView { expected, found } => write!(
                f,
                "the stream's view is {found}, the declaration says {expected}: turn the stream \
                 off and apply, once its consumers can move to the new stream"
            ),
        }
    }
}

impl From<Blocker> for String {
    fn from(blocker: Blocker) -> String {
        blocker.to_string()
    }
}

/// Entities whose existing items lack the keys of an index this plan creates: they need a
/// backfill once it is active.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BackfillHint {
    /// The entity.
    pub entity: &'static str,
    /// Its current schema version (items below it get backfilled).
    pub schema_version: u32,
    /// The new indexes it writes keys for.
    pub indexes: Vec<&'static str>,
}

/// What it takes to bring the live table to the declaration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// The table name.
    pub table: String,
    /// The live table (`None`: it does not exist). Not serialized: the plan says what to do,
    /// and this is what `DescribeTable` said.
    #[serde(skip)]
    pub live: Option<LiveTable>,
    /// The changes, in the order apply makes them.
    pub actions: Vec<PlanAction>,
    /// Declared indexes already there and active (`up_to_date_indexes` when serialized).
    #[serde(rename = "up_to_date_indexes")]
    pub up_to_date: Vec<&'static str>,
    /// Differences left alone.
    pub notes: Vec<Note>,
    /// Differences that stop apply.
    pub blockers: Vec<Blocker>,
    /// Entities that need a backfill after apply.
    pub backfills: Vec<BackfillHint>,
}

fn keys_text(partition_key: Option<&str>, sort_key: Option<&str>) -> String {
    match sort_key {
        Some(sort_key) => format!(
            "({} HASH, {sort_key} RANGE)",
            partition_key.unwrap_or("<none>")
        ),
        None => format!("({} HASH)", partition_key.unwrap_or("<none>")),
    }
}

/// Whether an entity writes keys for the index.
fn writes(entity: &EntitySchema, index: &IndexSchema) -> bool {
    entity
        .indexes
        .iter()
        .any(|entity_index| entity_index.index.name == index.name)
}

impl Plan {
    /// Compares the declaration (`schema`, and the `entities` that live in the table) with the
    /// live table; `delete_unused` turns undeclared global indexes into deletions.
    pub fn compare(
        table_name: &str,
        schema: &'static TableSchema,
        entities: &[&'static EntitySchema],
        live: Option<LiveTable>,
        delete_unused: bool,
    ) -> Plan {
        let mut plan = Plan {
            table: table_name.to_owned(),
            live: None,
            actions: Vec::new(),
            up_to_date: Vec::new(),
            notes: Vec::new(),
            blockers: Vec::new(),
            backfills: Vec::new(),
        };
        for index in schema.indexes {
            if !entities.is_empty() && !entities.iter().any(|entity| writes(entity, index)) {
                plan.notes.push(Note::IndexNotWritten { index: index.name });
            }
        }
        let Some(live) = live else {
            let names = |kind: IndexKind| {
                schema
                    .indexes
                    .iter()
                    .filter(|index| index.kind == kind)
                    .map(|index| index.name)
                    .collect()
            };
            plan.actions.push(PlanAction::CreateTable {
                global_indexes: names(IndexKind::Global),
                local_indexes: names(IndexKind::Local),
            });
            return plan;
        };
        let expected = keys_text(Some(schema.partition_key), schema.sort_key);
        let found = keys_text(live.partition_key.as_deref(), live.sort_key.as_deref());
        if expected != found {
            plan.blockers.push(Blocker::KeySchema { expected, found });
        }
        plan.compare_ttl(schema, &live);
        plan.compare_stream(schema, &live);
        let mut created: Vec<&'static str> = Vec::new();
        for index in schema.indexes {
            let (partition, sort) = declared_keys(index);
            let expected = keys_text(Some(&partition), sort.as_deref());
            let existing = match index.kind {
                IndexKind::Global => live.global_index(index.name),
                IndexKind::Local => live.local_indexes.iter().find(|l| l.name == index.name),
            };
            let Some(existing) = existing else {
                match index.kind {
                    IndexKind::Local => plan
                        .blockers
                        .push(Blocker::LocalIndexMissing { index: index.name }),
                    IndexKind::Global => {
                        let mut new_attribute_definitions = Vec::new();
                        let keys = index.key_attributes().map(|key| (key.name, key.kind));
                        for (attribute, kind) in keys {
                            match live.attribute_type(attribute) {
                                None => new_attribute_definitions.push((attribute, kind)),
                                Some(code) if code == kind.code() => {}
                                Some(other) => plan.blockers.push(Blocker::AttributeType {
                                    attribute,
                                    expected: kind.code(),
                                    found: other.to_owned(),
                                }),
                            }
                        }
                        plan.actions.push(PlanAction::CreateIndex(IndexChange {
                            index,
                            new_attribute_definitions,
                            written_by: entities
                                .iter()
                                .filter(|entity| writes(entity, index))
                                .map(|entity| (entity.name, entity.schema_version))
                                .collect(),
                        }));
                        created.push(index.name);
                    }
                }
                continue;
            };
            let found = keys_text(
                existing.partition_key.as_deref(),
                existing.sort_key.as_deref(),
            );
            if found != expected {
                plan.blockers.push(Blocker::IndexKeys {
                    index: index.name,
                    expected,
                    found,
                });
                continue;
            }
            let projection = index.projection.to_string();
            if existing.projection.as_deref() != Some(projection.as_str()) {
                plan.blockers.push(Blocker::IndexProjection {
                    index: index.name,
                    expected: projection,
                    found: existing
                        .projection
                        .clone()
                        .unwrap_or_else(|| "nothing".to_owned()),
                });
                continue;
            }
            match existing.status.as_deref() {
                Some("DELETING") => plan
                    .blockers
                    .push(Blocker::IndexDeleting { index: index.name }),
                _ if existing.is_active() => plan.up_to_date.push(index.name),
                status => {
                    let mut status = status.unwrap_or("UNKNOWN").to_owned();
                    if existing.backfilling {
                        status.push_str(" (backfilling)");
                    }
                    plan.actions.push(PlanAction::AwaitIndex {
                        index: index.name,
                        status,
                    });
                    created.push(index.name);
                }
            }
        }
        let declared = |name: &str| schema.indexes.iter().any(|index| index.name == name);
        for index in &live.global_indexes {
            if declared(&index.name) {
                continue;
            }
            plan.notes.push(Note::UnusedIndex {
                index: index.name.clone(),
                deleted: delete_unused,
            });
            if delete_unused && index.status.as_deref() != Some("DELETING") {
                plan.actions.push(PlanAction::DeleteIndex {
                    index: index.name.clone(),
                });
            }
        }
        for index in &live.local_indexes {
            if !declared(&index.name) {
                plan.notes.push(Note::UnusedLocalIndex {
                    index: index.name.clone(),
                });
            }
        }
        for entity in entities {
            let indexes: Vec<&'static str> = entity
                .indexes
                .iter()
                .map(|entity_index| entity_index.index.name)
                .filter(|name| created.contains(name))
                .collect();
            if !indexes.is_empty() {
                plan.backfills.push(BackfillHint {
                    entity: entity.name,
                    schema_version: entity.schema_version,
                    indexes,
                });
            }
        }
        plan.live = Some(live);
        plan
    }

    fn compare_ttl(&mut self, schema: &TableSchema, live: &LiveTable) {
        let enabled = live
            .ttl
            .as_ref()
            .filter(|(_, status)| status == "ENABLED" || status == "ENABLING");
        match (schema.ttl_attribute, enabled) {
            (Some(expected), None) => self.actions.push(PlanAction::EnableTtl {
                attribute: expected,
            }),
            (Some(expected), Some((found, status))) if found != expected => {
                self.blockers.push(Blocker::TtlAttribute {
                    expected,
                    found: format!("{found} ({status})"),
                })
            }
            (None, Some((found, _))) => self.notes.push(Note::UndeclaredTtl {
                attribute: found.clone(),
            }),
            _ => {}
        }
    }

    fn compare_stream(&mut self, schema: &TableSchema, live: &LiveTable) {
        match (schema.stream, &live.stream) {
            (Some(view), None) => self.actions.push(PlanAction::EnableStream { view }),
            (Some(expected), Some(found)) if found != expected.as_str() => {
                self.blockers.push(Blocker::StreamView {
                    expected,
                    found: found.clone(),
                })
            }
            (None, Some(found)) => self.notes.push(Note::UndeclaredStream {
                view: found.clone(),
            }),
            _ => {}
        }
    }

    /// Whether the live table already matches (nothing to do, nothing blocking).
    pub fn is_up_to_date(&self) -> bool {
        self.actions.is_empty() && self.blockers.is_empty()
    }

    /// Whether something stops apply.
    pub fn is_blocked(&self) -> bool {
        !self.blockers.is_empty()
    }
}

/// Plans and applies the changes that bring the live table to the declaration; see
/// [`Admin::table_migration`](crate::Admin::table_migration).
#[must_use = "a table migration does nothing until `plan` or `apply` is awaited"]
pub struct TableMigration<'db, T> {
    pub(super) db: &'db Db<T>,
    pub(super) entities: Vec<&'static EntitySchema>,
    pub(super) options: ApplyOptions,
    pub(super) progress: Option<ApplyProgress<'db>>,
    /// The infrastructure code's settings the live table is compared with.
    pub(super) settings: Protection,
}

/// The progress callback of [`TableMigration::send`].
pub(super) type ApplyProgress<'db> = Box<dyn FnMut(&ApplyEvent<'_>) + Send + 'db>;

impl<'db, T: Table> Admin<'db, T> {
    /// Compares this table's declaration (and the `entities` stored in it, e.g.
    /// `&[Document::SCHEMA, Comment::SCHEMA]`, which say which indexes are written and which
    /// entities need a backfill) with the live table.
    pub fn table_migration(&self, entities: &[&'static EntitySchema]) -> TableMigration<'db, T> {
        TableMigration {
            db: self.db,
            entities: entities.to_vec(),
            options: ApplyOptions::default(),
            progress: None,
            settings: Protection::default(),
        }
    }
}

impl<'db, T: Table> TableMigration<'db, T> {
    /// Also deletes global indexes the live table has and the declaration does not (off by
    /// default: another deployment may still query them).
    pub fn delete_unused(mut self) -> Self {
        self.options.delete_unused = true;
        self
    }

    /// How long apply waits for each index to become active (default 30 minutes); on timeout
    /// the index keeps building and a later apply waits for it again.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options.timeout = timeout;
        self
    }

    /// Applies the plan to a table that a CloudFormation stack manages, which apply otherwise
    /// refuses ([`MigrationError::StackManaged`](crate::error::migration::MigrationError)): the
    /// change then drifts from the stack's template until the template states it.
    pub fn force(mut self) -> Self {
        self.options.force = true;
        self
    }

    /// How often apply polls `DescribeTable` while waiting (default 5 seconds).
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.options.poll_interval = interval;
        self
    }

    /// Called with each step of apply: the plan, each change as it starts and ends, and each
    /// poll while waiting.
    pub fn on_progress(mut self, progress: impl FnMut(&ApplyEvent<'_>) + Send + 'db) -> Self {
        self.progress = Some(Box::new(progress));
        self
    }

    /// Compares the live table's settings with those of this infrastructure code (deletion
    /// protection, point-in-time recovery, encryption, on-demand maximum and warm
    /// throughput) instead of the defaults of [`Admin::create_table`]'s: notes, which apply
    /// leaves to the infrastructure code.
    pub fn settings(mut self, infrastructure: &CreateTable) -> Self {
        self.settings = infrastructure.protection.clone();
        self
    }

    /// Describes the live table (and reads its point-in-time recovery) and compares it with
    /// the declaration and the infrastructure code's settings; changes nothing.
    pub async fn plan(&self) -> Result<Plan, Error> {
        let mut live = LiveTable::of_db(self.db).await?;
        if let Some(live) = &mut live {
            live.point_in_time_recovery = self.db.point_in_time_recovery().await?;
        }
        let mut plan = Plan::compare(
            self.db.table_name(),
            T::SCHEMA,
            &self.entities,
            live.clone(),
            self.options.delete_unused,
        );
        if let Some(live) = &live {
            plan.compare_settings(&self.settings, live);
        }
        if live.is_some() {
            // Each entity's record, read together.
            let reads = (self.entities.iter()).map(|entity| recorded::read(self.db, entity.name));
            let records = futures::future::try_join_all(reads).await?;
            for (entity, recorded) in self.entities.iter().zip(records) {
                plan.compare_recorded_keys(self.db, entity, &recorded)
                    .await?;
            }
        } else {
            // A new table records nothing yet.
            plan.actions
                .extend(self.entities.iter().map(|entity| PlanAction::RecordKeys {
                    entity: entity.name,
                    schema_version: entity.schema_version,
                }));
        }
        Ok(plan)
    }
}
