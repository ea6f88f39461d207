//! Zero-downtime migrations of a live table: schema plans, online index creation, backfills of
//! items an older schema version wrote, and coverage checks.
//!
//! DynamoDB has no `ALTER TABLE`: items are schemaless, so a migration means a new index (or
//! new attributes) and then reshaping the items already in the table, while the application
//! keeps reading and writing. The steps, in order:
//!
//! 1. **Declare** the new access pattern: add the index to the [`Table`](crate::Table), the
//!    templates to the entity, and bump the entity's `#[dynamo(schema_version = N)]`.
//! 2. **Plan and apply** ([`Db::table_migration`](crate::Db::table_migration)): compare the
//!    declaration with `DescribeTable` and create what is missing with `UpdateTable`, one
//!    global secondary index per call, waiting until each is `ACTIVE`.
//! 3. **Deploy** the new code. Every write through the derives ([`Db::put`](crate::Db::put),
//!    batch and transaction puts) encodes the whole item: every declared index's keys and the
//!    current schema version, so new and rewritten items have the new shape from then on
//!    (the "dual write": the old attributes are still there, so the old read path keeps
//!    working). An update that changes an index input rewrites that index's keys too.
//! 4. **Backfill** the items older versions wrote, lazily on read
//!    ([`Db::get_and_backfill`](crate::Db::get_and_backfill)) and with a throttled, resumable
//!    sweep ([`Db::sweep`](crate::Db::sweep)). Every backfill write is a conditional
//!    `UpdateItem` that only adds the index attributes and the schema version, and only if
//!    the item is still old and the fields the new keys derive from still hold the values
//!    read; it never rewrites what a concurrent writer wrote.
//! 5. **Verify** ([`Db::coverage`](crate::Db::coverage)): no item of the entity is below the
//!    current version, and a sweep covered the whole table. Only then
//!    [mark the migration complete](Migration::mark_complete) and remove the old read path.
//!
//! Start the sweep only once no process runs the old code any more: an old writer's `put`
//! replaces the whole item in the old shape (verify then finds it again), and an old writer's
//! update of an index input leaves the new index key stale.
//!
//! The `cli` module (feature `cli`) wraps all of this in a command-line tool.

mod apply;
mod backfill;
mod checkpoint;
mod design;
mod marker;
mod plan;
mod rate;
mod sweep;
mod verify;

pub use apply::{Applied, ApplyEvent, ApplyOptions};
pub use backfill::{BackfillOutcome, Backfilled};
pub use checkpoint::{Checkpoint, SegmentCheckpoint};
pub use design::{Design, DesignRow};
pub use marker::{Migration, MigrationRecord, MARKER_ENTITY};
pub use plan::{
    BackfillHint, Blocker, IndexChange, LiveIndex, LiveTable, Note, Plan, PlanAction,
    TableMigration,
};
pub use rate::Rate;
pub use sweep::{
    ProgressCallback, StopSignal, Sweep, SweepCounts, SweepFailure, SweepOptions, SweepProgress,
    SweepReport,
};
pub use verify::{Coverage, SweepCoverage, Verify};

use std::path::PathBuf;

/// Why a migration step could not proceed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MigrationError {
    /// The live table differs from the declaration in a way no `UpdateTable` can fix (a
    /// different primary key, a missing local index, an index of the same name with other
    /// keys); nothing was changed.
    #[error("table {table:?} cannot be brought to the declared schema online: {}", .problems.join("; "))]
    Blocked {
        /// The table.
        table: String,
        /// What differs, one sentence each.
        problems: Vec<String>,
    },
    /// The table does not exist (and the step needs it).
    #[error("table {table:?} does not exist; run `apply` (or `Db::ensure_table`) first")]
    TableMissing {
        /// The table.
        table: String,
    },
    /// A checkpoint file could not be read or written.
    #[error("checkpoint {}: {message}", .path.display())]
    Checkpoint {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A checkpoint file belongs to another sweep (table, entity, version or segments).
    #[error("checkpoint {} belongs to another sweep: {message}", .path.display())]
    CheckpointMismatch {
        /// The file.
        path: PathBuf,
        /// What differs.
        message: String,
    },
    /// An option outside what the step accepts.
    #[error("invalid {option}: {message}")]
    InvalidOption {
        /// The option.
        option: &'static str,
        /// Why.
        message: String,
    },
    /// The stored primary key is not the one the entity's current templates render: a key
    /// change needs a copy to new keys and a delete (see [`Db::rekey`](crate::Db::rekey)), not
    /// a backfill.
    #[error("{entity} at {stored}: the current key templates render {rendered}; a changed key template needs a copy to the new key, not a backfill")]
    KeyChanged {
        /// The entity.
        entity: &'static str,
        /// The key in the table.
        stored: crate::KeyText,
        /// The key the current templates render.
        rendered: crate::KeyText,
    },
    /// Marking a migration complete before verification says it is done.
    #[error("the migration of {entity} to schema version {schema_version} is not done: {reason}")]
    NotDone {
        /// The entity.
        entity: &'static str,
        /// The version migrated to.
        schema_version: u32,
        /// What is missing.
        reason: String,
    },
}

/// The schema version an item records, `0` when it has none (it was written before versions
/// were recorded, so it is older than any version).
pub fn item_schema_version(item: &crate::Item, table: &crate::schema::TableSchema) -> Option<u32> {
    match item.get(table.schema_version_attribute) {
        None => Some(0),
        Some(aws_sdk_dynamodb::types::AttributeValue::N(number)) => number.parse().ok(),
        // Another type: not a version this library wrote.
        Some(_) => None,
    }
}

/// Seconds since the Unix epoch as RFC 3339 UTC text (`2026-04-02T09:15:00Z`), without a date
/// library: the civil-from-days algorithm of Howard Hinnant.
pub(crate) fn rfc3339(unix_seconds: u64) -> String {
    let days = unix_seconds / 86_400;
    let seconds = unix_seconds % 86_400;
    let shifted = days + 719_468;
    let era = shifted / 146_097;
    let day_of_era = shifted % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        seconds / 3600,
        seconds % 3600 / 60,
        seconds % 60
    )
}

/// The current time as Unix seconds (0 if the clock is before 1970).
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::rfc3339;

    #[test]
    fn rfc3339_renders_civil_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_775_121_300), "2026-04-02T09:15:00Z");
    }
}
