use serde::{Deserialize, Serialize};
use singletable::{Entity, KeyPart, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK", gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
pub struct App;

#[derive(KeyPart, Serialize, Deserialize, Clone, Copy, PartialEq)]
pub enum Status { Placed, Shipped }

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "ORDER#{id}", sk = "ORDER",
         gsi1pk = "CUSTOMER#{customer_id}", gsi1sk = "STATUS#{status}#AT#{placed_at}")]
pub struct Order {
    pub id: String,
    pub customer_id: String,
    pub status: Status,
    pub placed_at: u64,
}

// A second entity with fields of the same names: the messages name each with its entity.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "SHIPMENT#{id}", sk = "SHIPMENT",
         gsi1pk = "CUSTOMER#{customer_id}", gsi1sk = "SHIPMENT#{status}#AT#{placed_at}")]
pub struct Shipment {
    pub id: String,
    pub customer_id: String,
    pub status: Status,
    pub placed_at: u64,
}

// `status` is set and `customer_id` given: only `placed_at` is missing, and only it is named.
fn check(db: singletable::Db<App>) -> Result<(), singletable::Error> {
    let _ = db
        .update(Order::key("o1")?)
        .set(Order::STATUS, Status::Shipped)
        .given(Order::CUSTOMER_ID, "c1".to_owned())
        .params();
    Ok(())
}

fn main() {}

// A collection holding the entity reports nothing more.
#[derive(singletable::Collection)]
pub enum Items {
    One(Order),
    Two(Shipment),
}
