use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

mod as_text {
    pub fn serialize<S: serde::Serializer>(value: &u32, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&value.to_string())
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
        let text: String = serde::Deserialize::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{id}", sk = "USER")]
pub struct User {
    pub id: String,
    pub name: String,
    /// Never stored: no typed path writes or compares it.
    #[serde(skip)]
    pub cache: u32,
    /// Stored in a form only `as_text` knows: no typed path either.
    #[serde(with = "as_text")]
    pub score: u32,
}

fn updates(db: &Db<App>) {
    let _ = db.update(User::key("u1").unwrap()).set(User::CACHE, 5);
    let _ = db.update(User::key("u1").unwrap()).set(User::SCORE, 5);
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(User),
}
