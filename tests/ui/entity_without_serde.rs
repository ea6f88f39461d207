// An entity that misses a serde derive is one error, whatever else it declares.
use serde::{Deserialize, Serialize};
use singletable::{Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

#[derive(Entity, Serialize)]
#[dynamo(table = App, pk = "TAG#{id}", sk = "TAG")]
pub struct Tag {
    pub id: String,
}

#[derive(Entity, Deserialize)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "DOC")]
pub struct Doc {
    pub id: String,
    #[dynamo(version)]
    pub version: u64,
}

#[derive(Entity, Serialize)]
#[dynamo(table = App, pk = "USER#{id}", sk = "USER")]
pub struct User {
    pub id: String,
    #[dynamo(unique)]
    pub email: String,
    #[dynamo(created_at)]
    pub created_at: u64,
}

fn main() {}
