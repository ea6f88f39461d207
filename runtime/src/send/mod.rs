//! The request layer: the [`Db`] handle and every request the library sends through it. Data
//! reads and writes, batches, transactions, table administration and the Streams API are
//! built and sent here, and nowhere else (`.ci/run` fails on an SDK client call outside this
//! module). Operations above plan request values (keys, expressions, a page's start) and hand
//! them here; this layer owns the clients (with and without the SDK's retries, set to the
//! `Db`'s [`RetryPolicy`](crate::RetryPolicy)), the span of each request, the capacity record
//! and the mapping of the SDK's errors to the library's.
//!
//! - `db.rs`: the handle, its clients and settings;
//! - `write/`: the write executor (puts, updates, deletes, transactions);
//! - `read.rs`: `GetItem`, `Query`, `Scan` and `TransactGetItems`;
//! - `batch.rs`: `BatchGetItem` and `BatchWriteItem`;
//! - `table.rs`: `CreateTable`, `DescribeTable`, `UpdateTable`, `DeleteTable` and the TTL
//!   settings;
//! - `stream.rs`: the Streams API;
//! - `mechanics.rs`: how a request's future is made in place, for the benchmarks' ratios.

mod batch;
mod db;
mod mechanics;
mod read;
#[cfg(feature = "aws-sdk-dynamodbstreams")]
mod stream;
mod table;
pub(crate) mod write;

pub use db::{Consumed, Db};
pub(crate) use mechanics::{sent, SetSome};
pub(crate) use read::{QueryPage, ResentBy, ScanRequest};
#[cfg(feature = "aws-sdk-dynamodbstreams")]
pub(crate) use stream::StreamsClient;
pub(crate) use table::{create_table, describe_with_ttl, Described, TableChange};
