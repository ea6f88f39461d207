//! The retry policy a `Db` is given governs every resend of its requests: with
//! `RetryPolicy::never()` each request reaches DynamoDB once and fails with a typed error; with
//! a policy of `n` attempts, at most `n` requests reach it, the SDK's own retries counted (the
//! library turns them off for what it resends). Counted at the fault proxy, which refuses
//! every request of the test (HTTP 503 before the engine applies it, or throttling).

mod common;
use common::Needs;

use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, Error, RetryPolicy, Table};
use singletable_fault::{self as fault, Fault, FaultKind, FaultPlan, FaultStats};
use std::future::Future;
use std::time::Duration;

#[derive(Table)]
#[dynamo(name = "retries", pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "DOC")]
struct Doc {
    id: u32,
    title: String,
    hits: u64,
    applied: u64,
}

fn doc() -> Doc {
    Doc {
        id: 1,
        title: "first".into(),
        hits: 0,
        applied: 0,
    }
}

/// A policy of `attempts` without delays, so the test waits on nothing.
fn attempts(attempts: u32) -> RetryPolicy {
    RetryPolicy::default()
        .with_max_attempts(attempts)
        .with_base_delay(Duration::ZERO)
}

/// `operation` on a `Db` under `policy`, through a proxy that answers every request with
/// `fault` before applying it: what it returned, and how many requests reached the proxy.
async fn counted<T, F>(
    table: &Db<App>,
    fault: FaultKind,
    policy: RetryPolicy,
    operation: impl FnOnce(Db<App>) -> F,
) -> (Result<T, Error>, u64)
where
    F: Future<Output = Result<T, Error>>,
{
    let plan = FaultPlan::new(7, 1.0).with_kinds([Fault::before(fault)]);
    let (client, stats): (_, FaultStats) = fault::client(plan).await.unwrap();
    let db = Db::<App>::new(client)
        .with_table_name(table.table_name())
        .with_retry_policy(policy);
    let result = operation(db).await;
    (result, stats.report().requests)
}

/// Asserts that under `never()` the operation is sent once and under 4 attempts four times,
/// each time failing as `typed` says.
async fn governed<T: std::fmt::Debug, F>(
    table: &Db<App>,
    fault: FaultKind,
    operation: impl Fn(Db<App>) -> F,
    typed: impl Fn(&Error) -> bool,
) where
    F: Future<Output = Result<T, Error>>,
{
    for (policy, expected) in [(RetryPolicy::never(), 1), (attempts(4), 4)] {
        let (result, requests) = counted(table, fault, policy, &operation).await;
        let error = result.unwrap_err();
        assert!(typed(&error), "{error:?}");
        assert_eq!(requests, expected, "{policy:?}: {error}");
    }
}

/// No answer, and safe to send again: the outcome is unknown, and the error says so.
fn unanswered(error: &Error) -> bool {
    matches!(error, Error::Service(_)) && error.is_outcome_unknown() && error.is_retryable()
}

#[tokio::test]
async fn single_writes_are_sent_as_often_as_the_policy_allows() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let table = singletable::testing::table::<App>().await.unwrap();
    table.put(&doc()).send().await.unwrap();
    let unavailable = FaultKind::ServiceUnavailable;
    governed(
        &table,
        unavailable,
        |db| async move { db.put(&doc()).send().await },
        unanswered,
    )
    .await;
    governed(
        &table,
        unavailable,
        |db| async move {
            db.update(Doc::key(1)?)
                .set(Doc::TITLE, "second".to_owned())
                .send()
                .await
        },
        unanswered,
    )
    .await;
    governed(
        &table,
        unavailable,
        |db| async move {
            db.update(Doc::key(1)?)
                .add(Doc::HITS, 1)
                .advance(Doc::APPLIED, 1)
                .send()
                .await
        },
        unanswered,
    )
    .await;
    governed(
        &table,
        unavailable,
        |db| async move { db.delete(Doc::key(1)?).send().await },
        unanswered,
    )
    .await;
    // An unguarded increment is never resent after a lost answer: one request, Ambiguous,
    // whatever the policy; throttling, which applies nothing, is resent under it.
    for policy in [RetryPolicy::never(), attempts(4)] {
        let (result, requests) = counted(&table, unavailable, policy, |db| async move {
            db.update(Doc::key(1)?).add(Doc::HITS, 1).send().await
        })
        .await;
        let error = result.unwrap_err();
        assert!(matches!(error, Error::Ambiguous { .. }), "{error:?}");
        assert_eq!(requests, 1);
    }
    governed(
        &table,
        FaultKind::Throttling,
        |db| async move { db.update(Doc::key(1)?).add(Doc::HITS, 1).send().await },
        |error| error.is_throttling() && error.is_retryable() && !error.is_outcome_unknown(),
    )
    .await;
    // Nothing reached the engine.
    assert_eq!(table.get(Doc::key(1).unwrap()).send().await.unwrap(), doc());
}

#[tokio::test]
async fn transactions_are_sent_as_often_as_the_policy_allows() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let table = singletable::testing::table::<App>().await.unwrap();
    governed(
        &table,
        FaultKind::ServiceUnavailable,
        |db| async move {
            let put = db.put(&doc());
            db.transaction().with(put).send().await
        },
        |error| matches!(error, Error::AmbiguousTransaction { .. }) && error.is_outcome_unknown(),
    )
    .await;
    governed(
        &table,
        FaultKind::Throttling,
        |db| async move {
            let put = db.put(&doc());
            db.transaction().with(put).send().await
        },
        |error| error.is_throttling() && error.is_retryable(),
    )
    .await;
    assert!(table.get(Doc::key(1).unwrap()).send().await.is_err());
}

#[tokio::test]
async fn reads_are_sent_as_often_as_the_policy_allows() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let table = singletable::testing::table::<App>().await.unwrap();
    table.put(&doc()).send().await.unwrap();
    let unavailable = FaultKind::ServiceUnavailable;
    governed(
        &table,
        unavailable,
        |db| async move { db.get(Doc::key(1)?).send().await },
        unanswered,
    )
    .await;
    governed(
        &table,
        unavailable,
        |db| async move { db.query(Doc::partition(1)).all().await },
        unanswered,
    )
    .await;
    governed(
        &table,
        unavailable,
        |db| async move { db.scan::<Doc>().all().await },
        unanswered,
    )
    .await;
    governed(
        &table,
        FaultKind::Throttling,
        |db| async move { db.get(Doc::key(1)?).consistent().send().await },
        |error| error.is_throttling() && error.is_retryable(),
    )
    .await;
}

#[tokio::test]
async fn batch_requests_are_sent_as_often_as_the_policy_allows() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let table = singletable::testing::table::<App>().await.unwrap();
    table.put(&doc()).send().await.unwrap();
    for fault in [FaultKind::ServiceUnavailable, FaultKind::Throttling] {
        governed(
            &table,
            fault,
            |db| async move { db.batch_get([Doc::key(1)?]).send().await },
            |error| error.is_retryable(),
        )
        .await;
        governed(
            &table,
            fault,
            |db| async move {
                let second = Doc { id: 2, ..doc() };
                db.batch_write().put(&second).send().await
            },
            // What was not written is handed back, resendable.
            |error| matches!(error, Error::BatchWrite { .. }) && error.is_retryable(),
        )
        .await;
    }
    assert!(table.get(Doc::key(2).unwrap()).send().await.is_err());
}

/// A global table with multi-Region strong consistency refuses a write to an item another
/// Region is writing (`ReplicatedWriteConflictException`): nothing is applied, and DynamoDB
/// documents a retry as safe. Every kind of write is resent under the policy (by the SDK, or
/// by the library's own loop for guarded and unguarded updates and batches), and the error
/// that is left says it is retryable, not throttling, and not of unknown outcome.
#[tokio::test]
async fn a_replicated_write_conflict_is_resent_under_the_policy() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let table = singletable::testing::table::<App>().await.unwrap();
    table.put(&doc()).send().await.unwrap();
    let conflict = FaultKind::ReplicatedWriteConflict;
    let refused = |error: &Error| {
        let code = match error {
            Error::Service(service) => service.code(),
            Error::BatchWrite { source, .. } => match source.as_ref() {
                Error::Service(service) => service.code(),
                _ => None,
            },
            _ => None,
        };
        code == Some("ReplicatedWriteConflictException")
            && error.is_retryable()
            && !error.is_throttling()
            && !error.is_outcome_unknown()
    };
    governed(
        &table,
        conflict,
        |db| async move { db.put(&doc()).send().await },
        refused,
    )
    .await;
    governed(
        &table,
        conflict,
        |db| async move {
            db.update(Doc::key(1)?)
                .add(Doc::HITS, 1)
                .advance(Doc::APPLIED, 1)
                .send()
                .await
        },
        refused,
    )
    .await;
    // Unguarded: never resent after a lost answer, but a conflict applied nothing.
    governed(
        &table,
        conflict,
        |db| async move { db.update(Doc::key(1)?).add(Doc::HITS, 1).send().await },
        refused,
    )
    .await;
    governed(
        &table,
        conflict,
        |db| async move { db.delete(Doc::key(1)?).send().await },
        refused,
    )
    .await;
    governed(
        &table,
        conflict,
        |db| async move {
            let second = Doc { id: 2, ..doc() };
            db.batch_write().put(&second).send().await
        },
        refused,
    )
    .await;
    assert_eq!(table.get(Doc::key(1).unwrap()).send().await.unwrap(), doc());
    assert!(table.get(Doc::key(2).unwrap()).send().await.is_err());

    // Refused half the time (seeded): every increment lands once, through the resends.
    let plan = FaultPlan::new(11, 0.5).with_kinds([Fault::before(conflict)]);
    let (client, stats) = fault::client(plan).await.unwrap();
    let db = Db::<App>::new(client)
        .with_table_name(table.table_name())
        .with_retry_policy(attempts(8));
    for _ in 0..20 {
        db.update(Doc::key(1).unwrap())
            .add(Doc::HITS, 1)
            .send()
            .await
            .unwrap();
    }
    assert!(stats.report().injected_total() > 0);
    assert_eq!(
        table.get(Doc::key(1).unwrap()).send().await.unwrap().hits,
        20
    );
}

/// The requests of `operation` that reached the proxy of `stats`.
fn sent(stats: &FaultStats, operation: &str) -> usize {
    stats
        .requests()
        .iter()
        .filter(|request| request.operation == operation)
        .count()
}

/// A `Db` under `policy` whose `operations` are all throttled at the proxy (the others pass),
/// and the proxy's record.
async fn throttling(
    table: &Db<App>,
    operations: &[&str],
    policy: RetryPolicy,
) -> (Db<App>, FaultStats) {
    let plan = FaultPlan::new(7, 1.0)
        .with_kinds([Fault::before(FaultKind::Throttling)])
        .only_operations(operations.iter().copied())
        .recording();
    let (client, stats) = fault::client(plan).await.unwrap();
    let db = Db::<App>::new(client)
        .with_table_name(table.table_name())
        .with_retry_policy(policy);
    (db, stats)
}

/// A sweep is a long job: without a policy of the `Db`'s it rides through throttling, but the
/// policy set on the `Db` governs its reading of the table, its pages and its backfills too.
#[tokio::test]
async fn a_sweep_s_pages_and_backfills_are_sent_as_often_as_the_policy_allows() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let table = singletable::testing::table::<App>().await.unwrap();
    // An item an older schema version wrote: the sweep backfills it.
    let mut old = singletable::item::encode(&doc()).unwrap();
    let version = App::SCHEMA.schema_version_attribute.to_owned();
    old.insert(
        version,
        aws_sdk_dynamodb::types::AttributeValue::N("0".into()),
    );
    singletable::testing::put_raw(&table, old).await.unwrap();
    for (policy, expected) in [(RetryPolicy::never(), 1), (attempts(4), 4)] {
        // Its first read, the table's description, is the Db's policy's too.
        let (db, stats) = throttling(&table, &["DescribeTable"], policy).await;
        let error = db.admin().sweep::<Doc>().send().await.unwrap_err();
        assert!(error.is_throttling(), "{error:?}");
        assert_eq!(sent(&stats, "DescribeTable"), expected, "{policy:?}");

        let (db, stats) = throttling(&table, &["Scan"], policy).await;
        let swept = db.admin().sweep::<Doc>().send().await;
        let error = swept.unwrap_err();
        assert!(error.is_throttling(), "{error:?}");
        assert_eq!(sent(&stats, "Scan"), expected, "{policy:?}");

        let (db, stats) = throttling(&table, &["UpdateItem"], policy).await;
        // A backfill still throttled after the policy's attempts ends the sweep with it.
        let error = db.admin().sweep::<Doc>().send().await.unwrap_err();
        assert!(error.is_throttling(), "{error:?}");
        assert_eq!(sent(&stats, "UpdateItem"), expected, "{policy:?}: {error}");
    }
}

#[derive(Table)]
#[dynamo(
    name = "retries_streamed",
    pk = "PK",
    sk = "SK",
    stream = "new_and_old_images"
)]
struct Streamed;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Streamed, pk = "NOTE#{id}", sk = "NOTE")]
struct Note {
    id: u32,
}

/// A stream reader's polls resend under the `Db`'s policy.
#[tokio::test]
async fn stream_polls_are_sent_as_often_as_the_policy_allows() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let table = singletable::testing::table::<Streamed>().await.unwrap();
    table.put(&Note { id: 1 }).send().await.unwrap();
    for (policy, expected) in [(RetryPolicy::never(), 1), (attempts(4), 4)] {
        let plan = FaultPlan::new(7, 1.0)
            .with_kinds([Fault::before(FaultKind::LimitExceeded)])
            .only_operations(["GetRecords"])
            .recording();
        let (streams, stats) = fault::streams_client(plan).await.unwrap();
        let db = (*table).clone().with_retry_policy(policy);
        let mut reader = db.admin().stream_reader("retries", streams);
        let Err(error) = reader.poll::<Note>().await else {
            panic!("{policy:?}: a poll of a refused GetRecords");
        };
        assert!(error.is_retryable(), "{error:?}");
        assert_eq!(sent(&stats, "GetRecords"), expected, "{policy:?}: {error}");
    }
}
