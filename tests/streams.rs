//! Streams and TTL, on the engine: the TTL field's stored form, reads that hide expired items,
//! typed stream records from the Streams API and from a Lambda event, and a consumer that
//! resumes from its checkpoint.

mod common;
use common::Needs;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use singletable::local::{Deviation, Engine};
use singletable::stream::{Change, CollectionKey, NewAndOldImages, StreamError, StreamReader};
use singletable::{Entity, Table};
use singletable_fault::{self as fault, Fault, FaultKind, FaultPlan};
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

#[derive(Table)]
#[dynamo(
    name = "streamed",
    pk = "PK",
    sk = "SK",
    ttl = "expires_at",
    stream = "new_and_old_images"
)]
struct Streamed;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Streamed, pk = "TICKET#{id}", sk = "TICKET")]
struct Ticket {
    id: String,
    team: String,
    open: bool,
    #[dynamo(ttl)]
    expires_at: Option<DateTime<Utc>>,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Streamed, pk = "TEAM#{team}", sk = "TEAM")]
struct Team {
    team: String,
    name: String,
}

#[derive(singletable::Collection, Debug, PartialEq)]
enum Item {
    Ticket(Ticket),
    Team(Team),
}

/// The same table, declared with only its keys: what a table made before streams and TTL
/// were declared looks like.
#[derive(Table)]
#[dynamo(name = "streamed", pk = "PK", sk = "SK")]
struct Plain;

#[derive(Table)]
#[dynamo(name = "keys", pk = "PK", sk = "SK", stream = "keys_only")]
struct KeysTable;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = KeysTable, pk = "TICKET#{id}", sk = "TICKET")]
struct KeyedTicket {
    id: String,
}

/// The latest release of a document, at a sort key ending in `#LATEST` as a common
/// single-table pattern has it, like the library's append pointers (`<entity>#LATEST`).
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Streamed, pk = "DOC#{doc}", sk = "RELEASE#LATEST")]
struct Release {
    doc: String,
    version: u32,
}

fn ticket(id: &str, team: &str, expires_at: Option<DateTime<Utc>>) -> Ticket {
    Ticket {
        id: id.into(),
        team: team.into(),
        open: true,
        expires_at,
    }
}

/// A time in whole seconds, as TTL stores it.
fn seconds_from_now(seconds: i64) -> DateTime<Utc> {
    let now = Utc::now().timestamp() + seconds;
    DateTime::from_timestamp(now, 0).unwrap()
}

async fn table<T: Table>() -> singletable::testing::TestTable<T> {
    singletable::testing::table::<T>().await.unwrap()
}

async fn reader<'db, T: Table>(
    db: &'db singletable::Db<T>,
    consumer: &str,
) -> StreamReader<'db, T> {
    let client = singletable::local::streams_client().await.unwrap();
    db.admin().stream_reader(consumer, client)
}

/// Every record the reader has, committing each page.
async fn drain<D>(reader: &mut StreamReader<'_, Streamed>) -> Vec<singletable::stream::Record<D>>
where
    D: singletable::stream::StreamTarget<Table = Streamed>,
{
    let mut records = Vec::new();
    loop {
        let page = reader.poll::<D>().await.unwrap();
        let caught_up = page.is_empty() && reader.is_caught_up();
        reader.commit(&page).await.unwrap();
        records.extend(page.into_records().into_iter().map(Result::unwrap));
        if caught_up {
            return records;
        }
    }
}

#[tokio::test]
async fn a_ttl_field_is_stored_as_epoch_seconds_whatever_its_type() {
    let db = table::<Streamed>().await;
    let expires = seconds_from_now(3600);
    db.put(&ticket("t1", "blue", Some(expires)))
        .send()
        .await
        .unwrap();
    db.put(&ticket("t2", "blue", None)).send().await.unwrap();
    let raw = |id: &str| {
        let client = db.client().clone();
        let table = db.table_name().to_owned();
        let key = Ticket::key(id).unwrap().to_attributes();
        async move {
            client
                .get_item()
                .table_name(table)
                .set_key(Some(key))
                .send()
                .await
                .unwrap()
                .item
                .unwrap()
        }
    };
    let stored = raw("t1").await;
    assert_eq!(
        stored.get("expires_at"),
        Some(&aws_sdk_dynamodb::types::AttributeValue::N(
            expires.timestamp().to_string()
        ))
    );
    // No expiry is no attribute: the item never expires.
    assert!(!raw("t2").await.contains_key("expires_at"));
    let read = db.get(Ticket::key("t1").unwrap()).send().await.unwrap();
    assert_eq!(read.expires_at, Some(expires));

    // An update writes the same form, and `None` removes the attribute.
    let later = seconds_from_now(7200);
    db.update(Ticket::key("t1").unwrap())
        .set(Ticket::EXPIRES_AT, Some(later))
        .send()
        .await
        .unwrap();
    assert_eq!(
        raw("t1").await.get("expires_at"),
        Some(&aws_sdk_dynamodb::types::AttributeValue::N(
            later.timestamp().to_string()
        ))
    );
    // Conditions compare in the stored form too.
    db.update(Ticket::key("t1").unwrap())
        .set(Ticket::EXPIRES_AT, None)
        .condition(Ticket::EXPIRES_AT.eq(Some(later)))
        .send()
        .await
        .unwrap();
    assert!(!raw("t1").await.contains_key("expires_at"));
}

#[tokio::test]
async fn reads_hide_expired_items_unless_asked() {
    let db = table::<Streamed>().await;
    db.put(&ticket("live", "blue", Some(seconds_from_now(3600))))
        .send()
        .await
        .unwrap();
    db.put(&ticket("forever", "blue", None))
        .send()
        .await
        .unwrap();
    db.put(&ticket("gone", "blue", Some(seconds_from_now(-60))))
        .send()
        .await
        .unwrap();

    // DynamoDB may still hold an expired item (it deletes them within about two days), but
    // reads do not return it.
    let error = db
        .get(Ticket::key("gone").unwrap())
        .send()
        .await
        .unwrap_err();
    assert!(error.is_not_found(), "{error:?}");
    let mut scanned: Vec<String> = db
        .scan::<Ticket>()
        .all()
        .await
        .unwrap()
        .into_iter()
        .map(|ticket| ticket.id)
        .collect();
    scanned.sort();
    assert_eq!(scanned, ["forever", "live"]);
    let queried = db.query(Ticket::partition("gone")).all().await.unwrap();
    assert!(queried.is_empty(), "{queried:?}");

    let batch = db
        .batch_get([Ticket::key("gone").unwrap(), Ticket::key("live").unwrap()])
        .send()
        .await
        .unwrap();
    let found: Vec<&str> = batch
        .items
        .iter()
        .map(|ticket| ticket.id.as_str())
        .collect();
    assert_eq!(found, ["live"]);
    // Every read takes the same options; the last one set wins.
    let batch = db
        .batch_get([Ticket::key("gone").unwrap(), Ticket::key("live").unwrap()])
        .include_expired()
        .hide_expired()
        .send()
        .await
        .unwrap();
    assert_eq!(batch.items.len(), 1, "{:?}", batch.items);
    let mut read = db.transact_get();
    let (gone, live) = (
        read.get(Ticket::key("gone").unwrap()),
        read.get(Ticket::key("live").unwrap()),
    );
    let mut output = read.send().await.unwrap();
    assert_eq!(output.take(&gone).unwrap(), None);
    assert!(output.take(&live).unwrap().is_some());

    // Asked for, an expired item comes back as long as the engine has not deleted it yet.
    let included = db
        .get(Ticket::key("gone").unwrap())
        .include_expired()
        .send()
        .await;
    match included {
        Ok(found) => assert_eq!(found.id, "gone"),
        Err(error) => assert!(error.is_not_found(), "{error:?}"),
    }
    let engine = Engine::from_env().unwrap();
    if engine.deviates(Deviation::NoTtlDeletes) {
        // This engine never deletes expired items, so it still has it.
        let found = db.scan::<Ticket>().include_expired().all().await.unwrap();
        assert_eq!(found.len(), 3, "{engine}: {found:?}");
    }
    let params = db.scan::<Ticket>().include_expired().params().unwrap();
    assert!(!format!("{params:?}").contains("expires_at"), "{params:?}");
}

#[tokio::test]
async fn the_stream_gives_each_change_typed_with_both_images() {
    let db = table::<Streamed>().await;
    let first = ticket("t1", "blue", None);
    db.put(&first).send().await.unwrap();
    db.put(&Team {
        team: "blue".into(),
        name: "Blue team".into(),
    })
    .send()
    .await
    .unwrap();
    let closed = Ticket {
        open: false,
        ..first.clone()
    };
    db.update(Ticket::key("t1").unwrap())
        .set(Ticket::OPEN, false)
        .send()
        .await
        .unwrap();
    db.delete(Ticket::key("t1").unwrap()).send().await.unwrap();

    let mut reader = reader(&db, "sequence").await;
    let records = drain::<Item>(&mut reader).await;
    let changes: Vec<&Change<Item, NewAndOldImages>> =
        records.iter().map(|record| &record.change).collect();
    assert_eq!(
        changes,
        [
            &Change::Insert {
                new: Item::Ticket(first.clone())
            },
            &Change::Insert {
                new: Item::Team(Team {
                    team: "blue".into(),
                    name: "Blue team".into()
                })
            },
            &Change::Modify {
                old: Item::Ticket(first.clone()),
                new: Item::Ticket(closed.clone())
            },
            &Change::Remove {
                old: Item::Ticket(closed),
                expired: false
            },
        ]
    );
    assert_eq!(
        records[0].key,
        CollectionKey {
            entity: "Ticket",
            key: Ticket::key("t1").unwrap().text()
        }
    );
    // Sequence numbers grow within the shard.
    let numbers: Vec<u128> = records
        .iter()
        .map(|record| record.sequence_number.parse().unwrap())
        .collect();
    assert!(
        numbers.windows(2).all(|pair| pair[0] < pair[1]),
        "{numbers:?}"
    );
}

#[tokio::test]
async fn a_ttl_delete_is_a_remove_marked_expired() {
    if common::skips(Needs::TtlDeletion) {
        return;
    }
    let engine = Engine::from_env().unwrap();
    if engine.deviates(Deviation::NoTtlDeletes) {
        eprintln!(
            "{engine} never deletes expired items (Deviation::NoTtlDeletes): nothing to read"
        );
        return;
    }
    let db = table::<Streamed>().await;
    let gone = ticket("short-lived", "blue", Some(seconds_from_now(-10)));
    db.put(&gone).send().await.unwrap();
    let mut reader = reader(&db, "ttl").await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut changes = Vec::new();
    while Instant::now() < deadline {
        let page = reader.poll::<Ticket>().await.unwrap();
        reader.commit(&page).await.unwrap();
        changes.extend(page.into_records().into_iter().map(|r| r.unwrap().change));
        if changes.len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // DynamoDB names its service principal as the identity of a TTL delete; an engine that
    // writes it unreadably still deletes the item, as a REMOVE with the old image.
    let expired = !engine.deviates(Deviation::TtlIdentityUnreadable);
    assert_eq!(
        changes,
        [
            Change::Insert { new: gone.clone() },
            Change::Remove { old: gone, expired }
        ],
        "{engine}"
    );
}

/// The consumer's state: for each ticket, the last sequence number applied, and the open
/// tickets per team. Applying a record twice changes nothing.
#[derive(Default, Debug)]
struct OpenTickets {
    applied: HashMap<String, u128>,
    open: BTreeMap<String, i64>,
    duplicates: usize,
}

impl OpenTickets {
    fn apply(&mut self, record: &singletable::stream::Record<Ticket>) {
        let sequence: u128 = record.sequence_number.parse().unwrap();
        let id = record.key.partition().to_owned();
        if self.applied.get(&id).is_some_and(|last| *last >= sequence) {
            self.duplicates += 1;
            return;
        }
        self.applied.insert(id, sequence);
        let count = |ticket: &Ticket| i64::from(ticket.open);
        let (team, delta) = match &record.change {
            Change::Insert { new } => (new.team.clone(), count(new)),
            Change::Modify { old, new } => (new.team.clone(), count(new) - count(old)),
            Change::Remove { old, .. } => (old.team.clone(), -count(old)),
        };
        *self.open.entry(team).or_default() += delta;
    }
}

#[tokio::test]
async fn a_consumer_killed_before_its_commit_resumes_without_losing_or_doubling() {
    let db = table::<Streamed>().await;
    for id in 0..6 {
        let team = if id % 2 == 0 { "blue" } else { "red" };
        db.put(&ticket(&format!("t{id}"), team, None))
            .send()
            .await
            .unwrap();
    }
    let mut model = OpenTickets::default();
    {
        let mut first = reader(&db, "counter").await;
        let page = first.poll::<Ticket>().await.unwrap();
        for record in page.records() {
            model.apply(record.as_ref().unwrap());
        }
        first.commit(&page).await.unwrap();
    }
    // More writes, read by a consumer that dies after applying them but before its commit.
    for id in [0, 1, 2] {
        db.update(Ticket::key(format!("t{id}")).unwrap())
            .set(Ticket::OPEN, false)
            .send()
            .await
            .unwrap();
    }
    db.delete(Ticket::key("t5").unwrap()).send().await.unwrap();
    {
        let mut killed = reader(&db, "counter").await;
        let page = killed.poll::<Ticket>().await.unwrap();
        assert!(!page.is_empty());
        for record in page.records() {
            model.apply(record.as_ref().unwrap());
        }
        // Dropped here without a commit.
    }
    let mut resumed = reader(&db, "counter").await;
    loop {
        let page = resumed.poll::<Ticket>().await.unwrap();
        let caught_up = page.is_empty() && resumed.is_caught_up();
        for record in page.records() {
            model.apply(record.as_ref().unwrap());
        }
        resumed.commit(&page).await.unwrap();
        if caught_up {
            break;
        }
    }
    // t0, t2, t4 blue; t1, t3, t5 red; t0..t2 closed and t5 deleted.
    assert_eq!(
        model.open,
        BTreeMap::from([("blue".to_owned(), 1), ("red".to_owned(), 1)]),
        "{model:?}"
    );
    assert!(
        model.duplicates > 0,
        "the resumed consumer saw the uncommitted records again"
    );
    // A consumer of another name starts from the oldest record.
    let mut other = reader(&db, "audit").await;
    let all = drain::<Ticket>(&mut other).await;
    assert_eq!(all.len(), 6 + 3 + 1);
}

#[tokio::test]
async fn a_keys_only_stream_gives_typed_keys() {
    let db = table::<KeysTable>().await;
    db.put(&KeyedTicket { id: "k1".into() })
        .send()
        .await
        .unwrap();
    let client = singletable::local::streams_client().await.unwrap();
    let mut reader = db.admin().stream_reader("keys", client);
    let page = reader.poll::<KeyedTicket>().await.unwrap();
    let records = page.into_records();
    let record = records[0].as_ref().unwrap();
    assert_eq!(record.change, Change::Insert { new: () });
    assert_eq!(record.key.partition(), "TICKET#k1");
}

#[tokio::test]
async fn the_plan_enables_a_declared_stream_and_ttl_on_an_existing_table() {
    if common::skips(Needs::TableChange) {
        return;
    }
    let plain = table::<Plain>().await;
    let db = singletable::Db::<Streamed>::new(plain.client().clone())
        .with_table_name(plain.table_name());
    let plan = db.admin().table_migration(&[]).plan().await.unwrap();
    let actions: Vec<String> = plan.actions.iter().map(ToString::to_string).collect();
    assert_eq!(
        actions,
        [
            "turn on time to live for attribute expires_at",
            "turn on the stream (NEW_AND_OLD_IMAGES)"
        ],
        "{plan}"
    );
    db.admin().table_migration(&[]).send().await.unwrap();
    let again = db.admin().table_migration(&[]).plan().await.unwrap();
    assert!(again.is_up_to_date(), "{again}");
    let live = again.live.unwrap();
    assert_eq!(live.stream.as_deref(), Some("NEW_AND_OLD_IMAGES"));
    assert_eq!(
        live.ttl.map(|(attribute, _)| attribute).as_deref(),
        Some("expires_at")
    );
}

#[test]
fn a_lambda_event_decodes_into_typed_changes_and_reports_strangers_with_their_keys() {
    let text = std::fs::read_to_string("tests/fixtures/lambda_dynamodb_event.json").unwrap();
    let event: aws_lambda_events::event::dynamodb::Event = serde_json::from_str(&text).unwrap();
    let records: Vec<_> = singletable::stream::lambda::records::<Ticket>(event).collect();
    let expires = DateTime::from_timestamp(1_700_000_000, 0);
    let open = Ticket {
        id: "t1".into(),
        team: "blue".into(),
        open: true,
        expires_at: expires,
    };
    let closed = Ticket {
        open: false,
        ..open.clone()
    };
    let changes: Vec<_> = records[..3]
        .iter()
        .map(|record| &record.as_ref().unwrap().change)
        .collect();
    assert_eq!(
        changes,
        [
            &Change::Insert { new: open.clone() },
            &Change::Modify {
                old: open,
                new: closed.clone()
            },
            &Change::Remove {
                old: closed,
                expired: true
            },
        ]
    );
    match &records[3] {
        Err(StreamError::Decode {
            sequence_number,
            key,
            image,
            ..
        }) => {
            assert_eq!(sequence_number, "4421584500000000017450439094");
            assert_eq!(key.partition.1, "INVOICE#i9");
            assert_eq!(*image, "keys");
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_table_without_a_stream_is_a_typed_error_for_a_reader() {
    let plain = table::<Plain>().await;
    #[derive(Entity, Serialize, Deserialize)]
    #[dynamo(table = KeysTable, pk = "X#{id}", sk = "X")]
    struct Other {
        id: String,
    }
    let db = singletable::Db::<KeysTable>::new(plain.client().clone())
        .with_table_name(plain.table_name());
    let client = singletable::local::streams_client().await.unwrap();
    let mut reader = db.admin().stream_reader("none", client);
    let error = reader.poll::<Other>().await.err().unwrap();
    match error.as_stream_error() {
        Some(StreamError::NoStream { table }) => assert_eq!(table, plain.table_name()),
        other => panic!("expected NoStream, got {other:?}"),
    }
}

/// The Streams API's record of a TTL delete names DynamoDB's service principal (API reference,
/// `Identity`); built here as the SDK parses it, since dynoxide's cannot be read
/// (`Deviation::TtlIdentityUnreadable`) and moto writes none.
#[test]
fn a_streams_api_remove_by_the_dynamodb_service_principal_is_a_ttl_delete() {
    use aws_sdk_dynamodbstreams::types::{
        AttributeValue as StreamValue, Identity, OperationType, Record, StreamRecord,
    };
    use singletable::stream::{reader::raw, EventName};
    let remove = |identity: Option<Identity>| {
        Record::builder()
            .event_id("e1")
            .event_name(OperationType::Remove)
            .dynamodb(
                StreamRecord::builder()
                    .keys("PK", StreamValue::S("TICKET#t1".into()))
                    .sequence_number("42")
                    .build(),
            )
            .set_user_identity(identity)
            .build()
    };
    let identity = |principal: &str| {
        Some(
            Identity::builder()
                .r#type("Service")
                .principal_id(principal)
                .build(),
        )
    };
    let record = raw(remove(identity("dynamodb.amazonaws.com"))).unwrap();
    assert!(record.by_ttl);
    assert_eq!(record.event, EventName::Remove);
    assert_eq!(record.sequence_number, "42");
    assert_eq!(
        record.keys.get("PK"),
        Some(&aws_sdk_dynamodb::types::AttributeValue::S(
            "TICKET#t1".into()
        ))
    );
    assert!(!raw(remove(None)).unwrap().by_ttl);
    assert!(
        !raw(remove(identity("lambda.amazonaws.com")))
            .unwrap()
            .by_ttl
    );
}

/// Refusals for throughput (the Streams API's `LimitExceededException`, which it answers a
/// shard read by more readers than it allows, and `ThrottlingException`) and lost responses,
/// on `share` of the requests, with the SDK's retries off so that every one reaches the
/// library.
fn refused_or_lost(seed: u64, share: f64) -> FaultPlan {
    FaultPlan::new(seed, share)
        .with_kinds([
            Fault::before(FaultKind::LimitExceeded),
            Fault::before(FaultKind::Throttling),
            Fault::after(FaultKind::InternalServerError),
            Fault::after(FaultKind::ConnectionDropped),
        ])
        .without_sdk_retries()
}

/// A reader's reads go through the fault proxy: those of the Streams API, and the table's
/// (its description, the consumer's checkpoints). Each is sent again, with backoff, while it
/// is refused or its response is lost, and every change is delivered once, in order.
#[tokio::test]
async fn a_reader_rides_through_refused_and_lost_reads() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let db = table::<Streamed>().await;
    let ids: Vec<String> = (0..12).map(|n| format!("t{n:02}")).collect();
    for id in &ids {
        db.put(&ticket(id, "blue", None)).send().await.unwrap();
    }
    let (streams, stream_faults) = fault::streams_client(refused_or_lost(11, 0.4))
        .await
        .unwrap();
    let table_plan = refused_or_lost(12, 0.4).only_operations(["DescribeTable", "GetItem"]);
    let (client, table_faults) = fault::client(table_plan).await.unwrap();
    let faulty = singletable::Db::<Streamed>::new(client).with_table_name(db.table_name());

    let mut patient = faulty.admin().stream_reader("patient", streams);
    let delivered: Vec<String> = drain::<Ticket>(&mut patient)
        .await
        .into_iter()
        .map(|record| match record.change {
            Change::Insert { new } => new.id,
            other => panic!("only inserts were written, got {other:?}"),
        })
        .collect();
    assert_eq!(delivered, ids);
    assert!(stream_faults.report().injected_total() > 0);
    assert!(table_faults.report().injected_total() > 0);

    // The commits held: a reader of the same consumer, without faults, has nothing left.
    let mut resumed = reader(&db, "patient").await;
    assert!(drain::<Ticket>(&mut resumed).await.is_empty());
}

/// A read the Streams API keeps refusing ends the poll after the retry policy's attempts, as
/// a throttle the caller can tell (`Error::is_throttling`); the reader polls on afterwards.
#[tokio::test]
async fn a_read_refused_for_good_is_a_throttle_after_the_policys_attempts() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let db = table::<Streamed>().await;
    db.put(&ticket("t1", "blue", None)).send().await.unwrap();
    let plan = FaultPlan::new(13, 1.0)
        .with_kinds([Fault::before(FaultKind::LimitExceeded)])
        .only_operations(["GetRecords"])
        .without_sdk_retries();
    let (streams, faults) = fault::streams_client(plan).await.unwrap();
    let mut refused = db.admin().stream_reader("refused", streams);
    let error = refused.poll::<Ticket>().await.err().unwrap();
    assert!(error.is_throttling(), "{error:?}");
    assert_eq!(
        faults.report().injected_total(),
        u64::from(singletable::RetryPolicy::default().max_attempts)
    );
    faults.set_paused(true);
    let delivered = drain::<Ticket>(&mut refused).await;
    assert_eq!(delivered.len(), 1);
}

/// A record whose image names a user's entity is that entity's change, whatever its key: an
/// item at a sort key ending in `#LATEST` was left out as if it were an append's pointer,
/// because the key was consulted even where the image's entity attribute had answered.
#[tokio::test]
async fn an_entity_at_a_key_like_a_library_record_is_streamed() {
    let db = table::<Streamed>().await;
    let release = Release {
        doc: "d1".into(),
        version: 3,
    };
    db.put(&release).send().await.unwrap();
    let mut reader = reader(&db, "releases").await;
    let records = drain::<Release>(&mut reader).await;
    let changes: Vec<&Change<Release, NewAndOldImages>> =
        records.iter().map(|record| &record.change).collect();
    assert_eq!(changes, [&Change::Insert { new: release }]);
}
