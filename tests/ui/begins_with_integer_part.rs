// `begins_with` takes text for a string part and a truncated time for a time part; the start
// of an integer's key text (zero-padded digits) is no range of its values, so it does not
// compile, while a string prefix and a range on the integer do. A second entity shares the
// field names, as most schemas' entities do.
use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "v{version}#{title}")]
pub struct Version {
    pub id: String,
    pub version: u64,
    pub title: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "NOTE#{id}", sk = "n{version}#{title}")]
pub struct Note {
    pub id: String,
    pub version: u64,
    pub title: String,
}

fn check(db: Db<App>) {
    let _ = db.query(Version::partition("d")).begins_with(Version::VERSION, 1u64);
    let _ = db.query(Version::partition("d")).ge(Version::VERSION, 1);
    let _ = db.query(Note::partition("d")).sort(Note::VERSION, 1).begins_with(Note::TITLE, "Plan");
}

fn main() {}
