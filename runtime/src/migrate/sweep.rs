//! The sweep: a paginated, parallel-segment scan over an entity's old items that backfills
//! each one, throttled, resumable from a checkpoint, with progress reports and a dry run.

use super::backfill::{BackfillOutcome, Backfilled};
use super::checkpoint::Checkpoint;
use super::error::MigrationError;
use super::plan::LiveTable;
use crate::error::Error;
use crate::expr::condition::{Comparison, Node, Operand};
use crate::expr::{AttrPath, Placeholders};
use crate::item::KeyText;
use crate::item::{self, Item};
use crate::rate::{Limiter, Rate, Unit};
use crate::retry::RetryPolicy;
use crate::schema::{Entity, Table};
use crate::Db;
use aws_sdk_dynamodb::operation::scan::ScanOutput;
use aws_sdk_dynamodb::types::AttributeValue;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Items read per `Scan` request by default: small pages keep the work redone after a crash
/// small (a page is recorded in the checkpoint once all its items are done).
pub(super) const DEFAULT_PAGE_SIZE: u32 = 100;
/// DynamoDB's limit on `TotalSegments`.
pub(super) const MAX_SEGMENTS: u32 = 1_000_000;
/// Failures kept for the report (all are counted).
const MAX_FAILURES_KEPT: usize = 100;

/// Called with the sweep's progress after every item and page; return
/// `ControlFlow::Break(())` to stop the sweep (it can be resumed from its checkpoint).
pub type ProgressCallback = Arc<dyn Fn(&SweepProgress) -> ControlFlow<()> + Send + Sync>;

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
#[derive(Debug, Clone, Copy, Default, PartialEq)]
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

    /// The counts as JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "examined": self.examined,
            "old": self.old,
            "backfilled": self.backfilled,
            "after_change": self.after_change,
            "changed_concurrently": self.changed_concurrently,
            "already_current": self.already_current,
            "failed": self.failed,
            "write_units": self.write_units,
        })
    }

    /// Reads counts from JSON; a missing or malformed count is zero (counts are reports, not
    /// state the sweep depends on).
    pub fn from_json(value: &Value) -> SweepCounts {
        let count = |name: &str| value.get(name).and_then(Value::as_u64).unwrap_or_default();
        SweepCounts {
            examined: count("examined"),
            old: count("old"),
            backfilled: count("backfilled"),
            after_change: count("after_change"),
            changed_concurrently: count("changed_concurrently"),
            already_current: count("already_current"),
            failed: count("failed"),
            write_units: value
                .get("write_units")
                .and_then(Value::as_f64)
                .unwrap_or_default(),
        }
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
    /// The write rate the sweep holds now, per second, in its [`Rate`]'s unit (writes, or
    /// write units): the ceiling, or less after DynamoDB throttled. `None` without a rate.
    pub rate: Option<f64>,
}

/// An item the sweep could not backfill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepFailure {
    /// The item's key.
    pub key: KeyText,
    /// Why.
    pub message: String,
}

/// What a sweep did.
#[derive(Debug, Clone, PartialEq)]
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
    /// How long this run took.
    pub elapsed: Duration,
}

impl SweepReport {
    /// The report as JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "table": self.table,
            "entity": self.entity,
            "schema_version": self.schema_version,
            "dry_run": self.dry_run,
            "total_segments": self.total_segments,
            "complete": self.complete,
            "stopped": self.stopped,
            "counts": self.counts.to_json(),
            "this_run": self.this_run.to_json(),
            "checkpoint": self.checkpoint.as_ref().map(|path| path.display().to_string()),
            "failures": self.failures.iter().map(|failure| json!({
                "key": failure.key.to_string(),
                "message": failure.message,
            })).collect::<Vec<_>>(),
            "elapsed_seconds": self.elapsed.as_secs_f64(),
        })
    }
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
        for failure in &self.failures {
            writeln!(f, "  failed {}: {}", failure.key, failure.message)?;
        }
        if let Some(path) = &self.checkpoint {
            writeln!(f, "  checkpoint: {}", path.display())?;
        }
        Ok(())
    }
}

/// How a sweep runs; see [`Sweep`] for each option.
#[derive(Clone, Default)]
pub struct SweepOptions {
    /// Parallel scan segments (`None`: the checkpoint's, or 1).
    pub segments: Option<u32>,
    /// Items per `Scan` request (`None`: 100).
    pub page_size: Option<u32>,
    /// Write budget (`None`: as fast as the table allows).
    pub rate: Option<Rate>,
    /// Checkpoint file: resumed from when it exists, saved after every page.
    pub checkpoint: Option<PathBuf>,
    /// Only count the items that would be backfilled; write nothing (not even the checkpoint).
    pub dry_run: bool,
    /// Called with progress; can stop the sweep.
    pub progress: Option<ProgressCallback>,
    /// Stops the sweep when given.
    pub stop: Option<StopSignal>,
}

impl fmt::Debug for SweepOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SweepOptions")
            .field("segments", &self.segments)
            .field("page_size", &self.page_size)
            .field("rate", &self.rate)
            .field("checkpoint", &self.checkpoint)
            .field("dry_run", &self.dry_run)
            .field("progress", &self.progress.as_ref().map(|_| "callback"))
            .field("stop", &self.stop)
            .finish()
    }
}

/// A sweep over one entity's old items; see [`Db::sweep`].
#[must_use = "a sweep does nothing until `run` is awaited"]
pub struct Sweep<E: Entity> {
    db: Db<E::Table>,
    options: SweepOptions,
    entity: PhantomData<fn() -> E>,
}

impl<T: Table> Db<T> {
    /// A sweep that backfills every item of `E` an older schema version wrote: a parallel
    /// scan for items whose schema version attribute is missing or lower, and for each one the
    /// conditional update of [`Db::backfill_item`]. Configure it, then [`Sweep::run`] it.
    pub fn sweep<E: Entity<Table = T>>(&self) -> Sweep<E> {
        Sweep {
            db: self.clone(),
            options: SweepOptions::default(),
            entity: PhantomData,
        }
    }
}

impl<E: Entity> Sweep<E> {
    /// Scans in `segments` parallel segments (at most 1,000,000). A resumed sweep keeps its
    /// checkpoint's count; another count is refused.
    pub fn segments(mut self, segments: u32) -> Self {
        self.options.segments = Some(segments);
        self
    }

    /// Items read per `Scan` request (default 100).
    pub fn page_size(mut self, items: u32) -> Self {
        self.options.page_size = Some(items);
        self
    }

    /// Limits the write rate.
    pub fn rate(mut self, rate: Rate) -> Self {
        self.options.rate = Some(rate);
        self
    }

    /// Saves progress to this file after every page, and resumes from it when it exists (as
    /// left by a crash, a Ctrl-C or a stop), so finished pages are not read again.
    pub fn checkpoint(mut self, path: impl Into<PathBuf>) -> Self {
        self.options.checkpoint = Some(path.into());
        self
    }

    /// Only counts the old items; writes nothing, not even the checkpoint.
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.options.dry_run = dry_run;
        self
    }

    /// Calls `progress` after every item and every page; returning `ControlFlow::Break(())`
    /// stops the sweep.
    pub fn on_progress(
        mut self,
        progress: impl Fn(&SweepProgress) -> ControlFlow<()> + Send + Sync + 'static,
    ) -> Self {
        self.options.progress = Some(Arc::new(progress));
        self
    }

    /// Stops the sweep when `signal` is given.
    pub fn stop_signal(mut self, signal: StopSignal) -> Self {
        self.options.stop = Some(signal);
        self
    }

    /// The database and the options, for a sweep run another way.
    pub(super) fn into_parts(self) -> (Db<E::Table>, SweepOptions) {
        (self.db, self.options)
    }

    /// Replaces every option at once.
    pub fn options(mut self, options: SweepOptions) -> Self {
        self.options = options;
        self
    }

    /// Runs the sweep until every segment read its last page, or it is stopped.
    ///
    /// A request that fails (after the SDK's retries) ends the sweep with that error; the
    /// checkpoint keeps every finished page, so running it again continues from there.
    pub async fn run(self) -> Result<SweepReport, Error> {
        let started = Instant::now();
        let options = self.options;
        let schema = E::SCHEMA;
        let table_name = self.db.table_name().to_owned();
        let page_size = options.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
        let page_size = i32::try_from(page_size)
            .ok()
            .filter(|size| *size >= 1)
            .ok_or(MigrationError::InvalidOption {
                option: "page size",
                message: format!("must be between 1 and {}, not {page_size}", i32::MAX),
            })?;
        if let Some(rate) = &options.rate {
            rate.check()?;
        }
        if let Some(segments) = options.segments {
            if !(1..=MAX_SEGMENTS).contains(&segments) {
                return Err(MigrationError::InvalidOption {
                    option: "segments",
                    message: format!("must be between 1 and {MAX_SEGMENTS}, not {segments}"),
                }
                .into());
            }
        }
        let live = LiveTable::describe(self.db.client(), &table_name)
            .await?
            .ok_or_else(|| MigrationError::TableMissing {
                table: table_name.clone(),
            })?;
        let resumed = match &options.checkpoint {
            Some(path) => Checkpoint::load(path)?,
            None => None,
        };
        if let (Some(checkpoint), Some(path)) = (&resumed, &options.checkpoint) {
            let mismatch = if checkpoint.table != table_name {
                Some(format!("it is for table {:?}", checkpoint.table))
            } else if let Some(foreign) = checkpoint.foreign_to(live.identity.as_deref()) {
                Some(foreign)
            } else if checkpoint.entity != schema.name {
                Some(format!("it is for entity {}", checkpoint.entity))
            } else if checkpoint.schema_version != schema.schema_version {
                Some(format!(
                    "it is for schema version {}, the entity is at {}",
                    checkpoint.schema_version, schema.schema_version
                ))
            } else {
                options
                    .segments
                    .filter(|segments| *segments != checkpoint.total_segments)
                    .map(|segments| {
                        format!(
                            "it has {} segments, not {segments}; resume with the same count",
                            checkpoint.total_segments
                        )
                    })
            };
            if let Some(message) = mismatch {
                return Err(MigrationError::CheckpointMismatch {
                    path: path.clone(),
                    message,
                }
                .into());
            }
        }
        let checkpoint = resumed.unwrap_or_else(|| Checkpoint {
            table_identity: live.identity.clone(),
            ..Checkpoint::new(
                &table_name,
                schema.name,
                schema.schema_version,
                options.segments.unwrap_or(1),
            )
        });
        let total_segments = checkpoint.total_segments;
        let pending: Vec<u32> = checkpoint
            .segments
            .iter()
            .filter(|segment| !segment.done)
            .map(|segment| segment.segment)
            .collect();

        let filter = OldItems::of::<E>();
        let limiter = match options.rate {
            Some(rate) => Some(self.db.limiter(rate).await?),
            None => None,
        };

        let shared = Shared {
            db: self.db,
            filter,
            page_size,
            total_segments,
            dry_run: options.dry_run,
            checkpoint_path: options.checkpoint.clone().filter(|_| !options.dry_run),
            live_counts: Mutex::new(checkpoint.totals()),
            checkpoint: Mutex::new(checkpoint),
            this_run: Mutex::new(SweepCounts::default()),
            failures: Mutex::new(Vec::new()),
            stop: options.stop.clone().unwrap_or_default(),
            limiter,
            progress: options.progress.clone(),
            started,
            table_items: live.item_count.and_then(|count| u64::try_from(count).ok()),
            entity: PhantomData::<fn() -> E>,
        };
        shared.save()?;
        futures::future::try_join_all(
            pending
                .into_iter()
                .map(|segment| shared.run_segment(segment)),
        )
        .await?;
        shared.save()?;

        let checkpoint = lock(&shared.checkpoint).clone();
        let complete = checkpoint.is_complete();
        let this_run = *lock(&shared.this_run);
        let failures = std::mem::take(&mut *lock(&shared.failures));
        Ok(SweepReport {
            table: table_name,
            entity: schema.name,
            schema_version: schema.schema_version,
            dry_run: options.dry_run,
            total_segments,
            counts: if options.dry_run {
                this_run
            } else {
                checkpoint.totals()
            },
            this_run,
            complete,
            stopped: !complete && shared.stop.is_stopped(),
            checkpoint: shared.checkpoint_path.clone(),
            failures,
            elapsed: started.elapsed(),
        })
    }
}

/// A poisoned lock still holds consistent counts (every update is a single assignment).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What every segment of one run shares.
struct Shared<E: Entity> {
    db: Db<E::Table>,
    filter: OldItems,
    page_size: i32,
    total_segments: u32,
    dry_run: bool,
    /// Where to save (never in a dry run).
    checkpoint_path: Option<PathBuf>,
    checkpoint: Mutex<Checkpoint>,
    /// Checkpoint totals plus what this run did in pages not finished yet, for progress.
    live_counts: Mutex<SweepCounts>,
    this_run: Mutex<SweepCounts>,
    failures: Mutex<Vec<SweepFailure>>,
    stop: StopSignal,
    limiter: Option<Limiter>,
    progress: Option<ProgressCallback>,
    started: Instant,
    table_items: Option<u64>,
    entity: PhantomData<fn() -> E>,
}

impl<E: Entity> Shared<E> {
    fn save(&self) -> Result<(), Error> {
        match &self.checkpoint_path {
            Some(path) => lock(&self.checkpoint).save(path),
            None => Ok(()),
        }
    }

    /// Counts one item's result, and reports progress.
    fn count(&self, change: impl Fn(&mut SweepCounts)) {
        change(&mut lock(&self.live_counts));
        change(&mut lock(&self.this_run));
        self.report();
    }

    fn report(&self) {
        let Some(progress) = &self.progress else {
            return;
        };
        let snapshot = SweepProgress {
            entity: E::SCHEMA.name,
            counts: *lock(&self.live_counts),
            segments_done: lock(&self.checkpoint).segments_done(),
            total_segments: self.total_segments,
            elapsed: self.started.elapsed(),
            table_items: self.table_items,
            dry_run: self.dry_run,
            rate: self.limiter.as_ref().map(Limiter::held),
        };
        if progress(&snapshot).is_break() {
            self.stop.stop();
        }
    }

    fn fail(&self, raw: &Item, error: &Error) {
        let mut failures = lock(&self.failures);
        if failures.len() < MAX_FAILURES_KEPT {
            failures.push(SweepFailure {
                key: item::key_text::<E::Table>(raw),
                message: error.to_string(),
            });
        }
        drop(failures);
        self.count(|counts| counts.failed += 1);
    }

    /// Adds what was done in a page cut short by a stop to its segment's counts, less what
    /// reading the page again counts anew: its examined items, and the items that failed
    /// (still old, so read and tried again).
    fn keep_cut_page(&self, segment: u32, page: SweepCounts) {
        let done = SweepCounts {
            examined: 0,
            old: page.old.saturating_sub(page.failed),
            failed: 0,
            ..page
        };
        if let Some(progress) = lock(&self.checkpoint).segments.get_mut(segment as usize) {
            progress.counts.add(&done);
        }
    }

    /// Reads one segment page by page from its checkpointed key, backfilling each old item;
    /// records each finished page in the checkpoint.
    async fn run_segment(&self, segment: u32) -> Result<(), Error> {
        let mut start_key = lock(&self.checkpoint)
            .segments
            .get(segment as usize)
            .and_then(|progress| progress.start_key.clone());
        loop {
            if self.stop.is_stopped() {
                return Ok(());
            }
            let output = self
                .filter
                .page(
                    &self.db,
                    self.page_size,
                    (segment, self.total_segments),
                    start_key.clone(),
                    self.limiter.as_ref(),
                )
                .await?;
            let examined = u64::try_from(output.scanned_count).unwrap_or_default();
            let next_key = output.last_evaluated_key.filter(|key| !key.is_empty());
            let mut page = SweepCounts {
                examined,
                ..SweepCounts::default()
            };
            self.count(|counts| counts.examined += examined);
            for raw in output.items.unwrap_or_default() {
                if self.stop.is_stopped() {
                    // This page is not recorded as read: a resumed sweep reads it again, and
                    // finds only the items not done yet (the scan skips current ones).
                    self.keep_cut_page(segment, page);
                    return Ok(());
                }
                page.old += 1;
                self.count(|counts| counts.old += 1);
                if self.dry_run {
                    if let Err(error) = item::decode::<E>(raw.clone()) {
                        page.failed += 1;
                        self.fail(&raw, &error.into());
                    }
                    continue;
                }
                let mut item_counts = SweepCounts::default();
                match backfill_counted::<E>(
                    &self.db,
                    raw.clone(),
                    self.limiter.as_ref(),
                    &mut item_counts,
                )
                .await?
                {
                    Some(error) => {
                        page.failed += 1;
                        self.fail(&raw, &error);
                    }
                    None => {
                        page.add(&item_counts);
                        self.count(|counts| counts.add(&item_counts));
                    }
                }
            }
            {
                let mut checkpoint = lock(&self.checkpoint);
                if let Some(progress) = checkpoint.segments.get_mut(segment as usize) {
                    progress.start_key = next_key.clone();
                    progress.done = next_key.is_none();
                    progress.counts.add(&page);
                }
            }
            self.save()?;
            self.report();
            match next_key {
                Some(key) => start_key = Some(key),
                None => return Ok(()),
            }
        }
    }
}

/// The scan filter of a sweep: only entity `E`'s items below its schema version, `_type = E
/// AND (no _sv OR _sv < v)`.
pub(super) struct OldItems {
    pub(super) expression: String,
    pub(super) names: Option<HashMap<String, String>>,
    pub(super) values: Option<HashMap<String, AttributeValue>>,
}

impl OldItems {
    /// One page of old items of segment `segment.0` of `segment.1`, from after `start_key`.
    /// With a limiter, a throttled read lowers the sweep's rate and is sent again under
    /// [`RetryPolicy::default`], as a throttled write is.
    pub(super) async fn page<T: Table>(
        &self,
        db: &Db<T>,
        page_size: i32,
        (segment, total_segments): (u32, u32),
        start_key: Option<Item>,
        limiter: Option<&Limiter>,
    ) -> Result<ScanOutput, Error> {
        let segmented = total_segments > 1;
        let request = db
            .client()
            .scan()
            .table_name(db.table_name())
            .filter_expression(&self.expression)
            .set_expression_attribute_names(self.names.clone())
            .set_expression_attribute_values(self.values.clone())
            .limit(page_size)
            .set_segment(i32::try_from(segment).ok().filter(|_| segmented))
            .set_total_segments(i32::try_from(total_segments).ok().filter(|_| segmented))
            .set_exclusive_start_key(start_key);
        let Some(limiter) = limiter else {
            return Ok(request.send().await?);
        };
        let policy = RetryPolicy::default();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let error = match request.clone().send().await {
                Ok(output) => return Ok(output),
                Err(error) => Error::from(error),
            };
            if !error.is_throttling() || attempt >= policy.attempts() {
                return Err(error);
            }
            limiter.throttled();
            policy.sleep_before(attempt).await;
        }
    }

    pub(super) fn of<E: Entity>() -> OldItems {
        let table = <E::Table as Table>::SCHEMA;
        let schema = E::SCHEMA;
        let version = AttributeValue::N(schema.schema_version.to_string());
        let version_path = || AttrPath::attribute(table.schema_version_attribute);
        let filter = Node::And(
            Box::new(Node::Compare(
                Operand::Path(AttrPath::attribute(table.entity_attribute)),
                Comparison::Eq,
                Operand::Value(AttributeValue::S(schema.name.to_owned())),
            )),
            Box::new(Node::Or(
                Box::new(Node::NotExists(version_path())),
                Box::new(Node::Compare(
                    Operand::Path(version_path()),
                    Comparison::Lt,
                    Operand::Value(version),
                )),
            )),
        );
        let mut placeholders = Placeholders::default();
        let expression = filter.to_expression(&mut placeholders);
        OldItems {
            expression,
            names: placeholders.names(),
            values: placeholders.values(),
        }
    }
}

/// Backfills one old item a sweep read, counting what happened into `counts`. An item that is
/// itself the problem is returned, to be counted as failed; any other error ends the sweep.
pub(super) async fn backfill_counted<E: Entity>(
    db: &Db<E::Table>,
    raw: Item,
    limiter: Option<&Limiter>,
    counts: &mut SweepCounts,
) -> Result<Option<Error>, Error> {
    let done = match limiter {
        Some(limiter) => backfill_paced::<E>(db, raw, limiter).await,
        None => db.backfill_item::<E>(raw).await,
    };
    match done {
        Ok(done) => {
            match done.outcome {
                BackfillOutcome::Written {
                    write_units,
                    after_change,
                } => {
                    counts.backfilled += 1;
                    counts.after_change += u64::from(after_change);
                    counts.write_units += write_units;
                }
                BackfillOutcome::ChangedConcurrently => counts.changed_concurrently += 1,
                BackfillOutcome::Current => counts.already_current += 1,
            }
            Ok(None)
        }
        Err(
            error @ (Error::Decode(_)
            | Error::Key(_)
            | Error::Limit(_)
            | Error::Encode { .. }
            | Error::Migration(MigrationError::KeyChanged { .. })),
        ) => Ok(Some(error)),
        Err(error) => Err(error),
    }
}

/// Backfills one item at the limiter's pace. A throttled write lowers the rate and is sent
/// again, under [`RetryPolicy::default`], rather than ending the sweep.
async fn backfill_paced<E: Entity>(
    db: &Db<E::Table>,
    raw: Item,
    limiter: &Limiter,
) -> Result<Backfilled<E>, Error> {
    let policy = RetryPolicy::default();
    let mut attempt = 0;
    loop {
        limiter.acquire(1.0).await;
        attempt += 1;
        match db.backfill_item::<E>(raw.clone()).await {
            Ok(done) => {
                if let (Unit::WriteUnits, BackfillOutcome::Written { write_units, .. }) =
                    (limiter.unit(), &done.outcome)
                {
                    limiter.settle(1.0, *write_units);
                }
                return Ok(done);
            }
            Err(error) if error.is_throttling() => {
                limiter.throttled();
                if attempt >= policy.attempts() {
                    return Err(error);
                }
                policy.sleep_before(attempt).await;
            }
            Err(error) => return Err(error),
        }
    }
}
