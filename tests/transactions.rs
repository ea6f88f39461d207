//! Transactions: typed operations, checks before sending, cancellation reasons, atomic rekey
//! and the guarded monotonic append of seed 002.

mod common;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use singletable::op::append::Appended;
use singletable::op::transact::{CancellationCode, TransactionError, WriteKind};
use singletable::testing::TestTable;
use singletable::{Db, Entity, Error, KeyPart, Table};

#[derive(Table)]
#[dynamo(name = "desk", pk = "PK", sk = "SK")]
struct Desk;

#[derive(KeyPart, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Status {
    Open,
    Pending,
    Closed,
}

/// Status in the primary key: changing it means moving the item (seed 000/001/004).
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Desk, pk = "TICKET#{id}", sk = "STATUS#{status}")]
struct Ticket {
    id: String,
    status: Status,
    title: String,
}

/// Seed 002: a document's history, one item per accepted update time.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Desk, pk = "DOC#{document_id}", sk = "UPDATE#{update_time}")]
struct DocumentUpdate {
    document_id: String,
    update_time: u64,
    writer: u32,
}

async fn db() -> TestTable<Desk> {
    match singletable::testing::table::<Desk>().await {
        Ok(db) => db,
        Err(error) => panic!("{error}"),
    }
}

fn ticket(id: &str, status: Status) -> Ticket {
    Ticket {
        id: id.into(),
        status,
        title: "Printer on fire".into(),
    }
}

#[test]
fn rekey_is_one_transaction_delete_then_put() {
    let db = common::offline();
    let request = db
        .rekey(
            &ticket("8842", Status::Open),
            &ticket("8842", Status::Pending),
        )
        .params()
        .unwrap();
    assert_eq!(request.operation, "TransactWriteItems");
    let items = request.body["TransactItems"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    let delete = &items[0]["Delete"];
    assert_eq!(delete["Key"]["SK"]["S"], "STATUS#open");
    // It exists, and it is still the ticket that was read: every field as it was. A field its
    // key renders may also be absent, as an item another tool wrote keeps it (it reads back
    // from the key: the same ticket).
    assert_eq!(
        delete["ConditionExpression"],
        "attribute_exists(#n0) AND (#n1 = :v0 OR attribute_not_exists(#n1)) AND (#n2 = :v1 OR attribute_not_exists(#n2)) AND #n3 = :v2"
    );
    assert_eq!(delete["ReturnValuesOnConditionCheckFailure"], "ALL_OLD");
    let put = &items[1]["Put"];
    assert_eq!(put["Item"]["SK"]["S"], "STATUS#pending");
    assert_eq!(put["ConditionExpression"], "attribute_not_exists(#n0)");
    assert_eq!(put["ExpressionAttributeNames"]["#n0"], "PK");
}

/// A rekey to the key it already has (a change of other fields sent as a move) is refused
/// before sending, saying what a rekey is for; DynamoDB would refuse the delete and the put of
/// one item in one transaction, which the user never built. Nothing is written.
#[tokio::test]
async fn a_rekey_that_keeps_the_key_says_so() {
    let db = db().await;
    let stored = ticket("8842", Status::Open);
    db.put(&stored).send().await.unwrap();
    let retitled = Ticket {
        title: "Printer fixed".into(),
        ..stored.clone()
    };
    let refused = db.rekey(&stored, &retitled).params().unwrap_err();
    let message = refused.to_string();
    assert!(
        matches!(
            &refused,
            Error::Transaction(TransactionError::RekeyKeepsKey { key })
                if key.partition.1 == "TICKET#8842"
        ),
        "{refused:?}"
    );
    assert!(message.contains("db.update"), "{message}");
    let sent = db.rekey(&stored, &retitled).send().await.unwrap_err();
    assert_eq!(sent.to_string(), message);
    let key = stored.primary_key().unwrap();
    assert_eq!(db.get(key).send().await.unwrap(), stored);
}

#[test]
fn guarded_append_is_pointer_update_plus_conditional_put() {
    let db = common::offline();
    let update = DocumentUpdate {
        document_id: "A".into(),
        update_time: 150,
        writer: 1,
    };
    let request = db
        .append(&update, DocumentUpdate::UPDATE_TIME)
        .params()
        .unwrap();
    let items = request.body["TransactItems"].as_array().unwrap();
    let pointer = &items[0]["Update"];
    assert_eq!(pointer["Key"]["PK"]["S"], "DOC#A");
    assert_eq!(pointer["Key"]["SK"]["S"], "DocumentUpdate#LATEST");
    assert_eq!(
        pointer["ConditionExpression"],
        "(attribute_not_exists(#n0) OR #n0 < :v3) AND (attribute_not_exists(#n2) OR #n2 = :v4)"
    );
    // Only on the pointer, or on no item: never on an item of an entity at its key.
    assert_eq!(pointer["ExpressionAttributeNames"]["#n2"], "_type");
    assert_eq!(
        pointer["ExpressionAttributeValues"][":v4"]["S"],
        "DocumentUpdate#latest"
    );
    assert_eq!(pointer["ExpressionAttributeValues"][":v3"]["N"], "150");
    assert_eq!(
        pointer["UpdateExpression"],
        "SET #n0 = :v0, #n1 = :v1, #n2 = :v2"
    );
    assert_eq!(pointer["ExpressionAttributeNames"]["#n0"], "latest");
    assert_eq!(pointer["ExpressionAttributeValues"][":v0"]["N"], "150");
    let history = &items[1]["Put"];
    assert_eq!(history["Item"]["SK"]["S"], "UPDATE#00000000000000000150");
    assert_eq!(history["ConditionExpression"], "attribute_not_exists(#n0)");
}

#[test]
fn transactions_are_checked_before_sending() {
    let db = common::offline();
    assert!(matches!(
        db.transaction().params(),
        Err(Error::Transaction(TransactionError::Empty))
    ));
    let mut too_many = db.transaction();
    for n in 0..101 {
        too_many = too_many.with(db.put(&ticket(&n.to_string(), Status::Open)));
    }
    match too_many.params() {
        Err(Error::Transaction(TransactionError::TooMany {
            count: 101,
            max: 100,
        })) => {}
        other => panic!("expected TooMany, got {other:?}"),
    }
    let twice = db
        .transaction()
        .with(db.put(&ticket("1", Status::Open)))
        .with(db.put(&ticket("2", Status::Open)))
        .with(db.delete(Ticket::key("1", Status::Open).unwrap()));
    match twice.params() {
        Err(Error::Transaction(TransactionError::SameItem {
            first: 0,
            second: 2,
            first_kind,
            second_kind,
            key,
        })) => {
            assert_eq!(
                (first_kind, second_kind),
                (WriteKind::Put, WriteKind::Delete)
            );
            assert_eq!(key.partition.1, "TICKET#1");
        }
        other => panic!("expected SameItem, got {other:?}"),
    }
}

#[test]
fn every_cancellation_reason_code_maps() {
    let cases = [
        ("None", CancellationCode::None, false),
        (
            "ConditionalCheckFailed",
            CancellationCode::ConditionalCheckFailed,
            false,
        ),
        (
            "ItemCollectionSizeLimitExceeded",
            CancellationCode::ItemCollectionSizeLimitExceeded,
            false,
        ),
        (
            "TransactionConflict",
            CancellationCode::TransactionConflict,
            true,
        ),
        (
            "ProvisionedThroughputExceeded",
            CancellationCode::ProvisionedThroughputExceeded,
            true,
        ),
        ("ThrottlingError", CancellationCode::ThrottlingError, true),
        ("ValidationError", CancellationCode::ValidationError, false),
        (
            "SomethingNew",
            CancellationCode::Other("SomethingNew".into()),
            false,
        ),
    ];
    for (text, code, transient) in cases {
        assert_eq!(CancellationCode::parse(text), code);
        assert_eq!(code.is_transient(), transient, "{text}");
    }
}

#[tokio::test]
async fn a_failed_condition_cancels_with_typed_reasons_and_the_current_item() {
    let db = db().await;
    db.put(&ticket("1", Status::Open)).send().await.unwrap();
    let error = db
        .transaction()
        .with(db.put(&ticket("2", Status::Open)))
        .with(db.put(&ticket("1", Status::Open)).only_if_absent())
        .send()
        .await
        .unwrap_err();
    let Error::TransactionCanceled(cancelled) = error else {
        panic!("expected a cancellation, got {error:?}")
    };
    assert_eq!(cancelled.attempts, 1, "a failed condition is never retried");
    assert_eq!(cancelled.reasons.len(), 2);
    assert_eq!(cancelled.reasons[0].code, CancellationCode::None);
    assert_eq!(
        cancelled.reasons[1].code,
        CancellationCode::ConditionalCheckFailed
    );
    assert_eq!(cancelled.reasons[1].entity, "Ticket");
    assert_eq!(cancelled.reasons[1].key.partition.1, "TICKET#1");
    let current: Ticket = cancelled.reasons[1].current().unwrap().unwrap();
    assert_eq!(current, ticket("1", Status::Open));
    assert!(db
        .get(Ticket::key("2", Status::Open).unwrap())
        .send()
        .await
        .unwrap_err()
        .is_not_found());
}

#[tokio::test]
async fn typed_transact_get_reads_several_entities() {
    let db = db().await;
    db.put(&ticket("1", Status::Open)).send().await.unwrap();
    db.put(&DocumentUpdate {
        document_id: "A".into(),
        update_time: 5,
        writer: 0,
    })
    .send()
    .await
    .unwrap();
    let mut get = db.transact_get();
    let a = get.get(Ticket::key("1", Status::Open).unwrap());
    let b = get.get(DocumentUpdate::key("A", 5).unwrap());
    let c = get.get(Ticket::key("missing", Status::Open).unwrap());
    let mut output = get.send().await.unwrap();
    assert_eq!(output.take(&a).unwrap().unwrap().id, "1");
    assert_eq!(output.take(&b).unwrap().unwrap().update_time, 5);
    assert_eq!(output.take(&c).unwrap(), None);
}

#[tokio::test]
async fn rekey_moves_the_item_and_explains_failures() {
    let db = db().await;
    db.put(&ticket("1", Status::Open)).send().await.unwrap();
    db.rekey(&ticket("1", Status::Open), &ticket("1", Status::Pending))
        .send()
        .await
        .unwrap();
    assert!(db
        .get(Ticket::key("1", Status::Open).unwrap())
        .send()
        .await
        .unwrap_err()
        .is_not_found());
    assert_eq!(
        db.get(Ticket::key("1", Status::Pending).unwrap())
            .send()
            .await
            .unwrap()
            .status,
        Status::Pending
    );
    // The old item is gone now.
    let error = db
        .rekey(&ticket("1", Status::Open), &ticket("1", Status::Closed))
        .send()
        .await
        .unwrap_err();
    assert!(error.is_not_found(), "{error}");
    // The new key is taken.
    db.put(&ticket("1", Status::Closed)).send().await.unwrap();
    let error = db
        .rekey(&ticket("1", Status::Pending), &ticket("1", Status::Closed))
        .send()
        .await
        .unwrap_err();
    match &error {
        Error::ConditionFailed { key, current, .. } => {
            assert_eq!(key.sort.as_ref().unwrap().1, "STATUS#closed");
            assert!(current.is_some());
        }
        other => panic!("expected ConditionFailed, got {other:?}"),
    }
    // Nothing moved: the pending ticket is still there.
    db.get(Ticket::key("1", Status::Pending).unwrap())
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn concurrent_rekeys_never_lose_or_duplicate_a_ticket() {
    let db = db().await;
    const TICKETS: usize = 4;
    for id in 0..TICKETS {
        db.put(&ticket(&id.to_string(), Status::Open))
            .send()
            .await
            .unwrap();
    }
    let statuses = [Status::Open, Status::Pending, Status::Closed];
    let tasks = (0..8u64).map(|task| {
        let db = db.clone();
        tokio::spawn(async move {
            let mut rng = fastrand::Rng::with_seed(task);
            let mut moved = 0;
            for round in 0..200 {
                let id = (round + task as usize) % TICKETS;
                // Find where the ticket is now; another task may move it meanwhile.
                let mut current = None;
                for status in statuses {
                    if let Ok(found) = db
                        .get(Ticket::key(id.to_string(), status).unwrap())
                        .send()
                        .await
                    {
                        current = Some(found);
                        break;
                    }
                }
                let Some(current) = current else { continue };
                let next = statuses[rng.usize(..statuses.len())];
                if next == current.status {
                    continue;
                }
                let to = Ticket {
                    status: next,
                    ..current.clone()
                };
                match db.rekey(&current, &to).send().await {
                    Ok(()) => moved += 1,
                    Err(error) if error.is_not_found() || error.is_condition_failed() => {}
                    Err(Error::TransactionCanceled(cancelled)) if cancelled.is_transient() => {}
                    Err(error) => panic!("unexpected {error}"),
                }
            }
            moved
        })
    });
    let run = futures::future::join_all(tasks);
    let results = tokio::time::timeout(std::time::Duration::from_secs(240), run)
        .await
        .expect("bounded in time");
    let moved: usize = results.into_iter().map(|result| result.unwrap()).sum();
    assert!(moved > 0);
    for id in 0..TICKETS {
        let copies = db
            .query(Ticket::partition(id.to_string()))
            .count()
            .await
            .unwrap();
        assert_eq!(copies, 1, "ticket {id} exists exactly once");
    }
}

#[tokio::test]
async fn guarded_appends_accept_only_newer_values() {
    let db = db().await;
    let update = |time: u64| DocumentUpdate {
        document_id: "A".into(),
        update_time: time,
        writer: 0,
    };
    assert_eq!(
        db.append(&update(100), DocumentUpdate::UPDATE_TIME)
            .send()
            .await
            .unwrap(),
        Appended::Accepted
    );
    assert_eq!(
        db.append(&update(200), DocumentUpdate::UPDATE_TIME)
            .send()
            .await
            .unwrap(),
        Appended::Accepted
    );
    assert_eq!(
        db.append(&update(150), DocumentUpdate::UPDATE_TIME)
            .send()
            .await
            .unwrap(),
        Appended::Stale { latest: 200 }
    );
    // Equal is stale too: the comparison is strict.
    assert_eq!(
        db.append(&update(200), DocumentUpdate::UPDATE_TIME)
            .send()
            .await
            .unwrap(),
        Appended::Stale { latest: 200 }
    );
    assert!(db
        .get(DocumentUpdate::key("A", 150).unwrap())
        .send()
        .await
        .unwrap_err()
        .is_not_found());
}

/// The pointer can be read as the field's type, and reading it leaves it as it is.
#[tokio::test]
async fn the_pointer_reads_as_the_field_without_moving() -> Result<(), singletable::Error> {
    let db = db().await;
    let latest = || db.latest(DocumentUpdate::partition("R"), DocumentUpdate::UPDATE_TIME);
    assert_eq!(latest().await?, None, "no pointer before the first append");
    let update = |time: u64| DocumentUpdate {
        document_id: "R".into(),
        update_time: time,
        writer: 0,
    };
    db.append(&update(300), DocumentUpdate::UPDATE_TIME)
        .send()
        .await?;
    assert_eq!(latest().await?, Some(300u64));
    assert_eq!(latest().await?, Some(300u64), "reading does not raise it");
    assert_eq!(
        db.append(&update(250), DocumentUpdate::UPDATE_TIME)
            .send()
            .await?,
        Appended::Stale { latest: 300 }
    );
    // A partition key that cannot be rendered is an error `?` converts.
    let error = db
        .latest(
            DocumentUpdate::partition("bad#id"),
            DocumentUpdate::UPDATE_TIME,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            singletable::Error::Encode { .. } | singletable::Error::Key(_)
        ),
        "{error}"
    );
    Ok(())
}

#[tokio::test]
async fn pointers_are_initialised_from_existing_history() {
    let db = db().await;
    // History written before appends were guarded.
    for time in [10, 30, 20] {
        db.put(&DocumentUpdate {
            document_id: "B".into(),
            update_time: time,
            writer: 0,
        })
        .send()
        .await
        .unwrap();
    }
    let latest = db
        .admin()
        .init_latest(DocumentUpdate::partition("B"), DocumentUpdate::UPDATE_TIME)
        .await
        .unwrap();
    assert_eq!(latest, Some(30));
    let stale = DocumentUpdate {
        document_id: "B".into(),
        update_time: 25,
        writer: 0,
    };
    assert_eq!(
        db.append(&stale, DocumentUpdate::UPDATE_TIME)
            .send()
            .await
            .unwrap(),
        Appended::Stale { latest: 30 }
    );
    // Running it again, or after newer appends, never moves the pointer back.
    let newer = DocumentUpdate {
        document_id: "B".into(),
        update_time: 40,
        writer: 0,
    };
    assert_eq!(
        db.append(&newer, DocumentUpdate::UPDATE_TIME)
            .send()
            .await
            .unwrap(),
        Appended::Accepted
    );
    assert_eq!(
        db.admin()
            .init_latest(DocumentUpdate::partition("B"), DocumentUpdate::UPDATE_TIME)
            .await
            .unwrap(),
        Some(40)
    );
    assert_eq!(
        db.admin()
            .init_latest(
                DocumentUpdate::partition("empty"),
                DocumentUpdate::UPDATE_TIME
            )
            .await
            .unwrap(),
        None
    );
}

/// Seed 002 with a timestamp: revisions keyed by their id, guarded by their time, so the
/// newest by sort key is not the newest by time.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Desk, pk = "REVS#{doc}", sk = "REV#{rev}")]
struct Revision {
    doc: String,
    rev: String,
    at: DateTime<Utc>,
}

fn revision(rev: &str, at: &str) -> Revision {
    Revision {
        doc: "d".into(),
        rev: rev.into(),
        at: at.parse().unwrap(),
    }
}

/// RFC 3339 text with a fraction of varying length does not sort as time
/// (`12:00:00.500Z` < `12:00:00Z` as text); the guard compares times.
#[tokio::test]
async fn timestamps_guard_appends_in_time_order_whatever_their_text() {
    let db = db().await;
    let append = |revision: Revision| {
        let db = &db;
        async move { db.append(&revision, Revision::AT).send().await.unwrap() }
    };
    assert_eq!(
        append(revision("a", "2026-04-01T12:00:00Z")).await,
        Appended::Accepted
    );
    assert_eq!(
        append(revision("b", "2026-04-01T12:00:00.500Z")).await,
        Appended::Accepted
    );
    assert_eq!(
        append(revision("c", "2026-04-01T11:59:59.999999999Z")).await,
        Appended::Stale {
            latest: "2026-04-01T12:00:00.500Z".parse().unwrap()
        }
    );
    assert_eq!(
        append(revision("d", "2026-04-01T12:00:00.5Z")).await,
        Appended::Stale {
            latest: "2026-04-01T12:00:00.500Z".parse().unwrap()
        },
        "equal times are stale, however they are written"
    );
    assert_eq!(
        append(revision("e", "2026-04-01T12:00:01Z")).await,
        Appended::Accepted
    );
}

/// The pointer starts at the greatest value of the field in the history, not at the value of
/// the item that sorts last by key.
#[tokio::test]
async fn init_latest_takes_the_greatest_value_not_the_last_key() {
    let db = db().await;
    for item in [
        revision("a", "2026-04-01T12:00:05Z"),
        revision("z", "2026-04-01T12:00:01Z"),
    ] {
        db.put(&item).send().await.unwrap();
    }
    let latest = db
        .admin()
        .init_latest(Revision::partition("d"), Revision::AT)
        .await
        .unwrap();
    assert_eq!(latest, Some("2026-04-01T12:00:05Z".parse().unwrap()));
    assert_eq!(
        db.append(&revision("m", "2026-04-01T12:00:03Z"), Revision::AT)
            .send()
            .await
            .unwrap(),
        Appended::Stale {
            latest: "2026-04-01T12:00:05Z".parse().unwrap()
        }
    );
}

/// A pointer already past the history keeps its value, and `init_latest` returns that value.
#[tokio::test]
async fn init_latest_behind_the_pointer_returns_the_pointer_s_value() {
    let db = db().await;
    db.put(&revision("a", "2026-04-01T12:00:00Z"))
        .send()
        .await
        .unwrap();
    let newer = revision("b", "2026-04-01T13:00:00Z");
    db.append(&newer, Revision::AT).send().await.unwrap();
    // The history no longer holds the pointer's value.
    db.delete(newer.primary_key().unwrap())
        .send()
        .await
        .unwrap();
    let latest = db
        .admin()
        .init_latest(Revision::partition("d"), Revision::AT)
        .await
        .unwrap();
    assert_eq!(latest, Some("2026-04-01T13:00:00Z".parse().unwrap()));
}

/// A task with a creation time, to see that a move keeps it.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Desk, pk = "TASK#{id}", sk = "STATUS#{status}")]
struct Task {
    id: String,
    status: Status,
    title: String,
    /// How many edits the item took (the race test counts them).
    edits: u64,
    #[dynamo(created_at)]
    created_at: DateTime<Utc>,
}

/// A reads a task, B changes its title, A moves its old copy: the move must not put A's old
/// title back (B's change would be lost). It fails with the current item instead, and after
/// reading again A's move goes through, keeping B's title and the creation time.
#[tokio::test]
async fn a_rekey_from_a_stale_copy_never_discards_a_concurrent_update() {
    let db = db().await;
    db.put(&Task {
        id: "t".into(),
        status: Status::Open,
        title: "first".into(),
        edits: 0,
        created_at: DateTime::UNIX_EPOCH,
    })
    .only_if_absent()
    .send()
    .await
    .unwrap();
    let read_by_a = db
        .get(Task::key("t", Status::Open).unwrap())
        .send()
        .await
        .unwrap();
    let created_at = read_by_a.created_at;
    assert_ne!(created_at, DateTime::UNIX_EPOCH, "a create stamps the time");
    db.update(Task::key("t", Status::Open).unwrap())
        .set(Task::TITLE, "changed by B".to_owned())
        .send()
        .await
        .unwrap();
    let moved = Task {
        status: Status::Pending,
        ..read_by_a.clone()
    };
    let lost = db.rekey(&read_by_a, &moved).send().await.unwrap_err();
    let current: Task = match &lost {
        Error::ConditionFailed {
            current: Some(current),
            ..
        } => singletable::item::decode((**current).clone()).unwrap(),
        other => panic!("expected ConditionFailed with the current item, got {other:?}"),
    };
    assert_eq!(current.title, "changed by B");
    assert!(db
        .get(Task::key("t", Status::Pending).unwrap())
        .send()
        .await
        .unwrap_err()
        .is_not_found());

    // Read again, move again.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let moved = Task {
        status: Status::Pending,
        ..current.clone()
    };
    db.rekey(&current, &moved).send().await.unwrap();
    let stored = db
        .get(Task::key("t", Status::Pending).unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(stored.title, "changed by B");
    assert_eq!(stored.created_at, created_at, "a move is not a creation");
}

/// Rekeys racing with updates of the same items, several of each really in flight: every
/// acknowledged edit (`ADD edits 1`) is in the final item, every item is in exactly one place,
/// and no move carried a stale copy over an edit it did not see.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rekeys_racing_with_updates_never_lose_an_acknowledged_edit() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    const TASKS: usize = 3;
    const WRITERS: usize = 3;
    const OPERATIONS: usize = 25;
    let table = db().await;
    let db = (*table).clone();
    for id in 0..TASKS {
        db.put(&Task {
            id: id.to_string(),
            status: Status::Open,
            title: "t".into(),
            edits: 0,
            created_at: DateTime::UNIX_EPOCH,
        })
        .send()
        .await
        .unwrap();
    }
    let acknowledged: Arc<Vec<AtomicU64>> =
        Arc::new((0..TASKS).map(|_| AtomicU64::new(0)).collect());
    let moves = Arc::new(AtomicU64::new(0));
    let lost_races = Arc::new(AtomicU64::new(0));
    let locate = |db: Db<Desk>, id: usize| async move {
        db.query(Task::partition(id.to_string()))
            .consistent()
            .all()
            .await
            .unwrap()
    };
    let mut writers = Vec::new();
    for writer in 0..WRITERS {
        // Editors: find the task, add one edit at its current key.
        let (editor, acknowledged) = (db.clone(), acknowledged.clone());
        writers.push(tokio::spawn(async move {
            let db = editor;
            let mut rng = fastrand::Rng::with_seed(writer as u64);
            for _ in 0..OPERATIONS {
                let id = rng.usize(..TASKS);
                let Some(current) = locate(db.clone(), id).await.pop() else {
                    continue;
                };
                match db
                    .update(current.primary_key().unwrap())
                    .add(Task::EDITS, 1)
                    .send()
                    .await
                {
                    Ok(_) => {
                        acknowledged[id].fetch_add(1, Ordering::SeqCst);
                    }
                    // It moved between the read and the update: nothing was written.
                    Err(error) if error.is_not_found() => {}
                    // DynamoDB refuses a write that meets a transaction in progress on the
                    // item; nothing was written.
                    Err(Error::Service(error))
                        if matches!(
                            error.service_error(),
                            Some(aws_sdk_dynamodb::Error::TransactionConflictException(_))
                        ) => {}
                    Err(error) => panic!("edit: unexpected {error}"),
                }
            }
        }));
        // Movers: read the task, move its copy to another status.
        let (mover, moves, lost_races) = (db.clone(), moves.clone(), lost_races.clone());
        writers.push(tokio::spawn(async move {
            let db = mover;
            let mut rng = fastrand::Rng::with_seed(100 + writer as u64);
            for _ in 0..OPERATIONS {
                let id = rng.usize(..TASKS);
                let Some(current) = locate(db.clone(), id).await.pop() else {
                    continue;
                };
                let next = [Status::Open, Status::Pending, Status::Closed]
                    .into_iter()
                    .filter(|status| *status != current.status)
                    .nth(rng.usize(..2))
                    .unwrap();
                let moved = Task {
                    status: next,
                    ..current.clone()
                };
                match db.rekey(&current, &moved).send().await {
                    Ok(()) => {
                        moves.fetch_add(1, Ordering::SeqCst);
                    }
                    Err(error) if error.is_not_found() || error.is_condition_failed() => {
                        lost_races.fetch_add(1, Ordering::SeqCst);
                    }
                    Err(Error::TransactionCanceled(cancelled)) if cancelled.is_transient() => {}
                    Err(error) => panic!("move: unexpected {error}"),
                }
            }
        }));
    }
    tokio::time::timeout(std::time::Duration::from_secs(120), async {
        for writer in writers {
            writer.await.unwrap();
        }
    })
    .await
    .expect("the race ends within its bound");
    for id in 0..TASKS {
        let copies = locate(db.clone(), id).await;
        assert_eq!(
            copies.len(),
            1,
            "task {id} is in exactly one place: {copies:?}"
        );
        assert_eq!(
            copies[0].edits,
            acknowledged[id].load(Ordering::SeqCst),
            "task {id}: every acknowledged edit is kept ({} moves, {} lost races in all)",
            moves.load(Ordering::SeqCst),
            lost_races.load(Ordering::SeqCst)
        );
    }
    assert!(moves.load(Ordering::SeqCst) > 0, "some moves went through");
    eprintln!(
        "[race] {} edits, {} moves, {} moves refused for a change they did not see",
        acknowledged
            .iter()
            .map(|count| count.load(Ordering::SeqCst))
            .sum::<u64>(),
        moves.load(Ordering::SeqCst),
        lost_races.load(Ordering::SeqCst)
    );
}

/// Seed 002 on every type an append accepts: an unsigned and a signed number, a timestamp and a
/// string.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Desk, pk = "SIGNED#{document}", sk = "AT#{offset}")]
struct SignedUpdate {
    document: String,
    offset: i64,
    writer: u32,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Desk, pk = "TIMED#{document}", sk = "AT#{at}")]
struct TimedUpdate {
    document: String,
    at: DateTime<Utc>,
    writer: u32,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Desk, pk = "NAMED#{document}", sk = "AT#{name}")]
struct NamedUpdate {
    document: String,
    name: String,
    writer: u32,
}

/// Appenders racing on a few partitions, several really in flight, judged afterwards against
/// what each was told: the history is exactly the accepted values, in order, the pointer is
/// its greatest, a stale refusal names a value at least as new, and an append accepted after
/// another was acknowledged holds a greater value (no append is accepted behind one that a
/// writer already saw succeed).
macro_rules! append_race {
    ($test:ident, $entity:ident, $field:ident, $make:expr, $value:expr) => {
        append_race!($test, $entity, $field, $make, $value, writers: 6, appends: 60, documents: ["A", "B"]);
    };
    ($test:ident, $entity:ident, $field:ident, $make:expr, $value:expr,
     writers: $writers:expr, appends: $appends:expr, documents: $documents:expr) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $test() {
            use std::time::Instant;
            const WRITERS: u32 = $writers;
            const APPENDS: usize = $appends;
            let table = db().await;
            let db = (*table).clone();
            let documents = $documents;
            let make: fn(&str, &mut fastrand::Rng, u32) -> $entity = $make;
            let value = $value;
            let writers = (0..WRITERS).map(|writer| {
                let db = db.clone();
                tokio::spawn(async move {
                    let mut rng = fastrand::Rng::with_seed(u64::from(writer) + 40);
                    let mut accepted = Vec::new();
                    let mut stale = 0;
                    for _ in 0..APPENDS {
                        let document = documents[rng.usize(..documents.len())];
                        let update = make(document, &mut rng, writer);
                        let sent = Instant::now();
                        match db.append(&update, $entity::$field).send().await.unwrap() {
                            Appended::Accepted => {
                                accepted.push((document, value(&update), sent, Instant::now()))
                            }
                            Appended::Stale { latest } => {
                                assert!(latest >= value(&update), "{latest:?} / {update:?}");
                                stale += 1;
                            }
                            Appended::Duplicate => panic!("no history predates the pointers"),
                        }
                    }
                    (accepted, stale)
                })
            });
            let results = tokio::time::timeout(
                std::time::Duration::from_secs(120),
                futures::future::join_all(writers),
            )
            .await
            .expect("bounded in time");
            let mut accepted = Vec::new();
            let mut stale = 0;
            for result in results {
                let (mine, my_stale) = result.unwrap();
                accepted.extend(mine);
                stale += my_stale;
            }
            assert_eq!(accepted.len() + stale, WRITERS as usize * APPENDS);
            for document in documents {
                let mut mine: Vec<_> = accepted.iter().filter(|a| a.0 == document).collect();
                for later in &mine {
                    for earlier in &mine {
                        if earlier.3 < later.2 {
                            assert!(later.1 > earlier.1, "{later:?} accepted after {earlier:?}");
                        }
                    }
                }
                mine.sort_by(|a, b| a.1.cmp(&b.1));
                let expected: Vec<_> = mine.iter().map(|a| a.1.clone()).collect();
                let history: Vec<_> = db
                    .query($entity::partition(document))
                    .consistent()
                    .all()
                    .await
                    .unwrap()
                    .iter()
                    .map(value)
                    .collect();
                assert_eq!(
                    history, expected,
                    "{document}: the history is the accepted values"
                );
                let pointer = db
                    .admin().init_latest($entity::partition(document), $entity::$field)
                    .await
                    .unwrap();
                assert_eq!(
                    pointer.as_ref(),
                    expected.last(),
                    "{document}: the pointer is the greatest"
                );
            }
        }
    };
}

append_race!(
    appends_of_unsigned_numbers_race_safely,
    DocumentUpdate,
    UPDATE_TIME,
    |document, rng, writer| DocumentUpdate {
        document_id: document.into(),
        update_time: rng.u64(1..1_000_000),
        writer,
    },
    |update: &DocumentUpdate| update.update_time,
    writers: 8,
    appends: 200,
    documents: ["A", "B", "C"]
);

append_race!(
    appends_of_signed_numbers_race_safely,
    SignedUpdate,
    OFFSET,
    |document, rng, writer| SignedUpdate {
        document: document.into(),
        offset: rng.i64(-1_000_000..1_000_000),
        writer,
    },
    |update: &SignedUpdate| update.offset
);

append_race!(
    appends_of_timestamps_race_safely,
    TimedUpdate,
    AT,
    |document, rng, writer| TimedUpdate {
        document: document.into(),
        // Fractions of every length, the case text comparison got wrong.
        at: DateTime::from_timestamp(
            1_775_000_000 + rng.i64(0..20),
            [0, 5, 50, 500_000_000, 123_456_789][rng.usize(..5)]
        )
        .unwrap(),
        writer,
    },
    |update: &TimedUpdate| update.at
);

append_race!(
    appends_of_strings_race_safely,
    NamedUpdate,
    NAME,
    |document, rng, writer| NamedUpdate {
        document: document.into(),
        name: (0..rng.usize(1..6)).map(|_| rng.lowercase()).collect(),
        writer,
    },
    |update: &NamedUpdate| update.name.clone()
);

/// An account whose balance only transactions change.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Desk, pk = "ACCOUNT#{id}", sk = "ACCOUNT")]
struct Account {
    id: u32,
    balance: i64,
}

/// Transactions racing on the same items: writers move money between three accounts, each
/// transfer one `TransactWriteItems` of a guarded decrement and an increment. Judged against
/// what the writers were told: the balances are the start plus every acknowledged transfer
/// (none lost, none applied twice), and none went below zero.
#[tokio::test]
async fn transactions_racing_on_the_same_items_apply_exactly_the_acknowledged_ones() {
    use std::sync::{Arc, Mutex};
    const ACCOUNTS: u32 = 3;
    const WRITERS: u64 = 6;
    const TRANSFERS: usize = 30;
    const START: i64 = 100;
    let table = db().await;
    let db = (*table).clone();
    for id in 0..ACCOUNTS {
        db.put(&Account { id, balance: START })
            .send()
            .await
            .unwrap();
    }
    // (from, to, amount) of every transfer a writer was told succeeded.
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let refused = Arc::new(Mutex::new(0usize));
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let (db, acknowledged, refused) = (db.clone(), acknowledged.clone(), refused.clone());
            tokio::spawn(async move {
                let mut rng = fastrand::Rng::with_seed(writer);
                for _ in 0..TRANSFERS {
                    let from = rng.u32(..ACCOUNTS);
                    let to = (from + rng.u32(1..ACCOUNTS)) % ACCOUNTS;
                    let amount = rng.i64(1..60);
                    let sent = db
                        .transaction()
                        .with(
                            db.update(Account::key(from).unwrap())
                                .decrement(Account::BALANCE, amount)
                                .condition(Account::BALANCE.ge(amount)),
                        )
                        .with(
                            db.update(Account::key(to).unwrap())
                                .increment(Account::BALANCE, amount),
                        )
                        .send()
                        .await;
                    match sent {
                        Ok(_) => acknowledged.lock().unwrap().push((from, to, amount)),
                        // Not enough money: nothing was written.
                        Err(Error::TransactionCanceled(cancelled))
                            if cancelled.reasons[0].code
                                == CancellationCode::ConditionalCheckFailed =>
                        {
                            *refused.lock().unwrap() += 1
                        }
                        // Conflicts with another transaction, still after the library's
                        // retries: nothing was written.
                        Err(Error::TransactionCanceled(cancelled)) if cancelled.is_transient() => {}
                        Err(error) => panic!("transfer: unexpected {error}"),
                    }
                }
            })
        })
        .collect();
    tokio::time::timeout(std::time::Duration::from_secs(120), async {
        for writer in writers {
            writer.await.unwrap();
        }
    })
    .await
    .expect("the race ends within its bound");
    let acknowledged = acknowledged.lock().unwrap().clone();
    let mut expected = [START; ACCOUNTS as usize];
    for (from, to, amount) in &acknowledged {
        expected[*from as usize] -= amount;
        expected[*to as usize] += amount;
    }
    for id in 0..ACCOUNTS {
        let account = db
            .get(Account::key(id).unwrap())
            .consistent()
            .send()
            .await
            .unwrap();
        assert_eq!(
            account.balance,
            expected[id as usize],
            "account {id}: {} acknowledged transfers",
            acknowledged.len()
        );
        assert!(account.balance >= 0, "account {id} went below zero");
    }
    eprintln!(
        "{} transfers acknowledged, {} refused, of {}",
        acknowledged.len(),
        refused.lock().unwrap(),
        WRITERS as usize * TRANSFERS
    );
    // The race was real: transfers went through, and some met an empty account.
    assert!(acknowledged.len() >= TRANSFERS, "{}", acknowledged.len());
    assert!(*refused.lock().unwrap() > 0, "no transfer was refused");
}
