//! Write-sharded partition keys (`{shard(id, N)}`) on a global index and on the table: each
//! item's key holds the shard its field decides, point reads and updates find it, and a
//! query of the logical partition reads every shard and merges them in sort key order, with
//! limits, full pages, counts and sealed cursors across shards; a sparse rule, a rekey and a
//! stream decode know the shard.

mod common;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Serialize};
use singletable::migrate::{Blocker, MigrationError, Note, PlanAction};
use singletable::op::query::{Cursor, CursorKey};
use singletable::stream::Change;
use singletable::testing::TestTable;
use singletable::{Db, Entity, Error, KeyPart, Table};
use std::collections::BTreeSet;

#[derive(Table)]
#[dynamo(
    name = "sharded",
    pk = "PK",
    sk = "SK",
    stream = "new_and_old_images",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
struct Desk;

#[derive(KeyPart, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Status {
    Open,
    Pending,
    Closed,
}

/// The seeds' ticket, its team's index spread over 4 partition keys; open tickets only.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Desk, pk = "TICKET#{id}", sk = "TICKET",
         gsi1pk = "TEAM#{team_id}#{shard(id, 4)}", gsi1sk = "STATUS#{status}#TICKET#{id}",
         gsi1_when = Ticket::is_open(status))]
struct Ticket {
    id: String,
    team_id: u32,
    status: Status,
    title: String,
}

impl Ticket {
    fn is_open(status: &Status) -> bool {
        *status != Status::Closed
    }
}

/// A busy feed whose table partition is spread over 8 keys, in time order.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Desk, pk = "FEED#{feed}#{shard(id, 8)}", sk = "AT#{at}#{id}")]
struct Event {
    feed: String,
    id: String,
    at: u32,
    body: String,
}

/// A reaction to an event, kept in its event's shard of the feed (its shard is the event id's),
/// right after the event in sort key order.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Desk, pk = "FEED#{feed}#{shard(event, 8)}", sk = "AT#{at}#{event}#R#{who}")]
struct Reaction {
    feed: String,
    event: String,
    at: u32,
    who: String,
}

/// A feed's events with their reactions: the item collection of its partition's shards.
#[derive(singletable::Collection, Debug, PartialEq)]
enum FeedItem {
    Event(Event),
    Reaction(Reaction),
}

/// An organisation's members, its table partition spread over 4 keys, each email unique.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Desk, pk = "ORG#{org}#{shard(id, 4)}", sk = "MEMBER#{id}")]
struct Member {
    org: u32,
    id: String,
    #[dynamo(unique)]
    email: String,
}

fn ticket(number: u32) -> Ticket {
    let status = match number % 3 {
        0 => Status::Open,
        1 => Status::Pending,
        _ => Status::Closed,
    };
    Ticket {
        id: format!("t-{number:03}"),
        team_id: 7,
        status,
        title: format!("ticket {number}"),
    }
}

fn event(number: u32) -> Event {
    Event {
        feed: "busy".into(),
        id: format!("e{number}"),
        // Several events share an instant, in different shards.
        at: 1_000 + number / 3,
        body: format!("event {number}"),
    }
}

async fn seeded() -> TestTable<Desk> {
    let db = singletable::testing::table::<Desk>().await.unwrap();
    let mut batch = db.batch_write();
    for number in 0..60 {
        batch = batch.put(&ticket(number)).put(&event(number));
    }
    assert!(batch.send().await.unwrap().unprocessed.is_empty());
    db
}

/// The open tickets of team 7 in index order: status, then id.
fn open_tickets(descending: bool) -> Vec<String> {
    let mut open: Vec<Ticket> = (0..60)
        .map(ticket)
        .filter(|t| Ticket::is_open(&t.status))
        .collect();
    open.sort_by(|a, b| {
        let key = |t: &Ticket| (format!("{:?}", t.status).to_lowercase(), t.id.clone());
        key(a).cmp(&key(b))
    });
    let mut ids: Vec<String> = open.into_iter().map(|t| t.id).collect();
    if descending {
        ids.reverse();
    }
    ids
}

/// Every event in time order, ties by id (they are in different shards, whose order the merge
/// keeps; compared as sets within one instant).
fn events_by_time(descending: bool) -> Vec<(u32, BTreeSet<String>)> {
    let mut instants: Vec<(u32, BTreeSet<String>)> = Vec::new();
    for number in 0..60 {
        let event = event(number);
        match instants.iter_mut().find(|(at, _)| *at == event.at) {
            Some((_, ids)) => {
                ids.insert(event.id);
            }
            None => instants.push((event.at, BTreeSet::from([event.id]))),
        }
    }
    instants.sort_by_key(|(at, _)| *at);
    if descending {
        instants.reverse();
    }
    instants
}

fn by_instant(events: &[Event]) -> Vec<(u32, BTreeSet<String>)> {
    let mut instants: Vec<(u32, BTreeSet<String>)> = Vec::new();
    for event in events {
        match instants.last_mut() {
            Some((at, ids)) if *at == event.at => {
                ids.insert(event.id.clone());
            }
            _ => instants.push((event.at, BTreeSet::from([event.id.clone()]))),
        }
    }
    instants
}

#[tokio::test]
async fn each_item_is_written_to_the_shard_its_field_decides_and_read_back_by_key() {
    let db = seeded().await;
    let raw = common::raw_items(&db).await;
    let index_keys: BTreeSet<String> = raw
        .iter()
        .filter_map(|item| item.get("GSI1PK")?.as_s().ok().cloned())
        .collect();
    // Open tickets of team 7 reach all four keys, and only those four.
    let shards: BTreeSet<String> = (0..4)
        .map(|shard| format!("TEAM#0000000007#{shard}"))
        .collect();
    assert_eq!(index_keys, shards);
    // SHA-256 of the id's key text, modulo the count: Python's
    // `int.from_bytes(hashlib.sha256(b"t-8842").digest()[:8], "big") % 4` is 2.
    let pinned = Ticket {
        id: "t-8842".into(),
        ..ticket(0)
    };
    db.put(&pinned).send().await.unwrap();
    let raw = common::raw_items(&db).await;
    let stored = raw
        .iter()
        .find(|item| {
            item.get("PK")
                .and_then(|pk| pk.as_s().ok())
                .map(String::as_str)
                == Some("TICKET#t-8842")
        })
        .unwrap();
    assert_eq!(stored["GSI1PK"].as_s().unwrap(), "TEAM#0000000007#2");
    let events: BTreeSet<String> = raw
        .iter()
        .filter_map(|item| item.get("PK")?.as_s().ok().cloned())
        .filter(|pk| pk.starts_with("FEED#"))
        .collect();
    assert_eq!(
        events.len(),
        8,
        "60 events reach all eight feed keys: {events:?}"
    );
    // Python: `... sha256(b"e1") ... % 8` is 2.
    assert!(raw.iter().any(|item| {
        item.get("PK")
            .and_then(|pk| pk.as_s().ok())
            .map(String::as_str)
            == Some("FEED#busy#2")
            && item
                .get("SK")
                .and_then(|sk| sk.as_s().ok())
                .map(String::as_str)
                == Some("AT#0000001000#e1")
    }));

    // A point read renders the shard from the key's fields.
    let read = db
        .get(Event::key("busy", "e1", 1_000).unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(read, event(1));
    // An update that changes the status rewrites the index key in the same shard; one that
    // closes the ticket takes it out of the sparse index.
    let t = ticket(3);
    let updated = db
        .update(t.primary_key().unwrap())
        .set(Ticket::STATUS, Status::Pending)
        .given(Ticket::TEAM_ID, 7)
        .send()
        .await
        .unwrap();
    assert_eq!(updated.status, Status::Pending);
    let pending: Vec<String> = db
        .query(Ticket::gsi1(7u32))
        .sort(Ticket::STATUS, Status::Pending)
        .all()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.id)
        .collect();
    assert!(pending.contains(&t.id), "{pending:?}");
    db.update(t.primary_key().unwrap())
        .set(Ticket::STATUS, Status::Closed)
        .given(Ticket::TEAM_ID, 7)
        .send()
        .await
        .unwrap();
    let open = db.query(Ticket::gsi1(7u32)).count().await.unwrap();
    assert_eq!(open, open_tickets(false).len() as u64);
    // Moving a ticket to another team moves its index entry to that team's shard.
    db.update(ticket(0).primary_key().unwrap())
        .set(Ticket::TEAM_ID, 9)
        .given(Ticket::STATUS, ticket(0).status)
        .send()
        .await
        .unwrap();
    let moved = db.query(Ticket::gsi1(9u32)).all().await.unwrap();
    assert_eq!(
        moved.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        ["t-000"]
    );
}

#[tokio::test]
async fn a_sharded_index_query_merges_every_shard_in_both_directions_page_by_page() {
    let db = seeded().await;
    if common::skips(common::Needs::IndexReadAfterWrite) {
        return;
    }
    for descending in [false, true] {
        let expected = open_tickets(descending);
        let mut query = db.query(Ticket::gsi1(7u32));
        if descending {
            query = query.descending();
        }
        let all: Vec<String> = query
            .all()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.id)
            .collect();
        assert_eq!(all, expected, "descending: {descending}");

        // Pages of 7, each a cursor's hop: every ticket once, in order.
        let mut query = db.query(Ticket::gsi1(7u32)).limit(7);
        if descending {
            query = query.descending();
        }
        let mut paged = Vec::new();
        let mut cursor: Option<Cursor> = None;
        for _ in 0..40 {
            let page = query.page(cursor.as_ref()).await.unwrap();
            assert!(page.items.len() <= 7);
            paged.extend(page.items.into_iter().map(|t| t.id));
            match page.cursor {
                // Through its text, as a web client hands it back.
                Some(next) => cursor = Some(Cursor::decode(&next.encode()).unwrap()),
                None => break,
            }
        }
        assert_eq!(paged, expected, "descending: {descending}");
    }
    // A filter leaves shards' pages short; a full page still holds what it asks for.
    let query = db
        .query(Ticket::gsi1(7u32))
        .filter(Ticket::TITLE.begins_with("ticket 1"))
        .limit(2);
    let full = query.full_page(5, None).await.unwrap();
    let expected: Vec<String> = open_tickets(false)
        .into_iter()
        .filter(|id| {
            ticket(id[2..].parse().unwrap())
                .title
                .starts_with("ticket 1")
        })
        .collect();
    assert_eq!(
        full.items.iter().map(|t| t.id.clone()).collect::<Vec<_>>(),
        expected[..5]
    );
    assert_eq!(query.count().await.unwrap(), expected.len() as u64);
    // A range on the sort key applies in every shard.
    let pending = db
        .query(Ticket::gsi1(7u32))
        .sort(Ticket::STATUS, Status::Pending)
        .count()
        .await
        .unwrap();
    assert_eq!(pending, 20);
}

#[tokio::test]
async fn a_sharded_table_partition_pages_in_time_order_with_sealed_cursors() {
    let table = seeded().await;
    let db: Db<Desk> = Db::clone(&table).with_cursor_key(CursorKey::new(&[3u8; 32]).unwrap());
    for descending in [false, true] {
        let mut query = db.query(Event::partition("busy")).limit(4);
        if descending {
            query = query.descending();
        }
        let mut events = Vec::new();
        let mut cursor: Option<Cursor> = None;
        for _ in 0..40 {
            let page = query.page(cursor.as_ref()).await.unwrap();
            events.extend(page.items);
            match page.cursor {
                Some(next) => {
                    let text = next.encode();
                    // Sealed: no shard's key is readable in it.
                    let bytes = URL_SAFE_NO_PAD.decode(&text).unwrap();
                    assert!(!String::from_utf8_lossy(&bytes).contains("FEED#"), "{text}");
                    cursor = Some(Cursor::decode(&text).unwrap());
                }
                None => break,
            }
        }
        assert_eq!(by_instant(&events), events_by_time(descending));
        assert_eq!(events.len(), 60);
    }
    assert_eq!(
        db.query(Event::partition("busy")).count().await.unwrap(),
        60
    );
    let range = db
        .query(Event::partition("busy"))
        .between(Event::AT, 1_005, 1_009)
        .all()
        .await
        .unwrap();
    assert_eq!(range.len(), 15);

    // A cursor of the merged query resumes no other query.
    let page = db
        .query(Event::partition("busy"))
        .limit(3)
        .page(None)
        .await
        .unwrap();
    let cursor = page.cursor.unwrap();
    let other = db
        .query(Event::partition("quiet"))
        .limit(3)
        .page(Some(&cursor))
        .await;
    assert!(matches!(other, Err(Error::Cursor(_))), "{other:?}");
    let plain = table
        .query(Event::partition("busy"))
        .limit(3)
        .page(None)
        .await
        .unwrap();
    let unsealed = Cursor::decode(&plain.cursor.unwrap().encode()).unwrap();
    let refused = table
        .query(Ticket::partition("t-001"))
        .page(Some(&unsealed))
        .await;
    assert!(matches!(refused, Err(Error::Cursor(_))), "{refused:?}");
}

#[tokio::test]
async fn a_rekey_moves_an_item_to_its_new_shard_and_the_stream_decodes_it() {
    let db = seeded().await;
    let from = event(1);
    let to = Event {
        id: "e1-moved".into(),
        ..from.clone()
    };
    db.rekey(&from, &to).send().await.unwrap();
    let gone = db.get(from.primary_key().unwrap()).send().await;
    assert!(matches!(gone, Err(Error::NotFound { .. })), "{gone:?}");
    assert_eq!(db.get(to.primary_key().unwrap()).send().await.unwrap(), to);
    let ids: BTreeSet<String> = db
        .query(Event::partition("busy"))
        .all()
        .await
        .unwrap()
        .into_iter()
        .map(|event| event.id)
        .collect();
    assert!(ids.contains("e1-moved") && !ids.contains("e1"));
    assert_eq!(ids.len(), 60);

    let client = singletable::local::streams_client().await.unwrap();
    let mut reader = db.admin().stream_reader("sharded", client);
    let mut changes = Vec::new();
    loop {
        let page = reader.poll::<Event>().await.unwrap();
        let caught_up = page.is_empty() && reader.is_caught_up();
        reader.commit(&page).await.unwrap();
        // The tickets' records are another entity's, reported as errors.
        changes.extend(page.into_records().into_iter().filter_map(Result::ok));
        if caught_up {
            break;
        }
    }
    let moved = changes
        .iter()
        .find(|record| matches!(&record.change, Change::Insert { new } if new.id == "e1-moved"))
        .expect("the rekeyed event's insert");
    assert_eq!(moved.key.partition(), to.primary_key().unwrap().partition());
    assert!(changes
        .iter()
        .any(|record| matches!(&record.change, Change::Remove { old, .. } if old.id == "e1")));
}

/// The code before a change of the shard count: a board's organisation index over 2 keys.
mod before {
    use serde::{Deserialize, Serialize};
    use singletable::{Entity, Table};

    #[derive(Table)]
    #[dynamo(
        name = "sharded",
        pk = "PK",
        sk = "SK",
        gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
    )]
    pub struct Desk;

    #[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
    #[dynamo(table = Desk, name = "Board", pk = "BOARD#{id}", sk = "BOARD",
             gsi1pk = "ORG#{org}#{shard(id, 2)}", gsi1sk = "BOARD#{id}")]
    pub struct Board {
        pub org: u32,
        pub id: String,
        pub title: String,
    }
}

/// The code after: the same index over 5 keys, schema version 2.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Desk, name = "Board", schema_version = 2, pk = "BOARD#{id}", sk = "BOARD",
         gsi1pk = "ORG#{org}#{shard(id, 5)}", gsi1sk = "BOARD#{id}")]
struct Board {
    org: u32,
    id: String,
    title: String,
}

/// The shard count changed without a new schema version: what the plan must refuse.
mod in_place {
    use serde::{Deserialize, Serialize};
    use singletable::Entity;

    #[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
    #[dynamo(table = super::before::Desk, name = "Board", pk = "BOARD#{id}", sk = "BOARD",
             gsi1pk = "ORG#{org}#{shard(id, 5)}", gsi1sk = "BOARD#{id}")]
    pub struct Board {
        pub org: u32,
        pub id: String,
        pub title: String,
    }
}

#[tokio::test]
async fn changing_the_shard_count_is_a_migration_a_sweep_completes() {
    let table = singletable::testing::table::<Desk>().await.unwrap();
    let old = Db::<before::Desk>::new(table.client().clone()).with_table_name(table.table_name());
    // The old code's deployment applied its design: the plan recorded its keys.
    let applied = (old.admin().table_migration(&[before::Board::SCHEMA]))
        .send()
        .await
        .unwrap();
    let recorded = PlanAction::RecordKeys {
        entity: "Board",
        schema_version: 1,
    };
    assert_eq!(applied.plan.actions, [recorded], "{}", applied.plan);
    // The same version with five shards is refused: its items would be where no read looks.
    let in_place = old.admin().table_migration(&[in_place::Board::SCHEMA]);
    let plan = in_place.plan().await.unwrap();
    let shards_changed = |changes: &[String]| {
        changes.len() == 1 && changes[0].starts_with("the partition key of index GSI1 was `ORG#{org:10}#{shard(id, 2)}`, now `ORG#{org:10}#{shard(id, 5)}` (2 shards, now 5)")
    };
    assert!(
        matches!(&plan.blockers[..], [Blocker::KeysChanged { entity: "Board", schema_version: 1, changes }] if shards_changed(changes)),
        "{plan}"
    );
    assert!(
        plan.to_string().contains("declare schema_version = 2"),
        "{plan}"
    );
    let refused = in_place.send().await;
    assert!(
        matches!(
            refused,
            Err(Error::Migration(MigrationError::Blocked { .. }))
        ),
        "{refused:?}"
    );
    let mut batch = old.batch_write();
    for number in 0..40 {
        batch = batch.put(&before::Board {
            org: 1,
            id: format!("b{number:02}"),
            title: format!("board {number}"),
        });
    }
    assert!(batch.send().await.unwrap().unprocessed.is_empty());
    let index_keys = |raw: &[singletable::Item]| -> BTreeSet<String> {
        raw.iter()
            .filter_map(|item| item.get("GSI1PK")?.as_s().ok().cloned())
            .collect()
    };
    let written = index_keys(&common::raw_items(&table).await);
    assert_eq!(
        written,
        BTreeSet::from(["ORG#0000000001#0".into(), "ORG#0000000001#1".into()])
    );
    // The new code sees every old board as behind its schema version, and its plan says the
    // keys changed since version 1.
    let coverage = table.admin().coverage(Board::SCHEMA).send().await.unwrap();
    assert_eq!(coverage.behind, 40, "{coverage}");
    let migration = || table.admin().table_migration(&[Board::SCHEMA]);
    let keys_changed = |plan: &singletable::migrate::Plan| {
        plan.notes.iter().any(|note| {
            matches!(note, Note::KeysChanged { entity: "Board", recorded_version: 1, schema_version: 2, changes } if shards_changed(changes))
        })
    };
    let applied = migration().send().await.unwrap().plan;
    assert!(
        applied.blockers.is_empty() && keys_changed(&applied),
        "{applied}"
    );
    let recorded = PlanAction::RecordKeys {
        entity: "Board",
        schema_version: 2,
    };
    assert_eq!(applied.actions, [recorded], "{applied}");
    let plan = migration().plan().await.unwrap();
    assert!(plan.actions.is_empty() && keys_changed(&plan), "{plan}");

    let checkpoint = std::env::temp_dir().join(format!("{}.sweep.json", table.table_name()));
    let sweep = table.admin().sweep::<Board>().checkpoint(&checkpoint);
    let counts = sweep.send().await.unwrap().counts;
    assert_eq!(counts.backfilled, 40, "{counts:?}");
    let moved = index_keys(&common::raw_items(&table).await);
    let five: BTreeSet<String> = (0..5)
        .map(|shard| format!("ORG#0000000001#{shard}"))
        .collect();
    assert_eq!(
        moved, five,
        "every board's index entry in one of the five new shards"
    );
    let boards: Vec<String> = table
        .query(Board::gsi1(1u32))
        .all()
        .await
        .unwrap()
        .into_iter()
        .map(|board| board.id)
        .collect();
    let expected: Vec<String> = (0..40).map(|number| format!("b{number:02}")).collect();
    assert_eq!(boards, expected);
    let coverage = (table.admin().coverage(Board::SCHEMA))
        .checkpoint(&checkpoint)
        .send()
        .await
        .unwrap();
    assert!(coverage.is_done(), "{coverage}");
    let _ = std::fs::remove_file(&checkpoint);
    // Once the migration is marked complete, the plan has nothing more to say.
    let marker = table.admin().migration_marker(Board::SCHEMA);
    marker.mark_complete(&coverage).await.unwrap();
    let plan = migration().plan().await.unwrap();
    assert!(!keys_changed(&plan) && plan.is_up_to_date(), "{plan}");
}

#[tokio::test]
async fn unique_values_hold_across_the_shards_of_a_partition() {
    let db = singletable::testing::table::<Desk>().await.unwrap();
    let member = |id: &str, email: &str| Member {
        org: 1,
        id: id.into(),
        email: email.into(),
    };
    for number in 0..12 {
        let id = format!("m{number:02}");
        db.put(&member(&id, &format!("{id}@example.com")))
            .send()
            .await
            .unwrap();
    }
    // Another member, in whichever shard, cannot take a taken email.
    let taken = db.put(&member("m99", "m03@example.com")).send().await;
    assert!(matches!(taken, Err(Error::Unique { .. })), "{taken:?}");
    // A lookup by the value finds its owner, whose key holds its shard.
    let owner = db
        .get_by_unique(Member::EMAIL, "m03@example.com")
        .await
        .unwrap();
    assert_eq!(owner.id, "m03");
    // An update moves the value; the old one is free for a member of another shard.
    db.update(Member::key(1u32, "m03").unwrap())
        .set(Member::EMAIL, "new@example.com")
        .send()
        .await
        .unwrap();
    db.put(&member("m99", "m03@example.com"))
        .send()
        .await
        .unwrap();
    let members = db.query(Member::partition(1u32)).all().await.unwrap();
    assert_eq!(members.len(), 13);
    assert!(
        members.windows(2).all(|pair| pair[0].id < pair[1].id),
        "merged in id order"
    );
}

/// The item collection of a sharded partition is read as one: every shard queried, events and
/// their reactions merged in sort key order, page by page through cursors, either way.
#[tokio::test]
async fn a_collection_of_a_sharded_partition_is_read_merged_across_its_shards() {
    let db = singletable::testing::table::<Desk>().await.unwrap();
    let mut expected = Vec::new();
    for number in 0..12u32 {
        let event = Event {
            feed: "busy".into(),
            id: format!("e{number:02}"),
            at: 2_000 + number,
            body: format!("event {number}"),
        };
        db.put(&event).send().await.unwrap();
        expected.push(format!("event e{number:02}"));
        for who in ["ana", "bo"].iter().take(number as usize % 3) {
            let reaction = Reaction {
                feed: "busy".into(),
                event: event.id.clone(),
                at: event.at,
                who: (*who).into(),
            };
            db.put(&reaction).send().await.unwrap();
            expected.push(format!("reaction e{number:02} {who}"));
        }
    }
    let named = |item: &FeedItem| match item {
        FeedItem::Event(event) => format!("event {}", event.id),
        FeedItem::Reaction(reaction) => format!("reaction {} {}", reaction.event, reaction.who),
    };
    let all: Vec<String> = (db.query(Event::partition("busy")))
        .collection::<FeedItem>()
        .all()
        .await
        .unwrap()
        .iter()
        .map(named)
        .collect();
    assert_eq!(all, expected);
    // Page by page, newest first, three at a time through the cursor's text.
    let query = (db.query(Event::partition("busy")))
        .collection::<FeedItem>()
        .descending()
        .limit(3);
    let mut newest_first = Vec::new();
    let mut cursor: Option<Cursor> = None;
    for _ in 0..40 {
        let page = query.page(cursor.as_ref()).await.unwrap();
        assert!(page.errors.is_empty(), "{:?}", page.errors);
        assert!(page.items.len() <= 3);
        newest_first.extend(page.items.iter().map(named));
        match page.cursor {
            Some(next) => cursor = Some(Cursor::decode(&next.encode()).unwrap()),
            None => break,
        }
    }
    expected.reverse();
    assert_eq!(newest_first, expected);
}
