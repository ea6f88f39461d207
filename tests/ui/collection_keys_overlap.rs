use serde::{Deserialize, Serialize};
use singletable::{Collection, Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "WS#{workspace}", sk = "DOC#{doc}")]
struct Document {
    workspace: String,
    doc: String,
}

// `Note { note: "d1" }` would be the item `Document { doc: "d1" }`.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "WS#{workspace}", sk = "DOC#{note}")]
struct Note {
    workspace: String,
    note: String,
}

#[derive(Collection)]
enum Workspace {
    Document(Document),
    Note(Note),
}

fn main() {}
