use serde::{Deserialize, Serialize};
use singletable::{Entity, KeyPart, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK", gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
pub struct App;

#[derive(KeyPart, Serialize, Deserialize, Clone, Copy, PartialEq)]
pub enum Status { Open, Closed }

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "TICKET#{id}", sk = "TICKET", gsi1pk = "TEAM#{team_id}", gsi1sk = "STATUS#{status}#TICKET#{id}")]
pub struct Ticket {
    pub id: String,
    pub team_id: u32,
    pub status: Status,
    pub title: String,
    pub note: Option<String>,
}

// A second entity with fields of the same names, as most schemas have: the messages name
// each field with its entity.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "TEAM#{id}", sk = "TEAM#{status}#{title}")]
pub struct Team {
    pub id: u32,
    pub status: Status,
    pub title: String,
}

fn check(db: singletable::Db<App>) -> Result<(), singletable::Error> {
    let key = Ticket::key("8842")?;
    let _ = db.update(key).set(Ticket::ID, "8843".to_owned());
    Ok(())
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(Ticket),
    Two(Team),
}
