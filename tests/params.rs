//! `params()` is the request that is sent: for every kind of operation, the JSON it prints
//! equals the body the SDK put on the wire, captured by an interceptor just before
//! transmission. Both come from the one request each operation builds.

use serde::{Deserialize, Serialize};
use singletable::testing::TestTable;
use singletable::{Db, Entity, KeyPart, Request, Table};
use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::error::BoxError;

#[derive(Table)]
#[dynamo(
    name = "params",
    pk = "PK",
    sk = "SK",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
struct Shop;

#[derive(KeyPart, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
enum Status {
    Open,
    Shipped,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "ORDER#{id}", sk = "ORDER",
         gsi1pk = "CUSTOMER#{customer}", gsi1sk = "STATUS#{status}#ORDER#{id}")]
struct Order {
    id: String,
    customer: String,
    status: Status,
    total: u32,
    #[dynamo(version)]
    version: u64,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "FEED#{customer}", sk = "AT#{at}")]
struct Event {
    customer: String,
    at: u64,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "CUSTOMER#{id}", sk = "CUSTOMER")]
struct Customer {
    id: String,
    #[dynamo(unique)]
    email: String,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "NOTE#{id}", sk = "NOTE")]
struct Note {
    id: String,
    text: String,
    #[dynamo(created_at)]
    created_at: u64,
}

/// The bodies the SDK transmitted, with their operation (from `X-Amz-Target`).
#[derive(Debug, Clone, Default)]
struct Capture(Arc<Mutex<Vec<(String, serde_json::Value)>>>);

impl Intercept for Capture {
    fn name(&self) -> &'static str {
        "Capture"
    }

    fn read_before_transmit(
        &self,
        context: &BeforeTransmitInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        _: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let request = context.request();
        let target = request.headers().get("x-amz-target").unwrap_or_default();
        let operation = target.rsplit('.').next().unwrap_or_default().to_owned();
        let body = serde_json::from_slice(request.body().bytes().unwrap_or_default())?;
        self.0.lock().unwrap().push((operation, body));
        Ok(())
    }
}

impl Capture {
    /// The requests sent since the last call.
    fn take(&self) -> Vec<(String, serde_json::Value)> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }

    /// Asserts that exactly `printed` was sent, once, since the last call.
    #[track_caller]
    fn assert_sent(&self, printed: &Request) {
        let sent = self.take();
        assert_eq!(sent.len(), 1, "one request sent: {sent:#?}");
        let (operation, body) = &sent[0];
        assert_eq!(operation, printed.operation);
        assert_eq!(body, &printed.body, "params() is what was sent");
    }
}

/// A table on the engine, and a `Db` on it whose client records what it transmits; capacity
/// tracking is on, so `ReturnConsumedCapacity` is part of every request.
async fn setup() -> (TestTable<Shop>, Db<Shop>, Capture) {
    let table = singletable::testing::table::<Shop>().await.unwrap();
    let capture = Capture::default();
    let config = singletable::local::sdk_config().await.unwrap();
    let client = aws_sdk_dynamodb::Client::from_conf(
        aws_sdk_dynamodb::config::Builder::from(&config)
            .interceptor(capture.clone())
            .build(),
    );
    let db = Db::<Shop>::new(client)
        .with_table_name(table.table_name())
        .track_capacity();
    (table, db, capture)
}

fn customer(email: &str) -> Customer {
    Customer {
        id: "c1".into(),
        email: email.into(),
    }
}

/// The one request in `sent`.
#[track_caller]
fn only(sent: Vec<(String, serde_json::Value)>) -> (String, serde_json::Value) {
    assert_eq!(sent.len(), 1, "{sent:#?}");
    sent.into_iter().next().unwrap()
}

/// A sent request less its client request token, which is made when it is sent; asserts that
/// it had one.
#[track_caller]
fn without_token(
    (operation, mut body): (String, serde_json::Value),
) -> (String, serde_json::Value) {
    let token = body.as_object_mut().unwrap().remove("ClientRequestToken");
    assert!(
        token.is_some_and(|token| token.is_string()),
        "a token is sent"
    );
    (operation, body)
}

fn order(id: &str, status: Status) -> Order {
    Order {
        id: id.into(),
        customer: "c1".into(),
        status,
        total: 10,
        version: 0,
    }
}

#[tokio::test]
async fn single_item_writes_and_reads_send_what_params_prints() {
    let (_table, db, capture) = setup().await;
    let put = db.put(&order("o1", Status::Open));
    let printed = put.params().unwrap();
    put.send().await.unwrap();
    capture.assert_sent(&printed);

    let put = db
        .put(&order("o2", Status::Open))
        .only_if_absent()
        .condition(Order::TOTAL.gt(5));
    let printed = put.params().unwrap();
    put.send().await.unwrap_err();
    capture.assert_sent(&printed);

    let get = db.get(Order::key("o1").unwrap()).consistent();
    let printed = get.params().unwrap();
    get.send().await.unwrap();
    capture.assert_sent(&printed);

    let update = db
        .update(Order::key("o1").unwrap())
        .set(Order::STATUS, Status::Shipped)
        .given(Order::CUSTOMER, "c1".to_owned())
        .add(Order::TOTAL, 5)
        .expect_version(1);
    let printed = update.params().unwrap();
    update.send().await.unwrap();
    capture.assert_sent(&printed);

    let delete = db
        .delete(Order::key("o1").unwrap())
        .condition(Order::STATUS.eq(Status::Shipped));
    let printed = delete.params().unwrap();
    delete.send().await.unwrap();
    capture.assert_sent(&printed);
}

#[tokio::test]
async fn queries_and_scans_send_what_params_prints() {
    let (_table, db, capture) = setup().await;
    for n in 0..3 {
        db.put(&order(&format!("o{n}"), Status::Open))
            .send()
            .await
            .unwrap();
    }
    capture.take();
    let query = db
        .query(Order::gsi1("c1"))
        .sort(Order::STATUS, Status::Open)
        .filter(Order::TOTAL.ge(1))
        .descending()
        .limit(2);
    let printed = query.params().unwrap();
    query.page(None).await.unwrap();
    capture.assert_sent(&printed);

    let scan = db
        .scan::<Order>()
        .filter(Order::TOTAL.lt(100))
        .limit(50)
        .consistent();
    let printed = scan.params().unwrap();
    assert_eq!(printed.len(), 1);
    let items = scan.all().await.unwrap();
    assert_eq!(items.len(), 3);
    capture.assert_sent(&printed[0]);

    let scan = db.scan::<Order>().segments(3);
    let printed = scan.params().unwrap();
    scan.all().await.unwrap();
    let mut sent = capture.take();
    sent.sort_by_key(|(_, body)| body["Segment"].as_i64());
    let sent: Vec<&serde_json::Value> = sent.iter().map(|(_, body)| body).collect();
    let printed: Vec<&serde_json::Value> = printed.iter().map(|request| &request.body).collect();
    assert_eq!(sent, printed, "each segment's first page is as printed");
}

#[tokio::test]
async fn batches_send_what_params_prints() {
    let (_table, db, capture) = setup().await;
    let event = |at| Event {
        customer: "c1".into(),
        at,
    };
    // Batches cannot be conditional, so they take unversioned entities only.
    let batch = db.batch_write().put(&event(1)).put(&event(2));
    let printed = batch.params().unwrap();
    assert!(batch.send().await.unwrap().unprocessed.is_empty());
    assert_eq!(printed.len(), 1);
    capture.assert_sent(&printed[0]);

    let get = db
        .batch_get([Event::key("c1", 1).unwrap(), Event::key("c1", 2).unwrap()])
        .consistent();
    let printed = get.params().unwrap();
    assert_eq!(get.send().await.unwrap().items.len(), 2);
    assert_eq!(printed.len(), 1);
    capture.assert_sent(&printed[0]);
}

#[tokio::test]
async fn transactions_send_what_params_prints() {
    let (_table, db, capture) = setup().await;
    db.put(&order("o1", Status::Open)).send().await.unwrap();
    capture.take();
    let transaction = db
        .transaction()
        .with(db.put(&order("o2", Status::Open)).only_if_absent())
        .with(
            db.update(Order::key("o1").unwrap())
                .add(Order::TOTAL, 1)
                .expect_version(1),
        )
        .with(db.condition_check(Order::key("o3").unwrap(), Order::ID.not_exists()))
        .client_request_token("params-test-1");
    let printed = transaction.params().unwrap();
    transaction.send().await.unwrap();
    capture.assert_sent(&printed);

    let mut get = db.transact_get();
    let _first = get.get(Order::key("o1").unwrap());
    let _second = get.get(Order::key("o2").unwrap());
    let printed = get.params().unwrap();
    get.send().await.unwrap();
    capture.assert_sent(&printed);
}

/// Operations that make their own client request token print the request without it.
#[tokio::test]
async fn appends_and_rekeys_send_what_params_prints_with_their_token() {
    let (_table, db, capture) = setup().await;
    let event = Event {
        customer: "c1".into(),
        at: 100,
    };
    let append = db.append(&event, Event::AT);
    let printed = append.params().unwrap();
    append.send().await.unwrap();
    assert_eq!(
        without_token(only(capture.take())),
        (printed.operation.to_owned(), printed.body)
    );

    db.put(&order("o1", Status::Open)).send().await.unwrap();
    capture.take();
    let read = db
        .get(Order::key("o1").unwrap())
        .consistent()
        .send()
        .await
        .unwrap();
    capture.take();
    let moved = Order {
        id: "o9".into(),
        ..read.clone()
    };
    let rekey = db.rekey(&read, &moved);
    let printed = rekey.params().unwrap();
    rekey.send().await.unwrap();
    assert_eq!(
        without_token(only(capture.take())),
        (printed.operation.to_owned(), printed.body)
    );
}

#[tokio::test]
async fn creating_a_table_sends_what_params_prints() {
    let (_table, db, capture) = setup().await;
    let fresh = db
        .clone()
        .with_table_name(format!("{}-created", db.table_name()));
    let create = fresh.admin().create_table();
    let printed = create.params().unwrap();
    create.send().await.unwrap();
    capture.assert_sent(&printed);
    fresh
        .client()
        .delete_table()
        .table_name(fresh.table_name())
        .send()
        .await
        .unwrap();
}

/// A write of an entity with unique values is a transaction sent after a consistent read of
/// the item. For a new item, `params()` prints that transaction as it is sent: the item and
/// its value's sentinel. (For an item that exists, the release of its old value's sentinel,
/// known only from the item as read, joins the transaction when it is sent; `params()` says
/// so.)
#[tokio::test]
async fn a_new_item_with_a_unique_value_sends_the_transaction_params_prints() {
    let (_table, db, capture) = setup().await;
    let put = db.put(&customer("ada@example.com"));
    let printed = put.params().unwrap();
    put.send().await.unwrap();
    let mut sent = capture.take();
    let operations: Vec<&str> = sent
        .iter()
        .map(|(operation, _)| operation.as_str())
        .collect();
    assert_eq!(operations, ["GetItem", "TransactWriteItems"], "{sent:#?}");
    let (operation, body) = without_token(sent.remove(1));
    assert_eq!(operation, printed.operation);
    assert_eq!(body, printed.body, "params() is the transaction sent");
    let items = body["TransactItems"].as_array().unwrap();
    assert_eq!(items.len(), 2, "the item and its sentinel: {body:#}");
}

/// An update of a unique value of an existing item sends, after its consistent read, the
/// transaction `params()` prints with what only the item as read tells: the release of the old
/// value's sentinel, and the condition that the item is still as read.
#[tokio::test]
async fn an_update_of_a_unique_value_sends_what_params_prints_and_the_old_values_release() {
    let (_table, db, capture) = setup().await;
    db.put(&customer("ada@example.com")).send().await.unwrap();
    capture.take();
    let update = db
        .update(Customer::key("c1").unwrap())
        .set(Customer::EMAIL, "lovelace@example.com");
    let printed = update.params().unwrap();
    update.send().await.unwrap();
    let sent = capture.take();
    let transaction = sent
        .iter()
        .find(|(operation, _)| operation == "TransactWriteItems")
        .map(|(_, body)| body)
        .unwrap_or_else(|| panic!("a transaction is sent: {sent:#?}"));
    assert_eq!(printed.operation, "TransactWriteItems");
    let sent_items = transaction["TransactItems"].as_array().unwrap();
    let printed_items = printed.body["TransactItems"].as_array().unwrap();
    assert_eq!(
        printed_items.len(),
        2,
        "the update and the new value's claim"
    );
    assert_eq!(
        sent_items.len(),
        3,
        "and the old value's release: {transaction:#}"
    );
    // The update itself: the same key and changes; its condition gains the item as read (the
    // old email), which params() cannot know.
    let (sent_update, printed_update) = (&sent_items[0]["Update"], &printed_items[0]["Update"]);
    for field in ["TableName", "Key", "UpdateExpression"] {
        assert_eq!(sent_update[field], printed_update[field], "{field}");
    }
    let as_read = serde_json::json!({ "S": "ada@example.com" });
    let values = |update: &serde_json::Value| -> Vec<serde_json::Value> {
        update["ExpressionAttributeValues"]
            .as_object()
            .map(|values| values.values().cloned().collect())
            .unwrap_or_default()
    };
    assert!(values(sent_update).contains(&as_read), "{sent_update:#}");
    assert!(
        !values(printed_update).contains(&as_read),
        "{printed_update:#}"
    );
    // The new value's claim, exactly as printed.
    assert!(
        sent_items.contains(&printed_items[1]),
        "{:#} in {transaction:#}",
        printed_items[1]
    );
    // The release: a delete of the sentinel that the put above claimed.
    let release = sent_items
        .iter()
        .find(|item| item.get("Delete").is_some())
        .unwrap_or_else(|| panic!("a release is sent: {transaction:#}"));
    let released = release["Delete"]["Key"].to_string();
    assert!(released.contains("ada@example.com"), "{released}");
}

/// A put that keeps `created_at` sends what `params()` prints first (a creation, stamped now,
/// conditioned on no item); over an item, it sends that, then the same item keeping the stored
/// time, conditioned on it.
#[tokio::test]
async fn a_put_that_keeps_created_at_sends_what_params_prints_first() {
    let (_table, db, capture) = setup().await;
    let db =
        db.with_clock(|| std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_800_000_000));
    let note = |text: &str| Note {
        id: "n1".into(),
        text: text.into(),
        created_at: 0,
    };
    let put = db.put(&note("first"));
    let printed = put.params().unwrap();
    assert_eq!(
        printed.body["Item"]["created_at"],
        serde_json::json!({"N": "1800000000000"})
    );
    assert_eq!(
        printed.body["ConditionExpression"],
        "attribute_not_exists(#n0)"
    );
    put.send().await.unwrap();
    capture.assert_sent(&printed);

    let put = db.put(&note("second"));
    let printed = put.params().unwrap();
    put.send().await.unwrap();
    let sent = capture.take();
    assert_eq!(sent.len(), 2, "{sent:#?}");
    assert_eq!(sent[0].1, printed.body, "params() is what was sent first");
    let kept = &sent[1].1;
    assert_eq!(kept["Item"]["text"], serde_json::json!({"S": "second"}));
    assert_eq!(
        kept["Item"]["created_at"],
        serde_json::json!({"N": "1800000000000"})
    );
    assert_eq!(
        kept["ConditionExpression"],
        "attribute_exists(#n0) AND #n1 = :v0"
    );
}
