//! The partition model's public face: the throughput limits per partition key value a plan
//! sets, and the partition key values it throttles.

use std::fmt;

/// The throughput one partition key value may use, per second, which the proxy enforces when
/// a plan has [`FaultPlan::with_partition_limits`](crate::FaultPlan::with_partition_limits).
///
/// # What DynamoDB documents
///
/// "By default, every partition in a DynamoDB table is designed to deliver a maximum capacity
/// of 3,000 read units per second and 1,000 write units per second. One read unit represents
/// one strongly consistent read operation per second, or two eventually consistent read
/// operations per second, for an item up to 4 KB in size. One write unit represents one write
/// operation per second for an item up to 1 KB in size." ([Best practices for designing and
/// using partition keys effectively](https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html)).
/// Adaptive capacity may give a frequently accessed item a partition of its own, and then
/// "DynamoDB can deliver throughput up to the partition maximum of 3,000 RCUs and 1,000 WCUs
/// to that single item's primary key" ([Burst and adaptive capacity](https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/burst-adaptive-capacity.html)):
/// one partition key value never gets more, in on-demand and in provisioned mode alike
/// ([Key range throughput exceeded](https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/throttling-key-range-limit-exceeded-mitigation.html)).
/// Transactions cost twice: two write units per 1 KB written, two read units per 4 KB read
/// ([Capacity management for transactions](https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling)).
/// A request refused for a partition's limit fails with
/// `ProvisionedThroughputExceededException` (HTTP 400), whose `ThrottlingReasons` name it
/// `TableWriteKeyRangeThroughputExceeded` (or `TableRead…`, `IndexRead…`) and give the table's
/// or the index's ARN ([`ThrottlingReason`](https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_ThrottlingReason.html)).
///
/// # What the model does
///
/// - **A token bucket per partition key value**, one for writes and one for reads, for each
///   table and each global secondary index (whose writes are its entries', and whose reads a
///   query names). A bucket refills at the limit's rate and holds at most one second of it, so
///   a quiet key can absorb a burst of one second's units and no more: DynamoDB's burst capacity comes from the table's unused
///   throughput, but the partition's own limit still caps it. A request charged more than one
///   second's units on one key (a large transaction) waits for a full bucket and overdraws
///   it, rather than being refused for ever.
/// - **Which attribute is the partition key** the proxy learns from the engine, with one
///   `DescribeTable` per table (sent with the client's headers; no local engine checks
///   signatures), and forgets when a `CreateTable` or `DeleteTable` for that name goes
///   through it. Requests on a table it cannot describe are not modelled.
/// - **Writes** are charged before the engine sees them, from what the request carries:
///   `PutItem` by the item's size; `UpdateItem` by the key's size plus the values the update
///   sets; `DeleteItem` and a transaction's `ConditionCheck` by the key's size; each rounded up
///   to 1 KB, at least one unit, twice in `TransactWriteItems`. DynamoDB charges a put, an
///   update or a delete by the larger of the item before and after: the proxy remembers the
///   size of each item written through it and charges that when larger; and when the engine's
///   answer reports the units (a client that asked for `ReturnConsumedCapacity: INDEXES`, whose
///   `Table` units are the table's own), the rest is taken then, as for reads, and may overdraw
///   the bucket. An item the proxy never saw written is charged the lower bound, so the model
///   never throttles a write DynamoDB would let through at the same rate.
/// - **Writes to global secondary indexes** are charged as DynamoDB charges them, to the
///   partition key of each index entry a write puts (from a put's item, or the value an
///   update's `SET` gives the index's partition key) and of each entry it removes or moves (a
///   delete, a put that replaces the item, an update that changes or removes the index's key:
///   known from the entries of items written through the proxy), the write's units on each,
///   and hold the table's write back when an index partition has no room
///   (`IndexWriteKeyRangeThroughputExceeded`).
/// - **Reads** (`GetItem`, `Query`, `BatchGetItem`, `TransactGetItems`) take their least
///   possible charge when they arrive (one unit per key, half for an eventually consistent
///   read, twice in a transaction) and the rest when the engine's answer shows the items' sizes,
///   rounded up to 4 KB (per item, and over a query's items together, as DynamoDB does). That
///   rest may overdraw the bucket, by at most one second's units, which delays the key's next
///   reads. A query is charged for the items it returns, which a filter or a projection makes
///   smaller than what DynamoDB reads and charges. A `Scan` spans partitions and is not
///   modelled.
///
/// # How the proxy refuses
///
/// - A single-item request, or a `BatchWriteItem` or `BatchGetItem` of which nothing fits,
///   fails with HTTP 400 `ProvisionedThroughputExceededException` and its throttling reasons
///   (never `ThrottlingException`, which the model leaves to the fault schedule).
///   DynamoDB documents that a batch fails so only when none of its items can be processed;
///   otherwise the items over their key's limit come back in `UnprocessedItems` (or
///   `UnprocessedKeys`) and the rest is forwarded.
/// - A transaction is all or nothing: when one of its items does not fit, none is charged and
///   it fails with HTTP 400 `TransactionCanceledException`, whose reason for that item is
///   `ThrottlingError` on an on-demand table and `ProvisionedThroughputExceeded` on a
///   provisioned one (the codes the `TransactWriteItems` reference gives), `None` for the others.
///
/// Every refused item is counted against its key in
/// [`FaultReport::throttled_writes`](crate::FaultReport::throttled_writes) and
/// [`throttled_reads`](crate::FaultReport::throttled_reads).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PartitionLimits {
    /// Write units per second: one unit writes up to 1 KB.
    pub write_units_per_second: f64,
    /// Read units per second: one unit reads up to 4 KB strongly consistent, or twice that
    /// eventually consistent.
    pub read_units_per_second: f64,
}

impl PartitionLimits {
    /// DynamoDB's: 1,000 write units and 3,000 read units per second per partition.
    pub const DYNAMODB: PartitionLimits = PartitionLimits::new(1_000.0, 3_000.0);

    /// Other limits, for a test that wants throttling sooner.
    pub const fn new(write_units_per_second: f64, read_units_per_second: f64) -> Self {
        PartitionLimits {
            write_units_per_second,
            read_units_per_second,
        }
    }

    pub(crate) fn per_second(&self, access: Access) -> f64 {
        match access {
            Access::Read => self.read_units_per_second,
            Access::Write => self.write_units_per_second,
        }
    }
}

/// A partition key value of a table, or of one of its global secondary indexes: what the
/// model throttles.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PartitionKey {
    /// The table's name.
    pub table: String,
    /// The index a query read, if it read one.
    pub index: Option<String>,
    /// The partition key's value as text: a string as it is, a number as DynamoDB's text of
    /// it, a binary in base64.
    pub value: String,
}

impl fmt::Display for PartitionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.index {
            Some(index) => write!(f, "{}/{index} {:?}", self.table, self.value),
            None => write!(f, "{} {:?}", self.table, self.value),
        }
    }
}

/// Reads or writes: each has its own limit and bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Access {
    Read,
    Write,
}

/// A partition key of the unit tests' table `t`, on no index.
#[cfg(test)]
pub(crate) fn test_key(value: &str) -> PartitionKey {
    PartitionKey {
        table: "t".to_owned(),
        index: None,
        value: value.to_owned(),
    }
}
