//! The fault plan: which faults the proxy injects, how often, and how the faulty client it
//! makes behaves.

use crate::lag::IndexLag;
use crate::latency::Latency;
use crate::partition_limits::PartitionLimits;
use std::fmt;
use std::time::Duration;

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
    /// HTTP 400 `LimitExceededException` on a DynamoDB Streams read (`GetRecords`,
    /// `GetShardIterator`, `DescribeStream`, `ListStreams`): how the Streams API throttles a
    /// shard read by more readers than it allows.
    LimitExceeded,
    /// HTTP 400 `ReplicatedWriteConflictException` on a write (`PutItem`, `UpdateItem`,
    /// `DeleteItem`, `BatchWriteItem`): how a global table with multi-Region strong
    /// consistency refuses a write to an item another Region is writing. Nothing is applied;
    /// DynamoDB documents it as safe to retry.
    ReplicatedWriteConflict,
}

impl FaultKind {
    /// Every kind, in declaration order.
    pub const ALL: [FaultKind; 10] = [
        FaultKind::ProvisionedThroughputExceeded,
        FaultKind::Throttling,
        FaultKind::TransactionConflict,
        FaultKind::InternalServerError,
        FaultKind::ServiceUnavailable,
        FaultKind::Timeout,
        FaultKind::ConnectionDropped,
        FaultKind::Unprocessed,
        FaultKind::LimitExceeded,
        FaultKind::ReplicatedWriteConflict,
    ];

    /// Whether this kind can hit a request of `operation` (`"PutItem"`, ...).
    pub fn applies_to(self, operation: &str) -> bool {
        match self {
            FaultKind::TransactionConflict => operation == "TransactWriteItems",
            FaultKind::Unprocessed => matches!(operation, "BatchWriteItem" | "BatchGetItem"),
            FaultKind::LimitExceeded => matches!(
                operation,
                "GetRecords" | "GetShardIterator" | "DescribeStream" | "ListStreams"
            ),
            FaultKind::ReplicatedWriteConflict => matches!(
                operation,
                "PutItem" | "UpdateItem" | "DeleteItem" | "BatchWriteItem"
            ),
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
            FaultKind::LimitExceeded => "LimitExceeded",
            FaultKind::ReplicatedWriteConflict => "ReplicatedWriteConflict",
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

    /// The faults DynamoDB and networks can produce: throttling, transaction conflicts,
    /// unprocessed batch parts and a stream's read limit happen before a request is applied
    /// (DynamoDB guarantees a throttled or cancelled request wrote nothing); server errors,
    /// timeouts and dropped connections may happen on either side of it.
    pub fn realistic() -> Vec<Fault> {
        use FaultKind::*;
        let mut faults = vec![
            Fault::before(ProvisionedThroughputExceeded),
            Fault::before(Throttling),
            Fault::before(TransactionConflict),
            Fault::before(Unprocessed),
            Fault::before(LimitExceeded),
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
    /// Whether the proxy keeps every request it receives
    /// ([`FaultStats::requests`](crate::FaultStats::requests)).
    pub record_requests: bool,
    /// The delay the proxy adds to every request, as a round trip to DynamoDB would
    /// ([`Latency`]); none when `None`.
    pub latency: Option<Latency>,
    /// The throughput limits per partition key value the proxy enforces, as DynamoDB's
    /// partitions do ([`FaultPlan::with_partition_limits`]); none when `None`.
    pub partition_limits: Option<PartitionLimits>,
    /// The operations faults are injected into (`"DescribeTable"`, ...); every operation when
    /// `None` ([`FaultPlan::only_operations`]).
    pub operations: Option<Vec<String>>,
    /// How far behind the table global indexes and eventually consistent reads are
    /// ([`FaultPlan::with_index_lag`]); not at all when `None`.
    pub index_lag: Option<IndexLag>,
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
            operations: None,
            index_lag: None,
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

    /// Injects faults into requests of these operations only (`"DescribeTable"`, ...), for a
    /// test of one step of a longer job. The schedule is still drawn for every request, so
    /// a seed injects the same faults into the same requests with or without this.
    pub fn only_operations<S: Into<String>>(
        mut self,
        operations: impl IntoIterator<Item = S>,
    ) -> Self {
        self.operations = Some(operations.into_iter().map(Into::into).collect());
        self
    }

    /// Whether faults may be injected into a request of `operation`.
    pub(crate) fn targets(&self, operation: &str) -> bool {
        self.operations
            .as_ref()
            .is_none_or(|operations| operations.iter().any(|named| named == operation))
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
    /// [`FaultReport::throttled_writes`](crate::FaultReport::throttled_writes) and
    /// [`FaultReport::throttled_reads`](crate::FaultReport::throttled_reads). What is charged
    /// and what is approximated is told on [`PartitionLimits`]. Independent of the fault
    /// schedule: a request refused here draws no fault.
    pub fn with_partition_limits(mut self, limits: PartitionLimits) -> Self {
        self.partition_limits = Some(limits);
        self
    }

    /// Serves global index reads and eventually consistent reads from a replica that each
    /// write reaches after a delay drawn from `lag` (seeded by the plan's seed), as DynamoDB
    /// may; strongly consistent reads and writes see the present. See [`IndexLag`];
    /// [`FaultStats::caught_up`](crate::FaultStats::caught_up) waits for the replica.
    /// Independent of the fault schedule.
    pub fn with_index_lag(mut self, lag: IndexLag) -> Self {
        self.index_lag = Some(lag);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_for_some_operations_targets_those_alone() {
        let plan = FaultPlan::new(1, 1.0);
        assert!(plan.targets("PutItem") && plan.targets("DescribeTable"));
        let plan = plan.only_operations(["DescribeTable"]);
        assert!(plan.targets("DescribeTable"));
        assert!(!plan.targets("PutItem"));
    }

    #[test]
    fn kinds_apply_only_where_dynamodb_produces_them() {
        assert!(FaultKind::TransactionConflict.applies_to("TransactWriteItems"));
        assert!(!FaultKind::TransactionConflict.applies_to("PutItem"));
        assert!(FaultKind::Unprocessed.applies_to("BatchGetItem"));
        assert!(!FaultKind::Unprocessed.applies_to("Query"));
        assert!(FaultKind::LimitExceeded.applies_to("GetRecords"));
        assert!(!FaultKind::LimitExceeded.applies_to("GetItem"));
        assert!(FaultKind::ReplicatedWriteConflict.applies_to("UpdateItem"));
        assert!(!FaultKind::ReplicatedWriteConflict.applies_to("TransactWriteItems"));
        assert!(FaultKind::Timeout.applies_to("UpdateItem"));
        // Throttling and cancellations never follow an applied write.
        for fault in Fault::realistic() {
            if matches!(
                fault.kind,
                FaultKind::ProvisionedThroughputExceeded
                    | FaultKind::Throttling
                    | FaultKind::TransactionConflict
                    | FaultKind::LimitExceeded
                    | FaultKind::ReplicatedWriteConflict
            ) {
                assert_eq!(fault.phase, Phase::BeforeApply, "{fault}");
            }
        }
    }
}
