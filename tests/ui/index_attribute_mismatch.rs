use serde::{Deserialize, Serialize};
use singletable::{Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK", gsi3(name = "GSI3", pk = "GSI3PK", sk = "score"))]
pub struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "REVIEW#{id}", sk = "REVIEW", gsi3pk = author, gsi3sk = score)]
pub struct Review {
    pub id: String,
    pub author: String,
    pub score: u32,
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(Review),
}
