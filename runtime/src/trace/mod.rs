//! One `tracing` span per DynamoDB request the library sends, named and keyed after the
//! OpenTelemetry semantic conventions for DynamoDB, **pinned at v1.39.0** (development status;
//! <https://github.com/open-telemetry/semantic-conventions/blob/v1.39.0/docs/db/dynamodb.md>).
//! That release renamed the RPC attributes but left the AWS conventions on `rpc.system`,
//! `rpc.service` and `rpc.method` on purpose (semantic-conventions #3176), so they stay.
//! Administration (`CreateTable`, `DescribeTable`, `UpdateTable`, `DescribeTimeToLive`,
//! `UpdateTimeToLive`, `ListTagsOfResource`) and the Streams API's reads (`DescribeStream`, `GetShardIterator`,
//! `GetRecords`, with `rpc.service` `DynamoDB Streams`) have spans too, without an entity; a
//! table that does not exist is their `not_found`.
//!
//! The request's own attributes are read where every request passes, in the client's
//! interceptor (`attributes.rs`), from the input the SDK sends and the output it read.
//! `tracing` has no arrays: a `string[]` attribute is recorded as the JSON text of its array
//! (`["App"]`), which an exporter can parse back.
//!
//! | field | type | value |
//! |---|---|---|
//! | `otel.name` | string | `DynamoDB.PutItem`, ... |
//! | `db.system.name` | string | `aws.dynamodb` |
//! | `db.operation.name`, `rpc.method` | string | `PutItem`, ... |
//! | `rpc.system`, `rpc.service` | string | `aws-api`; `DynamoDB` or `DynamoDB Streams` |
//! | `aws.dynamodb.table_names` | string[] | the table (a batch's: the keys of `RequestItems`) |
//! | `aws.dynamodb.index_name` | string | the index a query or scan reads, if any |
//! | `aws.dynamodb.consistent_read` | boolean | a get's, query's or scan's `ConsistentRead` |
//! | `aws.dynamodb.projection` | string | its `ProjectionExpression`, when it has one |
//! | `aws.dynamodb.limit`, `select`, `scan_forward` | int, string, boolean | a query's or scan's, when set |
//! | `aws.dynamodb.segment`, `total_segments` | int | a segmented scan's |
//! | `aws.dynamodb.count`, `scanned_count` | int | a scan's response |
//! | `aws.dynamodb.global_secondary_indexes`, `local_secondary_indexes` | string[] | `CreateTable`'s, each as JSON |
//! | `aws.dynamodb.attribute_definitions`, `global_secondary_index_updates` | string[] | `UpdateTable`'s, each as JSON |
//! | `aws.dynamodb.provisioned_read_capacity`, `provisioned_write_capacity` | double | a table change's, when provisioned |
//! | `cloud.region` | string | the region the client targets |
//! | `server.address`, `server.port` | string, int | the endpoint the request went to |
//! | `aws.request_id`, `aws.extended_request_id` | string | the last attempt's response's ids |
//! | `singletable.entity` | string | the entity, or the collection; none for the table's administration and stream |
//! | `singletable.key` | string | the item's key as text (`PK=TICKET#8842, SK=TICKET`), only with [`Db::trace_values`](crate::Db::trace_values) |
//! | `singletable.attempts` | int | requests sent, retries included |
//! | `aws.dynamodb.consumed_capacity` | string[] | each `ConsumedCapacity` entry as JSON, when [`Db::track_capacity`](crate::Db::track_capacity) is on |
//! | `singletable.capacity_units` | double | their capacity units in all |
//! | `singletable.outcome` | string | `ok`, or the [`Error`] kind (`condition_failed`, ...) |
//! | `otel.status_code` | string | `OK` or `ERROR`; unset for `not_found`, `condition_failed` and `version_conflict`, answers rather than failures |
//! | `error.type` | string | on failure, the [`Error`] kind, as `singletable.outcome` (not for those answers) |
//! | `error.message` | string | the error's text, only with [`Db::trace_values`](crate::Db::trace_values) |
//!
//! No attribute value is recorded unless the `Db` opts in: keys are made of them, and an
//! error's message can quote one. Each attempt after the first is an `INFO` event inside the
//! span, and so is each backoff of the library's own retry loops. Nothing is computed for a
//! span no subscriber wants.

mod attributes;

use aws_sdk_dynamodb::config::interceptors::{
    BeforeDeserializationInterceptorContextRef, BeforeSerializationInterceptorContextRef,
    BeforeTransmitInterceptorContextRef, FinalizerInterceptorContextRef,
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
    ListTagsOfResource,
    DescribeContinuousBackups,
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
            Operation::ListTagsOfResource => ("ListTagsOfResource", "DynamoDB.ListTagsOfResource"),
            Operation::DescribeContinuousBackups => (
                "DescribeContinuousBackups",
                "DynamoDB.DescribeContinuousBackups",
            ),
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
    let span = new_span(operation, table, entity, index);
    if !span.is_disabled() {
        if let Some(key) = key() {
            span.record("singletable.key", key);
        }
    }
    span
}

/// The span itself, out of line: what a request without a subscriber never runs stays out of
/// the way of the code it does (benches/README.md, "The mechanics behind the ratios").
#[inline(never)]
fn new_span(operation: Operation, table: &str, entity: Option<&str>, index: Option<&str>) -> Span {
    let (method, name) = operation.names();
    let table_names = attributes::string_array([table]);
    let table_names = table_names.as_str();
    // Two field lists (a `tracing` span holds at most 32): an item's request and a table's,
    // each the fields every request has and its own.
    macro_rules! request_span {
        ($($own:tt)*) => {
            tracing::info_span!(
                target: "singletable",
                "dynamodb",
                otel.name = name,
                otel.kind = "client",
                db.system.name = "aws.dynamodb",
                db.operation.name = method,
                rpc.system = "aws-api",
                rpc.service = operation.service(),
                rpc.method = method,
                aws.dynamodb.table_names = table_names,
                aws.dynamodb.consumed_capacity = Empty,
                cloud.region = Empty,
                server.address = Empty,
                server.port = Empty,
                aws.request_id = Empty,
                aws.extended_request_id = Empty,
                singletable.attempts = Empty,
                singletable.capacity_units = Empty,
                singletable.outcome = Empty,
                otel.status_code = Empty,
                error.type = Empty,
                error.message = Empty,
                $($own)*
            )
        };
    }
    match entity {
        Some(entity) => request_span!(
            aws.dynamodb.index_name = index,
            aws.dynamodb.consistent_read = Empty,
            aws.dynamodb.projection = Empty,
            aws.dynamodb.limit = Empty,
            aws.dynamodb.scan_forward = Empty,
            aws.dynamodb.select = Empty,
            aws.dynamodb.segment = Empty,
            aws.dynamodb.total_segments = Empty,
            aws.dynamodb.count = Empty,
            aws.dynamodb.scanned_count = Empty,
            singletable.entity = entity,
            singletable.key = Empty,
        ),
        None => request_span!(
            aws.dynamodb.global_secondary_indexes = Empty,
            aws.dynamodb.local_secondary_indexes = Empty,
            aws.dynamodb.global_secondary_index_updates = Empty,
            aws.dynamodb.attribute_definitions = Empty,
            aws.dynamodb.provisioned_read_capacity = Empty,
            aws.dynamodb.provisioned_write_capacity = Empty,
        ),
    }
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
// wrapper instead of copied into it (see `send::mechanics`).
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
            if let Some(id) = headers.get("x-amz-id-2") {
                active.record("aws.extended_request_id", id);
            }
        });
        Ok(())
    }

    fn read_before_execution(
        &self,
        context: &BeforeSerializationInterceptorContextRef<'_>,
        _: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        with_active_span(|span| attributes::record_input(span, context.input()));
        Ok(())
    }

    fn read_before_transmit(
        &self,
        context: &BeforeTransmitInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        _: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        with_active_span(|span| attributes::record_server(span, context.request().uri()));
        Ok(())
    }

    fn read_after_execution(
        &self,
        context: &FinalizerInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        _: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let Some(Ok(output)) = context.output_or_error() {
            with_active_span(|span| attributes::record_output(span, output));
        }
        Ok(())
    }
}

/// Calls `record` with the span of the request being polled on this thread, if a subscriber
/// wants it.
fn with_active_span(record: impl FnOnce(&Span)) {
    ACTIVE.with(|slot| {
        if let Some(active) = slot.borrow().as_ref() {
            record(&active.span);
        }
    });
}
