// `table = ..` naming a type that is not a `#[derive(Table)]` says so, at that name. (The
// entity's sort key rule, which reads the table, also fails, with the rule's message.)
use serde::{Deserialize, Serialize};
use singletable::Entity;

pub struct Ledger;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = Ledger, pk = "ENTRY#{id}", sk = "ENTRY")]
pub struct Entry {
    pub id: String,
}

fn main() {}
