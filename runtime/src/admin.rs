//! [`Admin`]: the administration of a [`Db`]'s table, kept apart from its data API.

use crate::schema::Table;
use crate::Db;
use std::fmt;

/// The administration of the table a [`Db`] reaches: what a deploy step, a migration job or
/// an operator runs, not the request path of an application.
///
/// - the table itself: [`create_table`](Admin::create_table) (also the source of the
///   generated infrastructure code) and [`ensure_table`](Admin::ensure_table);
/// - migrations: [`table_migration`](Admin::table_migration) (plan, then send), the
///   [`sweep`](Admin::sweep) that backfills old items (and its distributed workers),
///   [`backfill_item`](Admin::backfill_item) for items you read yourself,
///   [`coverage`](Admin::coverage) and the [`migration_marker`](Admin::migration_marker) record;
/// - one-off steps of a new feature: [`claim_unique_values`](Admin::claim_unique_values)
///   for a value newly declared unique, `init_latest` for partitions written before appends
///   were guarded;
/// - stream consumers (`stream_reader`, feature `aws-sdk-dynamodbstreams`).
///
/// Get it with [`Db::admin`]; it borrows the `Db`, so it shares its client, table name,
/// clock, capacity tracking and tracing.
pub struct Admin<'db, T> {
    pub(crate) db: &'db Db<T>,
}

impl<T> Clone for Admin<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Admin<'_, T> {}

impl<T: Table> fmt::Debug for Admin<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Admin")
            .field("table", &self.db.table_name())
            .finish()
    }
}

impl<T: Table> Db<T> {
    /// The administration of this table: creating it, migrations, one-off backfills and
    /// claims, and stream readers (see [`Admin`]).
    pub fn admin(&self) -> Admin<'_, T> {
        Admin { db: self }
    }
}
