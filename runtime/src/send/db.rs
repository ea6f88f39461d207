//! [`Db`]: one table of one [`Table`] declaration, reached through an SDK client.

use crate::cursor::CursorKey;
use crate::schema::Table;
use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::types::{ConsumedCapacity, ReturnConsumedCapacity};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// A handle to the DynamoDB table declared by `T`: the entry point of every operation.
///
/// Cheap to clone. The table name defaults to the declaration's `name` and can be overridden
/// (per environment, or per test as the `testing` module of the `local` feature does).
pub struct Db<T> {
    client: aws_sdk_dynamodb::Client,
    /// The same client with the SDK's retries off, for the requests the library resends
    /// itself: made once here, since a per-request override rebuilds the SDK's configuration
    /// on every request (bench `operations`: +0.24 on a put).
    unretried: aws_sdk_dynamodb::Client,
    /// The same client with the SDK's retries set to `retry`'s attempts and delays, for the
    /// requests the SDK may resend as they are: the policy governs them without the library
    /// keeping a copy of each request to resend (bench `operations`: +0.16 on a put).
    retrying: aws_sdk_dynamodb::Client,
    table_name: Arc<str>,
    /// Capacity reported by DynamoDB, when tracking is on.
    capacity: Option<Arc<Mutex<Consumed>>>,
    /// Seals query cursors, when set.
    cursor_key: Option<Arc<CursorKey>>,
    /// Tracing spans may record error messages, which can quote attribute values.
    trace_values: bool,
    /// The time its writes stamp and its reads compare expiry with; the system clock unless set.
    clock: Option<Clock>,
    /// How often and how patiently its requests are sent again.
    retry: crate::RetryPolicy,
    /// How the library's long jobs resend what is throttled: `retry` once the user set one,
    /// else enough attempts to ride through throttling (`RetryPolicy::riding_through`).
    long_jobs: crate::RetryPolicy,
    table: PhantomData<fn() -> T>,
}

/// A clock a [`Db`] reads instead of the system's (see [`Db::with_clock`]).
type Clock = Arc<dyn Fn() -> SystemTime + Send + Sync>;

/// Capacity units DynamoDB reported as consumed by a [`Db`]'s requests (see
/// [`Db::track_capacity`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Consumed {
    /// Requests that reported capacity.
    pub requests: u64,
    /// Read capacity units, table and indexes.
    pub read_units: f64,
    /// Write capacity units, table and indexes.
    pub write_units: f64,
    /// Total capacity units (DynamoDB's `CapacityUnits`, which some engines report alone).
    pub capacity_units: f64,
    /// Of those, the units of secondary indexes.
    pub index_units: f64,
}

impl<T: Table> Db<T> {
    /// A handle using the table name from the declaration.
    ///
    /// The client gets an interceptor that counts each request's attempts into its span (see
    /// [`Db::trace_values`]), whenever the `tracing` subscriber is installed; without one, it
    /// costs a thread-local read per attempt.
    pub fn new(client: aws_sdk_dynamodb::Client) -> Self {
        let client = crate::trace::instrument(client);
        let retry = crate::RetryPolicy::default();
        let unretried = with_retries(&client, RetryConfig::disabled());
        let retrying = with_retries(&client, retry.sdk_config());
        Db {
            client,
            unretried,
            retrying,
            table_name: Arc::from(T::SCHEMA.name),
            capacity: None,
            cursor_key: None,
            trace_values: false,
            clock: None,
            retry,
            long_jobs: crate::RetryPolicy::riding_through(),
            table: PhantomData,
        }
    }

    /// The same handle, sending its requests again under `policy`: every resend the library
    /// makes (a write or read throttled, or whose answer was lost where sending it twice is
    /// safe; a transaction cancelled for a conflict; what a batch left unprocessed) counts
    /// against its attempts, and the SDK's own retries are off for the library's requests, so
    /// one request never costs more attempts than `policy` states. An operation's own
    /// `.retry(..)` overrides it for that operation. [`RetryPolicy::default`](crate::RetryPolicy::default) unless set.
    ///
    /// ```
    /// use singletable_runtime::{schema::Table, Db, RetryPolicy};
    ///
    /// fn once<T: Table>(db: Db<T>) -> Db<T> {
    ///     db.with_retry_policy(RetryPolicy::never())
    /// }
    /// ```
    pub fn with_retry_policy(mut self, policy: crate::RetryPolicy) -> Self {
        self.retry = policy;
        self.long_jobs = policy;
        self.retrying = with_retries(&self.client, policy.sdk_config());
        self
    }

    /// The policy its requests are sent again under (see [`Db::with_retry_policy`]).
    pub fn retry_policy(&self) -> crate::RetryPolicy {
        self.retry
    }

    /// How the library's long jobs (sweeps, coverage, a distributed sweep's records, the
    /// claims of unique values) resend a request DynamoDB throttles or leaves unanswered: the
    /// policy set with [`Db::with_retry_policy`], or, when none was, 24 attempts, so that a
    /// job rides through throttling rather than ending at it.
    pub(crate) fn long_job_policy(&self) -> crate::RetryPolicy {
        self.long_jobs
    }

    /// The same handle, reading the time from `clock` rather than the system: the time
    /// `created_at` and `updated_at` stamp, the time reads and unique-value claims compare
    /// expiry with, and the time a distributed sweep's leases are written and compared in. For tests that move time on (an expiry passing) without waiting;
    /// DynamoDB's own deletion of expired items still runs on its own clock.
    ///
    /// ```
    /// use singletable_runtime::{schema::Table, Db};
    /// use std::time::{Duration, SystemTime};
    ///
    /// fn an_hour_ahead<T: Table>(db: Db<T>) -> Db<T> {
    ///     db.with_clock(|| SystemTime::now() + Duration::from_secs(3600))
    /// }
    /// ```
    pub fn with_clock(mut self, clock: impl Fn() -> SystemTime + Send + Sync + 'static) -> Self {
        self.clock = Some(Arc::new(clock));
        self
    }

    /// The time now, by this handle's clock: read once per write, so that every time a write
    /// stamps is the same.
    pub fn now(&self) -> SystemTime {
        match &self.clock {
            Some(clock) => clock(),
            None => SystemTime::now(),
        }
    }

    /// The same handle, asking DynamoDB to report the capacity every request consumes
    /// (`ReturnConsumedCapacity = INDEXES`) and adding it up; read it with [`Db::consumed`].
    /// Clones share the tally.
    pub fn track_capacity(mut self) -> Self {
        self.capacity = Some(Arc::default());
        self
    }

    /// The capacity consumed so far, if tracking is on.
    pub fn consumed(&self) -> Option<Consumed> {
        let capacity = self.capacity.as_ref()?;
        Some(match capacity.lock() {
            Ok(consumed) => consumed.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        })
    }

    /// What requests ask DynamoDB to report.
    pub(crate) fn return_consumed_capacity(&self) -> Option<ReturnConsumedCapacity> {
        self.capacity
            .as_ref()
            .map(|_| ReturnConsumedCapacity::Indexes)
    }

    /// Adds what a response reported.
    pub(crate) fn record<'a>(&self, reported: impl IntoIterator<Item = &'a ConsumedCapacity>) {
        let Some(capacity) = &self.capacity else {
            return;
        };
        let mut consumed = match capacity.lock() {
            Ok(consumed) => consumed,
            Err(poisoned) => poisoned.into_inner(),
        };
        let reported: Vec<&ConsumedCapacity> = reported.into_iter().collect();
        let mut units = None;
        for &entry in &reported {
            *units.get_or_insert(0.0) += entry.capacity_units.unwrap_or_default();
            consumed.requests += 1;
            consumed.read_units += entry.read_capacity_units.unwrap_or_default();
            consumed.write_units += entry.write_capacity_units.unwrap_or_default();
            consumed.capacity_units += entry.capacity_units.unwrap_or_default();
            let indexes = entry
                .global_secondary_indexes()
                .into_iter()
                .chain(entry.local_secondary_indexes())
                .flat_map(|indexes| indexes.values());
            consumed.index_units += indexes
                .filter_map(|index| index.capacity_units)
                .sum::<f64>();
        }
        // Only what DynamoDB reported: a response without capacity records none.
        if let Some(units) = units {
            crate::trace::record_capacity(units, &reported);
        }
    }

    /// The same handle on a table with another name.
    pub fn with_table_name(mut self, name: impl Into<String>) -> Self {
        self.table_name = Arc::from(name.into());
        self
    }

    /// The table name requests use.
    pub fn table_name(&self) -> &str {
        &self.table_name
    }

    /// The same handle, sealing the cursors of its queries with `key`: a cursor is then opaque
    /// to whoever holds it, and resumes only the query that made it, unedited and unexpired
    /// (see [`Cursor`](crate::op::query::Cursor)). Without a key, cursors are unsigned base64
    /// JSON that a client can read and edit; they are still checked against the index and
    /// partition of the query they resume. Once a key is set, unsigned cursors are refused.
    /// A key can hold the secrets being rotated out ([`CursorKey::with_previous`]).
    ///
    /// ```
    /// use singletable_runtime::op::query::{CursorError, CursorKey};
    /// use singletable_runtime::{schema::Table, Db};
    /// use std::time::Duration;
    ///
    /// fn sealed<T: Table>(db: Db<T>, secret: &[u8]) -> Result<Db<T>, CursorError> {
    ///     let key = CursorKey::new(secret)?.expire_after(Duration::from_secs(3600));
    ///     Ok(db.with_cursor_key(key))
    /// }
    /// ```
    pub fn with_cursor_key(mut self, key: CursorKey) -> Self {
        self.cursor_key = Some(Arc::new(key));
        self
    }

    /// The same handle, letting the `tracing` span of each request record the item's key and
    /// its error's message, which hold attribute values (key parts, a condition's operand).
    /// Without this, spans record no value, only the error's kind, the entity and the table: every
    /// operation emits one span, named and keyed after OpenTelemetry's conventions for
    /// DynamoDB (`db.operation.name`, `aws.dynamodb.table_names`, ...), with its attempts,
    /// consumed capacity (when tracked) and outcome, and an event for each retry.
    pub fn trace_values(mut self) -> Self {
        self.trace_values = true;
        self
    }

    /// The key text `key` gives, for a span, if spans may record values
    /// ([`Db::trace_values`]).
    /// Values show in the text, as [`Db::trace_values`] asks, whatever
    /// [`show_values`](crate::error::show_values) says of error texts.
    pub(crate) fn traced_key(&self, key: impl FnOnce() -> String) -> Option<String> {
        self.trace_values
            .then(|| crate::key::text::with_values_shown(true, key))
    }

    /// Sends a request inside `span` and records the capacity its output reports
    /// (`consumed` picks it out): the shape of every request sent from an `async` body.
    pub(super) async fn send_traced<O, E>(
        &self,
        span: tracing::Span,
        send: impl std::future::Future<Output = Result<O, E>>,
        consumed: impl FnOnce(&O) -> &[ConsumedCapacity],
    ) -> Result<O, crate::Error>
    where
        crate::Error: From<E>,
    {
        self.traced(span, async {
            let output = send.await?;
            self.record(consumed(&output));
            Ok(output)
        })
        .await
    }

    /// A request's future inside its span (always inlined, as [`crate::trace::traced`] is).
    #[inline(always)]
    pub(crate) fn traced<F>(&self, span: tracing::Span, future: F) -> crate::trace::Traced<F> {
        if !span.is_disabled() {
            if let Some(region) = self.client.config().region() {
                span.record("cloud.region", region.as_ref());
            }
        }
        crate::trace::traced(span, self.trace_values, future)
    }

    /// The key that seals cursors, if one is set.
    pub(crate) fn cursor_key(&self) -> Option<&Arc<CursorKey>> {
        self.cursor_key.as_ref()
    }

    /// The SDK client, for anything singletable does not cover.
    pub fn client(&self) -> &aws_sdk_dynamodb::Client {
        &self.client
    }

    /// The client with the SDK's retries off, for a request the library resends itself under
    /// its retry policy: every attempt is then one the policy counts.
    pub(super) fn unretried_client(&self) -> &aws_sdk_dynamodb::Client {
        &self.unretried
    }

    /// The client whose SDK retries are the retry policy's attempts and delays, for a request
    /// the SDK may resend as it is.
    pub(super) fn retrying_client(&self) -> &aws_sdk_dynamodb::Client {
        &self.retrying
    }

    /// `DescribeTable` of this table, sent again while throttled or lost: how the library's
    /// jobs and readers learn the table (its capacity, its stream, whether it exists).
    pub(crate) async fn describe_table(
        &self,
    ) -> Result<
        aws_sdk_dynamodb::operation::describe_table::DescribeTableOutput,
        crate::retry::ReadError<aws_sdk_dynamodb::operation::describe_table::DescribeTableError>,
    > {
        let describe = self
            .unretried
            .describe_table()
            .table_name(self.table_name());
        self.reading_traced(crate::trace::Operation::DescribeTable, &self.retry, || {
            describe.clone().send()
        })
        .await
    }

    /// Sends the read `send` makes about the table as a whole (its description, its stream)
    /// under `policy`, again while throttled or lost (`RetryPolicy::reading`), all of it in
    /// one span of `operation`.
    pub(crate) async fn reading_traced<O, E, F>(
        &self,
        operation: crate::trace::Operation,
        policy: &crate::RetryPolicy,
        send: impl FnMut() -> F,
    ) -> Result<O, crate::retry::ReadError<E>>
    where
        E: aws_sdk_dynamodb::error::ProvideErrorMetadata + std::error::Error + 'static,
        F: std::future::Future<Output = Result<O, crate::retry::ReadError<E>>>,
    {
        let span = crate::trace::table_span(operation, self.table_name());
        self.traced(span, policy.reading(send)).await
    }

    /// Writes `item` as it is, unconditionally, through the write executor: for the library's
    /// own records (`record` names the kind, for the span).
    pub(crate) async fn raw_put(
        &self,
        record: &'static str,
        item: crate::Item,
    ) -> Result<(), crate::Error> {
        self.write(crate::send::write::Write::put(record, item))
            .await?;
        Ok(())
    }
}

impl<T> Clone for Db<T> {
    fn clone(&self) -> Self {
        Db {
            client: self.client.clone(),
            unretried: self.unretried.clone(),
            retrying: self.retrying.clone(),
            table_name: self.table_name.clone(),
            capacity: self.capacity.clone(),
            cursor_key: self.cursor_key.clone(),
            trace_values: self.trace_values,
            clock: self.clock.clone(),
            retry: self.retry,
            long_jobs: self.long_jobs,
            table: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for Db<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("table_name", &self.table_name)
            .finish()
    }
}

/// `client` with the SDK's retries set to `retries`, its other settings (interceptors, timeouts,
/// endpoint) as they are.
pub(super) fn with_retries(
    client: &aws_sdk_dynamodb::Client,
    retries: RetryConfig,
) -> aws_sdk_dynamodb::Client {
    aws_sdk_dynamodb::Client::from_conf(client.config().to_builder().retry_config(retries).build())
}
