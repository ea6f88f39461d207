use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "DOC")]
pub struct Doc {
    pub id: String,
    #[dynamo(version)]
    pub version: u64,
}

async fn writes(db: &Db<App>, doc: &Doc, docs: Vec<Doc>) {
    // A batch put carries no condition, so it cannot check the version.
    let _ = db.batch_write().put(doc);
    let _ = db.batch_write().put_all(&docs);
    // Nor can a bulk load, which is batch puts.
    let _ = db.put_stream(futures::stream::iter(docs));
    // A batch delete needs no version, as `db.delete(..)` does not.
    let _ = db.batch_write().delete(Doc::key("d").unwrap());
}

fn main() {}
