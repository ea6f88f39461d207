//! A backfill shared by several workers through lease items in the table: every old item ends
//! backfilled, a killed worker's segment is taken over from its checkpoint, and a worker that
//! lost its lease has its next checkpoint refused. Judged afterwards against the table.

mod common;

use aws_sdk_dynamodb::types::AttributeValue;
use serde::{Deserialize, Serialize};
use singletable::local::{Deviation, Engine};
use singletable::migrate::SegmentStatus;
use singletable::testing::TestTable;
use singletable::{schema_of, Db, Entity, Rate, Table};
use std::time::Duration;

#[derive(Table)]
#[dynamo(
    name = "distributed",
    pk = "PK",
    sk = "SK",
    gsi1(name = "ByAuthor", pk = "GSI1PK", sk = "GSI1SK")
)]
struct App;

/// Version 2 adds the author index; the items below were written by version 1.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, schema_version = 2, pk = "COMMENT#{id}", sk = "COMMENT",
         gsi1pk = "AUTHOR#{author}", gsi1sk = "COMMENT#{id}")]
struct Comment {
    id: u32,
    author: String,
}

const ITEMS: u32 = 240;
const SEGMENTS: u32 = 32;

/// A table of `ITEMS` comments as version 1 wrote them: no index keys, schema version 1.
async fn old_comments() -> TestTable<App> {
    let db = singletable::testing::table::<App>().await.unwrap();
    common::old_comments(&db, ITEMS, 7).await;
    db
}

/// Asserts every comment is at version 2 with its index keys, and returns the segments.
async fn judge(db: &Db<App>, name: &str) -> Vec<SegmentStatus> {
    let mut comments = 0;
    for item in common::raw_items(db).await {
        if item.get("_type") != Some(&AttributeValue::S("Comment".into())) {
            continue;
        }
        comments += 1;
        assert_eq!(
            item.get("_sv"),
            Some(&AttributeValue::N("2".into())),
            "{item:?}"
        );
        assert!(item.contains_key("GSI1PK"), "{item:?}");
    }
    assert_eq!(comments, ITEMS);
    // Coverage reads the sweep's state from the table: every item current, and the whole
    // table swept.
    let coverage = db
        .admin()
        .coverage(schema_of::<Comment>())
        .distributed(name)
        .send()
        .await
        .unwrap();
    assert_eq!((coverage.items, coverage.behind), (u64::from(ITEMS), 0));
    assert!(coverage.is_done(), "{coverage}");
    let status = db
        .admin()
        .sweep::<Comment>()
        .distributed(name)
        .status()
        .await
        .unwrap();
    assert!(status.is_done(), "{status:?}");
    assert_eq!(status.segments.len(), SEGMENTS as usize, "the plan's count");
    status.segments
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn four_workers_share_the_segments_and_take_over_a_killed_one() {
    let table = old_comments().await;
    let db = (*table).clone();
    let sweep = |worker: &str| {
        db.admin()
            .sweep::<Comment>()
            .segments(SEGMENTS)
            .page_size(3)
            .distributed("comments-v2")
            .lease(Duration::from_millis(500))
            .worker_id(worker)
    };
    // The worker to kill goes slowly, an item a page, so it is killed in the middle of a
    // segment: with pages of three it could be seen between its last page and the empty scan
    // that ends the segment, and finish before the kill (seen once on two busy cores).
    let doomed = tokio::spawn(
        db.admin()
            .sweep::<Comment>()
            .segments(SEGMENTS)
            .page_size(1)
            .rate(Rate::ItemsPerSecond(5.0))
            .distributed("comments-v2")
            .lease(Duration::from_millis(500))
            .worker_id("doomed")
            .worker(),
    );
    let workers: Vec<_> = ["w1", "w2", "w3"]
        .into_iter()
        .map(|worker| tokio::spawn(sweep(worker).worker()))
        .collect();
    // Kill it once it has checkpointed some of a segment it still holds.
    let status = sweep("observer");
    tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let statuses = status.status().await.unwrap().segments;
            if statuses
                .iter()
                .any(|s| s.owner.as_deref() == Some("doomed") && !s.done && s.counts.old > 0)
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the doomed worker made progress");
    doomed.abort();
    let mut reports = Vec::new();
    for worker in workers {
        let report = tokio::time::timeout(Duration::from_secs(120), worker)
            .await
            .expect("the workers end within their bound")
            .unwrap()
            .unwrap();
        reports.push(report);
    }
    let statuses = judge(&db, "comments-v2").await;
    // Every segment was finished by one of the live workers or, before it died, the doomed
    // one; the doomed worker's last segment was taken over (its lease counted up again).
    let finished: u32 = reports.iter().map(|r| r.finished.len() as u32).sum();
    assert!(finished >= SEGMENTS - 2, "{reports:?}");
    assert!(
        statuses
            .iter()
            .any(|s| s.lease >= 2 && s.owner.as_deref() != Some("doomed")),
        "a segment taken over: {statuses:?}"
    );
    // No item was written twice: the checkpointed counts never exceed the items.
    let backfilled: u64 = statuses.iter().map(|s| s.counts.backfilled).sum();
    assert!(backfilled <= u64::from(ITEMS), "{backfilled}");
    assert!(backfilled >= u64::from(ITEMS) - 3 * 2, "{backfilled}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_whose_lease_expired_has_its_checkpoint_refused() {
    let table = old_comments().await;
    let db = (*table).clone();
    // Pages of 6 at 4 items a second take 1.5 s, six times the 250 ms lease, and the slow
    // worker's segment would take it about 13 s: the fast worker is done with the other three
    // long before, even on a loaded machine (at 10 items a second, a CI run once saw the slow
    // worker finish first), and takes the slow one's over.
    let slow = tokio::spawn(
        db.admin()
            .sweep::<Comment>()
            .segments(4)
            .page_size(6)
            .rate(Rate::ItemsPerSecond(4.0))
            .distributed("fenced")
            .lease(Duration::from_millis(250))
            .worker_id("slow")
            .worker(),
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    let fast = tokio::spawn(
        db.admin()
            .sweep::<Comment>()
            .segments(4)
            .page_size(6)
            .distributed("fenced")
            .lease(Duration::from_millis(250))
            .worker_id("fast")
            .worker(),
    );
    let fast = tokio::time::timeout(Duration::from_secs(120), fast)
        .await
        .expect("the fast worker ends within its bound")
        .unwrap()
        .unwrap();
    let slow = tokio::time::timeout(Duration::from_secs(120), slow)
        .await
        .expect("the slow worker ends within its bound")
        .unwrap()
        .unwrap();
    assert!(slow.leases_lost >= 1, "{slow:?}");
    assert!(!fast.finished.is_empty(), "{fast:?}");
    let status = db
        .admin()
        .sweep::<Comment>()
        .segments(4)
        .distributed("fenced")
        .status()
        .await
        .unwrap();
    assert!(status.is_done(), "{status:?}");
    let statuses = status.segments;
    // Only the worker holding the lease recorded each page: the counts add up to the items.
    let old: u64 = statuses.iter().map(|s| s.counts.old).sum();
    assert!(old <= u64::from(ITEMS), "{statuses:?}");
}

#[tokio::test]
async fn workers_of_one_sweep_must_agree_on_its_plan() {
    let table = old_comments().await;
    let db = (*table).clone();
    db.admin()
        .sweep::<Comment>()
        .segments(2)
        .distributed("planned")
        .worker()
        .await
        .unwrap();
    let refused = db
        .admin()
        .sweep::<Comment>()
        .segments(3)
        .distributed("planned")
        .worker()
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("segments"), "{refused}");
}

/// The sweep's own records are written through the library's one write path, which asks
/// DynamoDB for their capacity: a worker reports what its plan, claims and checkpoints
/// consumed beside its backfills, and a `Db` tracking capacity counts both.
#[tokio::test]
async fn a_workers_capacity_includes_its_lease_and_checkpoint_writes() {
    let table = old_comments().await;
    let db = (*table).clone().track_capacity();
    let report = db
        .admin()
        .sweep::<Comment>()
        .segments(4)
        .page_size(100)
        .distributed("capacity")
        .worker_id("w1")
        .worker()
        .await
        .unwrap();
    assert_eq!(report.counts.backfilled, u64::from(ITEMS), "{report:?}");
    // The plan, four claims and at least one checkpoint per segment, each at least a unit
    // (moto reports half a unit for every update: `Deviation::FlatUpdateCapacity`).
    let update_units = if Engine::from_env()
        .unwrap()
        .deviates(Deviation::FlatUpdateCapacity)
    {
        0.5
    } else {
        1.0
    };
    assert!(
        report.record_write_units >= 1.0 + 8.0 * update_units,
        "{report:?}"
    );
    let written = report.counts.write_units + report.record_write_units;
    let consumed = db.consumed().unwrap();
    // The tally holds every write the worker made, and its scans' reads.
    assert!(
        consumed.capacity_units >= written - 1e-9,
        "{consumed:?} against {written} written"
    );
    if consumed.write_units > 0.0 {
        assert!(
            (consumed.write_units - written).abs() < 1e-9,
            "{consumed:?} against {written}"
        );
    }
}

/// Two workers through a proxy that throttles requests and drops responses after the engine
/// applied the request, often enough that the SDK's three attempts do not always get one
/// through. Both workers ride it through, and what the table records is exact: a checkpoint
/// resent after a lost response is counted once, a claim resent after one is the worker's own
/// (not a segment another worker took, left until its lease expires), and a backfill resent
/// after one is reported as written, not as changed by someone else.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workers_ride_through_throttling_and_lost_responses_and_count_exactly() {
    use singletable_fault::{self as fault, Fault, FaultKind, FaultPlan};
    let table = old_comments().await;
    let db = (*table).clone();
    let plan = FaultPlan::new(11, 0.4).with_kinds([
        Fault::before(FaultKind::Throttling),
        Fault::before(FaultKind::ProvisionedThroughputExceeded),
        Fault::after(FaultKind::ConnectionDropped),
    ]);
    let (client, stats) = fault::client(plan).await.unwrap();
    let faulty = Db::<App>::new(client).with_table_name(table.table_name());
    let worker = |worker: &str| {
        faulty
            .admin()
            .sweep::<Comment>()
            .segments(SEGMENTS)
            .page_size(10)
            .distributed("faulty-v2")
            // Long enough that no pause of a loaded machine's worker (riding through
            // throttling, its backoff up to 2 s a resend) outlasts it: a segment claimed twice
            // is then a claim misread, which leaves its segment until this expires.
            .lease(Duration::from_secs(20))
            .worker_id(worker)
            .worker()
    };
    let (first, second) = tokio::time::timeout(Duration::from_secs(120), async {
        tokio::join!(worker("w1"), worker("w2"))
    })
    .await
    .expect("the workers end within their bound");
    let reports = [first.unwrap(), second.unwrap()];
    let injected = stats.report().injected;
    let dropped = Fault::after(FaultKind::ConnectionDropped);
    assert!(
        injected.len() == 3 && injected.get(&dropped) > Some(&0),
        "{injected:?}"
    );
    let statuses = judge(&db, "faulty-v2").await;
    let mut recorded = singletable::migrate::SweepCounts::default();
    statuses
        .iter()
        .for_each(|status| recorded.add(&status.counts));
    let mut reported = singletable::migrate::SweepCounts::default();
    reports
        .iter()
        .for_each(|report| reported.add(&report.counts));
    // The table records no capacity.
    reported.write_units = 0.0;
    // Every old item was seen in exactly one checkpointed page and backfilled by the sweep.
    assert_eq!(
        (recorded.old, recorded.backfilled, recorded.failed),
        (u64::from(ITEMS), u64::from(ITEMS), 0),
        "{statuses:?}"
    );
    assert_eq!(recorded, reported, "{reports:?}");
    // No claim was mistaken for another worker's: every segment was claimed once.
    assert!(
        statuses.iter().all(|status| status.lease == 1),
        "{statuses:?}"
    );
}

/// DynamoDB may leave part of any `BatchGetItem` unprocessed, and documents that the caller
/// resends that part with exponential backoff. A worker reads its sweep's segments so: with
/// part of every read left unprocessed, a worker still finishes and the status it reads is
/// whole; and if DynamoDB leaves a part of every answer unprocessed, the read ends, with an
/// error that says so, instead of asking again at once and forever.
#[tokio::test]
async fn a_status_read_resends_unprocessed_segments_with_backoff_and_is_bounded() {
    use singletable::migrate::MigrationError;
    use singletable::Error;
    use singletable_fault::{self as fault, Fault, FaultKind, FaultPlan};
    let table = old_comments().await;
    let db = (*table).clone();
    let unprocessed = [Fault::before(FaultKind::Unprocessed)];
    let name = table.table_name().to_owned();
    let faulty = |rate: f64| {
        let name = name.clone();
        async move {
            let plan = FaultPlan::new(5, rate).with_kinds(unprocessed);
            let (client, stats) = fault::client(plan).await.unwrap();
            (Db::<App>::new(client).with_table_name(name), stats)
        }
    };

    let (partly, partly_stats) = faulty(0.5).await;
    let sweep = || {
        partly
            .admin()
            .sweep::<Comment>()
            .segments(SEGMENTS)
            .page_size(100)
            .distributed("unprocessed-v2")
    };
    let report = sweep().worker_id("w1").worker().await.unwrap();
    assert_eq!(report.counts.backfilled, u64::from(ITEMS), "{report:?}");
    let read = sweep().status().await.unwrap();
    assert!(
        partly_stats.report().injected.get(&unprocessed[0]) > Some(&0),
        "{:?}",
        partly_stats.report()
    );
    assert_eq!(read.segments, judge(&db, "unprocessed-v2").await);

    let (never, never_stats) = faulty(1.0).await;
    let refused = tokio::time::timeout(
        Duration::from_secs(120),
        never
            .admin()
            .sweep::<Comment>()
            .distributed("unprocessed-v2")
            .status(),
    )
    .await
    .expect("a status read DynamoDB never completes ends within its bound")
    .unwrap_err();
    assert!(
        matches!(
            refused,
            Error::Migration(MigrationError::Unprocessed { .. })
        ),
        "{refused:?}"
    );
    let batch_gets = never_stats.report().by_operation["BatchGetItem"];
    assert!((2..=32).contains(&batch_gets), "{batch_gets} requests");
}

/// With writes in flight a worker sweeps two segments at a time, each claimed under an owner
/// of its own (`<id>`, `<id>/2`): its two claims of one free segment, made in the same
/// millisecond, can never both pass for the worker's own (each would sweep the segment, and
/// report the other's writes as its own), so every item is counted once. (Under one owner
/// this happened once in a run of bench `sweep_workers`, 8,277 counted of 8,000; each claim
/// now carries a nonce too, which the test below shows with a clock that stands still.)
#[tokio::test]
async fn a_worker_sweeps_two_segments_at_once_and_counts_each_item_once() {
    for round in 0..6 {
        let db = old_comments().await;
        let name = format!("two-lanes-{round}");
        let segments = if round % 2 == 0 { 1 } else { 2 };
        let sweep = || {
            (db.admin().sweep::<Comment>())
                .segments(segments)
                .page_size(16)
                .concurrency(8)
                .distributed(name.as_str())
        };
        let report = sweep().worker_id("w").worker().await.unwrap();
        assert_eq!(
            report.counts.backfilled,
            u64::from(ITEMS),
            "round {round}: {report:?}"
        );
        assert!(!report.work_left);
        let coverage = (db.admin().coverage(schema_of::<Comment>()))
            .distributed(name.as_str())
            .segments(segments)
            .send()
            .await
            .unwrap();
        assert!(coverage.is_done(), "{coverage}");
        let owners: Vec<Option<String>> = (sweep().status().await.unwrap().segments)
            .into_iter()
            .map(|segment| segment.owner)
            .collect();
        assert!(
            owners
                .iter()
                .flatten()
                .all(|owner| owner == "w" || owner == "w/2"),
            "{owners:?}"
        );
        // Two segments, two lanes starting together: each lane holds one, under its own owner.
        if segments == 2 {
            let distinct: std::collections::BTreeSet<&String> = owners.iter().flatten().collect();
            assert_eq!(distinct.len(), 2, "{owners:?}");
        }
    }
}

/// Two workers a user starts under one worker id, claiming the one segment in the same
/// millisecond (a clock that stands still makes every claim one millisecond): one of them
/// gets it, and each item is counted once. Before each claim carried a nonce of its own, the
/// second claim passed as the first one resent (same owner, token and expiry), and both
/// swept the segment.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_workers_under_one_id_claiming_in_one_millisecond_do_not_both_hold_the_segment() {
    let now = std::time::SystemTime::now();
    for round in 0..4 {
        let table = old_comments().await;
        let db = (*table).clone().with_clock(move || now);
        let name = format!("one-id-{round}");
        let worker = || {
            (db.admin().sweep::<Comment>())
                .segments(1)
                .page_size(40)
                .distributed(name.as_str())
                .worker_id("twin")
                .worker()
        };
        let (first, second) = tokio::join!(worker(), worker());
        let (first, second) = (first.unwrap(), second.unwrap());
        let counted = first.counts.old + second.counts.old;
        assert_eq!(
            counted,
            u64::from(ITEMS),
            "round {round}: {first:?} {second:?}"
        );
        assert_eq!(
            first.finished.len() + second.finished.len(),
            1,
            "round {round}: {first:?} {second:?}"
        );
    }
}

/// A worker killed with backfill writes in flight (pipelined: its next page read and its last
/// page's checkpoint saved while a page's writes go out, two segments at once): the checkpoints
/// it left pass no item whose write had not finished, so the worker that takes over leaves no
/// item behind, and the checkpointed counts hold no item twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_killed_with_writes_in_flight_leaves_no_item_behind() {
    let table = old_comments().await;
    let db = (*table).clone();
    let sweep = || {
        (db.admin().sweep::<Comment>())
            .segments(SEGMENTS)
            .page_size(4)
            .concurrency(8)
    };
    let lease = Duration::from_millis(300);
    // Paced, so that a page's writes are out for a while when the kill comes.
    let doomed = tokio::spawn(
        sweep()
            .rate(Rate::ItemsPerSecond(20.0))
            .distributed("in-flight")
            .lease(lease)
            .worker_id("doomed")
            .worker(),
    );
    let observer = sweep().distributed("in-flight");
    tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let statuses = observer.status().await.unwrap().segments;
            let doomed_holds = |owner: Option<&str>| owner.is_some_and(|o| o.starts_with("doomed"));
            if statuses
                .iter()
                .any(|s| doomed_holds(s.owner.as_deref()) && !s.done && s.counts.old > 0)
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the doomed worker made progress");
    doomed.abort();
    let heir = sweep()
        .distributed("in-flight")
        .lease(lease)
        .worker_id("heir");
    let heir = tokio::time::timeout(Duration::from_secs(120), heir.worker())
        .await
        .expect("the heir ends within its bound")
        .unwrap();
    assert!(!heir.work_left, "{heir:?}");
    let statuses = judge(&db, "in-flight").await;
    let backfilled: u64 = statuses.iter().map(|s| s.counts.backfilled).sum();
    assert!(backfilled <= u64::from(ITEMS), "{backfilled}: {statuses:?}");
}
