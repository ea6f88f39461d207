//! [`ReadOptions`]: how a read treats consistency and expired items, one type for get, query,
//! scan and batch get, with its setters written once ([`read_option_setters`]).

use crate::schema::TableSchema;
use crate::ttl::Expiry;
use std::time::SystemTime;

/// How a read treats consistency and items whose time to live has passed. Every read builder
/// holds one, and sets it through the same three methods, so the reads cannot drift apart.
///
/// It stays inside the builders rather than being a value users pass: the setters carry
/// compile-time checks (no consistent read on a global index, `include_expired` only on a
/// table with a TTL attribute) that a free-standing value could not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadOptions {
    /// `ConsistentRead`.
    pub(crate) consistent: bool,
    /// Whether items whose TTL has passed are left out.
    pub(crate) expiry: Expiry,
}

impl ReadOptions {
    /// Eventually consistent, hiding expired items of `table` as of `now`.
    pub(crate) fn new(table: &TableSchema, now: impl FnOnce() -> SystemTime) -> ReadOptions {
        ReadOptions {
            consistent: false,
            expiry: Expiry::hidden(table, now),
        }
    }
}

/// The setters of a read builder's [`ReadOptions`] (a field `read`, beside `db`), with their
/// docs, written once for every read: for the table `E::Table` (or the one given first, `table
/// = ..;`). `consistent` takes the builder's own bound, if any (a query's index must take
/// consistent reads).
macro_rules! read_option_setters {
    (table = $table:ty; $($consistent_bound:tt)*) => {
        /// Asks for strongly consistent reads (`ConsistentRead`, twice the read cost), which
        /// reflect every write acknowledged before the read. Only the table and its local
        /// indexes take them.
        pub fn consistent(mut self) -> Self
        where
            $($consistent_bound)*
        {
            self.read.consistent = true;
            self
        }

        /// Returns items whose time to live has passed too. By default a read of a table with
        /// a TTL attribute leaves them out (a get reads one as [`Error::NotFound`]; a query
        /// or scan filters on `ttl >= now`), because DynamoDB deletes expired items only
        /// eventually, typically within two days, and a read in between would see an item
        /// that is gone.
        ///
        /// [`Error::NotFound`]: crate::Error::NotFound
        pub fn include_expired(mut self) -> Self
        where
            $table: $crate::schema::ExpiringTable,
        {
            self.read.expiry.attribute = None;
            self
        }

        /// Leaves out items whose time to live has passed: the default, written out.
        pub fn hide_expired(mut self) -> Self
        where
            $table: $crate::schema::ExpiringTable,
        {
            self.read.expiry = $crate::ttl::Expiry::hidden(
                <$table as $crate::schema::Table>::SCHEMA,
                || self.db.now(),
            );
            self
        }
    };
    ($($consistent_bound:tt)*) => {
        $crate::op::read_options::read_option_setters!(table = E::Table; $($consistent_bound)*);
    };
}
pub(crate) use read_option_setters;
