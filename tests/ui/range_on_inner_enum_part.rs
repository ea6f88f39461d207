// An enum one of whose names starts another's (`Low`, `Lowest`) is not prefix-free: a range
// on it where other key text follows does not compile, while one on a prefix-free enum does.
use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, KeyPart, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

#[derive(KeyPart, Serialize, Deserialize, Clone, Copy)]
pub enum Priority {
    Low,
    Lowest,
}

#[derive(KeyPart, Serialize, Deserialize, Clone, Copy)]
pub enum Level {
    High,
    Low,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "QUEUE#{queue}", sk = "P#{priority}#L#{level}#JOB#{job}")]
pub struct Job {
    pub queue: String,
    pub priority: Priority,
    pub level: Level,
    pub job: u64,
}

fn check(db: Db<App>) {
    let _ = db.query(Job::partition("q")).sort(Job::PRIORITY, Priority::Low).ge(Job::LEVEL, Level::High);
    let _ = db.query(Job::partition("q")).lt(Job::PRIORITY, Priority::Lowest);
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(Job),
}
