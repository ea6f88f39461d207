// An entity without `table = ..` is one error, wherever it stands in a collection: the
// collection takes the table of its other entities, and querying it reports nothing more.
use serde::{Deserialize, Serialize};
use singletable::{Collection, Db, Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "ORG#{org}", sk = "ORG")]
pub struct Org {
    pub org: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(pk = "ORG#{org}", sk = "USER#{user}")]
pub struct User {
    pub org: String,
    pub user: String,
}

#[derive(Collection)]
pub enum UserFirst {
    User(User),
    Org(Org),
}

#[derive(Collection)]
pub enum OrgFirst {
    Org(Org),
    User(User),
}

async fn check(db: Db<App>) -> Result<(), singletable::Error> {
    let _ = db.query(Org::partition("acme")).collection::<UserFirst>().all().await?;
    let _ = db.query(Org::partition("acme")).collection::<OrgFirst>().all().await?;
    Ok(())
}

fn main() {}
