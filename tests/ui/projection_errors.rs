use serde::{Deserialize, Serialize};
use singletable::{Entity, Projection, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK",
         gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK", projection = "keys_onyl"),
         gsi2(name = "GSI2", pk = "GSI2PK", sk = "GSI2SK", projection = ["PK", "title", "title"]))]
pub struct App;

#[derive(Table)]
#[dynamo(name = "lean", pk = "PK", sk = "SK",
         gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK", projection = ["title"]))]
pub struct Lean;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = Lean, pk = "TICKET#{id}", sk = "TICKET", gsi1pk = "TEAM#{team}", gsi1sk = "TICKET#{id}")]
pub struct Ticket {
    pub id: String,
    pub team: u32,
    pub title: String,
    pub body: String,
}

// GSI1 holds `title` (and the keys), not `body`: the error is at `body`.
#[derive(Projection, Deserialize)]
#[dynamo(entity = Ticket, index = gsi1)]
pub struct Card {
    pub title: String,
    pub body: String,
}

// Every mistake in the attribute, at once.
#[derive(Projection, Deserialize)]
#[dynamo(entity = Ticket, index = gsx1, colour = "red")]
pub struct Stray {
    pub title: String,
}

#[derive(Projection, Deserialize)]
pub struct Unnamed {
    pub title: String,
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(Ticket),
}
