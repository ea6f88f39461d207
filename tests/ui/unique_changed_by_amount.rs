use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "SEAT#{id}", sk = "SEAT", unique(row, number))]
pub struct Seat {
    pub id: String,
    #[dynamo(unique)]
    pub badge: u64,
    pub row: String,
    pub number: u32,
    pub visits: u64,
}

fn updates(db: &Db<App>) -> Result<(), singletable::Error> {
    // A unique value's sentinel is keyed by its new value, which an amount leaves unknown.
    let _ = db.update(Seat::key("s")?).add(Seat::BADGE, 1);
    let _ = db.update(Seat::key("s")?).increment(Seat::BADGE, 1);
    // A part of a compound unique value too.
    let _ = db.update(Seat::key("s")?).decrement(Seat::NUMBER, 1);
    // `set` changes a unique value; other fields change by amounts as before.
    let _ = db.update(Seat::key("s")?).set(Seat::BADGE, 7).add(Seat::VISITS, 1).params();
    Ok(())
}

fn main() {}
