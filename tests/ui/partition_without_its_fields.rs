// A partition constructor called without the fields of its template.
use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "ORG#{org_id}", sk = "INVITE#{code}")]
pub struct Invite {
    pub org_id: String,
    pub code: String,
}

fn check(db: Db<App>) {
    let _ = db.query(Invite::partition());
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(Invite),
}
