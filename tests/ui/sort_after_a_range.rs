// A range ends the sort key condition: no part can follow it.
use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "LOG#{log}", sk = "DAY#{day}#SEQ#{seq}")]
pub struct Event {
    pub log: String,
    pub day: u32,
    pub seq: u64,
}

fn check(db: Db<App>) {
    let _ = db.query(Event::partition("l")).ge(Event::DAY, 20260101).sort(Event::SEQ, 7);
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(Event),
}
