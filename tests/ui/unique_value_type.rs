use serde::{Deserialize, Serialize};
use singletable::{Entity, Table};
use std::collections::HashMap;

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

#[derive(Serialize, Deserialize)]
pub struct External {
    pub provider: String,
    pub subject: String,
}

// A struct, a map and a list have no canonical encoding: none can key a sentinel.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "ACCOUNT#{id}", sk = "ACCOUNT", unique(id, labels))]
pub struct Account {
    pub id: String,
    #[dynamo(unique)]
    pub external: External,
    #[dynamo(unique)]
    pub aliases: Vec<String>,
    pub labels: HashMap<String, String>,
    // Allowed: a string, an integer, and an `Option` of a key part.
    #[dynamo(unique)]
    pub email: String,
    #[dynamo(unique)]
    pub number: u64,
    #[dynamo(unique)]
    pub phone: Option<String>,
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(Account),
}
