use serde::{Deserialize, Serialize};
use singletable::{Collection, Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
struct App;

// Two structs called `Card`, and so two entities named `Card`: their keys cannot meet, but
// the entity attribute cannot tell their items apart.
mod deck {
    #[derive(singletable::Entity, serde::Serialize, serde::Deserialize)]
    #[dynamo(table = super::App, pk = "DECK#{id}", sk = "CARD")]
    pub struct Card {
        pub id: String,
    }
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "HAND#{id}", sk = "CARD")]
struct Card {
    id: String,
}

#[derive(Collection)]
enum Cards {
    Deck(deck::Card),
    Hand(Card),
}

fn main() {}
