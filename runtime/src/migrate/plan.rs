//! Comparing the declared table with the live one (`DescribeTable`): what to create, what is
//! there but no longer declared, and what cannot be changed online.

use super::apply::{ApplyEvent, ApplyOptions};
use crate::error::Error;
use crate::schema::{EntitySchema, IndexKind, IndexSchema, ScalarType, Table, TableSchema};
use crate::Db;
use aws_sdk_dynamodb::types::{
    BillingMode, GlobalSecondaryIndexDescription, KeySchemaElement, KeyType,
    LocalSecondaryIndexDescription, TableDescription,
};
use serde_json::{json, Value};
use std::fmt;
use std::time::Duration;

/// A snapshot of the live table, as `DescribeTable` reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveTable {
    /// The table name.
    pub name: String,
    /// `ACTIVE`, `CREATING`, `UPDATING`, ...
    pub status: String,
    /// Partition key attribute.
    pub partition_key: Option<String>,
    /// Sort key attribute.
    pub sort_key: Option<String>,
    /// Attribute definitions: name and type (`S`, `N`, `B`).
    pub attributes: Vec<(String, String)>,
    /// Global secondary indexes.
    pub global_indexes: Vec<LiveIndex>,
    /// Local secondary indexes.
    pub local_indexes: Vec<LiveIndex>,
    /// DynamoDB's item count (refreshed about every six hours, so approximate).
    pub item_count: Option<i64>,
    /// Read and write capacity units, when the table is billed by provisioned capacity (a new
    /// index then needs its own, and gets the table's).
    pub provisioned: Option<(i64, i64)>,
    /// Which table this is, not only its name: its `TableId` (else its ARN and creation time),
    /// so that a table deleted and created again, or another environment's, is told apart.
    pub identity: Option<String>,
}

/// A secondary index of the live table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveIndex {
    /// The index name.
    pub name: String,
    /// Partition key attribute.
    pub partition_key: Option<String>,
    /// Sort key attribute.
    pub sort_key: Option<String>,
    /// `CREATING`, `ACTIVE`, `UPDATING`, `DELETING` (global indexes only).
    pub status: Option<String>,
    /// Whether DynamoDB is still copying existing items into a new global index.
    pub backfilling: bool,
    /// DynamoDB's item count of the index (approximate).
    pub item_count: Option<i64>,
    /// `ALL`, `KEYS_ONLY` or `INCLUDE`.
    pub projection: Option<String>,
}

impl LiveIndex {
    /// Whether the index serves queries: `ACTIVE` and done backfilling (local indexes, which
    /// have no status, always are).
    pub fn is_active(&self) -> bool {
        self.status
            .as_deref()
            .map_or(true, |status| status == "ACTIVE")
            && !self.backfilling
    }
}

/// The partition and sort key attributes, each list joined with ", " (multi-attribute keys
/// have up to four of each).
fn key_attributes(elements: &[KeySchemaElement]) -> (Option<String>, Option<String>) {
    let find = |kind: KeyType| {
        let names: Vec<&str> = elements
            .iter()
            .filter(|element| *element.key_type() == kind)
            .map(|element| element.attribute_name())
            .collect();
        (!names.is_empty()).then(|| names.join(", "))
    };
    (find(KeyType::Hash), find(KeyType::Range))
}

/// An index's declared key attributes, joined as [`key_attributes`] joins the live ones.
fn declared_keys(index: &IndexSchema) -> (String, Option<String>) {
    let join = |keys: &[crate::schema::KeyAttribute]| {
        keys.iter()
            .map(|key| key.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let sort = join(index.sort_keys);
    (
        join(index.partition_keys),
        (!sort.is_empty()).then_some(sort),
    )
}

impl LiveIndex {
    fn from_global(index: &GlobalSecondaryIndexDescription) -> Self {
        let (partition_key, sort_key) = key_attributes(index.key_schema());
        LiveIndex {
            name: index.index_name().unwrap_or_default().to_owned(),
            partition_key,
            sort_key,
            status: index
                .index_status()
                .map(|status| status.as_str().to_owned()),
            backfilling: index.backfilling().unwrap_or(false),
            item_count: index.item_count(),
            projection: index
                .projection()
                .and_then(|projection| projection.projection_type())
                .map(|kind| kind.as_str().to_owned()),
        }
    }

    fn from_local(index: &LocalSecondaryIndexDescription) -> Self {
        let (partition_key, sort_key) = key_attributes(index.key_schema());
        LiveIndex {
            name: index.index_name().unwrap_or_default().to_owned(),
            partition_key,
            sort_key,
            status: None,
            backfilling: false,
            item_count: index.item_count(),
            projection: index
                .projection()
                .and_then(|projection| projection.projection_type())
                .map(|kind| kind.as_str().to_owned()),
        }
    }
}

impl LiveTable {
    /// Reads the table's description; `None` when it does not exist.
    pub async fn describe(
        client: &aws_sdk_dynamodb::Client,
        table_name: &str,
    ) -> Result<Option<LiveTable>, Error> {
        let described = client.describe_table().table_name(table_name).send().await;
        match described {
            Ok(output) => Ok(output.table().map(LiveTable::from_description)),
            Err(error)
                if error
                    .as_service_error()
                    .is_some_and(|error| error.is_resource_not_found_exception()) =>
            {
                Ok(None)
            }
            Err(error) => Err(error.into()),
        }
    }

    /// The snapshot of a `DescribeTable` answer.
    pub fn from_description(table: &TableDescription) -> LiveTable {
        let (partition_key, sort_key) = key_attributes(table.key_schema());
        let billing = table
            .billing_mode_summary()
            .and_then(|summary| summary.billing_mode());
        let throughput = table.provisioned_throughput();
        let units = throughput.map(|throughput| {
            (
                throughput.read_capacity_units().unwrap_or_default(),
                throughput.write_capacity_units().unwrap_or_default(),
            )
        });
        // Tables older than the billing summary are provisioned; their summary is absent.
        let provisioned = match billing {
            Some(BillingMode::PayPerRequest) => None,
            Some(_) => units,
            None => units.filter(|(read, write)| *read > 0 || *write > 0),
        };
        // DynamoDB gives every table a new id when it is created; without one, the ARN and the
        // creation time tell tables apart (unless made within one tick of the engine's clock).
        let identity = table
            .table_id()
            .map(|id| format!("table id {id}"))
            .or_else(|| {
                let (arn, created) = table.table_arn().zip(table.creation_date_time())?;
                Some(format!(
                    "{arn} created at {}.{:09}",
                    created.secs(),
                    created.subsec_nanos()
                ))
            });
        LiveTable {
            identity,
            name: table.table_name().unwrap_or_default().to_owned(),
            status: table
                .table_status()
                .map(|status| status.as_str().to_owned())
                .unwrap_or_default(),
            partition_key,
            sort_key,
            attributes: table
                .attribute_definitions()
                .iter()
                .map(|definition| {
                    (
                        definition.attribute_name().to_owned(),
                        definition.attribute_type().as_str().to_owned(),
                    )
                })
                .collect(),
            global_indexes: table
                .global_secondary_indexes()
                .iter()
                .map(LiveIndex::from_global)
                .collect(),
            local_indexes: table
                .local_secondary_indexes()
                .iter()
                .map(LiveIndex::from_local)
                .collect(),
            item_count: table.item_count(),
            provisioned,
        }
    }

    /// The global index with this name.
    pub fn global_index(&self, name: &str) -> Option<&LiveIndex> {
        self.global_indexes.iter().find(|index| index.name == name)
    }

    /// The type of an attribute definition (`S`, `N`, `B`).
    pub fn attribute_type(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(attribute, _)| attribute == name)
            .map(|(_, kind)| kind.as_str())
    }
}

/// One change that [`TableMigration::apply`] makes.
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

/// A global index to add.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexChange {
    /// The declared index.
    pub index: &'static IndexSchema,
    /// Key attributes the table has no definition for yet, with their declared types (added
    /// in the same call).
    pub new_attribute_definitions: Vec<(&'static str, ScalarType)>,
    /// The given entities that write keys for it, with their schema versions.
    pub written_by: Vec<(&'static str, u32)>,
}

/// Something that differs and is left alone.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// An index that does not project every attribute, as singletable's do.
    Projection {
        /// The index.
        index: String,
        /// Its projection.
        projection: String,
    },
}

/// A difference no `UpdateTable` can fix; [`TableMigration::apply`] refuses to start.
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

impl fmt::Display for Blocker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Blocker::KeySchema { expected, found } => write!(
                f,
                "the table's key is {found}, the declaration's is {expected}: a different key \
                 needs a new table and a copy"
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
        }
    }
}

/// Entities whose existing items lack the keys of an index this plan creates: they need a
/// backfill once it is active.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackfillHint {
    /// The entity.
    pub entity: &'static str,
    /// Its current schema version (items below it get backfilled).
    pub schema_version: u32,
    /// The new indexes it writes keys for.
    pub indexes: Vec<&'static str>,
}

/// What it takes to bring the live table to the declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The table name.
    pub table: String,
    /// The live table (`None`: it does not exist).
    pub live: Option<LiveTable>,
    /// The changes, in the order apply makes them.
    pub actions: Vec<PlanAction>,
    /// Declared indexes already there and active.
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
            if let Some(projection) = existing.projection.as_deref().filter(|p| *p != "ALL") {
                plan.notes.push(Note::Projection {
                    index: existing.name.clone(),
                    projection: projection.to_owned(),
                });
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

    /// Whether the live table already matches (nothing to do, nothing blocking).
    pub fn is_up_to_date(&self) -> bool {
        self.actions.is_empty() && self.blockers.is_empty()
    }

    /// Whether something stops apply.
    pub fn is_blocked(&self) -> bool {
        !self.blockers.is_empty()
    }

    /// The plan as JSON, for `--json` output and scripts.
    pub fn to_json(&self) -> Value {
        let actions: Vec<Value> = self
            .actions
            .iter()
            .map(|action| match action {
                PlanAction::CreateTable {
                    global_indexes,
                    local_indexes,
                } => json!({
                    "action": "create_table",
                    "global_indexes": global_indexes,
                    "local_indexes": local_indexes,
                }),
                PlanAction::CreateIndex(change) => json!({
                    "action": "create_index",
                    "index": change.index.name,
                    "partition_key": change.index.partition_key,
                    "sort_key": change.index.sort_key,
                    "new_attribute_definitions": change.new_attribute_definitions.iter().map(
                        |(name, kind)| json!({"name": name, "type": kind.code()}),
                    ).collect::<Vec<_>>(),
                    "written_by": change.written_by.iter().map(|(entity, version)| {
                        json!({"entity": entity, "schema_version": version})
                    }).collect::<Vec<_>>(),
                }),
                PlanAction::AwaitIndex { index, status } => {
                    json!({"action": "await_index", "index": index, "status": status})
                }
                PlanAction::DeleteIndex { index } => {
                    json!({"action": "delete_index", "index": index})
                }
            })
            .collect();
        let notes: Vec<Value> = self
            .notes
            .iter()
            .map(|note| match note {
                Note::UnusedIndex { index, deleted } => {
                    json!({"note": "unused_index", "index": index, "deleted": deleted})
                }
                Note::UnusedLocalIndex { index } => {
                    json!({"note": "unused_local_index", "index": index})
                }
                Note::IndexNotWritten { index } => {
                    json!({"note": "index_not_written", "index": index})
                }
                Note::Projection { index, projection } => {
                    json!({"note": "projection", "index": index, "projection": projection})
                }
            })
            .collect();
        json!({
            "table": self.table,
            "exists": self.live.is_some(),
            "status": self.live.as_ref().map(|live| live.status.clone()),
            "item_count": self.live.as_ref().and_then(|live| live.item_count),
            "up_to_date": self.is_up_to_date(),
            "actions": actions,
            "up_to_date_indexes": self.up_to_date,
            "notes": notes,
            "blockers": self.blockers.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "backfills": self.backfills.iter().map(|hint| json!({
                "entity": hint.entity,
                "schema_version": hint.schema_version,
                "indexes": hint.indexes,
            })).collect::<Vec<_>>(),
        })
    }
}

impl fmt::Display for PlanAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanAction::CreateTable {
                global_indexes,
                local_indexes,
            } => {
                write!(f, "create the table")?;
                let all: Vec<&str> = global_indexes
                    .iter()
                    .chain(local_indexes)
                    .copied()
                    .collect();
                if !all.is_empty() {
                    write!(f, " with indexes {}", all.join(", "))?;
                }
                Ok(())
            }
            PlanAction::CreateIndex(change) => {
                write!(
                    f,
                    "create global index {} {}",
                    change.index.name,
                    keys_text(Some(change.index.partition_key), change.index.sort_key)
                )?;
                if !change.new_attribute_definitions.is_empty() {
                    let defined: Vec<String> = change
                        .new_attribute_definitions
                        .iter()
                        .map(|(name, kind)| format!("{name}:{}", kind.code()))
                        .collect();
                    write!(f, ", defining {}", defined.join(", "))?;
                }
                Ok(())
            }
            PlanAction::AwaitIndex { index, status } => {
                write!(f, "wait for index {index} ({status}) to become ACTIVE")
            }
            PlanAction::DeleteIndex { index } => write!(f, "delete global index {index}"),
        }
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.live {
            None => writeln!(f, "table {}: does not exist", self.table)?,
            Some(live) => {
                write!(f, "table {}: {}", self.table, live.status)?;
                if let Some(count) = live.item_count {
                    write!(f, ", about {count} items")?;
                }
                writeln!(f)?;
            }
        }
        for index in &self.up_to_date {
            writeln!(f, "  = index {index}: up to date")?;
        }
        for action in &self.actions {
            writeln!(f, "  + {action}")?;
            if let PlanAction::CreateIndex(change) = action {
                for (entity, version) in &change.written_by {
                    writeln!(f, "      written by {entity} (schema version {version})")?;
                }
            }
        }
        for note in &self.notes {
            match note {
                Note::UnusedIndex {
                    index,
                    deleted: false,
                } => writeln!(
                    f,
                    "  ! index {index} is on the table but not declared: kept (deleting needs \
                     delete_unused / --delete-unused)"
                )?,
                Note::UnusedIndex {
                    index,
                    deleted: true,
                } => writeln!(f, "  ! index {index} is not declared: it will be deleted")?,
                Note::UnusedLocalIndex { index } => writeln!(
                    f,
                    "  ! local index {index} is not declared (local indexes cannot be deleted)"
                )?,
                Note::IndexNotWritten { index } => writeln!(
                    f,
                    "  ! index {index} is declared but no entity writes keys for it"
                )?,
                Note::Projection { index, projection } => writeln!(
                    f,
                    "  ! index {index} projects {projection}, not ALL: items read from it may \
                     not decode"
                )?,
            }
        }
        for blocker in &self.blockers {
            writeln!(f, "  x {blocker}")?;
        }
        for hint in &self.backfills {
            writeln!(
                f,
                "  > then backfill {} (items below schema version {} lack {}'s keys)",
                hint.entity,
                hint.schema_version,
                hint.indexes.join(", ")
            )?;
        }
        if self.is_up_to_date() {
            writeln!(f, "  nothing to do")?;
        }
        Ok(())
    }
}

/// Plans and applies the changes that bring the live table to the declaration; see
/// [`Db::table_migration`].
#[must_use = "a table migration does nothing until `plan` or `apply` is awaited"]
pub struct TableMigration<'db, T> {
    pub(super) db: &'db Db<T>,
    pub(super) entities: Vec<&'static EntitySchema>,
    pub(super) options: ApplyOptions,
    pub(super) progress: Option<ApplyProgress<'db>>,
}

/// The progress callback of [`TableMigration::apply`].
pub(super) type ApplyProgress<'db> = Box<dyn FnMut(&ApplyEvent<'_>) + Send + 'db>;

impl<T: Table> Db<T> {
    /// Compares this table's declaration (and the `entities` stored in it, e.g.
    /// `&[Document::SCHEMA, Comment::SCHEMA]`, which say which indexes are written and which
    /// entities need a backfill) with the live table.
    pub fn table_migration(&self, entities: &[&'static EntitySchema]) -> TableMigration<'_, T> {
        TableMigration {
            db: self,
            entities: entities.to_vec(),
            options: ApplyOptions::default(),
            progress: None,
        }
    }
}

impl<'db, T: Table> TableMigration<'db, T> {
    /// Also deletes global indexes the live table has and the declaration does not (off by
    /// default: another deployment may still query them).
    pub fn delete_unused(mut self, delete: bool) -> Self {
        self.options.delete_unused = delete;
        self
    }

    /// How long apply waits for each index to become active (default 30 minutes); on timeout
    /// the index keeps building and a later apply waits for it again.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options.timeout = timeout;
        self
    }

    /// How often apply polls `DescribeTable` while waiting (default 5 seconds).
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.options.poll_interval = interval;
        self
    }

    /// All options at once.
    pub fn options(mut self, options: ApplyOptions) -> Self {
        self.options = options;
        self
    }

    /// Called with each step of apply: the plan, each change as it starts and ends, and each
    /// poll while waiting.
    pub fn on_progress(mut self, progress: impl FnMut(&ApplyEvent<'_>) + Send + 'db) -> Self {
        self.progress = Some(Box::new(progress));
        self
    }

    /// Describes the live table and compares it with the declaration; changes nothing.
    pub async fn plan(&self) -> Result<Plan, Error> {
        let live = LiveTable::describe(self.db.client(), self.db.table_name()).await?;
        Ok(Plan::compare(
            self.db.table_name(),
            T::SCHEMA,
            &self.entities,
            live,
            self.options.delete_unused,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::KeyAttribute;

    static GSI1: IndexSchema = IndexSchema {
        slot: "gsi1",
        name: "GSI1",
        kind: IndexKind::Global,
        partition_key: "GSI1PK",
        sort_key: Some("GSI1SK"),
        partition_keys: &[KeyAttribute {
            name: "GSI1PK",
            kind: ScalarType::String,
        }],
        sort_keys: &[KeyAttribute {
            name: "GSI1SK",
            kind: ScalarType::String,
        }],
    };
    static GSI2: IndexSchema = IndexSchema {
        slot: "gsi2",
        name: "GSI2",
        kind: IndexKind::Global,
        partition_key: "GSI2PK",
        sort_key: Some("GSI2SK"),
        partition_keys: &[KeyAttribute {
            name: "GSI2PK",
            kind: ScalarType::String,
        }],
        sort_keys: &[KeyAttribute {
            name: "GSI2SK",
            kind: ScalarType::Number,
        }],
    };
    static INDEXES: [IndexSchema; 2] = [GSI1, GSI2];
    static SCHEMA: TableSchema = TableSchema {
        type_name: "App",
        name: "app",
        partition_key: "PK",
        sort_key: Some("SK"),
        entity_attribute: "_type",
        schema_version_attribute: "_sv",
        indexes: &INDEXES,
    };

    fn live(indexes: &[(&str, &str, &str)]) -> LiveTable {
        LiveTable {
            identity: None,
            name: "app".into(),
            status: "ACTIVE".into(),
            partition_key: Some("PK".into()),
            sort_key: Some("SK".into()),
            attributes: vec![("PK".into(), "S".into()), ("SK".into(), "S".into())],
            global_indexes: indexes
                .iter()
                .map(|(name, pk, status)| LiveIndex {
                    name: (*name).into(),
                    partition_key: Some((*pk).into()),
                    sort_key: Some(format!("{}SK", &pk[..4])),
                    status: Some((*status).into()),
                    backfilling: false,
                    item_count: None,
                    projection: Some("ALL".into()),
                })
                .collect(),
            local_indexes: Vec::new(),
            item_count: Some(3),
            provisioned: None,
        }
    }

    #[test]
    fn a_missing_table_is_created_whole() {
        let plan = Plan::compare("app", &SCHEMA, &[], None, false);
        assert_eq!(
            plan.actions,
            [PlanAction::CreateTable {
                global_indexes: vec!["GSI1", "GSI2"],
                local_indexes: vec![]
            }]
        );
        assert!(plan.backfills.is_empty());
    }

    #[test]
    fn missing_indexes_are_created_and_unused_ones_only_reported() -> Result<(), String> {
        let plan = Plan::compare(
            "app",
            &SCHEMA,
            &[],
            Some(live(&[
                ("GSI1", "GSI1PK", "ACTIVE"),
                ("OLD", "OLDXPK", "ACTIVE"),
            ])),
            false,
        );
        assert_eq!(plan.up_to_date, ["GSI1"]);
        assert_eq!(plan.actions.len(), 1, "{plan}");
        let Some(PlanAction::CreateIndex(change)) = plan.actions.first() else {
            return Err(format!("expected one index to create: {plan}"));
        };
        assert_eq!(change.index.name, "GSI2");
        assert_eq!(
            change.new_attribute_definitions,
            [
                ("GSI2PK", ScalarType::String),
                ("GSI2SK", ScalarType::Number)
            ]
        );
        assert!(
            plan.to_string().contains("defining GSI2PK:S, GSI2SK:N"),
            "{plan}"
        );
        assert_eq!(
            plan.notes,
            [Note::UnusedIndex {
                index: "OLD".into(),
                deleted: false
            }]
        );
        let deleting = Plan::compare(
            "app",
            &SCHEMA,
            &[],
            Some(live(&[
                ("GSI1", "GSI1PK", "ACTIVE"),
                ("OLD", "OLDXPK", "ACTIVE"),
            ])),
            true,
        );
        assert_eq!(
            deleting.actions.last(),
            Some(&PlanAction::DeleteIndex {
                index: "OLD".into()
            })
        );
        Ok(())
    }

    #[test]
    fn an_index_still_building_is_awaited_and_other_keys_block() {
        let plan = Plan::compare(
            "app",
            &SCHEMA,
            &[],
            Some(live(&[
                ("GSI1", "GSI1PK", "CREATING"),
                ("GSI2", "OTHRPK", "ACTIVE"),
            ])),
            false,
        );
        assert_eq!(
            plan.actions,
            [PlanAction::AwaitIndex {
                index: "GSI1",
                status: "CREATING".into()
            }]
        );
        assert!(plan.is_blocked());
        assert!(plan.blockers[0].to_string().contains("OTHRPK"), "{plan}");
    }
}
