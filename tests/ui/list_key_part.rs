use serde::{Deserialize, Serialize};
use singletable::{Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK", gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
pub struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "POST#{id}", sk = "TAGS#{tags}")]
pub struct Post {
    pub id: String,
    pub tags: Vec<String>,
}
fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(Post),
}
