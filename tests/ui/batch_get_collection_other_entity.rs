use serde::{Deserialize, Serialize};
use singletable::{Collection, Db, Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "WS#{workspace}", sk = "DOC#{doc}")]
struct Document {
    workspace: String,
    doc: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{user}", sk = "USER")]
struct User {
    user: String,
}

#[derive(Collection)]
enum Workspace {
    Document(Document),
}

fn read(db: &Db<App>) {
    // `User` is no variant of `Workspace`: its items could not be returned as one.
    let _ = db.batch_get_collection::<Workspace>().key(User::key("ana").unwrap());
}

fn main() {}
