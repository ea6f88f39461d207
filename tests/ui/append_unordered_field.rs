use serde::{Deserialize, Serialize};
use singletable::{Entity, Table};

#[derive(Table)]
#[dynamo(name = "readings", pk = "PK", sk = "SK")]
pub struct Readings;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = Readings, pk = "SENSOR#{sensor}", sk = "AT#{at}")]
pub struct Reading {
    pub sensor: String,
    pub at: u64,
    pub tags: Vec<String>,
}

fn check(db: singletable::Db<Readings>, reading: &Reading) {
    let _ = db.append(reading, Reading::TAGS);
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(Reading),
}
