//! One `tracing` span per DynamoDB request an operation sends, named and keyed after the
//! OpenTelemetry semantic conventions for DynamoDB and the AWS SDK (development status, as
//! published for semantic conventions 1.3x; `rpc.system` and `rpc.service` as the AWS SDK
//! conventions still require them) where they name a field.
//! Administration (`CreateTable`, `DescribeTable`, `UpdateTable`, `DescribeTimeToLive`,
//! `UpdateTimeToLive`) and the Streams API's reads (`DescribeStream`, `GetShardIterator`,
//! `GetRecords`, with `rpc.service` `DynamoDB Streams`) have spans too, without an entity; a
//! table that does not exist is their `not_found`.
//!
//! | field | value |
//! |---|---|
//! | `otel.name` | `DynamoDB.PutItem`, ... |
//! | `db.system.name` | `aws.dynamodb` |
//! | `db.operation.name`, `rpc.method` | `PutItem`, ... |
//! | `aws.dynamodb.table_names` | the table |
//! | `aws.dynamodb.index_name` | the index a query reads, if any |
//! | `cloud.region` | the region the client targets |
//! | `aws.request_id` | the request id of the last attempt's response |
//! | `singletable.entity` | the entity, or the collection; none for the table's administration and stream |
//! | `singletable.key` | the item's key as text (`PK=TICKET#8842, SK=TICKET`), only with [`Db::trace_values`](crate::Db::trace_values) |
//! | `singletable.attempts` | requests sent, retries included |
//! | `aws.dynamodb.consumed_capacity` | each `ConsumedCapacity` entry as JSON, in a JSON array, when [`Db::track_capacity`](crate::Db::track_capacity) is on |
//! | `singletable.capacity_units` | their capacity units in all |
//! | `singletable.outcome` | `ok`, or the [`Error`] kind (`condition_failed`, ...) |
//! | `otel.status_code` | `OK` or `ERROR`; unset for `not_found`, `condition_failed` and `version_conflict`, answers rather than failures |
//! | `error.type` | on failure, the [`Error`] kind, as `singletable.outcome` (not for those answers) |
//! | `error.message` | the error's text, only with [`Db::trace_values`](crate::Db::trace_values) |
//!
//! No attribute value is recorded unless the `Db` opts in: keys are made of them, and an
//! error's message can quote one. Each attempt after the first is an `INFO` event inside the
//! span, and so is each backoff of the library's own retry loops. Nothing is computed for a
//! span no subscriber wants.

use aws_sdk_dynamodb::config::interceptors::{
    BeforeDeserializationInterceptorContextRef, BeforeTransmitInterceptorContextRef,
};
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::error::BoxError;
use aws_sdk_dynamodb::types::{Capacity, ConsumedCapacity};
use std::cell::RefCell;
use std::fmt::Display;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tracing::field::Empty;
use tracing::Span;

/// The DynamoDB operations the library sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    PutItem,
    UpdateItem,
    DeleteItem,
    GetItem,
    Query,
    Scan,
    BatchGetItem,
    BatchWriteItem,
    TransactWriteItems,
    TransactGetItems,
    CreateTable,
    DescribeTable,
    UpdateTable,
    DescribeTimeToLive,
    UpdateTimeToLive,
    /// The Streams API's (its reader needs feature `aws-sdk-dynamodbstreams`).
    #[cfg_attr(not(feature = "aws-sdk-dynamodbstreams"), allow(dead_code))]
    DescribeStream,
    #[cfg_attr(not(feature = "aws-sdk-dynamodbstreams"), allow(dead_code))]
    GetShardIterator,
    #[cfg_attr(not(feature = "aws-sdk-dynamodbstreams"), allow(dead_code))]
    GetRecords,
}

impl Operation {
    /// The service the operation belongs to, as `rpc.service` names it.
    fn service(self) -> &'static str {
        match self {
            Operation::DescribeStream | Operation::GetShardIterator | Operation::GetRecords => {
                "DynamoDB Streams"
            }
            _ => "DynamoDB",
        }
    }

    fn names(self) -> (&'static str, &'static str) {
        match self {
            Operation::CreateTable => ("CreateTable", "DynamoDB.CreateTable"),
            Operation::DescribeTable => ("DescribeTable", "DynamoDB.DescribeTable"),
            Operation::UpdateTable => ("UpdateTable", "DynamoDB.UpdateTable"),
            Operation::DescribeTimeToLive => ("DescribeTimeToLive", "DynamoDB.DescribeTimeToLive"),
            Operation::UpdateTimeToLive => ("UpdateTimeToLive", "DynamoDB.UpdateTimeToLive"),
            Operation::DescribeStream => ("DescribeStream", "DynamoDB Streams.DescribeStream"),
            Operation::GetShardIterator => {
                ("GetShardIterator", "DynamoDB Streams.GetShardIterator")
            }
            Operation::GetRecords => ("GetRecords", "DynamoDB Streams.GetRecords"),
            Operation::PutItem => ("PutItem", "DynamoDB.PutItem"),
            Operation::UpdateItem => ("UpdateItem", "DynamoDB.UpdateItem"),
            Operation::DeleteItem => ("DeleteItem", "DynamoDB.DeleteItem"),
            Operation::GetItem => ("GetItem", "DynamoDB.GetItem"),
            Operation::Query => ("Query", "DynamoDB.Query"),
            Operation::Scan => ("Scan", "DynamoDB.Scan"),
            Operation::BatchGetItem => ("BatchGetItem", "DynamoDB.BatchGetItem"),
            Operation::BatchWriteItem => ("BatchWriteItem", "DynamoDB.BatchWriteItem"),
            Operation::TransactWriteItems => ("TransactWriteItems", "DynamoDB.TransactWriteItems"),
            Operation::TransactGetItems => ("TransactGetItems", "DynamoDB.TransactGetItems"),
        }
    }
}

/// The span of one request of an entity's (or a record's of the library): `key` and `index`
/// are rendered only when a subscriber wants it.
pub(crate) fn span(
    operation: Operation,
    table: &str,
    entity: &str,
    key: impl FnOnce() -> Option<String>,
    index: Option<&str>,
) -> Span {
    request_span(operation, table, Some(entity), key, index)
}

/// The span of one request about the table as a whole (its administration, its stream),
/// which no entity makes.
pub(crate) fn table_span(operation: Operation, table: &str) -> Span {
    request_span(operation, table, None, || None, None)
}

fn request_span(
    operation: Operation,
    table: &str,
    entity: Option<&str>,
    key: impl FnOnce() -> Option<String>,
    index: Option<&str>,
) -> Span {
    // Before any subscriber exists no span can be recorded: skip even the callsite check.
    if !tracing::dispatcher::has_been_set() {
        return Span::none();
    }
    let (method, name) = operation.names();
    let span = tracing::info_span!(
        target: "singletable",
        "dynamodb",
        otel.name = name,
        otel.kind = "client",
        db.system.name = "aws.dynamodb",
        db.operation.name = method,
        rpc.system = "aws-api",
        rpc.service = operation.service(),
        rpc.method = method,
        aws.dynamodb.table_names = table,
        aws.dynamodb.index_name = index,
        cloud.region = Empty,
        aws.request_id = Empty,
        singletable.entity = entity,
        singletable.key = Empty,
        singletable.attempts = Empty,
        aws.dynamodb.consumed_capacity = Empty,
        singletable.capacity_units = Empty,
        singletable.outcome = Empty,
        otel.status_code = Empty,
        error.type = Empty,
        error.message = Empty,
    );
    if !span.is_disabled() {
        if let Some(key) = key() {
            span.record("singletable.key", key);
        }
    }
    span
}

/// The operation whose future is being polled on this thread, for the interceptor, which the
/// SDK calls from inside that poll (under spans of its own).
struct Active {
    span: Span,
    attempts: Arc<AtomicU32>,
}

thread_local! {
    static ACTIVE: RefCell<Option<Active>> = const { RefCell::new(None) };
}

pin_project_lite::pin_project! {
    /// A request's future inside its span: the span is entered while it is polled, counts
    /// the attempts the SDK makes, and records the outcome.
    pub(crate) struct Traced<F> {
        #[pin]
        inner: F,
        span: Span,
        attempts: Option<Arc<AtomicU32>>,
        record_values: bool,
    }
}

/// `future` in `span`; `record_values` lets the error message be recorded.
// Always inlined: the future is several kilobytes, and is then made in place inside the
// wrapper instead of copied into it (see `op::mechanics`).
#[inline(always)]
pub(crate) fn traced<F>(span: Span, record_values: bool, future: F) -> Traced<F> {
    let attempts = (!span.is_disabled()).then(Arc::default);
    Traced {
        inner: future,
        span,
        attempts,
        record_values,
    }
}

/// What a traced future's output says about the request: `ok`, or the error's kind and, when
/// values may be recorded, its message.
pub(crate) trait Outcome {
    /// `None` for success, or the error's kind.
    fn error_kind(&self) -> Option<&'static str>;
    /// The error's message, if it is an error.
    fn error_message(&self) -> Option<String>;
}

impl<F: Future> Future for Traced<F>
where
    F::Output: Outcome,
{
    type Output = F::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Some(attempts) = this.attempts else {
            // No subscriber wants the span: nothing to record.
            return this.inner.poll(cx);
        };
        let _entered = this.span.enter();
        let active = Active {
            span: this.span.clone(),
            attempts: attempts.clone(),
        };
        let outer = ACTIVE.with(|slot| slot.replace(Some(active)));
        let polled = this.inner.poll(cx);
        ACTIVE.with(|slot| slot.replace(outer));
        let output = ready!(polled);
        record_outcome(this.span, *this.record_values, &output);
        Poll::Ready(output)
    }
}

/// A request's SDK error, as the library's spans name it: the kind of
/// [`Error::Service`](crate::Error::Service).
impl<T, E, R> Outcome for Result<T, aws_sdk_dynamodb::error::SdkError<E, R>>
where
    E: aws_sdk_dynamodb::error::ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug,
{
    fn error_kind(&self) -> Option<&'static str> {
        use aws_sdk_dynamodb::error::ProvideErrorMetadata;
        let error = self.as_ref().err()?;
        // A table or stream that does not exist is the answer to `ensure_table`'s question.
        Some(match error.code() {
            Some("ResourceNotFoundException") => "not_found",
            _ => "service",
        })
    }

    fn error_message(&self) -> Option<String> {
        let error = self.as_ref().err()?;
        Some(aws_sdk_dynamodb::error::DisplayErrorContext(error).to_string())
    }
}

fn record_outcome(span: &Span, record_values: bool, output: &impl Outcome) {
    match output.error_kind() {
        None => {
            span.record("singletable.outcome", "ok");
            span.record("otel.status_code", "OK");
        }
        // An answer to what the caller asked (is there an item; does the condition hold), not
        // a failure of the request: no error, and the status left unset, so that existence
        // checks and optimistic writes do not count as errors on a dashboard.
        Some(kind @ ("not_found" | "condition_failed" | "version_conflict")) => {
            span.record("singletable.outcome", kind);
        }
        Some(kind) => {
            span.record("singletable.outcome", kind);
            span.record("error.type", kind);
            span.record("otel.status_code", "ERROR");
            if let Some(message) = output.error_message().filter(|_| record_values) {
                span.record("error.message", message);
            }
        }
    }
}

/// Adds consumed capacity to the current request's span (the library records capacity from
/// inside the request's future, where its span is entered): the units in all, and each entry
/// DynamoDB reported, JSON-serialized as OpenTelemetry's `aws.dynamodb.consumed_capacity`
/// (a `string[]`, here its JSON text) says.
pub(crate) fn record_capacity(units: f64, reported: &[&ConsumedCapacity]) {
    let span = Span::current();
    if span.is_disabled() {
        return;
    }
    span.record("singletable.capacity_units", units);
    let entries: Vec<String> = reported
        .iter()
        .map(|entry| capacity_json(entry).to_string())
        .collect();
    if let Ok(text) = serde_json::to_string(&entries) {
        span.record("aws.dynamodb.consumed_capacity", text);
    }
}

/// One `ConsumedCapacity` entry in DynamoDB's own JSON names, with the fields it reported.
fn capacity_json(entry: &ConsumedCapacity) -> serde_json::Value {
    // The units of the whole entry, of its table, or of one index.
    fn units([all, read, write]: [Option<f64>; 3]) -> serde_json::Map<String, serde_json::Value> {
        let mut object = serde_json::Map::new();
        for (name, value) in [
            ("CapacityUnits", all),
            ("ReadCapacityUnits", read),
            ("WriteCapacityUnits", write),
        ] {
            if let Some(value) = value {
                object.insert(name.to_owned(), value.into());
            }
        }
        object
    }
    let of = |capacity: &Capacity| {
        let reported = [
            capacity.capacity_units,
            capacity.read_capacity_units,
            capacity.write_capacity_units,
        ];
        serde_json::Value::from(units(reported))
    };
    let reported = [
        entry.capacity_units,
        entry.read_capacity_units,
        entry.write_capacity_units,
    ];
    let mut object = units(reported);
    if let Some(table) = entry.table_name() {
        object.insert("TableName".to_owned(), table.into());
    }
    if let Some(table) = entry.table() {
        object.insert("Table".to_owned(), of(table));
    }
    for (name, indexes) in [
        ("GlobalSecondaryIndexes", entry.global_secondary_indexes()),
        ("LocalSecondaryIndexes", entry.local_secondary_indexes()),
    ] {
        if let Some(indexes) = indexes {
            let indexes = indexes
                .iter()
                .map(|(index, capacity)| (index.clone(), of(capacity)))
                .collect::<serde_json::Map<_, _>>();
            object.insert(name.to_owned(), indexes.into());
        }
    }
    object.into()
}

/// An event for a backoff of one of the library's own retry loops.
pub(crate) fn backoff(attempt: u32, delay: impl Display) {
    tracing::info!(target: "singletable", attempt, %delay, "backing off before the next attempt");
}

/// `client` with the [`AttemptCounter`] (once, if it has it already), whether or not a
/// `tracing` subscriber is installed yet: one installed after the `Db` is made sees attempts
/// too. Without a span to count into, the counter costs a thread-local read per attempt.
pub(crate) fn instrument(client: aws_sdk_dynamodb::Client) -> aws_sdk_dynamodb::Client {
    let config = client.config();
    let name = AttemptCounter.name();
    if config
        .interceptors()
        .any(|interceptor| interceptor.name() == name)
    {
        return client;
    }
    aws_sdk_dynamodb::Client::from_conf(config.to_builder().interceptor(AttemptCounter).build())
}

/// Counts every attempt the SDK makes into the span of the operation being polled, with an
/// event for each retry. Installed on the client of every [`Db`](crate::Db).
#[derive(Debug)]
pub(crate) struct AttemptCounter;

impl Intercept for AttemptCounter {
    fn name(&self) -> &'static str {
        "singletable::trace::AttemptCounter"
    }

    fn read_before_attempt(
        &self,
        _: &BeforeTransmitInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        _: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        ACTIVE.with(|slot| {
            if let Some(active) = slot.borrow().as_ref() {
                let attempt = active.attempts.fetch_add(1, Ordering::Relaxed) + 1;
                active.span.record("singletable.attempts", attempt);
                if attempt > 1 {
                    tracing::info!(target: "singletable", parent: &active.span, attempt, "sending again");
                }
            }
        });
        Ok(())
    }

    fn read_before_deserialization(
        &self,
        context: &BeforeDeserializationInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        _: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        // The last attempt's id is the one AWS support can look up.
        ACTIVE.with(|slot| {
            let Some(active) = slot.borrow().as_ref().map(|active| active.span.clone()) else {
                return;
            };
            let headers = context.response().headers();
            let id = ["x-amzn-requestid", "x-amzn-request-id", "x-amz-request-id"]
                .into_iter()
                .find_map(|name| headers.get(name));
            if let Some(id) = id {
                active.record("aws.request_id", id);
            }
        });
        Ok(())
    }
}
