// An entity whose derive fails (a template names no field) is one error: the collection that
// holds it, and queries of it, report nothing more.
use serde::{Deserialize, Serialize};
use singletable::{Collection, Db, Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "ORG#{org}", sk = "USER#{user}")]
pub struct User {
    pub org: String,
    pub user_id: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "ORG#{org}", sk = "ORG")]
pub struct Org {
    pub org: String,
}

#[derive(Collection)]
pub enum OrgItem {
    User(User),
    Org(Org),
}

async fn check(db: Db<App>) -> Result<(), singletable::Error> {
    let _ = db.query(Org::partition("acme")).collection::<OrgItem>().all().await?;
    Ok(())
}

fn main() {}
