//! Zero-downtime migrations of a live table: schema plans, online index creation, backfills of
//! items an older schema version wrote, and coverage checks.
//!
//! DynamoDB has no `ALTER TABLE`: items are schemaless, so a migration means a new index (or
//! new attributes) and then reshaping the items already in the table, while the application
//! keeps reading and writing. The steps, in order:
//!
//! 1. **Declare** the new access pattern: add the index to the [`Table`](crate::Table), the
//!    templates to the entity, and bump the entity's `#[dynamo(schema_version = N)]`.
//! 2. **Plan and apply** ([`Admin::table_migration`](crate::Admin::table_migration)): compare the
//!    declaration with `DescribeTable` and create what is missing with `UpdateTable`, one
//!    global secondary index per call, waiting until each is `ACTIVE`.
//! 3. **Deploy** the new code. Every write through the derives ([`Db::put`](crate::Db::put),
//!    batch and transaction puts) encodes the whole item: every declared index's keys and the
//!    current schema version, so new and rewritten items have the new shape from then on
//!    (the "dual write": the old attributes are still there, so the old read path keeps
//!    working). An update that changes an index input rewrites that index's keys too.
//! 4. **Backfill** the items older versions wrote, lazily on read
//!    ([`Db::get_and_backfill`](crate::Db::get_and_backfill)) and with a throttled, resumable
//!    sweep ([`Admin::sweep`](crate::Admin::sweep)). Every backfill write is a conditional
//!    `UpdateItem` that only adds the index attributes and the schema version, and only if
//!    the item is still old and the fields the new keys derive from still hold the values
//!    read; it never rewrites what a concurrent writer wrote.
//! 5. **Verify** ([`Admin::coverage`](crate::Admin::coverage)): no item of the entity is below the
//!    current version, and a sweep covered the whole table. Only then
//!    [mark the migration complete](MigrationMarker::mark_complete) and remove the old read path.
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
mod distributed;
mod marker;
mod old_items;
mod plan;
mod schema_version;
mod sweep;
mod throttled_keys;
mod time;
mod verify;

pub use crate::error::migration::MigrationError;
pub use apply::{Applied, ApplyEvent};
pub use backfill::{BackfillOutcome, Backfilled};
pub use checkpoint::{Checkpoint, SegmentCheckpoint};
pub use design::{Design, DesignRow};
pub use distributed::{DistributedStatus, DistributedSweep, SegmentStatus, WorkerReport};
pub use marker::{CompletedMigration, MigrationMarker, MARKER_ENTITY};
pub use plan::{
    BackfillHint, Blocker, IndexChange, LiveIndex, LiveTable, Note, Plan, PlanAction,
    TableMigration,
};
pub use schema_version::item_schema_version;
pub use sweep::{StopSignal, Sweep, SweepCounts, SweepFailure, SweepProgress, SweepReport};
pub use verify::{Coverage, RecordedSweep, Verify};
