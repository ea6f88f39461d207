// The entities of a collection share one table, as one query's items do.
use serde::{Deserialize, Serialize};
use singletable::{Collection, Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK")]
pub struct App;

#[derive(Table)]
#[dynamo(name = "audit", pk = "PK", sk = "SK")]
pub struct Audit;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "ORDER#{id}", sk = "ORDER")]
pub struct Order {
    pub id: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = Audit, pk = "ORDER#{id}", sk = "EVENT#{n}")]
pub struct OrderEvent {
    pub id: String,
    pub n: u32,
}

#[derive(Collection)]
pub enum OrderItem {
    Order(Order),
    Event(OrderEvent),
}

fn main() {}
