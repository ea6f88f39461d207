// A range on a string part that other key text follows cannot be exact ("b c#N" sorts before
// "b#N"): it does not compile, and says what to do instead. Equality there, and ranges on the
// last part or on a prefix-free part before other text, compile.
use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "SHELF#{shelf}", sk = "AUTHOR#{author}#N#{n}")]
struct Book {
    shelf: String,
    author: String,
    n: u32,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "LOG#{log}", sk = "N#{n}#AUTHOR#{author}")]
struct Entry {
    log: String,
    n: u32,
    author: String,
}

fn check(db: Db<App>) {
    let _ = db.query(Book::partition("s")).sort(Book::AUTHOR, "b".to_owned());
    let _ = db.query(Entry::partition("l")).gt(Entry::N, 7);
    let _ = db.query(Entry::partition("l")).sort(Entry::N, 7).gt(Entry::AUTHOR, "b".to_owned());
    let _ = db.query(Book::partition("s")).gt(Book::AUTHOR, "b".to_owned());
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(Book),
}
