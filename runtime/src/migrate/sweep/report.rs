//! What a sweep tells its caller: counts, progress snapshots, failures and the final report,
//! and the signal that stops it.

use crate::key::KeyText;
use serde::{Deserialize, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Asks a running sweep to stop after the item at hand (e.g. from a Ctrl-C handler); the
/// pages it finished are in its checkpoint, so it can be resumed.
#[derive(Debug, Clone, Default)]
pub struct StopSignal(Arc<AtomicBool>);

impl StopSignal {
    /// A signal not yet given.
    pub fn new() -> Self {
        StopSignal::default()
    }

    /// Asks the sweep to stop.
    pub fn stop(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether stopping was asked for.
    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// What a sweep has done, in items (and write units).
///
/// A missing count deserializes as zero.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SweepCounts {
    /// Items the scan read, of any entity (DynamoDB's `ScannedCount`; what a scan is billed
    /// for, and how far through the table it is).
    pub examined: u64,
    /// Items of the entity below its schema version that the scan returned.
    pub old: u64,
    /// Of those, items backfilled.
    pub backfilled: u64,
    /// Of the backfilled, those a concurrent writer changed first, whose keys were computed
    /// again from the item as it then was.
    pub after_change: u64,
    /// Items skipped because a concurrent writer changed or deleted them (it wrote the new
    /// shape); never overwritten.
    pub changed_concurrently: u64,
    /// Items already at the schema version when backfilled (a concurrent writer's new shape
    /// reached it before the condition check).
    pub already_current: u64,
    /// Items that could not be backfilled (not decodable as the entity, or a stored key the
    /// current templates do not render); see the report's failures.
    pub failed: u64,
    /// Write capacity units the backfill writes consumed.
    pub write_units: f64,
}

impl SweepCounts {
    /// Adds `other` to these counts.
    pub fn add(&mut self, other: &SweepCounts) {
        self.examined += other.examined;
        self.old += other.old;
        self.backfilled += other.backfilled;
        self.after_change += other.after_change;
        self.changed_concurrently += other.changed_concurrently;
        self.already_current += other.already_current;
        self.failed += other.failed;
        self.write_units += other.write_units;
    }
}

/// A snapshot of a running sweep, given to the progress callback.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepProgress {
    /// The entity.
    pub entity: &'static str,
    /// Counts so far, including earlier runs recorded in the checkpoint.
    pub counts: SweepCounts,
    /// Segments that read their last page.
    pub segments_done: u32,
    /// Segments in all.
    pub total_segments: u32,
    /// Time since this run started.
    pub elapsed: Duration,
    /// The table's item count from `DescribeTable` (approximate), to set against
    /// `counts.examined` for a progress bar.
    pub table_items: Option<u64>,
    /// Whether this is a dry run.
    pub dry_run: bool,
    /// The write rate the sweep holds now, per second, in its [`Rate`](crate::rate::Rate)'s
    /// unit (writes, or write units): the ceiling, or less after DynamoDB throttled. `None`
    /// without a rate.
    pub rate: Option<f64>,
}

/// An item the sweep could not backfill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SweepFailure {
    /// The item's key.
    pub key: KeyText,
    /// Why.
    pub message: String,
}

/// What a sweep did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepReport {
    /// The table.
    pub table: String,
    /// The entity.
    pub entity: &'static str,
    /// The schema version items were brought to.
    pub schema_version: u32,
    /// Whether it only counted.
    pub dry_run: bool,
    /// `TotalSegments`.
    pub total_segments: u32,
    /// Counts over every run recorded in the checkpoint (pages finished), this one included.
    pub counts: SweepCounts,
    /// Counts of this run alone (items of a page it did not finish included).
    pub this_run: SweepCounts,
    /// Whether every segment read its last page: the sweep covered the whole table.
    pub complete: bool,
    /// Whether it stopped early (stop signal or progress callback); resume it from the
    /// checkpoint.
    pub stopped: bool,
    /// The checkpoint file, if any.
    pub checkpoint: Option<PathBuf>,
    /// Items that could not be backfilled in this run (the first 100).
    pub failures: Vec<SweepFailure>,
    /// The backfill writes DynamoDB throttled in this run, by partition key: the keys that met
    /// DynamoDB's per-partition limit (the sweep sends its writes without the SDK's retries,
    /// so it sees each throttle, with a rate or without). A write held back by a global index
    /// counts against the key of the entry it writes there, which DynamoDB's reason names the
    /// index of.
    pub throttled_keys: BTreeMap<String, u64>,
    /// How long this run took (in seconds, `elapsed_seconds`, when serialized).
    #[serde(rename = "elapsed_seconds", serialize_with = "seconds")]
    pub elapsed: Duration,
}

fn seconds<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(duration.as_secs_f64())
}

impl fmt::Display for SweepReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let run = &self.this_run;
        let state = match (self.complete, self.stopped) {
            (true, _) => "complete: every segment read its last page",
            (false, true) => "stopped early: resume from the checkpoint",
            (false, false) => "incomplete",
        };
        writeln!(
            f,
            "{} {} to schema version {} on {} ({} segment{}): {state}",
            if self.dry_run {
                "dry run of backfilling"
            } else {
                "backfill of"
            },
            self.entity,
            self.schema_version,
            self.table,
            self.total_segments,
            if self.total_segments == 1 { "" } else { "s" },
        )?;
        writeln!(
            f,
            "  this run: {} items examined, {} old {}",
            run.examined, run.old, self.entity
        )?;
        if self.dry_run {
            writeln!(
                f,
                "  would backfill {} items ({} not decodable)",
                run.old - run.failed.min(run.old),
                run.failed
            )?;
        } else {
            writeln!(
                f,
                "  backfilled {} ({} after a concurrent change), skipped {} changed concurrently, \
                 {} already current, {} failed, {:.1} write units",
                run.backfilled,
                run.after_change,
                run.changed_concurrently,
                run.already_current,
                run.failed,
                run.write_units
            )?;
        }
        if self.counts != self.this_run {
            let all = &self.counts;
            writeln!(
                f,
                "  all runs (finished pages): {} examined, {} old, {} backfilled, {} skipped, {} failed",
                all.examined, all.old, all.backfilled, all.changed_concurrently, all.failed
            )?;
        }
        if !self.throttled_keys.is_empty() {
            let writes: u64 = self.throttled_keys.values().sum();
            let keys: Vec<String> = (self.throttled_keys.iter())
                .map(|(key, count)| format!("{key:?} ({count})"))
                .collect();
            writeln!(
                f,
                "  throttled: {writes} write{} on {} partition key{}: {}",
                if writes == 1 { "" } else { "s" },
                keys.len(),
                if keys.len() == 1 { "" } else { "s" },
                keys.join(", ")
            )?;
        }
        for failure in &self.failures {
            writeln!(f, "  failed {}: {}", failure.key, failure.message)?;
        }
        if let Some(path) = &self.checkpoint {
            writeln!(f, "  checkpoint: {}", path.display())?;
        }
        Ok(())
    }
}
