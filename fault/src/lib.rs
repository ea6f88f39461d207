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
mod capacity;
mod latency;
pub use authorization::{allows, Authorization};
pub use capacity::{PartitionKey, PartitionLimits};
pub use latency::Latency;

use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::config::timeout::TimeoutConfig;
use aws_sdk_dynamodb::types::AttributeValue;
use capacity::{Access, Admission, CapacityModel};
use serde_json::{json, Map, Value};
use singletable_runtime::error::Error;
use singletable_runtime::item::{self, Item};
use singletable_runtime::local::{self, LocalError};
use singletable_runtime::schema::Entity;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};

/// How long DynamoDB remembers a client request token.
const TOKEN_WINDOW: Duration = Duration::from_secs(600);
/// How long a "timeout" holds a connection open if the client never gives up.
const HANG_LIMIT: Duration = Duration::from_secs(60);
/// Request and response heads larger than this are refused (DynamoDB's are a few hundred bytes).
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Mixed into the plan's seed for the latency schedule, so that adding latency to a plan does
/// not change which requests its fault schedule hits.
const LATENCY_SEED: u64 = 0x6c61_7465_6e63_7921;

/// What goes wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultKind {
    /// HTTP 400 `ProvisionedThroughputExceededException` (retried by the SDK).
    ProvisionedThroughputExceeded,
    /// HTTP 400 `ThrottlingException` (retried by the SDK).
    Throttling,
    /// HTTP 400 `TransactionCanceledException` whose first reason is `TransactionConflict`;
    /// `TransactWriteItems` only (the SDK does not retry it, the library does).
    TransactionConflict,
    /// HTTP 500 `InternalServerError` (retried by the SDK).
    InternalServerError,
    /// HTTP 503 `ServiceUnavailable` (retried by the SDK).
    ServiceUnavailable,
    /// No response until the client's attempt timeout gives up (retried by the SDK).
    Timeout,
    /// The connection is closed without a response (retried by the SDK).
    ConnectionDropped,
    /// A `BatchWriteItem` or `BatchGetItem` of which a random part is reported in
    /// `UnprocessedItems`/`UnprocessedKeys` and never reaches the engine, as DynamoDB does
    /// under load (retried by the library). Its phase is ignored.
    Unprocessed,
}

impl FaultKind {
    /// Every kind, in declaration order.
    pub const ALL: [FaultKind; 8] = [
        FaultKind::ProvisionedThroughputExceeded,
        FaultKind::Throttling,
        FaultKind::TransactionConflict,
        FaultKind::InternalServerError,
        FaultKind::ServiceUnavailable,
        FaultKind::Timeout,
        FaultKind::ConnectionDropped,
        FaultKind::Unprocessed,
    ];

    /// Whether this kind can hit a request of `operation` (`"PutItem"`, ...).
    pub fn applies_to(self, operation: &str) -> bool {
        match self {
            FaultKind::TransactionConflict => operation == "TransactWriteItems",
            FaultKind::Unprocessed => matches!(operation, "BatchWriteItem" | "BatchGetItem"),
            _ => true,
        }
    }

    fn name(self) -> &'static str {
        match self {
            FaultKind::ProvisionedThroughputExceeded => "ProvisionedThroughputExceeded",
            FaultKind::Throttling => "Throttling",
            FaultKind::TransactionConflict => "TransactionConflict",
            FaultKind::InternalServerError => "HTTP 500",
            FaultKind::ServiceUnavailable => "HTTP 503",
            FaultKind::Timeout => "timeout",
            FaultKind::ConnectionDropped => "dropped connection",
            FaultKind::Unprocessed => "unprocessed batch part",
        }
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// When a fault strikes, relative to the engine applying the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// The request never reaches the engine: nothing was applied.
    BeforeApply,
    /// The engine applied the request, then the response was lost or replaced: the ambiguous
    /// case, where the client cannot tell from the response whether its write happened.
    AfterApply,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::BeforeApply => "before",
            Phase::AfterApply => "after",
        })
    }
}

/// One kind of fault at one phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fault {
    /// What goes wrong.
    pub kind: FaultKind,
    /// Before or after the engine applies the request.
    pub phase: Phase,
}

impl Fault {
    /// `kind` before the engine applies the request.
    pub const fn before(kind: FaultKind) -> Self {
        Fault {
            kind,
            phase: Phase::BeforeApply,
        }
    }

    /// `kind` after the engine applied the request.
    pub const fn after(kind: FaultKind) -> Self {
        Fault {
            kind,
            phase: Phase::AfterApply,
        }
    }

    /// The faults DynamoDB and networks can produce: throttling, transaction conflicts and
    /// unprocessed batch parts happen before a request is applied (DynamoDB guarantees a
    /// throttled or cancelled request wrote nothing); server errors, timeouts and dropped
    /// connections may happen on either side of it.
    pub fn realistic() -> Vec<Fault> {
        use FaultKind::*;
        let mut faults = vec![
            Fault::before(ProvisionedThroughputExceeded),
            Fault::before(Throttling),
            Fault::before(TransactionConflict),
            Fault::before(Unprocessed),
        ];
        for kind in [
            InternalServerError,
            ServiceUnavailable,
            Timeout,
            ConnectionDropped,
        ] {
            faults.push(Fault::before(kind));
            faults.push(Fault::after(kind));
        }
        faults
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind, self.phase)
    }
}

/// What to inject, how often, and how the faulty client behaves.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultPlan {
    /// Seeds the schedule: with one request in flight at a time, the same seed injects the
    /// same faults into the same requests.
    pub seed: u64,
    /// The probability that a request gets a fault, from 0 to 1.
    pub rate: f64,
    /// The faults to draw from (uniformly, among those that apply to the request).
    pub kinds: Vec<Fault>,
    /// Whether the client keeps the SDK's standard retries (3 attempts).
    pub sdk_retries: bool,
    /// The client's per-attempt timeout, which ends [`FaultKind::Timeout`] faults; keep it well
    /// above the engine's normal latency.
    pub attempt_timeout: Duration,
    /// Whether the proxy answers a resent `TransactWriteItems` with a known
    /// `ClientRequestToken` as DynamoDB does, on an engine that ignores tokens (see the
    /// module docs). It never does on an engine that honours them.
    pub emulate_idempotency: bool,
    /// Whether the proxy keeps every request it receives ([`FaultStats::requests`]).
    pub record_requests: bool,
    /// The delay the proxy adds to every request, as a round trip to DynamoDB would
    /// ([`Latency`]); none when `None`.
    pub latency: Option<Latency>,
    /// The throughput limits per partition key value the proxy enforces, as DynamoDB's
    /// partitions do ([`FaultPlan::with_partition_limits`]); none when `None`.
    pub partition_limits: Option<PartitionLimits>,
}

impl FaultPlan {
    /// [`Fault::realistic`] faults at `rate`, SDK retries on, a 500 ms attempt timeout,
    /// idempotency tokens emulated where the engine lacks them.
    pub fn new(seed: u64, rate: f64) -> Self {
        FaultPlan {
            seed,
            rate,
            kinds: Fault::realistic(),
            sdk_retries: true,
            attempt_timeout: Duration::from_millis(500),
            emulate_idempotency: true,
            record_requests: false,
            latency: None,
            partition_limits: None,
        }
    }

    /// Keeps every request the proxy receives, for a test to check what the library sent
    /// (its operations, tables and indexes, as IAM authorizes them).
    pub fn recording(mut self) -> Self {
        self.record_requests = true;
        self
    }

    /// Draws from these faults only.
    pub fn with_kinds(mut self, kinds: impl IntoIterator<Item = Fault>) -> Self {
        self.kinds = kinds.into_iter().collect();
        self
    }

    /// Turns the SDK's retries off: every fault reaches the library (and the caller) at once.
    pub fn without_sdk_retries(mut self) -> Self {
        self.sdk_retries = false;
        self
    }

    /// Sets the client's per-attempt timeout.
    pub fn with_attempt_timeout(mut self, timeout: Duration) -> Self {
        self.attempt_timeout = timeout;
        self
    }

    /// Forwards resent transactions to the engine as they are, whatever the engine (moto then
    /// applies them again).
    pub fn without_idempotency_emulation(mut self) -> Self {
        self.emulate_idempotency = false;
        self
    }

    /// Holds every request for `latency` before serving it, each on its own timer, so that
    /// requests in flight together wait together, as round trips to DynamoDB do. The delays
    /// are drawn from a schedule of their own, seeded by the plan's seed. Keep the
    /// [attempt timeout](FaultPlan::with_attempt_timeout) well above
    /// [`Latency::longest`].
    pub fn with_latency(mut self, latency: Latency) -> Self {
        self.latency = Some(latency);
        self
    }

    /// Enforces `limits` per partition key value, as DynamoDB's partitions do
    /// ([`PartitionLimits::DYNAMODB`]: 1,000 write units and 3,000 read units a second): a
    /// token bucket per key, charged by item size; requests over a key's limit are refused
    /// with DynamoDB's errors (`ProvisionedThroughputExceededException`, batch items left
    /// unprocessed, transactions cancelled), and the keys counted in
    /// [`FaultReport::throttled_writes`] and [`FaultReport::throttled_reads`]. What is charged
    /// and what is approximated is told on [`PartitionLimits`]. Independent of the fault
    /// schedule: a request refused here draws no fault.
    pub fn with_partition_limits(mut self, limits: PartitionLimits) -> Self {
        self.partition_limits = Some(limits);
        self
    }
}

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
}

/// What a faulty client's proxy saw and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultReport {
    /// Requests received (SDK retries included).
    pub requests: u64,
    /// Requests received, per operation.
    pub by_operation: BTreeMap<String, u64>,
    /// Requests the engine received (some after a fault, see [`Phase::AfterApply`]).
    pub forwarded: u64,
    /// Resent transactions answered from the idempotency emulation, not applied again.
    pub replayed: u64,
    /// Faults injected.
    pub injected: BTreeMap<Fault, u64>,
    /// Writes refused by the [partition limits](FaultPlan::with_partition_limits), per
    /// partition key: each refused item counts once (a batch item left unprocessed, a
    /// transaction's item over its key's limit, a single write).
    pub throttled_writes: BTreeMap<PartitionKey, u64>,
    /// Reads refused by the partition limits, per partition key, counted as writes are.
    pub throttled_reads: BTreeMap<PartitionKey, u64>,
}

impl FaultReport {
    /// Faults injected in all.
    pub fn injected_total(&self) -> u64 {
        self.injected.values().sum()
    }

    /// Faults injected per kind, both phases together.
    pub fn injected_by_kind(&self) -> BTreeMap<FaultKind, u64> {
        let mut kinds = BTreeMap::new();
        for (fault, count) in &self.injected {
            *kinds.entry(fault.kind).or_insert(0) += count;
        }
        kinds
    }

    /// Items refused by the partition limits in all, reads and writes.
    pub fn throttled_total(&self) -> u64 {
        self.throttled_writes.values().sum::<u64>() + self.throttled_reads.values().sum::<u64>()
    }

    /// Faults injected after the engine applied the request.
    pub fn injected_after_apply(&self) -> u64 {
        self.injected
            .iter()
            .filter(|(fault, _)| fault.phase == Phase::AfterApply)
            .map(|(_, count)| count)
            .sum()
    }
}

impl fmt::Display for FaultReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} requests, {} faults injected ({} after the engine applied the request), {} idempotent replays",
            self.requests,
            self.injected_total(),
            self.injected_after_apply(),
            self.replayed
        )?;
        if !self.injected.is_empty() {
            let faults: Vec<String> = self
                .injected
                .iter()
                .map(|(fault, count)| format!("{fault}: {count}"))
                .collect();
            write!(f, " [{}]", faults.join(", "))?;
        }
        for (what, throttled) in [
            ("writes", &self.throttled_writes),
            ("reads", &self.throttled_reads),
        ] {
            if !throttled.is_empty() {
                let keys: Vec<String> = throttled
                    .iter()
                    .map(|(key, count)| format!("{key}: {count}"))
                    .collect();
                write!(
                    f,
                    "; {what} throttled by partition limits: {}",
                    keys.join(", ")
                )?;
            }
        }
        Ok(())
    }
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
}

/// A request as the proxy received it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// The operation, from `X-Amz-Target` (`PutItem`, `GetRecords`).
    pub operation: String,
    /// The JSON body (`Null` when it was not JSON).
    pub body: Value,
}

/// What DynamoDB knows of a client request token.
#[derive(Debug)]
enum Token {
    /// A transaction with it is being applied: a resend meanwhile (the SDK's, after its
    /// attempt timed out) is refused with `TransactionInProgressException`.
    InFlight,
    /// It was applied: a resend with the same parameters gets the same response.
    Applied {
        params: Value,
        response: Message,
        at: Instant,
    },
}

/// A lock that survives a panicking holder: the data are counters, never left half-updated.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
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
    let (sdk_config, stats) = proxy(plan).await?;
    let config = aws_sdk_dynamodb::config::Builder::from(&sdk_config)
        .endpoint_url(stats.endpoint())
        .retry_config(retry)
        .timeout_config(timeouts)
        .build();
    Ok((aws_sdk_dynamodb::Client::from_conf(config), stats))
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
    let region = sdk_config
        .region()
        .map_or_else(|| "us-east-1".to_owned(), ToString::to_string);
    let shared = Arc::new(Shared {
        schedule: Mutex::new(fastrand::Rng::with_seed(plan.seed)),
        latency_schedule: Mutex::new(fastrand::Rng::with_seed(plan.seed ^ LATENCY_SEED)),
        capacity: plan
            .partition_limits
            .map(|limits| CapacityModel::new(limits, region)),
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

/// Whether `error` is a failed condition whose current item is exactly what `written` put
/// there: the signature of a conditional put ([`singletable_runtime::op::put::Put::only_if_absent`], or a
/// versioned put) whose response was lost after the engine applied it, and which the SDK then
/// resent. The library reports that as [`Error::ConditionFailed`] or
/// [`Error::VersionConflict`]; a test uses this to tell it from a real conflict.
///
/// Timestamps the library maintains are not compared (they are set when the request is
/// built); a versioned entity is expected at the version after the one it carries.
pub fn is_own_write<E: Entity>(error: &Error, written: &E) -> bool {
    let current = match error {
        Error::ConditionFailed {
            current: Some(current),
            ..
        }
        | Error::VersionConflict {
            current: Some(current),
            ..
        } => current,
        _ => return false,
    };
    let Ok(mut expected) = item::encode(written) else {
        return false;
    };
    let managed = E::SCHEMA.managed;
    if let Some(attribute) = managed.version {
        let version = singletable_runtime::__private::version_of(expected.get(attribute));
        expected.insert(
            attribute.to_owned(),
            AttributeValue::N((version + 1).to_string()),
        );
    }
    let ignored = [
        managed.created_at.map(|timestamp| timestamp.attribute),
        managed.updated_at.map(|timestamp| timestamp.attribute),
    ];
    let compared = |item: &Item| -> Item {
        item.iter()
            .filter(|(name, _)| !ignored.contains(&Some(name.as_str())))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect()
    };
    item::same_item(&compared(current), &compared(&expected))
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
        if self.paused.load(Ordering::Relaxed) || roll >= self.plan.rate {
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
    match unprocessed {
        Some(unprocessed) => with_unprocessed(reply, unprocessed, operation == "BatchGetItem"),
        None => reply,
    }
}

fn count_throttled(report: &mut FaultReport, throttled: Vec<(Access, PartitionKey)>) {
    for (access, key) in throttled {
        let counts = match access {
            Access::Read => &mut report.throttled_reads,
            Access::Write => &mut report.throttled_writes,
        };
        *counts.entry(key).or_insert(0) += 1;
    }
}

/// A batch's reply with the part the partition limits held back added to what it reports
/// unprocessed; any other reply as it is (the client resends the whole batch after an error).
fn with_unprocessed(reply: Reply, unprocessed: Map<String, Value>, reads: bool) -> Reply {
    let Reply::Send(response) = reply else {
        return reply;
    };
    if response.status() != Some(200) {
        return Reply::Send(response);
    }
    let Ok(mut answer) = serde_json::from_slice::<Value>(&response.body) else {
        return Reply::Send(response);
    };
    if !merge_unprocessed(&mut answer, unprocessed, reads) {
        return Reply::Send(response);
    }
    Reply::Send(json_response(200, "OK", &answer))
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
    let response = send_upstream(&shared.upstream, request).await;
    if response.is_ok() {
        shared.record(|report| report.forwarded += 1);
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

/// A DynamoDB error response (HTTP 400) of type `name`.
fn dynamodb_error(name: &str, message: &str) -> Message {
    json_response(
        400,
        "Bad Request",
        &json!({
            "__type": format!("com.amazonaws.dynamodb.v20120810#{name}"),
            "Message": message,
        }),
    )
}

/// The token of a `TransactWriteItems` body and the rest of its parameters.
fn transaction_token(body: &[u8]) -> Option<(String, Value)> {
    let mut params: Value = serde_json::from_slice(body).ok()?;
    let token = params
        .as_object_mut()?
        .remove("ClientRequestToken")?
        .as_str()?
        .to_owned();
    Some((token, params))
}

/// One request to the engine on a fresh connection, which the engine closes after answering.
async fn send_upstream(upstream: &str, request: &Message) -> io::Result<Message> {
    let stream = TcpStream::connect(upstream).await?;
    let mut connection = Connection::new(stream);
    connection.write_all(&request.to_bytes(true)).await?;
    read_message(&mut connection, true)
        .await?
        .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "the engine sent no response"))
}

/// A DynamoDB error response for `kind`.
fn error_response(kind: FaultKind, request: &Message) -> Message {
    let (status, reason, error_type, message) = match kind {
        FaultKind::ProvisionedThroughputExceeded => (
            400,
            "Bad Request",
            "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
            "The level of configured provisioned throughput for the table was exceeded (injected)",
        ),
        FaultKind::Throttling => (
            400,
            "Bad Request",
            "com.amazon.coral.availability#ThrottlingException",
            "Rate of requests exceeds the allowed throughput (injected)",
        ),
        FaultKind::TransactionConflict => (
            400,
            "Bad Request",
            "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
            "Transaction cancelled, please refer cancellation reasons for specific reasons (injected)",
        ),
        FaultKind::ServiceUnavailable => (
            503,
            "Service Unavailable",
            "com.amazon.coral.availability#ServiceUnavailableException",
            "Service unavailable (injected)",
        ),
        // Timeouts, drops and unprocessed parts are not answered with an error; a 500 stands
        // in should one get here.
        FaultKind::InternalServerError
        | FaultKind::Timeout
        | FaultKind::ConnectionDropped
        | FaultKind::Unprocessed => (
            500,
            "Internal Server Error",
            "com.amazonaws.dynamodb.v20120810#InternalServerError",
            "Internal server error (injected)",
        ),
    };
    let mut body = json!({ "__type": error_type, "Message": message });
    if kind == FaultKind::TransactionConflict {
        // One reason per operation, as DynamoDB sends them: the conflict on the first.
        let operations = serde_json::from_slice::<Value>(&request.body)
            .ok()
            .and_then(|body| body.get("TransactItems")?.as_array().map(Vec::len))
            .unwrap_or(1)
            .max(1);
        let reasons: Vec<Value> = (0..operations)
            .map(|position| {
                if position == 0 {
                    json!({ "Code": "TransactionConflict", "Message": "Transaction is ongoing for the item (injected)" })
                } else {
                    json!({ "Code": "None" })
                }
            })
            .collect();
        body["CancellationReasons"] = Value::Array(reasons);
    }
    json_response(status, reason, &body)
}

fn json_response(status: u16, reason: &str, body: &Value) -> Message {
    Message {
        start: format!("HTTP/1.1 {status} {reason}"),
        headers: vec![
            (
                "Content-Type".to_owned(),
                "application/x-amz-json-1.0".to_owned(),
            ),
            (
                "x-amzn-RequestId".to_owned(),
                "singletable-fault".to_owned(),
            ),
        ],
        body: body.to_string().into_bytes(),
    }
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

/// Merges a deferred part of a batch (in the shape of `UnprocessedItems` or
/// `UnprocessedKeys`) into what a batch's answer reports unprocessed; `false` when the answer
/// is not a JSON object.
fn merge_unprocessed(answer: &mut Value, deferred: Map<String, Value>, reads: bool) -> bool {
    let unprocessed_field = if reads {
        "UnprocessedKeys"
    } else {
        "UnprocessedItems"
    };
    let Some(answer_object) = answer.as_object_mut() else {
        return false;
    };
    let unprocessed = answer_object
        .entry(unprocessed_field)
        .or_insert_with(|| json!({}));
    if !unprocessed.is_object() {
        *unprocessed = json!({});
    }
    for (table, part) in deferred {
        let Some(unprocessed) = unprocessed.as_object_mut() else {
            break;
        };
        match unprocessed.get_mut(&table) {
            Some(existing) => {
                let moved = entries(&part, reads).cloned().unwrap_or_default();
                if let Some(list) = entries_mut(existing, reads) {
                    list.extend(moved);
                }
            }
            None => {
                unprocessed.insert(table, part);
            }
        }
    }
    true
}

fn relay(response: io::Result<Message>) -> Reply {
    match response {
        Ok(response) => Reply::Send(response),
        Err(_) => Reply::Drop,
    }
}

/// The write requests (a list) or keys (`Keys` of a map) of one table's batch entry.
fn entries(entry: &Value, reads: bool) -> Option<&Vec<Value>> {
    if reads {
        entry.get("Keys")?.as_array()
    } else {
        entry.as_array()
    }
}

fn entries_mut(entry: &mut Value, reads: bool) -> Option<&mut Vec<Value>> {
    if reads {
        entry.get_mut("Keys")?.as_array_mut()
    } else {
        entry.as_array_mut()
    }
}

// ---------------------------------------------------------------------------------------
// Minimal HTTP/1.1, on tokio's `net` feature alone (its `io-util` is not a dependency)

/// A request or response: start line, headers, and the whole body.
#[derive(Debug, Clone)]
struct Message {
    start: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Message {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The status code of a response.
    fn status(&self) -> Option<u16> {
        self.start.split_whitespace().nth(1)?.parse().ok()
    }

    /// The message with its body length as `Content-Length` (never chunked), asking the
    /// other side to close the connection afterwards when `close`.
    fn to_bytes(&self, close: bool) -> Vec<u8> {
        let mut head = String::with_capacity(256);
        head.push_str(&self.start);
        head.push_str("\r\n");
        for (name, value) in &self.headers {
            let framing = ["content-length", "transfer-encoding", "connection"]
                .iter()
                .any(|framing| name.eq_ignore_ascii_case(framing));
            if !framing {
                head.push_str(name);
                head.push_str(": ");
                head.push_str(value);
                head.push_str("\r\n");
            }
        }
        head.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        if close {
            head.push_str("Connection: close\r\n");
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }
}

/// A socket with a read buffer.
struct Connection {
    stream: TcpStream,
    buffer: Vec<u8>,
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_owned())
}

impl Connection {
    fn new(stream: TcpStream) -> Self {
        Connection {
            stream,
            buffer: Vec::new(),
        }
    }

    /// Reads more into the buffer; `false` at end of stream.
    async fn fill(&mut self) -> io::Result<bool> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            self.stream.readable().await?;
            match self.stream.try_read(&mut chunk) {
                Ok(0) => return Ok(false),
                Ok(read) => {
                    self.buffer
                        .extend_from_slice(chunk.get(..read).unwrap_or_default());
                    return Ok(true);
                }
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
                Err(error) => return Err(error),
            }
        }
    }

    async fn write_all(&self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            self.stream.writable().await?;
            match self.stream.try_write(bytes) {
                Ok(written) => bytes = bytes.get(written..).unwrap_or_default(),
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }

    /// Takes exactly `count` bytes.
    async fn take(&mut self, count: usize) -> io::Result<Vec<u8>> {
        while self.buffer.len() < count {
            if !self.fill().await? {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed mid-message",
                ));
            }
        }
        Ok(self.buffer.drain(..count).collect())
    }

    /// Takes one CRLF-terminated line, without the CRLF.
    async fn line(&mut self) -> io::Result<String> {
        loop {
            if let Some(end) = find(&self.buffer, b"\r\n") {
                let line: Vec<u8> = self.buffer.drain(..end + 2).collect();
                return Ok(
                    String::from_utf8_lossy(line.get(..end).unwrap_or_default()).into_owned()
                );
            }
            if self.buffer.len() > MAX_HEAD_BYTES {
                return Err(invalid("line too long"));
            }
            if !self.fill().await? {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed mid-line",
                ));
            }
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// Reads one message; `None` when the connection closes cleanly before one starts. A message
/// without a length runs to the end of the stream when `to_eof` (a response on a connection
/// the other side closes), and is empty otherwise (a request without a body).
async fn read_message(connection: &mut Connection, to_eof: bool) -> io::Result<Option<Message>> {
    let end = loop {
        if let Some(end) = find(&connection.buffer, b"\r\n\r\n") {
            break end;
        }
        if connection.buffer.len() > MAX_HEAD_BYTES {
            return Err(invalid("head too long"));
        }
        if !connection.fill().await? {
            return if connection.buffer.is_empty() {
                Ok(None)
            } else {
                Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed mid-head",
                ))
            };
        }
    };
    let head: Vec<u8> = connection.buffer.drain(..end + 4).collect();
    let text = String::from_utf8_lossy(head.get(..end).unwrap_or_default()).into_owned();
    let mut lines = text.split("\r\n");
    let start = lines.next().unwrap_or_default().to_owned();
    let headers = lines
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            Some((name.trim().to_owned(), value.trim().to_owned()))
        })
        .collect();
    let mut message = Message {
        start,
        headers,
        body: Vec::new(),
    };
    let chunked = message
        .header("transfer-encoding")
        .is_some_and(|value| value.to_ascii_lowercase().contains("chunked"));
    if chunked {
        loop {
            let line = connection.line().await?;
            let size = line.split(';').next().unwrap_or_default().trim();
            let size = usize::from_str_radix(size, 16).map_err(|_| invalid("bad chunk size"))?;
            if size == 0 {
                // Trailers, up to the empty line.
                while !connection.line().await?.is_empty() {}
                break;
            }
            let chunk = connection.take(size).await?;
            message.body.extend_from_slice(&chunk);
            connection.take(2).await?;
        }
    } else if let Some(length) = message.header("content-length") {
        let length: usize = length
            .trim()
            .parse()
            .map_err(|_| invalid("bad content-length"))?;
        message.body = connection.take(length).await?;
    } else if to_eof {
        while connection.fill().await? {}
        message.body = std::mem::take(&mut connection.buffer);
    }
    Ok(Some(message))
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
    fn kinds_apply_only_where_dynamodb_produces_them() {
        assert!(FaultKind::TransactionConflict.applies_to("TransactWriteItems"));
        assert!(!FaultKind::TransactionConflict.applies_to("PutItem"));
        assert!(FaultKind::Unprocessed.applies_to("BatchGetItem"));
        assert!(!FaultKind::Unprocessed.applies_to("Query"));
        assert!(FaultKind::Timeout.applies_to("UpdateItem"));
        // Throttling and cancellations never follow an applied write.
        for fault in Fault::realistic() {
            if matches!(
                fault.kind,
                FaultKind::ProvisionedThroughputExceeded
                    | FaultKind::Throttling
                    | FaultKind::TransactionConflict
            ) {
                assert_eq!(fault.phase, Phase::BeforeApply, "{fault}");
            }
        }
    }

    #[test]
    fn the_token_is_taken_out_of_the_compared_parameters() -> TestResult {
        let body = br#"{"TransactItems":[{"Put":{}}],"ClientRequestToken":"st-1"}"#;
        let (token, params) = transaction_token(body).ok_or("a token")?;
        assert_eq!(token, "st-1");
        assert_eq!(params, json!({"TransactItems":[{"Put":{}}]}));
        assert!(transaction_token(b"{}").is_none());
        assert!(transaction_token(b"not json").is_none());
        Ok(())
    }

    #[test]
    fn a_conflict_names_one_reason_per_operation() -> TestResult {
        let request = Message {
            start: "POST / HTTP/1.1".into(),
            headers: Vec::new(),
            body: br#"{"TransactItems":[{},{},{}]}"#.to_vec(),
        };
        let response = error_response(FaultKind::TransactionConflict, &request);
        assert_eq!(response.status(), Some(400));
        let body: Value = serde_json::from_slice(&response.body)?;
        let codes: Vec<&str> = body["CancellationReasons"]
            .as_array()
            .ok_or("a list of reasons")?
            .iter()
            .map(|reason| reason["Code"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(codes, ["TransactionConflict", "None", "None"]);
        Ok(())
    }

    #[test]
    fn messages_are_reframed_with_a_content_length() -> TestResult {
        let message = Message {
            start: "HTTP/1.1 200 OK".into(),
            headers: vec![
                ("Transfer-Encoding".into(), "chunked".into()),
                ("X-Kept".into(), "yes".into()),
            ],
            body: b"{}".to_vec(),
        };
        let text = String::from_utf8(message.to_bytes(true))?;
        assert_eq!(
            text,
            "HTTP/1.1 200 OK\r\nX-Kept: yes\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
        );
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
