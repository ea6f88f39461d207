use serde::{Deserialize, Serialize};
use singletable::{Entity, Projection, Table};

#[derive(Table)]
#[dynamo(name = "lean", pk = "PK", sk = "SK",
         gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK", projection = "keys_only"),
         gsi2(name = "GSI2", pk = "GSI2PK", sk = "GSI2SK", projection = ["title"]))]
pub struct Lean;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = Lean, pk = "TICKET#{id}", sk = "TICKET",
         gsi1pk = "TEAM#{team}", gsi1sk = "TICKET#{id}",
         gsi2pk = "TEAM#{team}", gsi2sk = "TICKET#{id}")]
pub struct Ticket {
    pub id: String,
    pub team: u32,
    pub title: String,
}

#[derive(Projection, Deserialize)]
#[dynamo(entity = Ticket, index = gsi2)]
pub struct Title {
    pub title: String,
}

fn check(db: singletable::Db<Lean>) {
    // A lean index's items are not whole entities.
    let _ = db.query(Ticket::gsi1(7)).collection::<Items>();
    // A projection is chosen once.
    let _ = db.query(Ticket::gsi2(7)).select::<Title>().select::<Title>();
    // A projection is declared for one index.
    let _ = db.query(Ticket::gsi1(7)).select::<Title>();
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(Ticket),
}
