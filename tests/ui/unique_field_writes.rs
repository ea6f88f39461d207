use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{id}", sk = "USER")]
pub struct User {
    pub id: String,
    #[dynamo(unique)]
    pub email: String,
    pub name: String,
    pub joined: u64,
}

async fn writes(db: &Db<App>, user: &User) {
    // A batch cannot keep the sentinel of `email`.
    let _ = db.batch_write().put(user);
    // Nor can a transaction the user assembles.
    let _ = db.transaction().with(db.put(user));
    // Nor a guarded append, whose transaction holds the item and the pointer.
    let _ = db.append(user, User::JOINED);
    // `name` is not unique, so it finds no one item.
    let _ = db.get_by_unique(User::NAME, "Ana");
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(User),
}
