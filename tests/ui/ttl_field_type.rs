use serde::{Deserialize, Serialize};
use singletable::{Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK", ttl = "expires_at", stream = "new_and_old_image")]
pub struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "SESSION#{id}", sk = "SESSION")]
pub struct Session {
    pub id: String,
    #[dynamo(ttl)]
    pub expires_at: String,
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(Session),
}
