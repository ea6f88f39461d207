//! Lean indexes: a `KEYS_ONLY` and an `INCLUDE` index created as declared, their queries
//! typed by what they hold, whole items read back by key in the index's order, and a changed
//! projection refused by the migration plan.

mod common;
use common::Needs;

use serde::{Deserialize, Serialize};
use singletable::migrate::Blocker;
use singletable::op::query::IndexEntry;
use singletable::testing::TestTable;
use singletable::{Db, Entity, Error, Projection, Table};

#[derive(Table)]
#[dynamo(name = "lean", pk = "PK", sk = "SK",
         gsi1(name = "ByTeam", pk = "GSI1PK", sk = "GSI1SK", projection = "keys_only"),
         gsi2(name = "ByStatus", pk = "GSI2PK", sk = "GSI2SK", projection = ["title", "status"]))]
struct Desk;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Desk, pk = "TICKET#{id}", sk = "TICKET",
         gsi1pk = "TEAM#{team}", gsi1sk = "TICKET#{id}",
         gsi2pk = "STATUS#{status}", gsi2sk = "TICKET#{id}")]
struct Ticket {
    id: String,
    team: u32,
    status: String,
    title: String,
    body: String,
}

/// Shares the team's partition of the keys-only index, where no entity attribute says
/// whose an entry is: its keys do.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Desk, pk = "TEAM#{team}", sk = "TEAM", gsi1pk = "TEAM#{team}", gsi1sk = "TEAM")]
struct Team {
    team: u32,
    name: String,
}

#[derive(Projection, Deserialize, Debug, PartialEq)]
#[dynamo(entity = Ticket, index = gsi2)]
struct TicketCard {
    title: String,
    status: String,
}

/// The same ticket, reading the same table through an index that projects everything.
#[derive(Table)]
#[dynamo(name = "lean", pk = "PK", sk = "SK",
         gsi1(name = "ByTeam", pk = "GSI1PK", sk = "GSI1SK"),
         gsi2(name = "ByStatus", pk = "GSI2PK", sk = "GSI2SK", projection = ["title", "status"]))]
struct DeskWithAll;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = DeskWithAll, pk = "TICKET#{id}", sk = "TICKET",
         gsi1pk = "TEAM#{team}", gsi1sk = "TICKET#{id}",
         gsi2pk = "STATUS#{status}", gsi2sk = "TICKET#{id}")]
struct AllTicket {
    id: String,
    team: u32,
    status: String,
    title: String,
    body: String,
}

fn ticket(id: u32, team: u32, status: &str) -> Ticket {
    Ticket {
        id: format!("{id:03}"),
        team,
        status: status.into(),
        title: format!("ticket {id}"),
        body: "x".repeat(3000),
    }
}

async fn seeded() -> TestTable<Desk> {
    let db = singletable::testing::table::<Desk>().await.unwrap();
    for id in 0..12 {
        let status = if id % 3 == 0 { "closed" } else { "open" };
        db.put(&ticket(id, 7, status)).send().await.unwrap();
    }
    db.put(&ticket(50, 8, "open")).send().await.unwrap();
    db.put(&Team {
        team: 7,
        name: "seven".into(),
    })
    .send()
    .await
    .unwrap();
    db
}

#[test]
fn create_table_declares_each_index_projection() {
    let db: Db<Desk> = Db::new(aws_sdk_dynamodb::Client::from_conf(
        aws_sdk_dynamodb::Config::builder()
            .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
            .build(),
    ));
    let request = db.admin().create_table().params().unwrap();
    let indexes = request.body["GlobalSecondaryIndexes"].as_array().unwrap();
    let projection = |name: &str| {
        indexes
            .iter()
            .find(|index| index["IndexName"] == name)
            .map(|index| index["Projection"].clone())
            .unwrap()
    };
    assert_eq!(
        projection("ByTeam"),
        serde_json::json!({"ProjectionType": "KEYS_ONLY"})
    );
    // The entity attribute goes along, so reads still tell entities apart.
    assert_eq!(
        projection("ByStatus"),
        serde_json::json!({"ProjectionType": "INCLUDE", "NonKeyAttributes": ["title", "status", "_type"]})
    );
}

#[tokio::test]
async fn the_engine_creates_the_declared_projections() {
    let db = seeded().await;
    let described = db
        .client()
        .describe_table()
        .table_name(db.table_name())
        .send()
        .await
        .unwrap();
    let table = described.table().unwrap();
    for index in table.global_secondary_indexes() {
        let projection = index.projection().unwrap();
        match index.index_name().unwrap() {
            "ByTeam" => assert_eq!(projection.projection_type().unwrap().as_str(), "KEYS_ONLY"),
            "ByStatus" => {
                assert_eq!(projection.projection_type().unwrap().as_str(), "INCLUDE");
                let mut attributes = projection.non_key_attributes().to_vec();
                attributes.sort();
                assert_eq!(attributes, ["_type", "status", "title"]);
            }
            other => panic!("unexpected index {other}"),
        }
    }
    // The plan sees the table as declared: nothing to change, only the entities' keys to
    // record.
    let plan = db
        .admin()
        .table_migration(&[Ticket::SCHEMA, Team::SCHEMA])
        .plan()
        .await
        .unwrap();
    let records = (plan.actions.iter())
        .all(|action| matches!(action, singletable::migrate::PlanAction::RecordKeys { .. }));
    assert!(records && plan.blockers.is_empty(), "{plan}");
}

#[tokio::test]
async fn a_keys_only_query_returns_this_entity_s_keys_in_index_order() {
    if common::skips(Needs::IndexReadAfterWrite) {
        return;
    }
    let db = seeded().await;
    let entries: Vec<IndexEntry<Ticket>> = db.query(Ticket::gsi1(7)).all().await.unwrap();
    let ids: Vec<String> = entries
        .iter()
        .map(|entry| entry.key.partition().to_owned())
        .collect();
    let expected: Vec<String> = (0..12).map(|id| format!("TICKET#{id:03}")).collect();
    // The team's own entry (TEAM#7 / TEAM) shares the partition, and is left out by its key.
    assert_eq!(ids, expected);
    assert_eq!(db.query(Ticket::gsi1(7)).count().await.unwrap(), 12);
    let newest_first: Vec<IndexEntry<Ticket>> = db
        .query(Ticket::gsi1(7))
        .descending()
        .limit(5)
        .page(None)
        .await
        .unwrap()
        .items;
    assert_eq!(newest_first[0].key.partition(), "TICKET#011");
    // No entity filter is sent: the index does not hold the entity attribute.
    let request = db.query(Ticket::gsi1(7)).params().unwrap();
    assert!(request.body.get("FilterExpression").is_none(), "{request}");
}

#[tokio::test]
async fn hydration_reads_whole_items_in_the_index_order() {
    if common::skips(Needs::IndexReadAfterWrite) {
        return;
    }
    let db = seeded().await;
    let hydrated = db
        .query(Ticket::gsi1(7))
        .descending()
        .hydrate()
        .all()
        .await
        .unwrap();
    assert!(hydrated.missing.is_empty() && hydrated.errors.is_empty());
    let ids: Vec<&str> = hydrated.items.iter().map(|t| t.id.as_str()).collect();
    let expected: Vec<String> = (0..12).rev().map(|id| format!("{id:03}")).collect();
    assert_eq!(ids, expected);
    assert_eq!(hydrated.items[0], ticket(11, 7, "open"));
    // Page by page, 5 entries at a time: each page hydrated on its own.
    let query = db.query(Ticket::gsi1(7)).limit(5).hydrate().consistent();
    let first = query.page(None).await.unwrap();
    assert_eq!(first.items.len(), 5);
    let second = query.page(first.cursor.as_ref()).await.unwrap();
    assert_eq!(second.items[0].id, "005");
}

#[tokio::test]
async fn an_item_deleted_after_the_index_read_is_reported_missing() {
    if common::skips(Needs::IndexReadAfterWrite) {
        return;
    }
    let db = seeded().await;
    let query = db.query(Ticket::gsi1(7)).hydrate();
    let entries: Vec<IndexEntry<Ticket>> = db.query(Ticket::gsi1(7)).all().await.unwrap();
    let gone = entries[4].key.clone();
    db.delete(gone.clone()).send().await.unwrap();
    let hydrated = query.entries(entries).await.unwrap();
    assert_eq!(hydrated.missing, [gone]);
    assert_eq!(hydrated.items.len(), 11);
    assert!(hydrated.items.iter().all(|ticket| ticket.id != "004"));
    // The rest keep their order.
    assert_eq!(hydrated.items[4].id, "005");
}

/// An item moved to another partition of the index after the index was read (as a lagging
/// index reads it, or between a page and its hydration) is not the query's any more: it is
/// reported as moved, with its item as it is now, never listed as the partition's.
#[tokio::test]
async fn an_item_moved_after_the_index_read_is_reported_moved() {
    if common::skips(Needs::IndexReadAfterWrite) {
        return;
    }
    let db = seeded().await;
    let query = db.query(Ticket::gsi1(7)).hydrate();
    let entries: Vec<IndexEntry<Ticket>> = db.query(Ticket::gsi1(7)).all().await.unwrap();
    let moved = ticket(4, 9, "open");
    db.put(&moved).send().await.unwrap();
    let hydrated = query.entries(entries).await.unwrap();
    assert_eq!(hydrated.moved, [moved]);
    assert!(hydrated.missing.is_empty());
    assert_eq!(hydrated.items.len(), 11);
    assert!(hydrated.items.iter().all(|ticket| ticket.team == 7));
}

#[tokio::test]
async fn an_include_index_reads_its_projection_typed() {
    if common::skips(Needs::IndexReadAfterWrite) {
        return;
    }
    let db = seeded().await;
    let cards: Vec<IndexEntry<Ticket, TicketCard>> = db
        .query(Ticket::gsi2("open".to_owned()))
        .select::<TicketCard>()
        .all()
        .await
        .unwrap();
    assert_eq!(cards.len(), 9);
    assert_eq!(
        cards[0].value,
        TicketCard {
            title: "ticket 1".into(),
            status: "open".into()
        }
    );
    assert_eq!(cards[0].key.partition(), "TICKET#001");
    let request = db
        .query(Ticket::gsi2("open".to_owned()))
        .select::<TicketCard>()
        .params()
        .unwrap();
    assert_eq!(request.body["ProjectionExpression"], "#n2, #n3, #n4, #n5");
    // A filter on an attribute the index lacks would drop every item: refused.
    let refused = db
        .query(Ticket::gsi2("open".to_owned()))
        .filter(Ticket::BODY.eq("x"))
        .params()
        .unwrap_err();
    assert!(
        matches!(&refused, Error::NotProjected { .. }) && refused.to_string().contains("`body`"),
        "{refused}"
    );
    // One it holds is sent.
    let titled = db
        .query(Ticket::gsi2("open".to_owned()))
        .filter(Ticket::TITLE.eq("ticket 2"))
        .hydrate()
        .all()
        .await
        .unwrap();
    assert_eq!(titled.items, [ticket(2, 7, "open")]);
}

#[tokio::test]
async fn explain_compares_the_lean_index_with_all() {
    let db = seeded().await;
    let sample = ticket(1, 7, "open");
    let cost = db
        .query(Ticket::gsi1(7))
        .hydrate()
        .explain(&sample, 100)
        .unwrap();
    // The item is 3,144 bytes (its 3,000-byte body and the rest); its keys-only entry 57
    // (the table's and the index's keys). Per write of the item, an ALL index writes 4 units,
    // the keys-only one 1. Per query of 100: ALL reads 314,400 bytes, 77 units of 4 KB at
    // half cost (eventually consistent): 38.5; keys-only reads 5,700 bytes (2 units: 1),
    // then each item on its own, one unit each at half cost: 50. So the lean index saves on
    // every write and costs more on every hydrated read: the trade `explain` shows.
    assert_eq!(cost.all.write_units, 4.0);
    assert_eq!(cost.lean.write_units, 1.0);
    assert_eq!(cost.all.read_units, 38.5);
    assert_eq!(cost.lean.read_units, 1.0 + 50.0);
    let shown = cost.to_string();
    assert!(shown.contains("KEYS_ONLY index: 100 entries"), "{shown}");
}

#[tokio::test]
async fn a_changed_projection_blocks_the_plan() {
    let db = seeded().await;
    // The code now says ByTeam projects ALL; the live index projects KEYS_ONLY.
    let changed = Db::<DeskWithAll>::new(db.client().clone()).with_table_name(db.table_name());
    let plan = changed
        .admin()
        .table_migration(&[AllTicket::SCHEMA])
        .plan()
        .await
        .unwrap();
    assert!(plan.is_blocked(), "{plan}");
    let blocker = plan
        .blockers
        .iter()
        .find(|blocker| matches!(blocker, Blocker::IndexProjection { .. }))
        .unwrap_or_else(|| panic!("{plan}"));
    assert_eq!(
        blocker,
        &Blocker::IndexProjection {
            index: "ByTeam",
            expected: "ALL".into(),
            found: "KEYS_ONLY".into(),
        }
    );
    assert!(blocker.to_string().contains("new index name"), "{blocker}");
    // Applying it starts nothing.
    assert!(changed
        .admin()
        .table_migration(&[AllTicket::SCHEMA])
        .send()
        .await
        .is_err());
}
