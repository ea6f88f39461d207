use serde::{Deserialize, Serialize};
use singletable::{Entity, Table};

#[derive(Table)]
#[dynamo(name = "docs", pk = "PK", sk = "SK")]
pub struct Docs;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = Docs, pk = "DOC#{id}", sk = "DOC")]
pub struct Document {
    pub id: String,
    #[dynamo(version)]
    pub version: u64,
}

fn check(db: singletable::Db<Docs>) -> Result<(), singletable::Error> {
    let _ = db.update(Document::key("a")?).set(Document::VERSION, 7);
    Ok(())
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(Document),
}
