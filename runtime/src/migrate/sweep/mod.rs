//! The sweep: a paginated, parallel-segment scan over an entity's old items that backfills
//! each one, throttled, resumable from a checkpoint, with progress reports and a dry run.
//!
//! This file holds the sweep's options and its start; `run.rs` holds the work its segments
//! share, and `report.rs` what the sweep tells its caller.

pub(super) mod report;
mod run;

pub use report::{StopSignal, SweepCounts, SweepFailure, SweepProgress, SweepReport};

use super::checkpoint::Checkpoint;
use super::old_items::OldItems;
use super::plan::LiveTable;
use super::throttled_keys::ThrottledKeys;
use crate::error::migration::MigrationError;
use crate::error::Error;
use crate::rate::Rate;
use crate::schema::{Entity, Table};
use crate::Admin;
use crate::Db;
use run::{lock, Shared};
use std::fmt;
use std::marker::PhantomData;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Items read per `Scan` request by default: small pages keep the work redone after a crash
/// small (a page is recorded in the checkpoint once all its items are done).
pub(super) const DEFAULT_PAGE_SIZE: u32 = 100;
/// DynamoDB's limit on `TotalSegments`.
pub(super) const MAX_SEGMENTS: u32 = 1_000_000;

/// Called with the sweep's progress after every item and page; return
/// `ControlFlow::Break(())` to stop the sweep (it can be resumed from its checkpoint).
pub(crate) type ProgressCallback = Arc<dyn Fn(&SweepProgress) -> ControlFlow<()> + Send + Sync>;

/// How a sweep runs, as its builder methods set it; see [`Sweep`] for each option.
#[derive(Clone, Default)]
pub(crate) struct SweepOptions {
    /// Parallel scan segments (`None`: the checkpoint's, or 1).
    pub(crate) segments: Option<u32>,
    /// Items per `Scan` request (`None`: 100).
    pub(crate) page_size: Option<u32>,
    /// Backfill writes in flight at once in each segment (`None`: 1).
    pub(crate) concurrency: Option<usize>,
    /// Write budget (`None`: as fast as the table allows).
    pub(crate) rate: Option<Rate>,
    /// Checkpoint file: resumed from when it exists, saved after every page.
    pub(crate) checkpoint: Option<PathBuf>,
    /// Only count the items that would be backfilled; write nothing (not even the checkpoint).
    pub(crate) dry_run: bool,
    /// Called with progress; can stop the sweep.
    pub(crate) progress: Option<ProgressCallback>,
    /// Stops the sweep when given.
    pub(crate) stop: Option<StopSignal>,
}

impl fmt::Debug for SweepOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SweepOptions")
            .field("segments", &self.segments)
            .field("page_size", &self.page_size)
            .field("concurrency", &self.concurrency)
            .field("rate", &self.rate)
            .field("checkpoint", &self.checkpoint)
            .field("dry_run", &self.dry_run)
            .field("progress", &self.progress.as_ref().map(|_| "callback"))
            .field("stop", &self.stop)
            .finish()
    }
}

/// A sweep over one entity's old items; see [`Admin::sweep`](crate::Admin::sweep).
#[must_use = "a sweep does nothing until `run` is awaited"]
pub struct Sweep<E: Entity> {
    db: Db<E::Table>,
    options: SweepOptions,
    entity: PhantomData<fn() -> E>,
}

impl<'db, T: Table> Admin<'db, T> {
    /// A sweep that backfills every item of `E` an older schema version wrote: a parallel
    /// scan for items whose schema version attribute is missing or lower, and for each one the
    /// conditional update of [`Admin::backfill_item`](crate::Admin::backfill_item). Configure it,
    /// then [`Sweep::send`] it.
    pub fn sweep<E: Entity<Table = T>>(&self) -> Sweep<E> {
        Sweep {
            db: self.db.clone(),
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

    /// Keeps up to `writes` backfill writes in flight in each segment (default 1: one item
    /// after another), within the sweep's [`rate`](Self::rate): a sweep then runs at the
    /// table's speed rather than one round trip's. A page is recorded in the checkpoint only
    /// once all its writes have finished, so a resumed sweep never skips an item; `0` counts
    /// as 1.
    pub fn concurrency(mut self, writes: usize) -> Self {
        self.options.concurrency = Some(writes.max(1));
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
    pub fn dry_run(mut self) -> Self {
        self.options.dry_run = true;
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

    /// Runs the sweep until every segment read its last page, or it is stopped.
    ///
    /// A read or backfill write DynamoDB throttles is sent again with backoff (up to 24 times
    /// for a write, 8 for a read), with a rate or without, and the report counts the throttled
    /// writes by partition key; one whose response was lost is sent again too (a backfill
    /// sent twice applies as once). Any other request that fails (after the SDK's retries)
    /// ends the sweep with that error; the checkpoint keeps every finished page, so running
    /// it again continues from there.
    pub async fn send(self) -> Result<SweepReport, Error> {
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
        let live = LiveTable::of_long_job(&self.db).await?.ok_or_else(|| {
            MigrationError::TableMissing {
                table: table_name.clone(),
            }
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
            concurrency: options.concurrency.unwrap_or(1),
            total_segments,
            dry_run: options.dry_run,
            checkpoint_path: options.checkpoint.clone().filter(|_| !options.dry_run),
            live_counts: Mutex::new(checkpoint.totals()),
            checkpoint: Mutex::new(checkpoint),
            this_run: Mutex::new(SweepCounts::default()),
            failures: Mutex::new(Vec::new()),
            stop: options.stop.clone().unwrap_or_default(),
            limiter,
            throttled: ThrottledKeys::default(),
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
            throttled_keys: shared.throttled.counts(),
            elapsed: started.elapsed(),
        })
    }
}
