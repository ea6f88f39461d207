//! One argument convention everywhere: a call takes what a caller naturally has. Conditions
//! take the field's type by value or by reference (and `&str` for a `String` field); `set` and
//! `given` take anything that converts into the field's type. These compile, and render the
//! same request whichever form is used.

use serde::{Deserialize, Serialize};
use singletable::{Entity, KeyPart, Table};

#[derive(Table)]
#[dynamo(
    name = "shop",
    pk = "PK",
    sk = "SK",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
struct Shop;

#[derive(KeyPart, Serialize, Deserialize, Clone, Copy, PartialEq, Debug)]
enum Status {
    Placed,
    Shipped,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug)]
#[dynamo(table = Shop, pk = "ORDER#{id}", sk = "ORDER",
         gsi1pk = "CUSTOMER#{customer_id}", gsi1sk = "STATUS#{status}#ORDER#{id}")]
struct Order {
    id: String,
    customer_id: String,
    status: Status,
    total: u32,
}

fn db() -> singletable::Db<Shop> {
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
        .region(aws_sdk_dynamodb::config::Region::new("eu-west-1"))
        .build();
    singletable::Db::new(aws_sdk_dynamodb::Client::from_conf(config))
}

#[test]
fn conditions_take_values_references_and_str() {
    let db = db();
    let condition = |condition| {
        db.delete(Order::key("o1").unwrap())
            .condition(condition)
            .params()
            .unwrap()
    };
    let owned = "c1".to_owned();
    let by_str = condition(Order::CUSTOMER_ID.eq("c1"));
    assert_eq!(by_str, condition(Order::CUSTOMER_ID.eq(&owned)));
    assert_eq!(by_str, condition(Order::CUSTOMER_ID.eq(owned.clone())));
    let by_value = condition(Order::TOTAL.ge(7));
    assert_eq!(by_value, condition(Order::TOTAL.ge(7)));
    assert_eq!(
        condition(Order::STATUS.is_in([Status::Placed, Status::Shipped])),
        condition(Order::STATUS.is_in([&Status::Placed, &Status::Shipped]))
    );
    assert_eq!(
        condition(Order::TOTAL.between(1, 9)),
        condition(Order::TOTAL.between(1, 9))
    );
}

#[test]
fn updates_take_anything_that_converts_into_the_field() {
    let db = db();
    let update = |customer: String| {
        db.update(Order::key("o1").unwrap())
            .set(Order::STATUS, Status::Shipped)
            .given(Order::CUSTOMER_ID, customer)
            .params()
            .unwrap()
    };
    let by_str = db
        .update(Order::key("o1").unwrap())
        .set(Order::STATUS, Status::Shipped)
        .given(Order::CUSTOMER_ID, "c1")
        .params()
        .unwrap();
    assert_eq!(by_str, update("c1".to_owned()));
    let set_str = db
        .update(Order::key("o1").unwrap())
        .set(Order::CUSTOMER_ID, "c2")
        .given(Order::STATUS, Status::Placed)
        .params()
        .unwrap();
    assert!(set_str.to_string().contains("CUSTOMER#c2"), "{set_str}");
}

/// Key constructors take integers and enums by value or by reference, and strings as `&str`,
/// `&String` or `String`.
#[test]
fn key_constructors_take_values_references_and_strings() {
    let id = "o1".to_owned();
    let by_str = Order::key("o1").unwrap();
    assert_eq!(by_str, Order::key(&id).unwrap());
    assert_eq!(by_str, Order::key(id.clone()).unwrap());
    let db = db();
    let on_gsi1 = |partition| db.query(partition).params().unwrap();
    assert_eq!(
        on_gsi1(Order::gsi1("c1")),
        on_gsi1(Order::gsi1("c1".to_owned()))
    );
    let on_table = |partition| db.query(partition).params().unwrap();
    assert_eq!(
        on_table(Order::partition("o1")),
        on_table(Order::partition(id))
    );
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug)]
#[dynamo(table = Shop, pk = "TASK#{project}", sk = "T#{priority:3}#{id}")]
struct Task {
    project: String,
    priority: u16,
    id: String,
}

#[test]
fn integer_key_parts_take_values_or_references() {
    assert_eq!(
        Task::key("p1", 3, "t1").unwrap(),
        Task::key("p1", 3, "t1").unwrap()
    );
    assert_eq!(Task::key("p1", 3, "t1").unwrap().sort(), Some("T#003#t1"));
}

/// Declared in another order than the templates use its fields, one of them in both.
#[derive(Entity, Serialize, Deserialize, Clone, Debug)]
#[dynamo(table = Shop, pk = "ORG#{org}#USER#{user}", sk = "USER#{user}#DOC#{doc}")]
struct Shared {
    doc: String,
    user: u32,
    org: String,
}

#[test]
fn a_key_constructor_takes_each_field_once_in_template_order() {
    let key = Shared::key("acme", 7u32, "readme").unwrap();
    assert_eq!(key.partition(), "ORG#acme#USER#0000000007");
    assert_eq!(key.sort(), Some("USER#0000000007#DOC#readme"));
    let item = Shared {
        doc: "readme".to_owned(),
        user: 7,
        org: "acme".to_owned(),
    };
    assert_eq!(item.primary_key().unwrap(), key);
}
