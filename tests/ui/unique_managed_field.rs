// A managed field marked unique is one error: the entity still expands, so its collection,
// lookups and updates report nothing more.
use serde::{Deserialize, Serialize};
use singletable::{Collection, Db, Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "DOC")]
pub struct Doc {
    pub id: String,
    #[dynamo(unique)]
    pub slug: String,
    #[dynamo(version, unique)]
    pub version: u64,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "NOTE#{n}")]
pub struct Note {
    pub id: String,
    pub n: u32,
}

#[derive(Collection)]
pub enum DocItem {
    Doc(Doc),
    Note(Note),
}

async fn check(db: Db<App>) -> Result<(), singletable::Error> {
    let _ = db.get_by_unique(Doc::SLUG, "intro".to_owned()).await?;
    let _ = db.update(Doc::key("d1")?).set(Doc::SLUG, "start".to_owned()).send().await?;
    let _ = db.query(Doc::partition("d1")).collection::<DocItem>().all().await?;
    Ok(())
}

fn main() {}
