use serde::{Deserialize, Serialize};
use singletable::{Entity, Table};

#[derive(Table)]
#[dynamo(name = "docs", pk = "PK", sk = "SK")]
pub struct Docs;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = Docs, pk = "DOC#{id}", sk = "DOC#{revision}")]
pub struct Document {
    pub id: String,
    #[dynamo(version)]
    pub revision: String,
    #[dynamo(updated)]
    pub touched: u64,
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(Document),
}
