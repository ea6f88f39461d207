// A typo in a key template is one error, with its suggestion: the entity's stub keeps its
// key constructors and constants, so the uses of the entity and the collection that lists
// it report nothing more. Both entities have a field `id`, as most schemas do.
use serde::{Deserialize, Serialize};
use singletable::{Collection, Db, Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "ORG#{org}", sk = "EMAIL#{emial}")]
pub struct User {
    pub org: String,
    pub id: String,
    pub email: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "ORG#{org}", sk = "ORG#{id}")]
pub struct Org {
    pub org: String,
    pub id: String,
}

#[derive(Collection)]
pub enum OrgItem {
    User(User),
    Org(Org),
}

async fn check(db: Db<App>) -> Result<(), singletable::Error> {
    let user = db.get(User::key("acme", "ana@example.com")?).send().await?;
    println!("{}", user.id);
    let _ = db.update(User::key("acme", "bo@example.com")?).set(User::ID, "u2".to_owned()).send().await?;
    let _ = db.query(Org::partition("acme")).collection::<OrgItem>().all().await?;
    Ok(())
}

fn main() {}
