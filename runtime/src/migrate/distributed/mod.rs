//! A sweep that spans many workers (processes, containers, Lambda invocations), coordinated
//! through the table itself: a plan item and one lease item per segment, under
//! `PK = "_SWEEP#<name>"`.
//!
//! A worker claims a segment whose lease is free or expired with a conditional write that
//! also counts the lease up (the fencing token), scans it page by page, and after each page
//! saves its checkpoint (the last evaluated key and the counts) and renews its lease, both
//! conditioned on still holding that token. A worker that lost its lease (it paused past the
//! expiry, and another took the segment over from the last checkpoint) has its next write
//! refused and leaves the segment. Items are backfilled with the conditional writes of
//! [`Admin::backfill_item`](crate::Admin::backfill_item), so a page read twice, by a worker that
//! lost its lease and by the one that took over, writes nothing twice.

mod clock;
mod records;

use super::old_items::{backfill_page, resent_while_throttled, ItemDone, OldItems};
use super::sweep::{Sweep, SweepCounts, DEFAULT_PAGE_SIZE};
use super::throttled_keys::ThrottledKeys;
use crate::error::migration::MigrationError;
use crate::error::Error;
use crate::expr::condition::{Comparison, Node, Operand};
use crate::expr::update::{Action, SetValue};
use crate::expr::AttrPath;
use crate::item::Item;
use crate::library::{read_record, record_item, DISTRIBUTED_SWEEP};
use crate::rate::{Limiter, Rate, Unit};
use crate::schema::{Entity, Table};
use crate::send::write::{Resend, Write, Written};
use crate::Db;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};
use clock::Clock;
use futures::future::BoxFuture;
pub(crate) use records::read_status;
use records::{library_key, segment_sort, segment_status, SweepPlan};
use serde::Serialize;
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The lease a worker takes on a segment unless told otherwise.
const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// A sweep shared by many workers; see [`Sweep::distributed`].
#[must_use = "a sweep does nothing until a worker runs"]
pub struct DistributedSweep<E: Entity> {
    db: Db<E::Table>,
    name: String,
    segments: u32,
    page_size: i32,
    /// Backfill writes in flight at once in the segment the worker holds.
    concurrency: usize,
    rate: Option<Rate>,
    lease: Duration,
    worker: String,
    /// Write units the sweep's own records consumed (its plan, claims and checkpoints).
    record_units: std::sync::Mutex<f64>,
    entity: PhantomData<fn() -> E>,
}

/// What one worker did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct WorkerReport {
    /// The worker's id.
    pub worker: String,
    /// The segments it finished.
    pub finished: Vec<u32>,
    /// Segments it left because another worker took them over after its lease expired.
    pub leases_lost: u32,
    /// What it did, over every segment it worked.
    pub counts: SweepCounts,
    /// The write rate it held at the end, per second, in its [`Rate`]'s unit; `None` without
    /// a rate.
    pub rate: Option<f64>,
    /// Write capacity units of the sweep's own records it wrote (the plan, its claims and
    /// checkpoints), beside the backfill's in `counts.write_units`: together, what the worker
    /// wrote.
    pub record_write_units: f64,
    /// Its backfill writes DynamoDB throttled, by partition key; see
    /// [`SweepReport::throttled_keys`](crate::migrate::SweepReport::throttled_keys).
    pub throttled_keys: BTreeMap<String, u64>,
    /// Whether it stopped at its deadline ([`DistributedSweep::worker_until`]) with segments
    /// left to sweep: another run (the next invocation) goes on from the checkpoints.
    pub work_left: bool,
}

/// Every segment of a distributed sweep, as the table records them; see
/// [`DistributedSweep::status`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct DistributedStatus {
    /// The sweep's name.
    pub name: String,
    /// Each segment, in order.
    pub segments: Vec<SegmentStatus>,
}

impl DistributedStatus {
    /// Whether every segment read its last page.
    pub fn is_done(&self) -> bool {
        self.segments.iter().all(|segment| segment.done)
    }

    /// The counts over every segment.
    pub fn counts(&self) -> SweepCounts {
        let mut total = SweepCounts::default();
        for segment in &self.segments {
            total.add(&segment.counts);
        }
        total
    }
}

/// A segment as the table records it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SegmentStatus {
    /// The segment number.
    pub segment: u32,
    /// Its last owner (kept once done, for the record).
    pub owner: Option<String>,
    /// When its lease expires, in milliseconds since the Unix epoch.
    pub lease_expires_ms: Option<u64>,
    /// The fencing token: how many times the segment was claimed.
    pub lease: u64,
    /// Whether its last page was read.
    pub done: bool,
    /// What was done in it, as of its last checkpoint.
    pub counts: SweepCounts,
    /// The write rate its owner held at its last checkpoint, per second, in the sweep's
    /// [`Rate`]'s unit; `None` without a rate.
    pub rate: Option<f64>,
}

impl<E: Entity> Sweep<E> {
    /// This sweep as one shared by many workers under `name`: its plan and each segment's
    /// lease and checkpoint live in the table, so any process that reaches the table can run
    /// a worker ([`DistributedSweep::worker`]). The sweep's segment count (default 16), page
    /// size, concurrency and rate apply (the rate to each worker); a checkpoint file does not.
    pub fn distributed(self, name: impl Into<String>) -> DistributedSweep<E> {
        let (db, options) = self.into_parts();
        DistributedSweep {
            db,
            name: name.into(),
            segments: options.segments.unwrap_or(16),
            page_size: i32::try_from(options.page_size.unwrap_or(DEFAULT_PAGE_SIZE))
                .unwrap_or(i32::MAX),
            concurrency: options.concurrency.unwrap_or(1),
            rate: options.rate,
            lease: DEFAULT_LEASE,
            worker: format!("worker-{:016x}", fastrand::u64(..)),
            record_units: std::sync::Mutex::new(0.0),
            entity: PhantomData,
        }
    }
}

impl<E: Entity> DistributedSweep<E> {
    /// How long a claimed segment stays a worker's without a checkpoint (default 30 s); a
    /// page must take less. A crashed worker's segment is taken over once it expires.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// The worker's id in the leases (default a random one).
    pub fn worker_id(mut self, worker: impl Into<String>) -> Self {
        self.worker = worker.into();
        self
    }

    /// Runs one worker until every segment is done: it claims free or expired segments,
    /// sweeps each from its checkpoint, and waits for leases held by others to finish or
    /// expire.
    pub async fn worker(self) -> Result<WorkerReport, Error> {
        self.run(None).await
    }

    /// Runs one worker, as [`worker`](Self::worker) does, until shortly before `deadline`
    /// (a Lambda invocation's, say): it starts no page it does not expect to finish in time
    /// (twice its slowest page so far, and at least 100 ms), saves its checkpoint, releases
    /// its lease so that the next run takes the segment at once, and reports
    /// [`work_left`](WorkerReport::work_left) while segments are left. Run it again until that
    /// is `false`: each run goes on where the sweep stands, whichever worker ran before.
    pub async fn worker_until(self, deadline: SystemTime) -> Result<WorkerReport, Error> {
        self.run(Some(deadline)).await
    }

    async fn run(self, deadline: Option<SystemTime>) -> Result<WorkerReport, Error> {
        self.check_options()?;
        self.ensure_plan().await?;
        let filter = OldItems::of::<E>();
        let limiter = match self.rate {
            Some(rate) => Some(self.db.limiter(rate).await?),
            None => None,
        };
        let throttled = ThrottledKeys::default();
        // With writes in flight, two segments at a time, the writes shared between them: one
        // segment's claim, reads and checkpoints overlap the other's writes.
        let lanes = if self.concurrency > 1 { 2 } else { 1 };
        let writes = self.concurrency.div_ceil(lanes);
        let tools = (&filter, limiter.as_ref(), &throttled);
        let owners: Vec<String> = (1..=lanes)
            .map(|lane| match lane {
                1 => self.worker.clone(),
                lane => format!("{}/{lane}", self.worker),
            })
            .collect();
        let ended = futures::future::join_all(
            (owners.iter()).map(|owner| self.lane(owner, tools, writes, deadline)),
        )
        .await;
        let mut report = WorkerReport {
            worker: self.worker.clone(),
            finished: Vec::new(),
            leases_lost: 0,
            counts: SweepCounts::default(),
            rate: limiter.as_ref().map(Limiter::held),
            record_write_units: 0.0,
            throttled_keys: throttled.counts(),
            work_left: false,
        };
        for lane in ended {
            let lane = lane?;
            report.finished.extend(lane.finished);
            report.leases_lost += lane.leases_lost;
            report.counts.add(&lane.counts);
            report.work_left |= lane.work_left;
        }
        report.finished.sort_unstable();
        report.record_write_units = *self
            .record_units
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(report)
    }

    /// Claims and sweeps one segment after another, `writes` backfill writes in flight, until
    /// every segment is done or the deadline is near.
    async fn lane(
        &self,
        owner: &str,
        (filter, limiter, throttled): (&OldItems, Option<&Limiter>, &ThrottledKeys),
        writes: usize,
        deadline: Option<SystemTime>,
    ) -> Result<Lane, Error> {
        let mut lane = Lane::default();
        let mut clock = Clock {
            deadline,
            slowest_page: Duration::ZERO,
        };
        // Workers start at different segments, so they rarely race for the same claim.
        let offset = fastrand::u32(..self.segments);
        loop {
            let statuses = self.status().await?.segments;
            let done = statuses.iter().all(|status| status.done);
            if done || clock.out_of_time(Duration::ZERO) {
                lane.work_left = !done;
                return Ok(lane);
            }
            let now = millis(&self.db);
            let free = (0..self.segments)
                .map(|step| (offset + step) % self.segments)
                .filter_map(|segment| statuses.get(segment as usize))
                .find(|status| !status.done && status.lease_expires_ms.is_none_or(|at| at < now));
            let Some(free) = free else {
                // Every open segment is another worker's: wait for the first lease to end, or
                // look again in a quarter of a second, when a segment may have finished. At the
                // end of a sweep every worker but the last waits here, and the sweep is over
                // for its operator only when they have all seen it (bench `sweep_workers`: at
                // most a second of waiting cost 8 workers 7% of a 14 s sweep). A look reads the
                // sweep's few segment records, in one BatchGetItem per hundred.
                let next = statuses
                    .iter()
                    .filter(|status| !status.done)
                    .filter_map(|status| status.lease_expires_ms)
                    .min()
                    .unwrap_or(now);
                let wait = Duration::from_millis(next.saturating_sub(now).clamp(20, 250));
                if !clock.out_of_time(wait) {
                    tokio::time::sleep(wait).await;
                } else {
                    // Whatever time is left: the loop then reports the work others hold.
                    clock.sleep_to_deadline().await;
                }
                continue;
            };
            let Some(claimed) = self.claim(free, owner, limiter).await? else {
                continue;
            };
            match self
                .sweep_segment(
                    claimed,
                    (filter, writes),
                    (limiter, throttled),
                    &mut clock,
                    &mut lane.counts,
                )
                .await?
            {
                SegmentEnd::Finished(segment) => lane.finished.push(segment),
                SegmentEnd::LeaseLost => lane.leases_lost += 1,
                SegmentEnd::Released => {}
            }
        }
    }

    /// Every segment as the table records it, in segment order (an unclaimed segment has no
    /// item yet and shows as free); the segment count is the plan's, once a worker wrote it.
    pub async fn status(&self) -> Result<DistributedStatus, Error> {
        let (_, status) = read_status(&self.db, &self.name, self.segments).await?;
        Ok(status)
    }

    fn check_options(&self) -> Result<(), Error> {
        if !(1..=super::sweep::MAX_SEGMENTS).contains(&self.segments) {
            return Err(MigrationError::InvalidOption {
                option: "segments",
                message: format!(
                    "must be between 1 and {}, not {}",
                    super::sweep::MAX_SEGMENTS,
                    self.segments
                ),
            }
            .into());
        }
        if self.page_size < 1 {
            return Err(MigrationError::InvalidOption {
                option: "page size",
                message: format!("must be between 1 and {}, not {}", i32::MAX, self.page_size),
            }
            .into());
        }
        if let Some(rate) = &self.rate {
            rate.check()?;
        }
        if self.lease < Duration::from_millis(100) {
            return Err(MigrationError::InvalidOption {
                option: "lease",
                message: format!("must be at least 100 ms, not {:?}", self.lease),
            }
            .into());
        }
        Ok(())
    }

    fn library_key(&self, sort: String) -> Item {
        library_key::<E::Table>(&self.name, sort)
    }

    fn segment_key(&self, segment: u32) -> Item {
        self.library_key(segment_sort(segment))
    }

    /// Writes the plan if there is none, or checks that the one there is this sweep's.
    async fn ensure_plan(&self) -> Result<(), Error> {
        let schema = E::SCHEMA;
        let table = <E::Table as Table>::SCHEMA;
        let plan = SweepPlan {
            entity: schema.name.to_owned(),
            schema_version: schema.schema_version,
            segments: self.segments,
        };
        let item = record_item(table, self.library_key("PLAN".to_owned()), &plan)?;
        let absent = Node::NotExists(AttrPath::attribute(table.partition_key));
        let write = Write::put(DISTRIBUTED_SWEEP.description, item).condition(&absent);
        let stored = match self.write_record(write).await? {
            Written::Applied { units, .. } => {
                self.record_units(units);
                return Ok(());
            }
            Written::ConditionFailed {
                current: Some(stored),
                ..
            } => read_record::<E::Table, SweepPlan>(stored)?,
            // Deleted since: a later worker writes it again.
            Written::ConditionFailed { current: None, .. } => return Ok(()),
        };
        let differs = if stored.entity != plan.entity {
            Some(("entity", stored.entity, plan.entity))
        } else if stored.schema_version != plan.schema_version {
            let versions = (stored.schema_version, plan.schema_version);
            Some((
                "schema_version",
                versions.0.to_string(),
                versions.1.to_string(),
            ))
        } else if stored.segments != plan.segments {
            let segments = (stored.segments, plan.segments);
            Some(("segments", segments.0.to_string(), segments.1.to_string()))
        } else {
            None
        };
        match differs {
            None => Ok(()),
            Some((what, stored, here)) => Err(MigrationError::InvalidOption {
                option: "distributed sweep",
                message: format!(
                    "the sweep {:?} in the table has {what} {stored}, and this worker {here}; workers of one sweep share its entity, schema version and segment count: use another name",
                    self.name,
                ),
            }
            .into()),
        }
    }

    /// Claims the segment `seen` describes if it is not done, its lease is free or expired, and
    /// no one claimed it since: the owner and expiry set, and the fencing token one above the
    /// last claim's. `None` when another worker got it.
    async fn claim(
        &self,
        seen: &SegmentStatus,
        owner: &str,
        limiter: Option<&Limiter>,
    ) -> Result<Option<Lease>, Error> {
        let now = millis(&self.db);
        let expires = now + self.lease_ms();
        let token = seen.lease + 1;
        // This claim's own, so that a resend of it is told from another claimant's claim with
        // the same owner, token and expiry (two workers started under one id, in one
        // millisecond).
        let nonce = fastrand::u64(..);
        let path = |name: &'static str| AttrPath::attribute(name);
        let set = |name: &'static str, value: AttributeValue| {
            Action::Set(path(name), SetValue::Value(value))
        };
        let actions = vec![
            set("owner", AttributeValue::S(owner.to_owned())),
            set("lease_expires", number(expires)),
            set("segment", number(u64::from(seen.segment))),
            // The fencing token: one more than the claims before.
            set("lease", number(token)),
            set("claim", number(nonce)),
            set(
                <E::Table as Table>::SCHEMA.entity_attribute,
                DISTRIBUTED_SWEEP.entity_attribute(""),
            ),
        ];
        let either = |a: Node, b: Node| Node::Or(Box::new(a), Box::new(b));
        let open = either(
            Node::NotExists(path("done")),
            equals("done", AttributeValue::Bool(false)),
        );
        let expired = either(
            Node::NotExists(path("lease_expires")),
            Node::Compare(
                Operand::Path(path("lease_expires")),
                Comparison::Lt,
                Operand::Value(number(now)),
            ),
        );
        let unclaimed_since = match seen.lease {
            0 => Node::NotExists(path("lease")),
            lease => equals("lease", number(lease)),
        };
        // This very claim, applied before its response was lost: sent again, it applies as
        // once, and the worker knows the segment is its own.
        let this_claim = both(
            equals("owner", AttributeValue::S(owner.to_owned())),
            both(
                equals("lease", number(token)),
                both(
                    equals("lease_expires", number(expires)),
                    equals("claim", number(nonce)),
                ),
            ),
        );
        let write = Write::update(
            DISTRIBUTED_SWEEP.description,
            self.segment_key(seen.segment),
            actions,
        )
        .condition(&both(
            open,
            either(both(expired, unclaimed_since), this_claim),
        ))
        .returning(Some(ReturnValue::AllNew));
        let output = self.write_record(write).await?;
        let Some(attributes) = self.applied(output, limiter) else {
            return Ok(None);
        };
        let start_key = match attributes.get("start_key") {
            Some(AttributeValue::M(key)) => Some(key.clone()),
            _ => None,
        };
        Ok(Some(Lease {
            held: Held {
                owner: owner.to_owned(),
                segment: seen.segment,
                token,
            },
            start_key,
            recorded: segment_status::<E::Table>(attributes)?.counts,
        }))
    }

    /// Sweeps the claimed segment from its checkpoint, saving each page while the lease is
    /// still this worker's; its throttled backfill writes are counted into `throttled`.
    ///
    /// Pipelined, so that a page costs its writes' time alone: while a page's writes go out,
    /// the next page is read and the page before's checkpoint is saved. A page is checkpointed
    /// only once all its writes finished, as ever; its counts join the worker's once its
    /// checkpoint is saved.
    async fn sweep_segment(
        &self,
        mut lease: Lease,
        (filter, concurrency): (&OldItems, usize),
        (limiter, throttled): (Option<&Limiter>, &ThrottledKeys),
        clock: &mut Clock,
        total: &mut SweepCounts,
    ) -> Result<SegmentEnd, Error> {
        let segments = (lease.held.segment, self.segments);
        let scan = |start_key: Option<Item>| {
            filter.page(&self.db, self.page_size, segments, start_key, limiter)
        };
        let mut read_ahead: Option<aws_sdk_dynamodb::operation::scan::ScanOutput> = None;
        // The page before's checkpoint being saved, and its counts.
        let mut saving: Option<(BoxFuture<'_, Result<bool, Error>>, SweepCounts)> = None;
        loop {
            if clock.out_of_time(Duration::ZERO) {
                if let Some((checkpoint, page)) = saving.take() {
                    if !checkpoint.await? {
                        return Ok(SegmentEnd::LeaseLost);
                    }
                    total.add(&page);
                }
                self.release(&lease.held, limiter).await?;
                return Ok(SegmentEnd::Released);
            }
            let started = std::time::Instant::now();
            let output = match read_ahead.take() {
                Some(output) => output,
                None => scan(lease.start_key.clone()).await?,
            };
            let mut page = SweepCounts {
                examined: u64::try_from(output.scanned_count).unwrap_or_default(),
                ..SweepCounts::default()
            };
            let done = |done: ItemDone| {
                page.old += 1;
                match done {
                    ItemDone::Failed(..) => page.failed += 1,
                    ItemDone::Counted(counts) => page.add(&counts),
                }
            };
            let items = output.items.unwrap_or_default();
            let next_key = output.last_evaluated_key.filter(|key| !key.is_empty());
            let writes = (limiter, throttled);
            let written = backfill_page::<E>(&self.db, items, writes, concurrency, || false, done);
            let next = async {
                match &next_key {
                    Some(key) => scan(Some(key.clone())).await.map(Some),
                    None => Ok(None),
                }
            };
            let before = async {
                match saving.take() {
                    Some((checkpoint, page)) => Ok(checkpoint.await?.then_some(page)),
                    None => Ok(Some(SweepCounts::default())),
                }
            };
            let (written, next, before): (_, _, Result<_, Error>) =
                futures::join!(written, next, before);
            written?;
            match before? {
                Some(saved) => total.add(&saved),
                None => return Ok(SegmentEnd::LeaseLost),
            }
            read_ahead = next?;
            lease.recorded.add(&page);
            clock.slowest_page = clock.slowest_page.max(started.elapsed());
            let checkpoint = {
                let (held, recorded) = (lease.held.clone(), lease.recorded);
                let next_key = next_key.clone();
                async move { (self.checkpoint(&held, next_key.as_ref(), &recorded, limiter)).await }
            };
            match next_key {
                Some(key) => {
                    lease.start_key = Some(key);
                    saving = Some((Box::pin(checkpoint), page));
                }
                None if checkpoint.await? => {
                    total.add(&page);
                    return Ok(SegmentEnd::Finished(lease.held.segment));
                }
                None => return Ok(SegmentEnd::LeaseLost),
            }
        }
    }

    /// Saves a page's checkpoint, the segment's counts `recorded` with it, and renews the lease
    /// (or marks the segment done), if the lease is still this worker's token; `false` when it
    /// is not. The counts are set, not added to, so that a checkpoint sent again after its
    /// response was lost applies as once.
    async fn checkpoint(
        &self,
        held: &Held,
        next_key: Option<&Item>,
        recorded: &SweepCounts,
        limiter: Option<&Limiter>,
    ) -> Result<bool, Error> {
        let rate = limiter.map(Limiter::held);
        let path = |name: &'static str| AttrPath::attribute(name);
        let expires = if next_key.is_some() {
            millis(&self.db) + self.lease_ms()
        } else {
            // A done segment's lease ends with it.
            millis(&self.db)
        };
        let mut actions = vec![Action::Set(
            path("lease_expires"),
            SetValue::Value(number(expires)),
        )];
        if let Some(rate) = rate {
            // The rate the worker holds, for `status` to show beside its progress.
            actions.push(Action::Set(
                path("write_rate"),
                SetValue::Value(AttributeValue::N(format!("{rate:.1}"))),
            ));
        }
        match next_key {
            Some(key) => actions.push(Action::Set(
                path("start_key"),
                SetValue::Value(AttributeValue::M(key.clone())),
            )),
            None => {
                actions.push(Action::Set(
                    path("done"),
                    SetValue::Value(AttributeValue::Bool(true)),
                ));
                actions.push(Action::Remove(path("start_key")));
            }
        }
        let counters = [
            ("examined", recorded.examined),
            ("old", recorded.old),
            ("backfilled", recorded.backfilled),
            ("after_change", recorded.after_change),
            ("changed_concurrently", recorded.changed_concurrently),
            ("already_current", recorded.already_current),
            ("failed", recorded.failed),
        ];
        for (name, value) in counters {
            actions.push(Action::Set(path(name), SetValue::Value(number(value))));
        }
        self.write_held(held, actions, limiter).await
    }

    /// Gives the segment up at its checkpoint: its lease expires now, so the next worker
    /// takes it at once, if it is still this worker's token.
    async fn release(&self, held: &Held, limiter: Option<&Limiter>) -> Result<(), Error> {
        // Expired at the epoch: free at once for the next claimant, whatever its clock says
        // (a clock that stands still, in a test, would never pass a lease ended "now").
        let actions = vec![Action::Set(
            AttrPath::attribute("lease_expires"),
            SetValue::Value(number(0)),
        )];
        // A lease another worker took over since is no longer this one's to give up.
        self.write_held(held, actions, limiter).await.map(|_| ())
    }

    /// Applies `actions` to the segment's record while `held` still holds it; `false` when it
    /// does not.
    async fn write_held(
        &self,
        held: &Held,
        actions: Vec<Action>,
        limiter: Option<&Limiter>,
    ) -> Result<bool, Error> {
        let write = Write::update(
            DISTRIBUTED_SWEEP.description,
            self.segment_key(held.segment),
            actions,
        )
        .condition(&held.holds());
        let output = self.write_record(write).await?;
        Ok(self.applied(output, limiter).is_some())
    }

    /// Writes one of the sweep's records, each of which applies as once when sent twice: sent
    /// again by the library after a lost response, and while DynamoDB throttles it, as the
    /// sweep's backfills are, so that a worker rides through both.
    async fn write_record(&self, write: Write) -> Result<Written, Error> {
        let write = write.resend(Resend::Paced);
        let policy = self.db.long_job_policy();
        resent_while_throttled(policy, || self.db.write(write.clone()), |_| {}).await
    }

    /// The attributes an applied write returned (its capacity counted as the sweep's own),
    /// or `None` when its condition failed.
    fn applied(&self, written: Written, limiter: Option<&Limiter>) -> Option<Item> {
        match written {
            Written::Applied { attributes, units } => {
                let units = self.record_units(units);
                // A budget of write units pays for the sweep's bookkeeping too.
                if let Some(limiter) = limiter.filter(|limiter| limiter.unit() == Unit::WriteUnits)
                {
                    limiter.settle(0.0, units);
                }
                Some(attributes.unwrap_or_default())
            }
            Written::ConditionFailed { .. } => None,
        }
    }

    /// Counts the capacity of a write of the sweep's own records (a unit where the engine
    /// reported none), and returns it.
    fn record_units(&self, units: Option<f64>) -> f64 {
        let units = units.unwrap_or(1.0);
        let mut total = self
            .record_units
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *total += units;
        units
    }

    fn lease_ms(&self) -> u64 {
        u64::try_from(self.lease.as_millis()).unwrap_or(u64::MAX)
    }
}

/// A segment a worker holds: who holds it, where its scan resumes, and the segment's counts
/// as its last checkpoint recorded them.
struct Lease {
    held: Held,
    start_key: Option<Item>,
    recorded: SweepCounts,
}

/// A claim on a segment: the owner it was made as (the worker's id, or for its second lane
/// `<id>/2`, so that the worker's two claims never pass for one) and its fencing token.
#[derive(Clone)]
struct Held {
    owner: String,
    segment: u32,
    token: u64,
}

impl Held {
    /// The condition that the segment is still held by this claim.
    fn holds(&self) -> Node {
        both(
            equals("owner", AttributeValue::S(self.owner.clone())),
            equals("lease", number(self.token)),
        )
    }
}

/// What one of a worker's lanes did.
#[derive(Default)]
struct Lane {
    finished: Vec<u32>,
    leases_lost: u32,
    counts: SweepCounts,
    work_left: bool,
}

/// How a worker left a segment.
enum SegmentEnd {
    Finished(u32),
    LeaseLost,
    /// Given up at its checkpoint, the worker's deadline near.
    Released,
}

/// The condition that the record's attribute `name` holds `value`.
fn equals(name: &'static str, value: AttributeValue) -> Node {
    Node::Compare(
        Operand::Path(AttrPath::attribute(name)),
        Comparison::Eq,
        Operand::Value(value),
    )
}

fn both(left: Node, right: Node) -> Node {
    Node::And(Box::new(left), Box::new(right))
}

fn number(value: u64) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

/// Milliseconds since the epoch by `db`'s clock ([`Db::with_clock`]), which leases are
/// written and compared in.
fn millis<T: Table>(db: &Db<T>) -> u64 {
    db.now()
        .duration_since(UNIX_EPOCH)
        .map(|since| u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or_default()
}
