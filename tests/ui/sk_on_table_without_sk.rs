use serde::{Deserialize, Serialize};
use singletable::{Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK", gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
pub struct App;

#[derive(Table)]
#[dynamo(name = "flat", pk = "PK")]
pub struct Flat;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = Flat, pk = "USER#{id}", sk = "USER")]
pub struct User {
    pub id: String,
}
fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(User),
}
