//! Capacity: estimates before running, and what the engine reports after.

mod common;

use common::{db, App, Status, Ticket};
use serde::{Deserialize, Serialize};
use singletable::local::{Deviation, Engine};
use singletable::{Entity, KeyPart, Table};

#[derive(Table)]
#[dynamo(name = "moves", pk = "PK", sk = "SK")]
struct Moves;

#[derive(KeyPart, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum State {
    Open,
    Pending,
}

/// The seed's alternative design: the status in the sort key, so a change moves the item.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Moves, pk = "TICKET#{id}", sk = "STATUS#{state}")]
struct MovedTicket {
    id: String,
    state: State,
}

#[test]
fn the_seeds_comparison_gsi_sort_key_update_3_units_versus_rekey_4() {
    let tickets = common::offline::<App>();
    let update = tickets
        .update(Ticket::key("8842").unwrap())
        .set(Ticket::STATUS, Status::Pending)
        .given(Ticket::TEAM_ID, 7)
        .explain()
        .unwrap();
    assert_eq!(update.estimate.write_units, 3.0, "{update}");
    let moves = common::offline::<Moves>();
    let rekey = moves
        .rekey(
            &MovedTicket {
                id: "8842".into(),
                state: State::Open,
            },
            &MovedTicket {
                id: "8842".into(),
                state: State::Pending,
            },
        )
        .explain()
        .unwrap();
    assert_eq!(rekey.estimate.write_units, 4.0, "{rekey}");
    let put = tickets
        .put(&Ticket::new("8842", 7, Status::Open, "x"))
        .explain()
        .unwrap();
    assert_eq!(put.estimate.write_units, 2.0, "table + GSI1 entry: {put}");
    let closed = tickets
        .put(&Ticket::new("8842", 7, Status::Closed, "x"))
        .explain()
        .unwrap();
    assert_eq!(
        closed.estimate.write_units, 1.0,
        "a closed ticket is not indexed: {closed}"
    );
    let read = tickets.get(Ticket::key("8842").unwrap()).explain().unwrap();
    assert_eq!(read.estimate.read_units, 0.5);
    let consistent = tickets
        .get(Ticket::key("8842").unwrap())
        .consistent()
        .explain()
        .unwrap();
    assert_eq!(consistent.estimate.read_units, 1.0);
}

#[tokio::test]
async fn reported_consumption_is_tracked_and_matches_the_estimate_where_the_engine_reports_it() {
    let table = db().await;
    let db = table.clone().track_capacity();
    let ticket = Ticket::new("1", 7, Status::Open, "x");
    let put = db.put(&ticket);
    let estimate = put.explain().unwrap().estimate;
    put.send().await.unwrap();
    let consumed = db.consumed().unwrap();
    assert_eq!(consumed.requests, 1);
    let engine = Engine::from_env().unwrap();
    if engine.deviates(Deviation::NoIndexCapacity) {
        // DynamoDB reports the table's and each index's units; this engine reports only the
        // table's CapacityUnits, so compare what it does report.
        assert!(consumed.capacity_units >= 1.0, "{engine}: {consumed:?}");
        assert!(
            consumed.capacity_units <= estimate.write_units,
            "{engine} (Deviation::NoIndexCapacity): {consumed:?} vs {estimate:?}"
        );
    } else {
        // An open ticket is a 1 KB write to the table and one to GSI1: one unit each. (A
        // single-item write reports `CapacityUnits` alone, with no `WriteCapacityUnits`.)
        assert_eq!(consumed.capacity_units, 2.0, "{engine}: {consumed:?}");
        assert_eq!(
            consumed.capacity_units, estimate.write_units,
            "{engine}: {consumed:?}"
        );
        assert_eq!(consumed.index_units, 1.0, "{engine}: {consumed:?}");
    }
    db.get(Ticket::key("1").unwrap()).send().await.unwrap();
    assert_eq!(db.consumed().unwrap().requests, 2);
}

#[test]
fn the_units_a_paced_batch_reserves_per_put_are_the_estimates() {
    let long_title = "x".repeat(2500);
    for (ticket, units) in [
        (Ticket::new("1", 7, Status::Open, "x"), 2.0),
        (Ticket::new("2", 7, Status::Closed, "x"), 1.0),
        // About 2.5 KB: three units in the table and in GSI1's entry, which holds it all.
        (Ticket::new("3", 7, Status::Open, &long_title), 6.0),
    ] {
        let item = singletable::item::encode(&ticket).unwrap();
        let estimate = singletable::cost::put_estimate::<App>(&item);
        assert_eq!(estimate.write_units, units, "{estimate:?}");
        assert_eq!(
            singletable::cost::put_write_units::<App>(&item),
            estimate.write_units
        );
    }
}
