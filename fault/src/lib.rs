//! Fault injection for tests: a loopback HTTP proxy in front of the local engine that, on a
//! seeded schedule, fails chosen requests the way DynamoDB and networks fail, either before
//! the engine sees a request or after the engine has applied it (the response is lost).
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use singletable_fault::{self as fault, FaultPlan};
//! let (client, stats) = fault::client(FaultPlan::new(42, 0.08)).await?;
//! // ... run operations through `Db::new(client)`, then:
//! println!("{}", stats.report());
//! # Ok(()) }
//! ```
//!
//! # Why a proxy
//!
//! An SDK interceptor can replace a response after it was received, but it cannot keep a
//! request from reaching the engine except by failing with an interceptor error, which the
//! SDK never retries and which no real network produces. A proxy can do both, and its dropped
//! connections and timeouts are real sockets that the SDK classifies exactly as it would in
//! production.
//!
//! # SDK retries are on
//!
//! The faulty client keeps the SDK's standard retry mode (3 attempts, retrying throttling,
//! 5xx, timeouts and dropped connections), as every user runs it, with short backoffs so
//! tests stay fast ([`FaultPlan::without_sdk_retries`] turns it off). So a fault after the
//! engine applied a write is usually followed by the SDK sending the same request again: the
//! case that makes non-idempotent writes (`ADD`, conditional puts) ambiguous.
//!
//! # Idempotency tokens
//!
//! DynamoDB acknowledges a resent `TransactWriteItems` with the same `ClientRequestToken` (and
//! the same parameters, for 10 minutes) without applying it twice. dynoxide does too; moto
//! 5.2.1 ignores the token and applies the resend again
//! ([`Deviation::IgnoresClientRequestTokens`](singletable_runtime::local::Deviation)). On an engine with
//! that gap the proxy emulates DynamoDB's answer
//! ([`FaultPlan::without_idempotency_emulation`] turns it off), so the tests check the
//! library against DynamoDB's contract rather than against the engine's gap; on an engine
//! that honours tokens it forwards every resend as it is.
//!
//! # DynamoDB's latency and partition limits
//!
//! Off unless a plan asks for them: [`FaultPlan::with_latency`] holds each request for a round
//! trip's delay ([`Latency::IN_REGION`] is 8 ms ± 2), concurrently, so that a bench measures
//! how the library overlaps requests rather than how fast the local engine answers; and
//! [`FaultPlan::with_partition_limits`] throttles a partition key value above DynamoDB's
//! per-partition throughput ([`PartitionLimits::DYNAMODB`]), with DynamoDB's errors, and
//! reports which keys it throttled ([`FaultReport::throttled_writes`]).

mod authorization;
mod batch;
mod capacity;
mod charges;
mod dynamodb_errors;
mod http;
mod idempotency;
mod lag;
mod latency;
mod lock;
mod own_write;
mod partition_limits;
mod plan;
mod report;
mod seen_items;
mod table_keys;
pub use authorization::{allows, Authorization};
pub use lag::IndexLag;
pub use latency::Latency;
pub use own_write::is_own_write;
pub use partition_limits::{PartitionKey, PartitionLimits};
pub use plan::{Fault, FaultKind, FaultPlan, Phase};
pub use report::{FaultReport, RecordedRequest};

use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::config::timeout::TimeoutConfig;
use batch::{entries, entries_mut, merge_unprocessed, with_unprocessed};
use capacity::{Admission, CapacityModel};
use dynamodb_errors::{dynamodb_error, error_response};
use http::{json_response, read_message, send_upstream, Connection, Message};
use idempotency::{transaction_token, Token, TOKEN_WINDOW};
use lag::{Replica, ReplicaError};
use lock::lock;
use report::count_throttled;
use serde_json::{json, Map, Value};
use singletable_runtime::local::{self, LocalError};
use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};

/// How long a "timeout" holds a connection open if the client never gives up.
const HANG_LIMIT: Duration = Duration::from_secs(60);
/// Mixed into the plan's seed for the latency schedule, so that adding latency to a plan does
/// not change which requests its fault schedule hits.
const LATENCY_SEED: u64 = 0x6c61_7465_6e63_7921;
/// Mixed into the plan's seed for the index lag's delays, for the same reason.
const LAG_SEED: u64 = 0x696e_6465_786c_6167;

/// Why a faulty client could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FaultError {
    /// The local engine could not be started or reached.
    #[error(transparent)]
    Local(#[from] LocalError),
    /// The engine's endpoint is not plain `http://host:port`, which the proxy needs.
    #[error("fault injection needs a plain http:// endpoint, not {0:?}")]
    Endpoint(String),
    /// The proxy could not listen.
    #[error("starting the fault-injection proxy: {0}")]
    Io(#[from] io::Error),
    /// The replica that serves lagging reads ([`FaultPlan::with_index_lag`]) could not start.
    #[error("starting the index-lag replica: {0}")]
    Replica(String),
}

/// A handle on a faulty client's proxy: its counts, and a switch to pause injection.
#[derive(Debug, Clone)]
pub struct FaultStats {
    shared: Arc<Shared>,
}

impl FaultStats {
    /// Whether the proxy answers resent transactions from their token: the plan allows it
    /// and the engine ignores tokens.
    pub fn emulates_idempotency(&self) -> bool {
        self.shared.emulate_idempotency
    }

    /// What the proxy saw and did so far.
    pub fn report(&self) -> FaultReport {
        lock(&self.shared.report).clone()
    }

    /// Every request received so far, in order, when the plan is
    /// [`recording`](FaultPlan::recording); none otherwise.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// Pauses (or resumes) injection; requests pass through untouched meanwhile.
    pub fn set_paused(&self, paused: bool) {
        self.shared.paused.store(paused, Ordering::Relaxed);
    }

    /// The proxy's endpoint, `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> &str {
        &self.shared.endpoint
    }

    /// Waits until every write the proxy has answered so far has reached the indexes and
    /// eventually consistent reads ([`FaultPlan::with_index_lag`]); at once without lag.
    pub async fn caught_up(&self) {
        if let Some(replica) = &self.shared.replica {
            replica.caught_up().await;
        }
    }
}

#[derive(Debug)]
struct Shared {
    plan: FaultPlan,
    /// The plan's wish, where the engine lacks tokens.
    emulate_idempotency: bool,
    /// `host:port` of the engine.
    upstream: String,
    endpoint: String,
    schedule: Mutex<fastrand::Rng>,
    paused: AtomicBool,
    report: Mutex<FaultReport>,
    /// Client request tokens of transactions in flight or applied.
    tokens: Mutex<HashMap<String, Token>>,
    /// Every request received, when the plan records them.
    requests: Mutex<Vec<RecordedRequest>>,
    /// Draws each request's delay when the plan has a latency.
    latency_schedule: Mutex<fastrand::Rng>,
    /// The partition limits' buckets, when the plan has them.
    capacity: Option<CapacityModel>,
    /// The replica lagging reads are served from, when the plan has an index lag.
    replica: Option<Arc<Replica>>,
}

/// A DynamoDB client for the local engine whose requests go through a fault-injecting proxy,
/// and the handle that counts what was injected. The proxy runs on the current tokio runtime
/// and stops with it.
///
/// # Errors
///
/// When the local engine cannot be started, its endpoint is not plain HTTP, or the proxy
/// cannot listen.
pub async fn client(plan: FaultPlan) -> Result<(aws_sdk_dynamodb::Client, FaultStats), FaultError> {
    let (retry, timeouts) = client_settings(&plan);
    let (sdk_config, stats) = proxy(plan).await?;
    let config = aws_sdk_dynamodb::config::Builder::from(&sdk_config)
        .endpoint_url(stats.endpoint())
        .retry_config(retry)
        .timeout_config(timeouts)
        .build();
    Ok((aws_sdk_dynamodb::Client::from_conf(config), stats))
}

/// A DynamoDB Streams client for the local engine through a fault-injecting proxy, as
/// [`client`] makes a DynamoDB one (the engine serves both APIs at one endpoint).
///
/// # Errors
///
/// As [`client`].
pub async fn streams_client(
    plan: FaultPlan,
) -> Result<(aws_sdk_dynamodbstreams::Client, FaultStats), FaultError> {
    let (retry, timeouts) = client_settings(&plan);
    let (sdk_config, stats) = proxy(plan).await?;
    let config = aws_sdk_dynamodbstreams::config::Builder::from(&sdk_config)
        .endpoint_url(stats.endpoint())
        .retry_config(retry)
        .timeout_config(timeouts)
        .build();
    Ok((aws_sdk_dynamodbstreams::Client::from_conf(config), stats))
}

/// The retries and timeouts of a client through the proxy, as `plan` asks.
fn client_settings(plan: &FaultPlan) -> (RetryConfig, TimeoutConfig) {
    let retry = if plan.sdk_retries {
        // Standard mode as users run it; short backoffs only so that tests finish quickly.
        RetryConfig::standard()
            .with_initial_backoff(Duration::from_millis(10))
            .with_max_backoff(Duration::from_millis(200))
    } else {
        RetryConfig::disabled()
    };
    let timeouts = TimeoutConfig::builder()
        .operation_attempt_timeout(plan.attempt_timeout)
        .build();
    (retry, timeouts)
}

/// A fault-injecting proxy in front of the local engine, on the current tokio runtime (it
/// stops with it): the engine's SDK configuration, and the handle that counts what was
/// injected and names the proxy's endpoint. [`client`] makes a client of it; the
/// `fault-proxy` binary serves it to other processes.
///
/// # Errors
///
/// As [`client`].
pub async fn proxy(plan: FaultPlan) -> Result<(aws_config::SdkConfig, FaultStats), FaultError> {
    let sdk_config = local::sdk_config().await?;
    let emulate_idempotency = plan.emulate_idempotency
        && local::Engine::from_env()?.deviates(local::Deviation::IgnoresClientRequestTokens);
    let endpoint = std::env::var("AWS_ENDPOINT_URL_DYNAMODB")
        .ok()
        .filter(|value| !value.trim().is_empty())
        .or_else(|| sdk_config.endpoint_url().map(str::to_owned))
        .unwrap_or_default();
    let upstream = upstream_address(&endpoint)?;
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let proxy = format!("http://{}", listener.local_addr()?);
    let replica = match plan.index_lag {
        Some(lag) => Some(
            Replica::start(lag, plan.seed ^ LAG_SEED, upstream.clone())
                .await
                .map_err(|ReplicaError(reason)| FaultError::Replica(reason))?,
        ),
        None => None,
    };
    let region = sdk_config
        .region()
        .map_or_else(|| "us-east-1".to_owned(), ToString::to_string);
    let shared = Arc::new(Shared {
        schedule: Mutex::new(fastrand::Rng::with_seed(plan.seed)),
        latency_schedule: Mutex::new(fastrand::Rng::with_seed(plan.seed ^ LATENCY_SEED)),
        capacity: plan
            .partition_limits
            .map(|limits| CapacityModel::new(limits, region)),
        replica,
        plan,
        emulate_idempotency,
        upstream,
        endpoint: proxy,
        paused: AtomicBool::new(false),
        report: Mutex::new(FaultReport::default()),
        tokens: Mutex::new(HashMap::new()),
        requests: Mutex::new(Vec::new()),
    });
    tokio::spawn(accept(listener, shared.clone()));
    Ok((sdk_config, FaultStats { shared }))
}

/// `host:port` of an `http://host[:port][/path]` endpoint.
fn upstream_address(endpoint: &str) -> Result<String, FaultError> {
    let rest = endpoint
        .strip_prefix("http://")
        .ok_or_else(|| FaultError::Endpoint(endpoint.to_owned()))?;
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty() {
        return Err(FaultError::Endpoint(endpoint.to_owned()));
    }
    Ok(if authority.contains(':') {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    })
}

// ---------------------------------------------------------------------------------------
// The proxy

async fn accept(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        match listener.accept().await {
            Ok((socket, _)) => {
                tokio::spawn(serve(socket, shared.clone()));
            }
            // Out of file descriptors, say: wait for connections to close.
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

/// What to do with a client's connection after a request.
enum Reply {
    /// Send this response and keep the connection.
    Send(Message),
    /// Close the connection without a response.
    Drop,
    /// Send nothing until the client gives up.
    Hang,
}

/// Serves one client connection, request after request (the SDK keeps connections alive).
async fn serve(socket: TcpStream, shared: Arc<Shared>) {
    let mut connection = Connection::new(socket);
    loop {
        let request = match read_message(&mut connection, false).await {
            Ok(Some(request)) => request,
            Ok(None) | Err(_) => return,
        };
        match handle(&shared, request).await {
            Reply::Send(response) => {
                if connection
                    .write_all(&response.to_bytes(false))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            Reply::Drop => return,
            Reply::Hang => {
                // Reads until the client closes its end (its attempt timed out).
                let _ = tokio::time::timeout(HANG_LIMIT, async {
                    while let Ok(true) = connection.fill().await {}
                })
                .await;
                return;
            }
        }
    }
}

impl Shared {
    /// Draws this request's fault, if any. Both draws are made for every request, so which
    /// kinds apply to one request does not shift the schedule of the next.
    fn decide(&self, operation: &str) -> Option<Fault> {
        let applicable: Vec<Fault> = self
            .plan
            .kinds
            .iter()
            .copied()
            .filter(|fault| fault.kind.applies_to(operation))
            .collect();
        let (roll, pick) = {
            let mut schedule = lock(&self.schedule);
            (schedule.f64(), schedule.usize(..applicable.len().max(1)))
        };
        if self.paused.load(Ordering::Relaxed)
            || roll >= self.plan.rate
            || !self.plan.targets(operation)
        {
            return None;
        }
        applicable.get(pick).copied()
    }

    fn record(&self, change: impl FnOnce(&mut FaultReport)) {
        change(&mut lock(&self.report));
    }
}

async fn handle(shared: &Shared, request: Message) -> Reply {
    let operation = request
        .header("x-amz-target")
        .and_then(|target| target.rsplit('.').next())
        .unwrap_or_default()
        .to_owned();
    if shared.plan.record_requests {
        let body = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        lock(&shared.requests).push(RecordedRequest {
            operation: operation.clone(),
            body,
        });
    }
    if let Some(latency) = shared.plan.latency {
        let delay = latency.draw(&mut lock(&shared.latency_schedule));
        // This task's own timer: other connections' requests wait meanwhile, not after.
        tokio::time::sleep(delay).await;
    }
    let Some(model) = &shared.capacity else {
        return inject(shared, &operation, request).await;
    };
    let (request, unprocessed) = match model.admit(&shared.upstream, &operation, &request).await {
        Admission::Whole => (request, None),
        Admission::Refused {
            response,
            throttled,
        } => {
            shared.record(|report| {
                report.requests += 1;
                *report.by_operation.entry(operation.clone()).or_insert(0) += 1;
                count_throttled(report, throttled);
            });
            return Reply::Send(response);
        }
        Admission::Part {
            body,
            unprocessed,
            throttled,
        } => {
            shared.record(|report| count_throttled(report, throttled));
            (Message { body, ..request }, Some(unprocessed))
        }
    };
    let sent = request.clone();
    let reply = inject(shared, &operation, request).await;
    if let Reply::Send(response) = &reply {
        model.charge_rest(&operation, &sent, response);
    }
    match (unprocessed, reply) {
        (Some(unprocessed), Reply::Send(response)) => Reply::Send(with_unprocessed(
            response,
            unprocessed,
            operation == "BatchGetItem",
        )),
        // No part held back, or no response to add it to (a dropped or hung connection).
        (_, reply) => reply,
    }
}

/// The request's fault, drawn from the schedule and injected; the engine's answer when none.
async fn inject(shared: &Shared, operation: &str, request: Message) -> Reply {
    let fault = shared.decide(operation);
    shared.record(|report| {
        report.requests += 1;
        *report.by_operation.entry(operation.to_owned()).or_insert(0) += 1;
        if let Some(fault) = fault {
            *report.injected.entry(fault).or_insert(0) += 1;
        }
    });
    let Some(fault) = fault else {
        return match forward(shared, operation, &request).await {
            Ok(response) => Reply::Send(response),
            Err(_) => Reply::Drop,
        };
    };
    if fault.kind == FaultKind::Unprocessed {
        return partial_batch(shared, operation, request).await;
    }
    if fault.phase == Phase::AfterApply && forward(shared, operation, &request).await.is_err() {
        return Reply::Drop;
    }
    match fault.kind {
        FaultKind::Timeout => Reply::Hang,
        FaultKind::ConnectionDropped => Reply::Drop,
        kind => Reply::Send(error_response(kind, &request)),
    }
}

/// Sends `request` to the engine, or answers a resent transaction as DynamoDB would.
async fn forward(shared: &Shared, operation: &str, request: &Message) -> io::Result<Message> {
    let token = (shared.emulate_idempotency && operation == "TransactWriteItems")
        .then(|| transaction_token(&request.body))
        .flatten();
    if let Some((token, params)) = &token {
        let answer = {
            let mut tokens = lock(&shared.tokens);
            tokens.retain(|_, known| match known {
                Token::InFlight => true,
                Token::Applied { at, .. } => at.elapsed() < TOKEN_WINDOW,
            });
            let answer = match tokens.get(token) {
                None => None,
                Some(Token::InFlight) => Some(dynamodb_error(
                    "TransactionInProgressException",
                    "A transaction with this client request token is in progress",
                )),
                Some(Token::Applied {
                    params: known,
                    response,
                    ..
                }) if known == params => Some(response.clone()),
                Some(Token::Applied { .. }) => Some(dynamodb_error(
                    "IdempotentParameterMismatchException",
                    "Request parameters differ from those of an earlier request with the same client request token",
                )),
            };
            if answer.is_none() {
                tokens.insert(token.clone(), Token::InFlight);
            }
            answer
        };
        if let Some(answer) = answer {
            if answer.status() == Some(200) {
                shared.record(|report| report.replayed += 1);
            }
            return Ok(answer);
        }
    }
    let upstream = match &shared.replica {
        Some(replica) => replica.upstream(&shared.upstream, operation, request).await,
        None => &shared.upstream,
    };
    let lagging = upstream != shared.upstream;
    let response = send_upstream(upstream, request).await;
    if let Ok(response) = &response {
        shared.record(|report| {
            report.forwarded += 1;
            report.lagging_reads += u64::from(lagging);
        });
        if let Some(replica) = &shared.replica {
            replica.follow(operation, request, response).await;
        }
    }
    if let Some((token, params)) = token {
        let mut tokens = lock(&shared.tokens);
        match &response {
            // Only a transaction that happened is remembered: a cancelled one wrote nothing,
            // and DynamoDB evaluates its resend anew.
            Ok(response) if response.status() == Some(200) => {
                tokens.insert(
                    token,
                    Token::Applied {
                        params,
                        response: response.clone(),
                        at: Instant::now(),
                    },
                );
            }
            _ => {
                tokens.remove(&token);
            }
        }
    }
    response
}

/// A batch of which a random part (at least one operation or key) is reported unprocessed
/// and never reaches the engine; the rest is forwarded.
async fn partial_batch(shared: &Shared, operation: &str, request: Message) -> Reply {
    let reads = operation == "BatchGetItem";
    let Ok(mut body) = serde_json::from_slice::<Value>(&request.body) else {
        return relay(forward(shared, operation, &request).await);
    };
    let Some(tables) = body.get_mut("RequestItems").and_then(Value::as_object_mut) else {
        return relay(forward(shared, operation, &request).await);
    };
    // Which entries to defer, drawn from the schedule so a seed reproduces them.
    let mut deferred: Map<String, Value> = Map::new();
    {
        let mut schedule = lock(&shared.schedule);
        let sizes: Vec<usize> = tables
            .values()
            .map(|entry| entries(entry, reads).map_or(0, Vec::len))
            .collect();
        let total: usize = sizes.iter().sum();
        let forced = (total > 0).then(|| schedule.usize(..total));
        let mut position = 0;
        for (table, entry) in tables.iter_mut() {
            let Some(list) = entries_mut(entry, reads) else {
                continue;
            };
            let mut kept = Vec::new();
            let mut moved = Vec::new();
            for value in list.drain(..) {
                if schedule.bool() || forced == Some(position) {
                    moved.push(value);
                } else {
                    kept.push(value);
                }
                position += 1;
            }
            *list = kept;
            if !moved.is_empty() {
                let unprocessed = if reads {
                    // The table's `KeysAndAttributes` (projection, consistency) with these keys.
                    let mut keys = entry.clone();
                    if let Some(object) = keys.as_object_mut() {
                        object.insert("Keys".to_owned(), Value::Array(moved));
                    }
                    keys
                } else {
                    Value::Array(moved)
                };
                deferred.insert(table.clone(), unprocessed);
            }
        }
        tables.retain(|_, entry| entries(entry, reads).is_some_and(|list| !list.is_empty()));
    }
    let mut answer = if tables.is_empty() {
        // Nothing left to forward: the engine's answer to an empty batch.
        if reads {
            json!({ "Responses": {}, "UnprocessedKeys": {} })
        } else {
            json!({ "UnprocessedItems": {} })
        }
    } else {
        let forwarded = Message {
            body: body.to_string().into_bytes(),
            ..request
        };
        let response = match forward(shared, operation, &forwarded).await {
            Ok(response) => response,
            Err(_) => return Reply::Drop,
        };
        if response.status() != Some(200) {
            return Reply::Send(response);
        }
        match serde_json::from_slice::<Value>(&response.body) {
            Ok(answer) => answer,
            Err(_) => return Reply::Send(response),
        }
    };
    if !merge_unprocessed(&mut answer, deferred, reads) {
        return Reply::Drop;
    }
    Reply::Send(json_response(200, "OK", &answer))
}

fn relay(response: io::Result<Message>) -> Reply {
    match response {
        Ok(response) => Reply::Send(response),
        Err(_) => Reply::Drop,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn endpoints_must_be_plain_http() -> TestResult {
        assert_eq!(upstream_address("http://127.0.0.1:8000")?, "127.0.0.1:8000");
        assert_eq!(upstream_address("http://localhost/path")?, "localhost:80");
        assert!(upstream_address("https://dynamodb.us-east-1.amazonaws.com").is_err());
        assert!(upstream_address("http://").is_err());
        assert!(upstream_address("").is_err());
        Ok(())
    }

    #[test]
    fn the_schedule_is_reproducible_and_near_its_rate() {
        let plan = FaultPlan::new(7, 0.1);
        let shared = |plan: &FaultPlan| Shared {
            plan: plan.clone(),
            emulate_idempotency: false,
            upstream: String::new(),
            endpoint: String::new(),
            schedule: Mutex::new(fastrand::Rng::with_seed(plan.seed)),
            paused: AtomicBool::new(false),
            report: Mutex::new(FaultReport::default()),
            tokens: Mutex::new(HashMap::new()),
            requests: Mutex::new(Vec::new()),
            latency_schedule: Mutex::new(fastrand::Rng::with_seed(plan.seed)),
            capacity: None,
            replica: None,
        };
        let (first, second) = (shared(&plan), shared(&plan));
        let draws: Vec<Option<Fault>> = (0..10_000).map(|_| first.decide("PutItem")).collect();
        let again: Vec<Option<Fault>> = (0..10_000).map(|_| second.decide("PutItem")).collect();
        assert_eq!(draws, again);
        let injected = draws.iter().flatten().count();
        assert!((800..1200).contains(&injected), "{injected}");
        assert!(draws
            .iter()
            .flatten()
            .all(|fault| fault.kind.applies_to("PutItem")));
    }
}
