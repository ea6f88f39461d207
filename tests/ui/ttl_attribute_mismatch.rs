use serde::{Deserialize, Serialize};
use singletable::{Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK", ttl = "expires_at")]
pub struct App;

#[derive(Table)]
#[dynamo(name = "plain", pk = "PK", sk = "SK")]
pub struct Plain;

// Stored as `expiry`, while the table's TTL reads `expires_at`.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "SESSION#{id}", sk = "SESSION")]
pub struct Session {
    pub id: String,
    #[dynamo(ttl)]
    pub expiry: u64,
}

// A TTL field on a table that declares no TTL attribute.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = Plain, pk = "TOKEN#{id}", sk = "TOKEN")]
pub struct Token {
    pub id: String,
    #[dynamo(ttl)]
    pub expires_at: u64,
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(Session),
}
