//! The migration's completion record: a small item in the table itself, so every instance of
//! the application can check whether the old read path may go, without a file or a flag
//! service.

use super::time::{rfc3339, unix_now};
use super::verify::Coverage;
use crate::error::migration::MigrationError;
use crate::error::Error;
use crate::item::Item;
use crate::library::{read_record, record_item, LibraryRecord, RecordKind, MIGRATION_MARKER};
use crate::schema::{EntitySchema, Table};
use crate::Admin;
use crate::Db;
use serde::{Deserialize, Serialize};

/// The entity attribute of completion records: no entity has it, so entity scans and queries
/// never return them.
pub const MARKER_ENTITY: &str = crate::library::MIGRATION_MARKER.tag();

/// A completed migration, as recorded in the table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompletedMigration {
    /// The entity.
    pub entity: String,
    /// The schema version every item reached.
    pub schema_version: u32,
    /// When it was marked complete (RFC 3339, UTC).
    pub completed_at: String,
    /// Items of the entity when it was verified.
    pub items: u64,
}

/// A completion record as the table keeps it.
#[derive(Debug, Serialize, Deserialize)]
struct StoredRecord {
    entity: String,
    schema_version: u32,
    completed_at: String,
    /// The same time in epoch seconds, for queries by time.
    #[serde(default)]
    completed_at_epoch: u64,
    #[serde(default)]
    items: u64,
}

impl LibraryRecord for StoredRecord {
    const KIND: &'static RecordKind = &MIGRATION_MARKER;
}

/// The completion record of one entity's migration to its current schema version, stored at
/// `PK = "_MIGRATION#<entity>"`, `SK = "V#<version>"` (or `PK = "_MIGRATION#<entity>#V#<version>"`
/// in a table without a sort key); see [`Admin::migration`](crate::Admin::migration_marker).
#[derive(Debug)]
pub struct MigrationMarker<'db, T> {
    db: &'db Db<T>,
    entity: &'static str,
    schema_version: u32,
}

impl<'db, T: Table> Admin<'db, T> {
    /// The completion record of `entity`'s migration to its current schema version. Apps
    /// check [`MigrationMarker::is_complete`] to decide whether the old read path (e.g. the lazy
    /// backfill) is still needed; it is recorded only by [`MigrationMarker::mark_complete`] with a
    /// coverage check that is done.
    pub fn migration_marker(&self, entity: &'static EntitySchema) -> MigrationMarker<'db, T> {
        MigrationMarker {
            db: self.db,
            entity: entity.name,
            schema_version: entity.schema_version,
        }
    }
}

impl<T: Table> MigrationMarker<'_, T> {
    /// The record's primary key.
    pub fn key(&self) -> Item {
        crate::library::record_key(
            T::SCHEMA,
            &crate::library::MIGRATION_MARKER,
            self.entity,
            format!("V#{}", self.schema_version),
        )
    }

    /// The record, if the migration was marked complete (a strongly consistent read).
    pub async fn record(&self) -> Result<Option<CompletedMigration>, Error> {
        let Some(item) = self
            .db
            .raw_get(MIGRATION_MARKER.description, self.key(), true)
            .await?
        else {
            return Ok(None);
        };
        let stored = read_record::<T, StoredRecord>(item)?;
        Ok(Some(CompletedMigration {
            entity: stored.entity,
            schema_version: self.schema_version,
            completed_at: stored.completed_at,
            items: stored.items,
        }))
    }

    /// Whether the migration was marked complete.
    pub async fn is_complete(&self) -> Result<bool, Error> {
        Ok(self.record().await?.is_some())
    }

    /// Records that the migration is complete, given a coverage check of this entity and
    /// version that [is done](Coverage::is_done); otherwise fails with
    /// [`MigrationError::NotDone`] and records nothing.
    pub async fn mark_complete(&self, coverage: &Coverage) -> Result<CompletedMigration, Error> {
        let not_done = |reason: String| MigrationError::NotDone {
            entity: self.entity,
            schema_version: self.schema_version,
            reason,
        };
        if coverage.entity != self.entity
            || coverage.schema_version != self.schema_version
            || coverage.table != self.db.table_name()
        {
            return Err(not_done(format!(
                "the coverage given is of {} version {} on {}",
                coverage.entity, coverage.schema_version, coverage.table
            ))
            .into());
        }
        if !coverage.is_done() {
            return Err(not_done(format!(
                "{} items behind; {}",
                coverage.behind, coverage.sweep
            ))
            .into());
        }
        let now = unix_now();
        let record = CompletedMigration {
            entity: self.entity.to_owned(),
            schema_version: self.schema_version,
            completed_at: rfc3339(now),
            items: coverage.items,
        };
        let stored = StoredRecord {
            entity: record.entity.clone(),
            schema_version: record.schema_version,
            completed_at: record.completed_at.clone(),
            completed_at_epoch: now,
            items: record.items,
        };
        let item = record_item(T::SCHEMA, self.key(), &stored)?;
        self.db.raw_put(MIGRATION_MARKER.description, item).await?;
        Ok(record)
    }
}
