// A collection's variant that holds an entity another variant already holds is one error, at
// that variant's type. One that holds no entity says so, at the variant and at the derive (the
// collection's impl names its table, which the variants' entities decide); before, it was a
// third error at the first variant, and the message was rustc's "trait bound not satisfied".
use serde::{Deserialize, Serialize};
use singletable::{Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "ORG#{org}", sk = "ORG")]
pub struct Org {
    pub org: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "ORG#{org}", sk = "MEMBER#{id}")]
pub struct Member {
    pub org: String,
    pub id: String,
}

pub struct Note;

#[derive(singletable::Collection)]
pub enum WithNote {
    Org(Org),
    Note(Note),
}

#[derive(singletable::Collection)]
pub enum Twice {
    Org(Org),
    Member(Member),
    Owner(Member),
}

fn main() {}
