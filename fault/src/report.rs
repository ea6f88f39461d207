//! What a faulty client's proxy saw and did: its counts, the keys its partition limits
//! throttled, and the requests it recorded.

use crate::partition_limits::{Access, PartitionKey};
use crate::plan::{Fault, FaultKind, Phase};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

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
    /// Reads answered from the past by the [index lag](crate::FaultPlan::with_index_lag)'s
    /// replica (a global index's, or eventually consistent ones).
    pub lagging_reads: u64,
    /// Faults injected.
    pub injected: BTreeMap<Fault, u64>,
    /// Writes refused by the [partition limits](crate::FaultPlan::with_partition_limits), per
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
        if self.lagging_reads > 0 {
            write!(f, ", {} reads answered from the past", self.lagging_reads)?;
        }
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

pub(crate) fn count_throttled(report: &mut FaultReport, throttled: Vec<(Access, PartitionKey)>) {
    for (access, key) in throttled {
        let counts = match access {
            Access::Read => &mut report.throttled_reads,
            Access::Write => &mut report.throttled_writes,
        };
        *counts.entry(key).or_insert(0) += 1;
    }
}

/// A request as the proxy received it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// The operation, from `X-Amz-Target` (`PutItem`, `GetRecords`).
    pub operation: String,
    /// The JSON body (`Null` when it was not JSON).
    pub body: Value,
}
