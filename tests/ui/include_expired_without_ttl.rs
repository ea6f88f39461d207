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

// Items of a table without a TTL attribute never expire: choosing to see or hide expired ones
// would change nothing, so it does not compile.
fn check(db: singletable::Db<Counters>) -> Result<(), singletable::Error> {
    let _ = db.get(Counter::key("c")?).include_expired();
    let _ = db.query(Counter::partition("c")).hide_expired();
    let _ = db.scan::<Counter>().include_expired();
    Ok(())
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(Counter),
}
