//! Throttling, and what the library makes of it.
//!
//! - What a write DynamoDB throttles past every retry reports, whichever request the library
//!   sent it as. DynamoDB refuses a single-item write over its partition's throughput with
//!   `ProvisionedThroughputExceededException`, and a transaction with
//!   `TransactionCanceledException` whose reason for the throttled item is `ThrottlingError`
//!   (on demand) or `ProvisionedThroughputExceeded` (TransactWriteItems, API reference). A
//!   user writes `db.put(&member)` without knowing that a unique value makes it a
//!   transaction, so `Error::is_throttling` must say yes to both, and either way nothing was
//!   written; a write that was applied must never say so.
//! - The reads a long job starts from or counts with (the table's description, coverage's
//!   scan pages) are sent again when refused or lost, rather than ending the job.
//!
//! The partition limits of `singletable-fault`'s proxy refuse as DynamoDB does: a key's
//! bucket starts with one second's units, and a request larger than that is let through once
//! and overdraws it. At a hundredth of a unit a second, each key below takes one write (or
//! one read) and throttles every later one for a hundred seconds, longer than any resend.

mod common;
use common::Needs;

use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, Error, Table};
use singletable_fault::{self as fault, Fault, FaultKind, FaultPlan, FaultStats, PartitionLimits};
use std::time::Duration;

#[derive(Table)]
#[dynamo(name = "throttling", pk = "PK", sk = "SK")]
struct App;

/// A write of one item, `PutItem`.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "DOC")]
struct Doc {
    id: u32,
    title: String,
}

/// A write of the item and its unique value's claim, `TransactWriteItems`.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "USER#{id}", sk = "USER")]
struct User {
    id: u32,
    #[dynamo(unique)]
    email: String,
    name: String,
}

/// An append-only log: a guarded append writes the entry and its log's latest pointer,
/// `TransactWriteItems`.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "LOG#{log}", sk = "ENTRY#{seq}")]
struct Entry {
    log: u32,
    seq: u32,
}

/// A table as it was first made: its keys alone.
#[derive(Table)]
#[dynamo(name = "evolving", pk = "PK", sk = "SK")]
struct Bare;

/// The same table, as its declaration grows: an index, a time to live and a stream.
#[derive(Table)]
#[dynamo(
    name = "evolving",
    pk = "PK",
    sk = "SK",
    ttl = "expires_at",
    stream = "new_image",
    gsi1(name = "ByTitle", pk = "GSI1PK", sk = "GSI1SK")
)]
struct Grown;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Grown, pk = "NOTE#{id}", sk = "NOTE", gsi1pk = "TITLE#{title}", gsi1sk = "NOTE#{id}")]
struct Note {
    id: u32,
    title: String,
    #[dynamo(ttl)]
    expires_at: Option<u64>,
}

/// A client through a proxy with `plan`, and the proxy's counts.
async fn through(db: &Db<App>, plan: FaultPlan) -> (Db<App>, FaultStats) {
    let (client, stats) = fault::client(plan).await.unwrap();
    (
        Db::<App>::new(client).with_table_name(db.table_name()),
        stats,
    )
}

/// A client through `limits`, and its proxy's counts.
async fn limited(db: &Db<App>, limits: PartitionLimits) -> (Db<App>, FaultStats) {
    through(db, FaultPlan::new(1, 0.0).with_partition_limits(limits)).await
}

/// Refusals for throughput and lost responses of `operations` (40% of their requests), with
/// the SDK's retries off so that every one reaches the library.
fn refused_or_lost(seed: u64, operations: &[&str]) -> FaultPlan {
    FaultPlan::new(seed, 0.4)
        .with_kinds([
            Fault::before(FaultKind::Throttling),
            Fault::after(FaultKind::InternalServerError),
        ])
        .only_operations(operations.iter().copied())
        .without_sdk_retries()
}

/// A hundredth of a unit per second on each partition key.
const SCARCE: f64 = 0.01;

/// Asserts `sent` was refused for throughput.
fn refused<T: std::fmt::Debug>(sent: Result<T, Error>) {
    let error = sent.unwrap_err();
    assert!(error.is_throttling(), "{} {error:?}", error.kind());
}

#[tokio::test]
async fn a_throttled_write_is_throttling_whether_sent_alone_or_in_a_transaction() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let table = singletable::testing::table::<App>().await.unwrap();
    let db = (*table).clone();
    let (limited, _) = limited(&db, PartitionLimits::new(SCARCE, 3_000.0)).await;

    let doc = Doc {
        id: 1,
        title: "first".into(),
    };
    limited.put(&doc).send().await.unwrap();
    let retitled = Doc {
        title: "second".into(),
        ..doc.clone()
    };
    let throttled = limited.put(&retitled).send().await.unwrap_err();
    // The error names the limit: the item's key, over its partition's share of the table's
    // throughput, which DynamoDB gives as a throttling reason with the table's ARN; nothing
    // was written, so the put is safe to send again.
    let reasons = throttled.throttling();
    assert_eq!(reasons.len(), 1, "{throttled:?}");
    assert_eq!(reasons[0].reason(), "TableWriteKeyRangeThroughputExceeded");
    assert_eq!(
        reasons[0].limit(),
        singletable::error::ThrottlingLimit::KeyRange
    );
    assert!(reasons[0].on_writes() && !reasons[0].on_index());
    let resource = reasons[0].resource().unwrap_or_default();
    assert!(
        resource.ends_with(&format!(":table/{}", db.table_name())),
        "{resource}"
    );
    assert!(throttled.is_throttling() && throttled.is_retryable());
    assert!(!throttled.is_outcome_unknown() && !throttled.is_timeout());
    refused(
        limited
            .transaction()
            .with(limited.put(&retitled))
            .send()
            .await,
    );
    assert_eq!(db.get(Doc::key(1).unwrap()).send().await.unwrap(), doc);

    let user = User {
        id: 1,
        email: "a@example.com".into(),
        name: "first".into(),
    };
    limited.put(&user).send().await.unwrap();
    let renamed = User {
        name: "second".into(),
        ..user.clone()
    };
    refused(limited.put(&renamed).send().await);
    refused(
        limited
            .update(User::key(1).unwrap())
            .set(User::EMAIL, "b@example.com".to_owned())
            .send()
            .await,
    );
    refused(limited.delete(User::key(1).unwrap()).send().await);
    assert_eq!(db.get(User::key(1).unwrap()).send().await.unwrap(), user);
    let moved = Doc {
        id: 2,
        ..doc.clone()
    };
    refused(limited.rekey(&doc, &moved).send().await);
    assert_eq!(db.get(Doc::key(1).unwrap()).send().await.unwrap(), doc);

    let first = Entry { log: 1, seq: 1 };
    limited.append(&first, Entry::SEQ).send().await.unwrap();
    refused(
        limited
            .append(&Entry { log: 1, seq: 2 }, Entry::SEQ)
            .send()
            .await,
    );
    let log = db.query(Entry::partition(1)).all().await.unwrap();
    assert_eq!(log, [first]);
}

/// An update of a unique value is a transaction, and the item it returns is read after it
/// (a transaction returns none). When that read is throttled past every retry, the update was
/// applied all the same: the error says so, and is not a throttle, which would tell the caller
/// that nothing was written.
#[tokio::test]
async fn an_update_applied_but_not_read_back_says_it_was_applied() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let table = singletable::testing::table::<App>().await.unwrap();
    let db = (*table).clone();
    let user = User {
        id: 1,
        email: "a@example.com".into(),
        name: "first".into(),
    };
    db.put(&user).send().await.unwrap();
    // Reads are scarce: the update's read before its transaction takes the item's one.
    let (limited, stats) = limited(&db, PartitionLimits::new(1_000.0, SCARCE)).await;
    let sent = limited
        .update(User::key(1).unwrap())
        .set(User::EMAIL, "b@example.com".to_owned())
        .send()
        .await;
    let error = match sent {
        Ok(user) => panic!("{user:?} read back: {:?}", stats.report()),
        Err(error) => error,
    };
    assert!(!error.is_throttling(), "{error:?}");
    assert!(matches!(error, Error::Unread { .. }), "{error:?}");
    assert!(error.to_string().contains("applied"), "{error}");
    let stored = db.get(User::key(1).unwrap()).send().await.unwrap();
    assert_eq!(stored.email, "b@example.com");
}

/// A plan, and a sweep's start, read the table's description (`DescribeTable`, then
/// `DescribeTimeToLive`). Reads are safe to send again, so a description refused for
/// throughput, or whose response was lost, is sent again as a sweep's own reads are, rather
/// than ending the job before it starts. The SDK's retries are off here, so that every fault
/// reaches the library.
#[tokio::test]
async fn a_job_reads_the_tables_description_again_when_refused_or_lost() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let table = singletable::testing::table::<App>().await.unwrap();
    let db = (*table).clone();
    db.put(&Doc {
        id: 1,
        title: "first".into(),
    })
    .send()
    .await
    .unwrap();
    // Its keys recorded, so that the plans below find nothing to do.
    let migration = db.admin().table_migration(&[Doc::SCHEMA]);
    migration.send().await.unwrap();
    let plan = refused_or_lost(3, &["DescribeTable", "DescribeTimeToLive"]);
    let (faulty, stats) = through(&db, plan).await;
    for _ in 0..3 {
        let plan = faulty
            .admin()
            .table_migration(&[Doc::SCHEMA])
            .plan()
            .await
            .unwrap();
        assert!(plan.is_up_to_date(), "{plan}");
        let report = faulty.admin().sweep::<Doc>().send().await.unwrap();
        assert!(report.complete, "{report}");
    }
    // A rate that is a share of the table's capacity reads the description again too, and
    // then finds what it says: this on-demand table has no capacity to share.
    for _ in 0..10 {
        let refused = faulty
            .admin()
            .sweep::<Doc>()
            .rate(singletable::Rate::ShareOfCapacity(0.5))
            .send()
            .await
            .unwrap_err();
        assert!(
            matches!(
                refused,
                Error::Rate(singletable::rate::RateError::NoProvisionedCapacity { .. })
            ),
            "{refused:?}"
        );
    }
    let report = stats.report();
    assert!(report.injected_total() >= 3, "{report:?}");
    assert_eq!(report.by_operation.get("Scan"), Some(&3), "{report:?}");
}

/// Coverage counts an entity's items with a consistent scan, page by page; a page refused
/// for throughput, or whose response was lost, is read again, as a sweep's pages are.
#[tokio::test]
async fn coverage_reads_a_page_again_when_refused_or_lost() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let table = singletable::testing::table::<App>().await.unwrap();
    let db = (*table).clone();
    for id in 0..30 {
        let doc = Doc {
            id,
            title: format!("doc {id}"),
        };
        db.put(&doc).send().await.unwrap();
    }
    let (faulty, stats) = through(&db, refused_or_lost(5, &["Scan"])).await;
    let coverage = faulty
        .admin()
        .coverage(Doc::SCHEMA)
        .segments(3)
        .send()
        .await
        .unwrap();
    assert_eq!((coverage.items, coverage.behind), (30, 0), "{coverage}");
    assert!(stats.report().injected_total() > 0, "{:?}", stats.report());
}

/// Applies `Note`'s table to the bare table through `plan` (which faults only the changes),
/// then deletes the index again, and checks the table is as each declaration says.
async fn apply_through(plan: FaultPlan) -> FaultStats {
    let bare = singletable::testing::table::<Bare>().await.unwrap();
    let (client, stats) = fault::client(plan).await.unwrap();
    let grown = Db::<Grown>::new(client).with_table_name(bare.table_name());
    let applied = grown
        .admin()
        .table_migration(&[Note::SCHEMA])
        .poll_interval(Duration::from_millis(50))
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap();
    // The index, time to live, the stream, and the record of the note's keys.
    assert_eq!(applied.plan.actions.len(), 4, "{}", applied.plan);
    let planned = bare.admin().table_migration(&[]).plan().await.unwrap();
    let live = planned.live.as_ref().unwrap();
    assert!(
        live.global_index("ByTitle").unwrap().is_active(),
        "{live:?}"
    );
    assert_eq!(live.stream.as_deref(), Some("NEW_IMAGE"));
    assert_eq!(
        live.ttl.as_ref().map(|(name, _)| name.as_str()),
        Some("expires_at")
    );

    let shrunk = Db::<Bare>::new(grown.client().clone()).with_table_name(bare.table_name());
    shrunk
        .admin()
        .table_migration(&[])
        .delete_unused()
        .poll_interval(Duration::from_millis(50))
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap();
    let planned = bare.admin().table_migration(&[]).plan().await.unwrap();
    assert!(planned.live.as_ref().unwrap().global_indexes.is_empty());
    stats
}

/// Administration changes the table with `UpdateTable` and `UpdateTimeToLive`, which DynamoDB
/// refuses when sent again after it applied them (the index exists, the table is being
/// updated, time to live is on). When every response to them is lost, each change was made all
/// the same: applying goes on, as the table's description shows it made, rather than ending
/// with the last answer. The library, not the SDK, resends them, and asks the table first: each
/// is sent once.
#[tokio::test]
async fn a_table_change_whose_response_is_lost_is_found_made() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let plan = FaultPlan::new(17, 1.0)
        .with_kinds([Fault::after(FaultKind::InternalServerError)])
        .only_operations(["UpdateTable", "UpdateTimeToLive"]);
    let report = apply_through(plan).await.report();
    // An index, the stream, time to live, the index's deletion: each sent once.
    assert_eq!(report.injected_after_apply(), 4, "{report:?}");
}

/// A change refused for throughput (a control-plane rate), or whose response is lost, is sent
/// again until the table's description shows it made, as the long jobs' reads are. The SDK's
/// retries are off, so that every fault reaches the library.
#[tokio::test]
async fn a_table_change_refused_or_lost_is_sent_again() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let plan = refused_or_lost(19, &["UpdateTable", "UpdateTimeToLive"]);
    let report = apply_through(plan).await.report();
    assert!(report.injected_total() > 0, "{report:?}");
}
