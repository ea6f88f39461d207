use serde::{Deserialize, Serialize};
use singletable::{Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

#[derive(Serialize, Deserialize)]
pub struct Address {
    pub city: String,
}

// Field settings an entity field cannot have, and those its key fields cannot.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "USER#{id}", sk = "{region}#{shard}#{code}")]
pub struct User {
    pub id: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub region: String,
    #[serde(skip_deserializing)]
    pub shard: u32,
    #[serde(skip)]
    pub code: String,
    #[serde(flatten)]
    pub address: Address,
    #[serde(rename(serialize = "nm", deserialize = "name"))]
    pub name: String,
    #[serde(skip)]
    #[dynamo(unique)]
    pub nickname: String,
}

// Container settings an entity cannot have.
#[derive(Entity, Serialize, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind")]
#[dynamo(table = App, pk = "NOTE#{id}", sk = "NOTE")]
pub struct Note {
    pub id: String,
}

#[derive(Entity, Serialize, Deserialize, Clone)]
#[serde(try_from = "Note2", into = "Note2")]
#[dynamo(table = App, pk = "MEMO#{id}", sk = "MEMO")]
pub struct Memo {
    pub id: String,
}

#[derive(Serialize, Deserialize)]
pub struct Note2 {
    pub id: String,
}

impl TryFrom<Note2> for Memo {
    type Error = String;
    fn try_from(note: Note2) -> Result<Memo, String> {
        Ok(Memo { id: note.id })
    }
}

#[derive(Entity, Serialize, Deserialize)]
#[serde(transparent)]
#[dynamo(table = App, pk = "WRAP#{id}", sk = "WRAP")]
pub struct Wrapped {
    pub id: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "LABEL#{id}", sk = "LABEL")]
pub struct Label {
    pub id: String,
    #[serde(borrow)]
    pub text: std::borrow::Cow<'static, str>,
}

impl From<Memo> for Note2 {
    fn from(memo: Memo) -> Note2 {
        Note2 { id: memo.id }
    }
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(User),
}
