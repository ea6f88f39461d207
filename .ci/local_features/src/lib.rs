//! The application's table, as a crate that tests with the embedded engine would declare it.

use serde::{Deserialize, Serialize};
use singletable::{Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "NOTE#{id}", sk = "NOTE")]
pub struct Note {
    pub id: String,
    pub text: String,
}
