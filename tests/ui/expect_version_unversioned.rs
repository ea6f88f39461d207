use serde::{Deserialize, Serialize};
use singletable::{Entity, Table};

#[derive(Table)]
#[dynamo(name = "counters", pk = "PK", sk = "SK")]
pub struct Counters;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = Counters, pk = "COUNTER#{id}", sk = "COUNTER")]
pub struct Counter {
    pub id: String,
    pub count: u64,
}

fn check(db: singletable::Db<Counters>) -> Result<(), singletable::Error> {
    let _ = db
        .update(Counter::key("c")?)
        .add(Counter::COUNT, 1)
        .expect_version(42);
    Ok(())
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(Counter),
}
