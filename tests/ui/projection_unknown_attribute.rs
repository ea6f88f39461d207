// A projection's field that names no attribute of the entity's items is one error, at the
// field, with the attribute it may have meant. A key attribute, or one the table lists in an
// index's projection (`legacy_title`, which no field writes now), is fine.
use serde::{Deserialize, Serialize};
use singletable::{Entity, Projection, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK",
         gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK", projection = ["title", "legacy_title"]))]
pub struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "TICKET#{id}", sk = "TICKET", gsi1pk = "TEAM#{team}", gsi1sk = "TICKET#{id}")]
pub struct Ticket {
    pub id: String,
    pub team: u32,
    pub title: String,
    pub body: String,
}

// From the table: a misspelt field.
#[derive(Projection, Deserialize)]
#[dynamo(entity = Ticket)]
pub struct Heading {
    pub titel: String,
    #[serde(rename = "PK")]
    pub key: String,
}

// From an index: a misspelt field is not an attribute at all, whatever the index holds.
#[derive(Projection, Deserialize)]
#[dynamo(entity = Ticket, index = gsi1)]
pub struct Card {
    pub titel: String,
    pub colour: String,
    #[serde(rename = "GSI1PK")]
    pub queue: String,
    pub legacy_title: Option<String>,
}

fn main() {}
