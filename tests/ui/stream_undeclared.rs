use serde::{Deserialize, Serialize};
use singletable::{Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "TICKET#{id}", sk = "TICKET")]
pub struct Ticket {
    pub id: String,
}

fn main() {
    let record = singletable::stream::RawRecord {
        event_id: String::new(),
        event: singletable::stream::EventName::Insert,
        sequence_number: String::new(),
        keys: Default::default(),
        new_image: None,
        old_image: None,
        by_ttl: false,
    };
    let _ = singletable::stream::decode::<Ticket>(record);
}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(Ticket),
}
