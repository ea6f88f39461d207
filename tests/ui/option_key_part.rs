use serde::{Deserialize, Serialize};
use singletable::{Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

// A key attribute cannot be absent: an `Option` cannot be part of a key template.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{id}", sk = "REGION#{region}")]
pub struct User {
    pub id: String,
    pub region: Option<String>,
}

// An entity is one concrete item shape.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "BOX#{id}", sk = "BOX")]
pub struct Boxed<T> {
    pub id: String,
    pub content: T,
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(User),
}
