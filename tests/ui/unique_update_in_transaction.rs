use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK", ttl = "expires_at")]
pub struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{id}", sk = "USER")]
pub struct User {
    pub id: String,
    #[dynamo(unique)]
    pub email: String,
    pub name: String,
    #[dynamo(ttl)]
    pub expires_at: Option<u64>,
}

fn writes(db: &Db<App>) -> Result<(), singletable::Error> {
    // The sentinel of `email` moves with its value, which only the update's own transaction
    // can do.
    let change = db.update(User::key("u")?).set(User::EMAIL, "a@example.com".to_owned());
    let _ = db.transaction().with(change);
    // The sentinels carry the item's expiry.
    let extend = db.update(User::key("u")?).set(User::EXPIRES_AT, Some(10));
    let _ = db.transaction().with(extend);
    // Other fields change in any transaction, with the unique value given or not.
    let rename = db.update(User::key("u")?).set(User::NAME, "Ana".to_owned());
    let _ = db.transaction().with(rename);
    let given = db.update(User::key("u")?).given(User::EMAIL, "a@example.com".to_owned());
    let _ = db.transaction().with(given.set(User::NAME, "Ana".to_owned()));
    Ok(())
}

fn main() {}
