//! The work a sweep's segments share: each reads its pages and backfills their items, while
//! the counts, the checkpoint and the failures are kept in one place.

use super::{ProgressCallback, StopSignal, SweepCounts, SweepFailure, SweepProgress};
use crate::error::Error;
use crate::item::{self, Item};
use crate::migrate::checkpoint::Checkpoint;
use crate::migrate::old_items::{backfill_page, ItemDone, OldItems};
use crate::migrate::throttled_keys::ThrottledKeys;
use crate::rate::Limiter;
use crate::schema::Entity;
use crate::Db;
use std::marker::PhantomData;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// Failures kept for the report (all are counted).
const MAX_FAILURES_KEPT: usize = 100;

/// A poisoned lock still holds consistent counts (every update is a single assignment).
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What every segment of one run shares.
pub(super) struct Shared<E: Entity> {
    pub(super) db: Db<E::Table>,
    pub(super) filter: OldItems,
    pub(super) page_size: i32,
    /// Backfill writes in flight at once, within a page.
    pub(super) concurrency: usize,
    pub(super) total_segments: u32,
    pub(super) dry_run: bool,
    /// Where to save (never in a dry run).
    pub(super) checkpoint_path: Option<PathBuf>,
    pub(super) checkpoint: Mutex<Checkpoint>,
    /// Checkpoint totals plus what this run did in pages not finished yet, for progress.
    pub(super) live_counts: Mutex<SweepCounts>,
    pub(super) this_run: Mutex<SweepCounts>,
    pub(super) failures: Mutex<Vec<SweepFailure>>,
    pub(super) stop: StopSignal,
    pub(super) limiter: Option<Limiter>,
    /// Its backfill writes DynamoDB throttled, by partition key.
    pub(super) throttled: ThrottledKeys,
    pub(super) progress: Option<ProgressCallback>,
    pub(super) started: Instant,
    pub(super) table_items: Option<u64>,
    pub(super) entity: PhantomData<fn() -> E>,
}

impl<E: Entity> Shared<E> {
    pub(super) fn save(&self) -> Result<(), Error> {
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
    pub(super) async fn run_segment(&self, segment: u32) -> Result<(), Error> {
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
            let items = output.items.unwrap_or_default();
            if self.dry_run {
                for raw in items {
                    if self.stop.is_stopped() {
                        self.keep_cut_page(segment, page);
                        return Ok(());
                    }
                    page.old += 1;
                    self.count(|counts| counts.old += 1);
                    if let Err(error) = item::decode::<E>(raw.clone()) {
                        page.failed += 1;
                        self.fail(&raw, &error.into());
                    }
                }
            } else {
                let total = items.len();
                let ended = backfill_page::<E>(
                    &self.db,
                    items,
                    (self.limiter.as_ref(), &self.throttled),
                    self.concurrency,
                    || self.stop.is_stopped(),
                    |done| {
                        page.old += 1;
                        self.count(|counts| counts.old += 1);
                        match done {
                            ItemDone::Failed(raw, error) => {
                                page.failed += 1;
                                self.fail(&raw, &error);
                            }
                            ItemDone::Counted(item_counts) => {
                                page.add(&item_counts);
                                self.count(|counts| counts.add(&item_counts));
                            }
                        }
                    },
                )
                .await?;
                if ended < total {
                    // This page is not recorded as read: a resumed sweep reads it again, and
                    // finds only the items not done yet (the scan skips current ones).
                    self.keep_cut_page(segment, page);
                    return Ok(());
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
