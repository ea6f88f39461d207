//! Every high-level write under injected faults: thousands of operations at an 8% fault rate
//! through [`singletable_fault`]'s proxy (throttling, transaction conflicts, unprocessed batch
//! parts, HTTP 500/503, timeouts and dropped connections, before or after the engine applies
//! the request), with the SDK's retries on, checked against a model of the table.
//!
//! One operation is in flight at a time and the test is the table's only writer, so after each
//! operation a read through a client without faults tells exactly what happened: an
//! acknowledged write must be there once (not lost, not applied twice), and a write that
//! returned an error may or may not be there (the ambiguous case, when the engine applied it
//! but the response was lost), and the read says which. At the end the whole table must
//! equal the model. With one request in flight, a seed reproduces the exact fault schedule:
//! `SINGLETABLE_FAULT_SEED=<n> SINGLETABLE_FAULT_OPS=<n> cargo test --test faults -- --nocapture`.
mod common;
use common::Needs;

use serde::{Deserialize, Serialize};
use singletable::local::{Deviation, Engine};
use singletable::op::append::{Appended, LATEST_ATTRIBUTE};
use singletable::op::transact::CancellationCode;
use singletable::{Db, Entity, Error, KeyPart, OptionalExt, Table};
use singletable_fault::{self as fault, Fault, FaultKind, FaultPlan, FaultReport, FaultStats};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::future::Future;
use std::time::{Duration, Instant};

#[derive(Table)]
#[dynamo(name = "faults", pk = "PK", sk = "SK")]
struct Faults;

/// Unversioned: put, delete, batch write.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Faults, pk = "REG#{id}", sk = "REG")]
struct Register {
    id: u32,
    /// The number of the operation that wrote it.
    write: u64,
}

/// Versioned: optimistic-locking puts.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Faults, pk = "DOC#{id}", sk = "DOC")]
struct Doc {
    id: u32,
    #[dynamo(version)]
    version: u64,
    write: u64,
}

/// `ADD count 1`, without a version.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Faults, pk = "CTR#{id}", sk = "CTR")]
struct Counter {
    id: u32,
    count: u64,
}

/// `ADD count 1` guarded by the sequence number of the change it counts, per source.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Faults, pk = "GCTR#{id}", sk = "GCTR")]
struct GuardedCounter {
    id: u32,
    count: u64,
    applied: std::collections::HashMap<String, u64>,
}

/// `ADD count 1` with `expect_version`.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Faults, pk = "VCTR#{id}", sk = "VCTR")]
struct VersionedCounter {
    id: u32,
    #[dynamo(version)]
    version: u64,
    count: u64,
    /// The number of the last operation that incremented it.
    last: u64,
}

#[derive(KeyPart, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Status {
    Open,
    Pending,
    Closed,
}

const STATUSES: [Status; 3] = [Status::Open, Status::Pending, Status::Closed];

/// Status in the sort key: changing it is a rekey.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Faults, pk = "TICKET#{id}", sk = "STATUS#{status}")]
struct Ticket {
    id: u32,
    status: Status,
    moves: u64,
}

/// A guarded history: appended only when newer than the partition's latest.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Faults, pk = "HIST#{doc}", sk = "AT#{at}")]
struct History {
    doc: u32,
    at: u64,
    write: u64,
}

/// The fault rate: 8% of requests, SDK retries included.
const RATE: f64 = 0.08;
/// No operation may take longer than this: retries are bounded.
const OPERATION_BOUND: Duration = Duration::from_secs(60);
/// Nor the whole test.
const TEST_BOUND: Duration = Duration::from_secs(900);

fn operations() -> u64 {
    std::env::var("SINGLETABLE_FAULT_OPS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(2000)
}

/// The seed of test number `test`: `SINGLETABLE_FAULT_SEED` (default 2024) plus `test`.
fn seed(test: u64) -> u64 {
    std::env::var("SINGLETABLE_FAULT_SEED")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(2024u64)
        .wrapping_add(test)
}

/// A table, a faulty handle on it and a plain one to check it with.
struct Harness {
    faulty: Db<Faults>,
    plain: singletable::testing::TestTable<Faults>,
    stats: FaultStats,
    rng: fastrand::Rng,
}

async fn harness(test: u64, plan: impl FnOnce(FaultPlan) -> FaultPlan) -> Harness {
    let plain = singletable::testing::table::<Faults>().await.unwrap();
    let (client, stats) = fault::client(plan(FaultPlan::new(seed(test), RATE)))
        .await
        .unwrap();
    let faulty = Db::new(client).with_table_name(plain.table_name());
    Harness {
        faulty,
        plain,
        stats,
        rng: fastrand::Rng::with_seed(seed(test) ^ 0x9e37_79b9_7f4a_7c15),
    }
}

/// What the operations did, as the model judged it.
#[derive(Default, Debug)]
struct Tally {
    operations: u64,
    acknowledged: u64,
    /// Operations that returned an error, by kind.
    errors: BTreeMap<&'static str, u64>,
    /// Errors after which the write turned out to have happened (ambiguous, resolved by reading).
    applied_despite_error: u64,
    /// Failed conditions (or version conflicts) on the item this very write put there.
    own_write_conflicts: u64,
    lost: u64,
    duplicated: u64,
    double_applied: u64,
    /// Anything else the model did not allow, described.
    violations: Vec<String>,
    /// A few of the rarer errors, verbatim.
    examples: Vec<String>,
}

impl Tally {
    /// Counts a write found in the table: an error reported for it had the write happen.
    fn applied<T>(&mut self, result: &Result<T, Error>) {
        if result.is_err() {
            self.applied_despite_error += 1;
        }
    }

    /// Counts an operation and its outcome.
    fn count<T>(&mut self, result: &Result<T, Error>) {
        self.operations += 1;
        match result {
            Ok(_) => self.acknowledged += 1,
            Err(error) => self.error(error),
        }
    }

    /// A conflict met by a write whose test is the only writer: it can only be the write's own
    /// earlier attempt, resent by the SDK after its response was lost.
    fn own_write_conflict<E: Entity>(
        &mut self,
        error: &Error,
        written: &E,
        what: impl fmt::Display,
    ) {
        if fault::is_own_write(error, written) {
            self.own_write_conflicts += 1;
        } else {
            self.violation(format!("{what}: foreign conflict {error:?}"));
        }
    }

    fn error(&mut self, error: &Error) {
        let kind = match error {
            Error::ConditionFailed { .. } => "ConditionFailed",
            Error::VersionConflict { .. } => "VersionConflict",
            Error::NotFound { .. } => "NotFound",
            Error::TransactionCanceled(_) => "TransactionCanceled",
            Error::BatchWrite { .. } => "BatchWrite",
            Error::Service(_) => "Service",
            _ => "other",
        };
        *self.errors.entry(kind).or_insert(0) += 1;
        // The rarer errors, as examples for the summary.
        if !matches!(kind, "Service" | "ConditionFailed" | "VersionConflict")
            && self.examples.len() < 5
        {
            self.examples.push(error.to_string());
        }
    }

    fn violation(&mut self, text: String) {
        if self.violations.len() < 20 {
            self.violations.push(text);
        }
    }

    fn errors_total(&self) -> u64 {
        self.errors.values().sum()
    }
}

impl fmt::Display for Tally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} operations: {} acknowledged, {} typed errors {:?} ({} of which had applied the write; {} own-write conflicts); lost {}, duplicated {}, double-applied {}",
            self.operations,
            self.acknowledged,
            self.errors_total(),
            self.errors,
            self.applied_despite_error,
            self.own_write_conflicts,
            self.lost,
            self.duplicated,
            self.double_applied
        )
    }
}

/// Prints the figures (the README's Reliability section quotes them) and checks the outcome.
fn finish(name: &str, tally: &Tally, report: &FaultReport, started: Instant) {
    eprintln!(
        "[faults] {name}: {tally}; {report}; {:.1}s",
        started.elapsed().as_secs_f64()
    );
    for example in &tally.examples {
        eprintln!("[faults] {name}: for example: {example}");
    }
    assert!(
        tally.violations.is_empty(),
        "{name}: {:#?}",
        tally.violations
    );
    assert_eq!(
        (tally.lost, tally.duplicated, tally.double_applied),
        (0, 0, 0),
        "{name}: {tally}"
    );
    assert!(
        report.injected_total() > 0 && report.injected_after_apply() > 0,
        "{name}: faults were injected on both sides of the engine: {report}"
    );
}

/// Runs `operation` within [`OPERATION_BOUND`].
async fn bounded<T>(operation: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
    match tokio::time::timeout(OPERATION_BOUND, operation).await {
        Ok(result) => result,
        Err(_) => {
            panic!("an operation took longer than {OPERATION_BOUND:?}: retries are unbounded")
        }
    }
}

async fn within_bound(test: impl Future<Output = ()>) {
    tokio::time::timeout(TEST_BOUND, test)
        .await
        .expect("the test finished within its time bound");
}

async fn read<E: Entity<Table = Faults>>(db: &Db<Faults>, key: singletable::Key<E>) -> Option<E> {
    db.get(key).consistent().send().await.optional().unwrap()
}

/// Scans every item of `E` through the plain client.
async fn scan_all<E: Entity<Table = Faults>>(db: &Db<Faults>) -> Vec<E> {
    use futures::StreamExt;
    let items: Vec<Result<E, Error>> = db.scan::<E>().consistent().items().collect().await;
    items.into_iter().map(Result::unwrap).collect()
}

/// One register's model after a write of `new` (None: a delete) that was acknowledged or not:
/// returns the new model value, judging what was read back.
fn judge_register(
    tally: &mut Tally,
    id: u32,
    before: Option<u64>,
    new: Option<u64>,
    acknowledged: bool,
    found: Option<u64>,
) -> Option<u64> {
    if found == new {
        if !acknowledged && new != before {
            tally.applied_despite_error += 1;
        }
        return found;
    }
    if acknowledged {
        tally.lost += 1;
        tally.violation(format!(
            "register {id}: acknowledged {new:?}, found {found:?}"
        ));
    } else if found != before {
        tally.violation(format!(
            "register {id}: before {before:?}, failed write {new:?}, found {found:?}"
        ));
    }
    found
}

#[tokio::test]
async fn unconditional_puts_and_deletes_are_exactly_once_or_a_typed_error() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    within_bound(async {
        let started = Instant::now();
        let mut h = harness(1, |plan| plan).await;
        let mut tally = Tally::default();
        let mut model: BTreeMap<u32, Option<u64>> = BTreeMap::new();
        for op in 0..operations() {
            let id = h.rng.u32(0..50);
            let before = model.get(&id).copied().flatten();
            let delete = h.rng.u8(0..100) < 15;
            let new = (!delete).then_some(op);
            let result = if delete {
                bounded(h.faulty.delete(Register::key(id).unwrap()).send()).await
            } else {
                bounded(h.faulty.put(&Register { id, write: op }).send()).await
            };
            tally.count(&result);
            let found = read(&h.plain, Register::key(id).unwrap())
                .await
                .map(|register| register.write);
            let now = judge_register(&mut tally, id, before, new, result.is_ok(), found);
            model.insert(id, now);
        }
        let stored: BTreeMap<u32, Option<u64>> = scan_all::<Register>(&h.plain)
            .await
            .into_iter()
            .map(|register| (register.id, Some(register.write)))
            .collect();
        let expected: BTreeMap<u32, Option<u64>> = model
            .into_iter()
            .filter(|(_, value)| value.is_some())
            .collect();
        assert_eq!(stored, expected, "the table equals the model");
        finish("put/delete", &tally, &h.stats.report(), started);
    })
    .await;
}

#[tokio::test]
async fn conditional_creates_are_exactly_once_and_a_lost_response_shows_as_an_own_write_conflict() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    within_bound(async {
        let started = Instant::now();
        let h = harness(2, |plan| plan).await;
        let mut tally = Tally::default();
        let mut created = Vec::new();
        for op in 0..operations() {
            let id = u32::try_from(op).unwrap();
            let register = Register { id, write: op };
            let result = bounded(h.faulty.put(&register).only_if_absent().send()).await;
            tally.count(&result);
            match &result {
                // Every key is new, so a failed condition can only be this write's own.
                Err(error) if error.is_condition_failed() => {
                    tally.own_write_conflict(error, &register, format_args!("create {id}"));
                }
                _ => {}
            }
            let found = read(&h.plain, Register::key(id).unwrap()).await;
            match (&result, found) {
                (_, Some(found)) if found == register => {
                    tally.applied(&result);
                    created.push(id);
                }
                (Ok(()), found) => {
                    tally.lost += 1;
                    tally.violation(format!("create {id} acknowledged, found {found:?}"));
                }
                (Err(_), None) => {}
                (Err(_), Some(found)) => {
                    tally.violation(format!("create {id} failed, found {found:?}"))
                }
            }
        }
        let mut stored: Vec<u32> = scan_all::<Register>(&h.plain)
            .await
            .iter()
            .map(|register| register.id)
            .collect();
        stored.sort_unstable();
        assert_eq!(stored, created, "every created item, once");
        finish("put only_if_absent", &tally, &h.stats.report(), started);
    })
    .await;
}

#[tokio::test]
async fn versioned_puts_are_exactly_once_and_a_lost_response_shows_as_an_own_write_conflict() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    within_bound(async {
        let started = Instant::now();
        let mut h = harness(3, |plan| plan).await;
        let mut tally = Tally::default();
        let mut model: BTreeMap<u32, Doc> = BTreeMap::new();
        for op in 0..operations() {
            let id = h.rng.u32(0..20);
            let current = model.get(&id).cloned();
            let version = current.as_ref().map_or(0, |doc| doc.version);
            let doc = Doc {
                id,
                version,
                write: op,
            };
            let result = bounded(h.faulty.put(&doc).send()).await;
            tally.count(&result);
            match &result {
                Err(error) if error.is_version_conflict() => {
                    tally.own_write_conflict(error, &doc, format_args!("doc {id}"));
                }
                _ => {}
            }
            let found = read(&h.plain, Doc::key(id).unwrap()).await;
            let written = Doc {
                version: version + 1,
                ..doc
            };
            match found {
                Some(found) if found == written => {
                    tally.applied(&result);
                    model.insert(id, found);
                }
                found if found == current => {
                    if result.is_ok() {
                        tally.lost += 1;
                        tally.violation(format!(
                            "doc {id}: acknowledged {written:?}, found {found:?}"
                        ));
                    }
                }
                found => {
                    if found
                        .as_ref()
                        .is_some_and(|found| found.version > version + 1)
                    {
                        tally.double_applied += 1;
                    }
                    tally.violation(format!(
                        "doc {id}: from {current:?}, wrote {written:?}, found {found:?}"
                    ));
                }
            }
        }
        let stored: BTreeMap<u32, Doc> = scan_all::<Doc>(&h.plain)
            .await
            .into_iter()
            .map(|doc| (doc.id, doc))
            .collect();
        assert_eq!(stored, model, "the table equals the model");
        finish("versioned put", &tally, &h.stats.report(), started);
    })
    .await;
}

/// Unversioned `ADD`: judged by reading the count back after each operation.
async fn counter_run(test: u64, name: &str, plan: impl FnOnce(FaultPlan) -> FaultPlan) {
    let started = Instant::now();
    let mut h = harness(test, plan).await;
    let mut tally = Tally::default();
    const COUNTERS: u32 = 10;
    let mut model = [0u64; COUNTERS as usize];
    for id in 0..COUNTERS {
        h.plain.put(&Counter { id, count: 0 }).send().await.unwrap();
    }
    for _ in 0..operations() {
        let id = h.rng.u32(0..COUNTERS);
        let result = bounded(
            h.faulty
                .update(Counter::key(id).unwrap())
                .add(Counter::COUNT, 1)
                .send(),
        )
        .await;
        tally.count(&result);
        let found = read(&h.plain, Counter::key(id).unwrap())
            .await
            .map_or(0, |counter| counter.count);
        let before = model[id as usize];
        match (found.checked_sub(before), result.is_ok()) {
            (Some(1), ok) => {
                if !ok {
                    tally.applied_despite_error += 1;
                }
            }
            (Some(0), true) => {
                tally.lost += 1;
                tally.violation(format!("counter {id}: acknowledged increment lost"));
            }
            (Some(0), false) => {}
            (Some(delta), _) => {
                tally.double_applied += 1;
                tally.violation(format!("counter {id}: one increment added {delta}"));
            }
            (None, _) => {
                tally.violation(format!("counter {id}: went down from {before} to {found}"))
            }
        }
        model[id as usize] = found;
    }
    let stored: Vec<u64> = {
        let mut counters = scan_all::<Counter>(&h.plain).await;
        counters.sort_by_key(|counter| counter.id);
        counters.iter().map(|counter| counter.count).collect()
    };
    assert_eq!(stored, model, "the table equals the model");
    finish(name, &tally, &h.stats.report(), started);
    let applied: u64 = model.iter().sum();
    assert_eq!(
        applied,
        tally.acknowledged + tally.applied_despite_error,
        "every applied increment is an acknowledged one or a resolved ambiguous one"
    );
}

/// With the SDK's retries off, a lost response reaches the caller as an error: the increment
/// happened at most once, and reading back says whether it did.
#[tokio::test]
async fn unversioned_adds_without_sdk_retries_are_exactly_once_or_a_typed_error() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    within_bound(counter_run(4, "update ADD (no SDK retries)", |plan| {
        plan.without_sdk_retries()
    }))
    .await;
}

/// With the SDK's retries on (its default): the library does not let the SDK resend an
/// unversioned `ADD` (a lost response would apply it twice); the caller gets
/// `Error::Ambiguous` and the model resolves it by reading the item back.
#[tokio::test]
async fn unversioned_adds_with_sdk_retries_are_exactly_once() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    within_bound(counter_run(5, "update ADD (SDK retries)", |plan| plan)).await;
}

#[tokio::test]
async fn versioned_adds_are_exactly_once_and_a_lost_response_shows_as_an_own_write_conflict() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    within_bound(async {
        let started = Instant::now();
        let mut h = harness(6, |plan| plan).await;
        let mut tally = Tally::default();
        const COUNTERS: u32 = 10;
        let mut model: BTreeMap<u32, VersionedCounter> = BTreeMap::new();
        for id in 0..COUNTERS {
            let counter = VersionedCounter {
                id,
                version: 0,
                count: 0,
                last: 0,
            };
            h.plain.put(&counter).send().await.unwrap();
            model.insert(
                id,
                VersionedCounter {
                    version: 1,
                    ..counter
                },
            );
        }
        for op in 1..=operations() {
            let id = h.rng.u32(0..COUNTERS);
            let before = model[&id].clone();
            let result = bounded(
                h.faulty
                    .update(VersionedCounter::key(id).unwrap())
                    .add(VersionedCounter::COUNT, 1)
                    .set(VersionedCounter::LAST, op)
                    .expect_version(before.version)
                    .send(),
            )
            .await;
            tally.operations += 1;
            let after = VersionedCounter {
                version: before.version + 1,
                count: before.count + 1,
                last: op,
                ..before.clone()
            };
            match &result {
                Ok(updated) => {
                    tally.acknowledged += 1;
                    if *updated != after {
                        tally.violation(format!(
                            "counter {id}: returned {updated:?}, expected {after:?}"
                        ));
                    }
                }
                Err(error) => {
                    tally.error(error);
                    if error.is_version_conflict() {
                        match error.current_item::<VersionedCounter>() {
                            Some(Ok(current)) if current == after => tally.own_write_conflicts += 1,
                            other => {
                                tally.violation(format!("counter {id}: foreign conflict {other:?}"))
                            }
                        }
                    }
                }
            }
            let found = read(&h.plain, VersionedCounter::key(id).unwrap()).await;
            match found {
                Some(found) if found == after => {
                    tally.applied(&result);
                    model.insert(id, found);
                }
                Some(found) if found == before => {
                    if result.is_ok() {
                        tally.lost += 1;
                        tally.violation(format!("counter {id}: acknowledged increment lost"));
                    }
                }
                found => {
                    if found
                        .as_ref()
                        .is_some_and(|found| found.count > after.count)
                    {
                        tally.double_applied += 1;
                    }
                    tally.violation(format!("counter {id}: from {before:?}, found {found:?}"));
                }
            }
        }
        let stored: BTreeMap<u32, VersionedCounter> = scan_all::<VersionedCounter>(&h.plain)
            .await
            .into_iter()
            .map(|counter| (counter.id, counter))
            .collect();
        assert_eq!(stored, model, "the table equals the model");
        finish("versioned update ADD", &tally, &h.stats.report(), started);
        let applied: u64 = model.values().map(|counter| counter.count).sum();
        assert_eq!(applied, tally.acknowledged + tally.applied_despite_error);
    })
    .await;
}

/// Ticket 1, open, in the table; returns what it becomes when closed.
async fn open_ticket_one(db: &Db<Faults>) -> Ticket {
    db.put(&Ticket {
        id: 1,
        status: Status::Open,
        moves: 0,
    })
    .send()
    .await
    .unwrap();
    Ticket {
        id: 1,
        status: Status::Closed,
        moves: 1,
    }
}

/// Closing ticket 1 in one transaction: the open one deleted, `to` put.
fn close_ticket_one<'db>(
    db: &'db Db<Faults>,
    to: &Ticket,
) -> singletable::op::transact::Transaction<'db, Faults> {
    db.transaction()
        .with(
            db.delete(Ticket::key(1, Status::Open).unwrap())
                .only_if_exists(),
        )
        .with(db.put(to).only_if_absent())
}

/// A harness whose every request meets `fault`.
async fn always(test: u64, fault: Fault) -> Harness {
    harness(test, |plan| {
        FaultPlan { rate: 1.0, ..plan }.with_kinds([fault])
    })
    .await
}

/// A client request token no other test uses: the engine remembers tokens for 10 minutes,
/// and a token resent with other parameters (another table) is refused.
fn token<T: singletable::Table>(db: &Db<T>) -> String {
    format!("st-{}", db.table_name())
}

/// Where ticket `id` is: every status under its partition, read through the plain client.
async fn locate(db: &Db<Faults>, id: u32) -> Vec<Ticket> {
    db.query(Ticket::partition(id))
        .consistent()
        .all()
        .await
        .unwrap()
}

async fn rekey_run(test: u64, name: &str, plan: impl FnOnce(FaultPlan) -> FaultPlan) {
    let started = Instant::now();
    let mut h = harness(test, plan).await;
    let mut tally = Tally::default();
    const TICKETS: u32 = 20;
    let mut model: BTreeMap<u32, Ticket> = BTreeMap::new();
    for id in 0..TICKETS {
        let ticket = Ticket {
            id,
            status: Status::Open,
            moves: 0,
        };
        h.plain.put(&ticket).send().await.unwrap();
        model.insert(id, ticket);
    }
    for _ in 0..operations() {
        let id = h.rng.u32(0..TICKETS);
        let from = model[&id].clone();
        let others: Vec<Status> = STATUSES.into_iter().filter(|s| *s != from.status).collect();
        let to = Ticket {
            status: others[h.rng.usize(..others.len())],
            moves: from.moves + 1,
            ..from.clone()
        };
        let result = bounded(h.faulty.rekey(&from, &to).send()).await;
        tally.count(&result);
        match &result {
            // The test is the only writer and the old item exists: a missing old item or a
            // taken new key can only be this rekey's own earlier attempt.
            Err(error) if error.is_not_found() || error.is_condition_failed() => {
                tally.own_write_conflicts += 1;
            }
            _ => {}
        }
        let copies = locate(&h.plain, id).await;
        match copies.as_slice() {
            [found] if *found == to => {
                tally.applied(&result);
                model.insert(id, to);
            }
            [found] if *found == from => {
                if result.is_ok() {
                    tally.lost += 1;
                    tally.violation(format!("ticket {id}: acknowledged move to {to:?} not made"));
                }
            }
            [] => {
                tally.lost += 1;
                tally.violation(format!("ticket {id}: gone after moving {from:?} to {to:?}"));
            }
            [_] => tally.violation(format!(
                "ticket {id}: from {from:?} to {to:?}, found {copies:?}"
            )),
            _ => {
                tally.duplicated += 1;
                tally.violation(format!("ticket {id}: {} copies: {copies:?}", copies.len()));
            }
        }
    }
    let mut stored = scan_all::<Ticket>(&h.plain).await;
    stored.sort_by_key(|ticket| ticket.id);
    let expected: Vec<Ticket> = model.into_values().collect();
    assert_eq!(
        stored, expected,
        "one copy of every ticket, where the model says"
    );
    let report = h.stats.report();
    eprintln!(
        "[faults] {name}: {} resent transactions answered from their token",
        report.replayed
    );
    finish(name, &tally, &report, started);
    let engine = Engine::from_env().unwrap();
    if !h.stats.emulates_idempotency() && engine.deviates(Deviation::IgnoresClientRequestTokens) {
        eprintln!(
            "[faults] {name}: {engine} ignores ClientRequestToken \
             (Deviation::IgnoresClientRequestTokens): {} resent rekeys failed on their own \
             first attempt",
            tally.own_write_conflicts
        );
        return;
    }
    assert_eq!(
        tally.own_write_conflicts, 0,
        "{name} on {engine}: with the client request token, a resent rekey is acknowledged, \
         not refused"
    );
}

#[tokio::test]
async fn rekeys_are_exactly_once_and_never_lose_or_duplicate_an_item() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    within_bound(rekey_run(7, "rekey", |plan| plan)).await;
}

/// The engine's own tokens, with no emulation in the proxy. On an engine that ignores them
/// (moto), a rekey whose response was lost fails on its own earlier attempt (the old item is
/// gone): the table stays right, the report is wrong.
#[tokio::test]
async fn rekeys_are_exactly_once_on_the_engine_s_own_tokens() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    within_bound(rekey_run(8, "rekey (engine tokens)", |plan| {
        plan.without_idempotency_emulation()
    }))
    .await;
}

#[tokio::test]
async fn guarded_appends_are_exactly_once_and_keep_every_history_increasing() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    within_bound(async {
        let started = Instant::now();
        let mut h = harness(9, |plan| plan).await;
        let mut tally = Tally::default();
        const DOCUMENTS: u32 = 5;
        let mut latest: BTreeMap<u32, u64> = BTreeMap::new();
        let mut histories: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
        let mut stale = 0u64;
        for op in 0..operations() {
            let doc = h.rng.u32(0..DOCUMENTS);
            let current = latest.get(&doc).copied().unwrap_or(0);
            // One in ten is stale on purpose.
            let at = if current > 0 && h.rng.u8(0..10) == 0 {
                h.rng.u64(1..=current)
            } else {
                current + h.rng.u64(1..5)
            };
            let entry = History { doc, at, write: op };
            let result = bounded(h.faulty.append(&entry, History::AT).send()).await;
            tally.operations += 1;
            let exists = read(&h.plain, History::key(doc, at).unwrap()).await;
            let applied = exists.as_ref() == Some(&entry);
            match &result {
                Ok(Appended::Accepted) => {
                    tally.acknowledged += 1;
                    if !applied {
                        tally.lost += 1;
                        tally.violation(format!("doc {doc}: accepted {at}, not stored"));
                    }
                }
                Ok(Appended::Stale { latest: reported }) => {
                    tally.acknowledged += 1;
                    stale += 1;
                    if at <= current && *reported == current && !applied {
                        // A genuinely stale value: refused, nothing written.
                    } else {
                        tally.own_write_conflicts += 1;
                        tally.violation(format!(
                            "doc {doc}: {at} reported stale against {reported} (latest {current}, applied {applied})"
                        ));
                    }
                }
                Ok(Appended::Duplicate) => {
                    tally.violation(format!("doc {doc}: {at} reported duplicate"));
                }
                Err(error) => {
                    tally.error(error);
                    if applied {
                        tally.applied_despite_error += 1;
                    }
                }
            }
            if applied {
                if at <= current {
                    tally.violation(format!("doc {doc}: stale {at} stored over {current}"));
                }
                latest.insert(doc, at);
                histories.entry(doc).or_default().push(at);
            } else if exists.is_some()
                && !histories.get(&doc).is_some_and(|history| history.contains(&at))
            {
                tally.violation(format!("doc {doc}: {at} holds {exists:?}"));
            }
        }
        for doc in 0..DOCUMENTS {
            let stored: Vec<u64> = h
                .plain
                .query(History::partition(doc))
                .consistent()
                .all()
                .await
                .unwrap()
                .iter()
                .map(|entry| entry.at)
                .collect();
            let expected = histories.remove(&doc).unwrap_or_default();
            assert_eq!(stored, expected, "history of {doc} is exactly the appended values");
            // The pointer, read raw: `init_latest` would write.
            let pointer = h
                .plain
                .client()
                .get_item()
                .table_name(h.plain.table_name())
                .key("PK", aws_sdk_dynamodb::types::AttributeValue::S(format!("HIST#{doc:010}")))
                .key("SK", aws_sdk_dynamodb::types::AttributeValue::S("History#LATEST".into()))
                .consistent_read(true)
                .send()
                .await
                .unwrap()
                .item
                .and_then(|item| item.get(LATEST_ATTRIBUTE)?.as_n().ok()?.parse::<u64>().ok());
            assert_eq!(pointer, stored.last().copied(), "pointer of {doc} is its history's maximum");
        }
        let report = h.stats.report();
        eprintln!("[faults] append: {stale} stale refusals; {} resent transactions answered from their token", report.replayed);
        finish("guarded append", &tally, &report, started);
    })
    .await;
}

#[tokio::test]
async fn batch_writes_are_exactly_once_or_reported_unprocessed() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    within_bound(async {
        let started = Instant::now();
        let mut h = harness(10, |plan| plan).await;
        let mut tally = Tally::default();
        let mut model: BTreeMap<u32, Option<u64>> = BTreeMap::new();
        let mut batches = 0u64;
        let mut op = 0u64;
        let mut reported_unprocessed = 0u64;
        // A quarter as many batches as the other tests' operations, of 1 to 40 writes each
        // (up to two requests of 25): several thousand writes.
        while batches < operations() / 4 {
            batches += 1;
            let size = h.rng.usize(1..=40);
            let mut ids: Vec<u32> = (0..200).collect();
            h.rng.shuffle(&mut ids);
            ids.truncate(size);
            let mut batch = h.faulty.batch_write();
            let mut writes: Vec<(u32, Option<u64>)> = Vec::new();
            for id in ids {
                op += 1;
                if h.rng.u8(0..100) < 20 {
                    batch = batch.delete(Register::key(id).unwrap());
                    writes.push((id, None));
                } else {
                    batch = batch.put(&Register { id, write: op });
                    writes.push((id, Some(op)));
                }
            }
            let result = bounded(batch.send()).await;
            // Writes the library says were not made (or may not have been).
            let not_done: Vec<String> = match &result {
                Ok(output) => output.unprocessed.iter().map(|write| write.key.partition.1.clone()).collect(),
                Err(Error::BatchWrite { partial, .. }) => {
                    partial.unprocessed.iter().map(|write| write.key.partition.1.clone()).collect()
                }
                Err(_) => writes.iter().map(|(id, _)| Register::key(id).unwrap().partition().to_owned()).collect(),
            };
            reported_unprocessed += not_done.len() as u64;
            if let Err(error) = &result {
                tally.error(error);
            }
            let keys = writes.iter().map(|(id, _)| Register::key(id).unwrap());
            let read = h.plain.batch_get(keys).consistent().send().await.unwrap();
            assert!(read.is_complete());
            let found: BTreeMap<u32, u64> = read.items.iter().map(|r| (r.id, r.write)).collect();
            for (id, new) in writes {
                tally.operations += 1;
                let key = Register::key(id).unwrap().partition().to_owned();
                let acknowledged = !not_done.contains(&key);
                if acknowledged {
                    tally.acknowledged += 1;
                }
                let before = model.get(&id).copied().flatten();
                let now = judge_register(&mut tally, id, before, new, acknowledged, found.get(&id).copied());
                model.insert(id, now);
            }
        }
        let stored: BTreeMap<u32, Option<u64>> = scan_all::<Register>(&h.plain)
            .await
            .into_iter()
            .map(|register| (register.id, Some(register.write)))
            .collect();
        let expected: BTreeMap<u32, Option<u64>> =
            model.into_iter().filter(|(_, value)| value.is_some()).collect();
        assert_eq!(stored, expected, "the table equals the model");
        eprintln!("[faults] batch write: {batches} batches; {reported_unprocessed} writes reported not done");
        finish("batch write", &tally, &h.stats.report(), started);
    })
    .await;
}

/// Reads under partial batches and every other fault: each item comes back once, or its key
/// is handed back unprocessed; none is dropped or duplicated.
#[tokio::test]
async fn batch_gets_return_every_item_once_or_hand_its_key_back() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    within_bound(async {
        let started = Instant::now();
        let mut kinds = Fault::realistic();
        // Partial batches three times as often as each other fault.
        kinds.extend([Fault::before(FaultKind::Unprocessed); 2]);
        let mut h = harness(13, |plan| {
            plan.with_kinds(kinds)
                .with_attempt_timeout(Duration::from_millis(1500))
        })
        .await;
        let registers: Vec<Register> = (0..300)
            .map(|id| Register {
                id,
                write: u64::from(id),
            })
            .collect();
        let written = h
            .plain
            .batch_write()
            .put_all(&registers)
            .send()
            .await
            .unwrap();
        assert!(written.is_complete());
        let mut tally = Tally::default();
        let mut handed_back = 0u64;
        for _ in 0..operations() / 20 {
            let size = h.rng.usize(1..=250);
            let mut ids: Vec<u32> = (0..300).collect();
            h.rng.shuffle(&mut ids);
            ids.truncate(size);
            let keys = ids.iter().map(|id| Register::key(id).unwrap());
            let result = bounded(h.faulty.batch_get(keys).consistent().send()).await;
            tally.operations += size as u64;
            let output = match result {
                Ok(output) => output,
                Err(error) => {
                    tally.error(&error);
                    continue;
                }
            };
            let mut seen: BTreeMap<u32, u32> = BTreeMap::new();
            for register in &output.items {
                *seen.entry(register.id).or_insert(0) += 1;
                if *register != registers[register.id as usize] {
                    tally.violation(format!("read {register:?}"));
                }
            }
            for key in &output.unprocessed {
                let id: u32 = key.partition().trim_start_matches("REG#").parse().unwrap();
                *seen.entry(id).or_insert(0) += 1;
                handed_back += 1;
            }
            tally.acknowledged += output.items.len() as u64;
            for id in &ids {
                match seen.remove(id) {
                    Some(1) => {}
                    None => {
                        tally.lost += 1;
                        tally.violation(format!("register {id}: neither read nor handed back"));
                    }
                    Some(_) => {
                        tally.duplicated += 1;
                        tally.violation(format!("register {id}: returned twice"));
                    }
                }
            }
            if !seen.is_empty() {
                tally.violation(format!("keys not asked for: {seen:?}"));
            }
        }
        eprintln!("[faults] batch get: {handed_back} keys handed back unprocessed");
        let report = h.stats.report();
        eprintln!(
            "[faults] batch get: {tally}; {report}; {:.1}s",
            started.elapsed().as_secs_f64()
        );
        assert!(tally.violations.is_empty(), "{:#?}", tally.violations);
        assert_eq!((tally.lost, tally.duplicated), (0, 0));
        assert!(report.injected_total() > 0, "{report}");
    })
    .await;
}

/// Every batch request comes back partly unprocessed: the library resends the rest under its
/// retry policy and hands back what is still left, never dropping or doubling an item.
#[tokio::test]
async fn partial_batches_are_resent_or_handed_back() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    use singletable::RetryPolicy;
    // Attempts long enough never to time out on a loaded machine: a batch the engine applied
    // but whose answer timed out is resent by the SDK, partly deferred again, and would hand
    // back writes that are stored (a loaded CI run on moto saw 54 stored, 53 written).
    let h = harness(14, |plan| {
        FaultPlan { rate: 1.0, ..plan }
            .with_kinds([Fault::before(FaultKind::Unprocessed)])
            .with_attempt_timeout(Duration::from_secs(10))
    })
    .await;
    let fast = RetryPolicy::default()
        .with_max_attempts(4)
        .with_base_delay(Duration::from_millis(1))
        .with_max_delay(Duration::from_millis(5));
    let registers: Vec<Register> = (0..60).map(|id| Register { id, write: 1 }).collect();
    let written = h
        .faulty
        .batch_write()
        .put_all(&registers)
        .retry(fast)
        .send()
        .await
        .unwrap();
    // At least one write of every request is deferred, so some are always handed back.
    assert!(!written.unprocessed.is_empty());
    assert_eq!(written.written + written.unprocessed.len(), 60);
    let stored = scan_all::<Register>(&h.plain).await;
    let handed_back: BTreeSet<String> = written
        .unprocessed
        .iter()
        .map(|write| write.key.partition.1.clone())
        .collect();
    assert_eq!(
        stored.len(),
        written.written,
        "exactly the written ones are stored"
    );
    for register in &stored {
        assert!(!handed_back.contains(Register::key(register.id).unwrap().partition()));
    }
    let read = h
        .faulty
        .batch_get(
            registers
                .iter()
                .map(|register| Register::key(register.id).unwrap()),
        )
        .retry(fast)
        .send()
        .await
        .unwrap();
    assert!(!read.unprocessed.is_empty());
    assert_eq!(
        read.items.len(),
        stored.len()
            - stored
                .iter()
                .filter(|register| read
                    .unprocessed
                    .contains(&Register::key(register.id).unwrap()))
                .count()
    );
    let report = h.stats.report();
    assert_eq!(report.injected_total(), report.requests, "{report}");
}

/// DynamoDB acknowledges a resent `TransactWriteItems` with the same `ClientRequestToken`
/// without applying it again; the fault proxy emulates that on engines that do not
/// (`Deviation::IgnoresClientRequestTokens`) and forwards the resend to the others.
#[tokio::test]
async fn a_resent_transaction_with_its_token_is_acknowledged_once() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let h = harness(11, |plan| plan.with_kinds([])).await;
    let to = open_ticket_one(&h.plain).await;
    let send = |db: &Db<Faults>| {
        let (db, to) = (db.clone(), to.clone());
        async move {
            close_ticket_one(&db, &to)
                .client_request_token(token(&db))
                .send()
                .await
        }
    };
    send(&h.faulty).await.unwrap();
    // The same request again, as the SDK resends it after a lost response.
    send(&h.faulty).await.unwrap();
    let engine = Engine::from_env().unwrap();
    let emulated = engine.deviates(Deviation::IgnoresClientRequestTokens);
    assert_eq!(
        h.stats.report().replayed,
        u64::from(emulated),
        "{engine}: the proxy answers from the token only where the engine ignores tokens"
    );
    assert_eq!(locate(&h.plain, 1).await, [to]);
}

/// One retry policy for a transaction: the library's. The SDK's own retries are off inside its
/// loop, so a transaction that keeps failing is sent exactly `max_attempts` times (it was nine
/// sends for three attempts when both layers retried).
#[tokio::test]
async fn a_failing_transaction_is_sent_exactly_as_often_as_its_policy_says() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let h = always(16, Fault::before(FaultKind::ServiceUnavailable)).await;
    let policy = singletable::RetryPolicy::default()
        .with_max_attempts(3)
        .with_base_delay(Duration::from_millis(1))
        .with_max_delay(Duration::from_millis(1));
    let to = Ticket {
        id: 1,
        status: Status::Closed,
        moves: 1,
    };
    let error = h
        .faulty
        .transaction()
        .with(h.faulty.put(&to).only_if_absent())
        .retry(policy)
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        h.stats.report().by_operation.get("TransactWriteItems"),
        Some(&3),
        "{error}"
    );
    // A 503 leaves the outcome unknown, so the last one is ambiguous, not a service error.
    match &error {
        Error::AmbiguousTransaction {
            token, attempts, ..
        } => {
            assert_eq!(*attempts, 3);
            assert!(token.starts_with("st-"), "{token}");
        }
        other => panic!("expected AmbiguousTransaction, got {other:?}"),
    }
}

/// A lost response on the last attempt is `Error::AmbiguousTransaction`, carrying the token the
/// library generated; resending with that token is acknowledged without applying it again.
#[tokio::test]
async fn a_lost_last_response_is_ambiguous_and_its_token_resends_safely() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let h = always(17, Fault::after(FaultKind::ConnectionDropped)).await;
    let to = open_ticket_one(&h.plain).await;
    let error = close_ticket_one(&h.faulty, &to)
        .retry(singletable::RetryPolicy::never())
        .send()
        .await
        .unwrap_err();
    let Error::AmbiguousTransaction {
        token, attempts, ..
    } = &error
    else {
        panic!("expected AmbiguousTransaction, got {error:?}");
    };
    assert_eq!(*attempts, 1);
    assert!(error.to_string().contains(token.as_str()), "{error}");
    // It was applied; the resend with its token is acknowledged and applies nothing.
    assert_eq!(locate(&h.plain, 1).await, std::slice::from_ref(&to));
    h.stats.set_paused(true);
    close_ticket_one(&h.faulty, &to)
        .client_request_token(token.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(locate(&h.plain, 1).await, [to]);
}

/// Every update of a versioned entity counts the version up, so one without `expect_version`
/// is not safe to resend blindly either: with its response lost, it is `Error::Ambiguous`, and
/// the version went up once, not once per send.
#[tokio::test]
async fn a_versioned_update_without_an_expected_version_counts_up_once() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let h = always(15, Fault::after(FaultKind::ConnectionDropped)).await;
    h.plain
        .put(&Doc {
            id: 1,
            version: 0,
            write: 0,
        })
        .send()
        .await
        .unwrap();
    let error = h
        .faulty
        .update(Doc::key(1).unwrap())
        .set(Doc::WRITE, 7)
        .send()
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Ambiguous { .. }), "{error:?}");
    assert_eq!(h.stats.report().by_operation.get("UpdateItem"), Some(&1));
    let stored = read(&h.plain, Doc::key(1).unwrap()).await.unwrap();
    assert_eq!((stored.version, stored.write), (2, 7));
}

/// The SDK resends a transaction whose attempt timed out while the first attempt may still be
/// running; DynamoDB refuses the overlap with `TransactionInProgressException` (which the SDK
/// retries) and then acknowledges the resend without applying it again.
#[tokio::test]
async fn overlapping_sends_of_one_token_apply_once() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let h = harness(12, |plan| plan.with_kinds([])).await;
    for id in 0..20 {
        h.plain
            .put(&Ticket {
                id,
                status: Status::Open,
                moves: 0,
            })
            .send()
            .await
            .unwrap();
    }
    for id in 0..20 {
        let to = Ticket {
            id,
            status: Status::Pending,
            moves: 1,
        };
        let send = || {
            h.faulty
                .transaction()
                .with(
                    h.faulty
                        .delete(Ticket::key(id, Status::Open).unwrap())
                        .only_if_exists(),
                )
                .with(h.faulty.put(&to).only_if_absent())
                .client_request_token(format!("overlap-{id}"))
                .send()
        };
        let (first, second) = futures::join!(send(), send());
        first.unwrap();
        second.unwrap();
        assert_eq!(locate(&h.plain, id).await, [to]);
    }
}

/// The same probe straight at the engine, with no proxy in between.
#[tokio::test]
async fn the_engine_honours_client_request_tokens() {
    let db = singletable::testing::table::<Faults>().await.unwrap();
    let to = open_ticket_one(&db).await;
    let token = token(&db);
    let mut outcomes = Vec::new();
    for _ in 0..2 {
        outcomes.push(
            close_ticket_one(&db, &to)
                .client_request_token(token.clone())
                .send()
                .await,
        );
    }
    assert!(outcomes[0].is_ok(), "{:?}", outcomes[0]);
    let engine = Engine::from_env().unwrap();
    if engine.deviates(Deviation::IgnoresClientRequestTokens) {
        // The resend is applied again, and its conditions fail on the first send's result.
        let resend = outcomes[1]
            .as_ref()
            .expect_err("a token-blind engine applies it again");
        let refused_on_conditions = matches!(resend, Error::TransactionCanceled(canceled)
            if canceled.failures().count() > 0
                && canceled.failures().all(|reason| reason.code == CancellationCode::ConditionalCheckFailed));
        assert!(
            refused_on_conditions,
            "{engine} (Deviation::IgnoresClientRequestTokens): {resend}"
        );
    } else {
        assert!(outcomes[1].is_ok(), "{engine}: {:?}", outcomes[1]);
    }
    assert_eq!(locate(&db, 1).await, [to]);
}

/// An increment guarded by `advance` is resent by the library after a lost response (its
/// guard makes a second application fail), and a resend that finds its own value reports
/// the increment as applied: with 30% of responses lost after the engine applied them, every
/// one of 30 increments succeeds and the count is 30. A change counted again (a duplicate
/// delivery) counts nothing and returns the item as it is, whether or not its response is
/// lost: a resend cannot tell its own lost attempt from the earlier delivery, so neither does
/// a first attempt.
#[tokio::test]
async fn a_guarded_increment_is_resent_after_a_lost_response_and_applied_once() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let h = harness(18, |plan| {
        FaultPlan { rate: 0.3, ..plan }.with_kinds([Fault::after(FaultKind::ConnectionDropped)])
    })
    .await;
    let counter = GuardedCounter {
        id: 1,
        count: 0,
        applied: [("source".to_owned(), 0)].into(),
    };
    h.plain.put(&counter).send().await.unwrap();
    let increment = |sequence: u64| {
        h.faulty
            .update(GuardedCounter::key(1).unwrap())
            .add(GuardedCounter::COUNT, 1)
            .advance(GuardedCounter::APPLIED.key("source"), sequence)
            .send()
    };
    for sequence in 1..=30 {
        let counted = increment(sequence).await.unwrap();
        assert_eq!(counted.count, sequence, "{counted:?}");
    }
    let report = h.stats.report();
    assert!(report.injected_after_apply() > 0, "{report}");
    for _ in 0..10 {
        let again = increment(30).await.unwrap();
        assert_eq!((again.count, again.applied["source"]), (30, 30));
    }
    h.stats.set_paused(true);
    let stored = h
        .plain
        .get(GuardedCounter::key(1).unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!((stored.count, stored.applied["source"]), (30, 30));
}

/// The error predicates, on real errors. A put that gets no answer in time (the engine
/// applied it, the proxy never answers) is a timeout whose outcome is unknown, and retryable
/// as it is: a put of the same item applies as once. An unguarded increment, which a resend
/// would apply twice, ends in `Ambiguous`: of unknown outcome, not retryable as it is, a
/// timeout by its cause, which it keeps typed as the SDK's error.
#[tokio::test]
async fn errors_say_whether_they_timed_out_and_whether_their_outcome_is_known() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let h = harness(31, |plan| {
        FaultPlan { rate: 1.0, ..plan }
            .with_kinds([Fault::after(FaultKind::Timeout)])
            .with_attempt_timeout(Duration::from_millis(300))
    })
    .await;
    let counter = GuardedCounter {
        id: 1,
        count: 0,
        applied: Default::default(),
    };
    let put = h.faulty.put(&counter).send().await.unwrap_err();
    assert!(
        put.is_timeout() && put.is_outcome_unknown() && put.is_retryable(),
        "{put:?}"
    );
    assert!(
        !put.is_throttling() && put.throttling().is_empty(),
        "{put:?}"
    );
    let service = put.as_service_error().expect("the SDK's error");
    assert!(
        matches!(
            service.as_sdk_error(),
            aws_sdk_dynamodb::error::SdkError::TimeoutError(_)
        ),
        "{service:?}"
    );
    assert_eq!(
        h.plain
            .get(GuardedCounter::key(1).unwrap())
            .send()
            .await
            .unwrap(),
        counter
    );

    let increment = h
        .faulty
        .update(GuardedCounter::key(1).unwrap())
        .add(GuardedCounter::COUNT, 1)
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(increment, Error::Ambiguous { .. }),
        "{increment:?}"
    );
    assert!(
        increment.is_outcome_unknown() && increment.is_timeout() && !increment.is_retryable(),
        "{increment:?}"
    );
    let cause = std::error::Error::source(&increment).expect("the cause, typed");
    assert!(cause
        .downcast_ref::<singletable::error::ServiceError>()
        .is_some());
}
