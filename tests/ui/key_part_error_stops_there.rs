use serde::{Deserialize, Serialize};
use singletable::{Collection, Entity, KeyPart, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

// The derive fails for `Held`; the entity that uses `Status` in a key, its key constructor and
// the collection below report nothing more.
#[derive(KeyPart, Serialize, Deserialize, Clone, Copy)]
pub enum Status {
    Open,
    Held(u8),
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "TICKET#{id}", sk = "STATUS#{status}")]
pub struct Ticket {
    pub id: String,
    pub status: Status,
}

// A variant holding two values: the derive fails, and queries of the collection still compile.
#[derive(Collection)]
pub enum Desk {
    Ticket(Ticket),
    Pair(Ticket, Ticket),
}

fn check(db: &singletable::Db<App>) {
    let _ = Ticket::key("t1", Status::Open);
    let _ = db.query(Ticket::partition("t1")).collection::<Desk>().params();
}

fn main() {}
