// One mistake in an entity (a managed `created_at` in an index key) is one error: its stub
// keeps the key constructors, field paths and updates of the entity compiling, and the
// collection that holds it reports nothing.
use serde::{Deserialize, Serialize};
use singletable::{Collection, Db, Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK", gsi3(name = "GSI3", pk = "GSI3PK", sk = "GSI3SK"))]
pub struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "ORG#{org}", sk = "USER#{user_id}",
         gsi3pk = "ORG#{org}", gsi3sk = "JOINED#{created_at}")]
pub struct User {
    pub org: String,
    pub user_id: String,
    #[dynamo(unique)]
    pub email: String,
    #[dynamo(created_at)]
    pub created_at: u64,
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
    let key = User::key("acme", "u1")?;
    let _ = db.update(key).set(User::EMAIL, "ana@example.com".to_owned()).send().await?;
    let _ = db.query(Org::partition("acme")).collection::<OrgItem>().all().await?;
    let _ = db.get_by_unique(User::EMAIL, "ana@example.com".to_owned()).await?;
    Ok(())
}

fn main() {}
