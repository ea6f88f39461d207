use serde::{Deserialize, Serialize};
use singletable::{Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
struct App;

// The entity attribute would be empty: no name to tell its items apart by.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, name = "", pk = "A#{id}", sk = "A")]
struct Anonymous {
    id: String,
}

// The library's own items carry entity names that start with `_` (`_unique`, `_migration`).
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, name = "_unique", pk = "B#{id}", sk = "B")]
struct Sentinel {
    id: String,
}

// A struct's own name is the entity's unless one is given.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "C#{id}", sk = "C")]
#[allow(non_camel_case_types)]
struct _draft {
    id: String,
}

// `#` separates the parts of the library's keys that hold an entity's name.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, name = "Ticket#latest", pk = "D#{id}", sk = "D")]
struct Pointer {
    id: String,
}

fn main() {}
