//! AWS's published single-table designs, modelled as a user would from the README, and read
//! back as the reference says each access pattern returns. The online shop is that of the
//! `aws-samples/amazon-dynamodb-design-patterns` repository: an order's partition holds the
//! order (`o#…`), its lines (`p#…`), its shipments (`sh#…`) and its invoice (`i#…`), and
//! GSI1 groups a shipment with the lines it carries.

mod common;

use aws_sdk_dynamodb::types::AttributeValue;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use singletable::op::query::Truncated;
use singletable::{Collection, DecodeError, Entity, Error, Item, Table};

#[derive(Table)]
#[dynamo(
    name = "shop",
    pk = "PK",
    sk = "SK",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
struct Shop;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "o#{order_id}", sk = "o#{order_id}")]
struct Order {
    order_id: String,
    customer_id: String,
    state: String,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "o#{order_id}", sk = "p#{product_id}",
         gsi1pk = "sh#{shipment_id}", gsi1sk = "p#{product_id}")]
struct OrderLine {
    order_id: String,
    product_id: String,
    shipment_id: String,
    quantity: u32,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "o#{order_id}", sk = "sh#{shipment_id}",
         gsi1pk = "sh#{shipment_id}", gsi1sk = "sh#{shipment_id}")]
struct Shipment {
    order_id: String,
    shipment_id: String,
    address: String,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "o#{order_id}", sk = "i#{invoice_id}")]
struct Invoice {
    order_id: String,
    invoice_id: String,
    amount: u64,
}

/// "All details of an order": every item of the order's partition.
#[derive(Collection, Debug, PartialEq)]
enum OrderDetails {
    Order(Order),
    Line(OrderLine),
    Shipment(Shipment),
    Invoice(Invoice),
}

/// "Shipment detail" on GSI1: the shipment and the lines it carries.
#[derive(Collection, Debug, PartialEq)]
enum ShipmentDetail {
    Shipment(Shipment),
    Line(OrderLine),
}

fn order(order_id: &str) -> Vec<OrderDetails> {
    let line = |product_id: &str, quantity| OrderLine {
        order_id: order_id.into(),
        product_id: product_id.into(),
        shipment_id: format!("{order_id}-s1"),
        quantity,
    };
    vec![
        OrderDetails::Order(Order {
            order_id: order_id.into(),
            customer_id: "c#12345".into(),
            state: "PLACED".into(),
        }),
        OrderDetails::Line(line("99", 2)),
        OrderDetails::Line(line("42", 1)),
        OrderDetails::Shipment(Shipment {
            order_id: order_id.into(),
            shipment_id: format!("{order_id}-s1"),
            address: "1 Main St".into(),
        }),
        OrderDetails::Invoice(Invoice {
            order_id: order_id.into(),
            invoice_id: format!("{order_id}-i1"),
            amount: 4200,
        }),
    ]
}

async fn put_all(db: &singletable::Db<Shop>, details: &[OrderDetails]) {
    for detail in details {
        match detail {
            OrderDetails::Order(item) => db.put(item).send().await.unwrap(),
            OrderDetails::Line(item) => db.put(item).send().await.unwrap(),
            OrderDetails::Shipment(item) => db.put(item).send().await.unwrap(),
            OrderDetails::Invoice(item) => db.put(item).send().await.unwrap(),
        }
    }
}

/// In DynamoDB's sort key order: `i#` < `o#` < `p#` < `sh#`, and lines by product.
fn in_key_order(details: &[OrderDetails]) -> Vec<&OrderDetails> {
    let mut sorted: Vec<&OrderDetails> = details.iter().collect();
    sorted.sort_by_key(|detail| match detail {
        OrderDetails::Order(order) => format!("o#{}", order.order_id),
        OrderDetails::Line(line) => format!("p#{}", line.product_id),
        OrderDetails::Shipment(shipment) => format!("sh#{}", shipment.shipment_id),
        OrderDetails::Invoice(invoice) => format!("i#{}", invoice.invoice_id),
    });
    sorted
}

#[tokio::test]
async fn all_details_of_an_order_are_its_whole_partition() {
    let db = singletable::testing::table::<Shop>().await.unwrap();
    let wanted = order("12345");
    put_all(&db, &wanted).await;
    put_all(&db, &order("12346")).await;

    let request = db
        .query(Order::partition("12345"))
        .collection::<OrderDetails>()
        .params()
        .unwrap();
    assert_eq!(
        request.body["KeyConditionExpression"], "#n0 = :v0",
        "the entities share no sort key prefix, so the partition alone is the condition"
    );
    let details = db
        .query(Order::partition("12345"))
        .collection::<OrderDetails>()
        .all()
        .await
        .unwrap();
    assert_eq!(
        details.iter().collect::<Vec<_>>(),
        in_key_order(&wanted),
        "the order, its lines, its shipment and its invoice, in sort key order"
    );
    // Starting from another entity of the partition reads the same items.
    let from_an_invoice = db
        .query(Invoice::partition("12345"))
        .collection::<OrderDetails>()
        .all()
        .await
        .unwrap();
    assert_eq!(from_an_invoice, details);
    // One entity's query still reads that entity alone.
    let lines = db.query(OrderLine::partition("12345")).all().await.unwrap();
    assert_eq!(lines.len(), 2);
}

#[tokio::test]
async fn a_shipments_detail_on_the_index_is_the_shipment_with_its_lines() {
    let db = singletable::testing::table::<Shop>().await.unwrap();
    let wanted = order("777");
    put_all(&db, &wanted).await;
    let detail = db
        .query(Shipment::gsi1("777-s1"))
        .collection::<ShipmentDetail>()
        .all()
        .await
        .unwrap();
    let lines = detail
        .iter()
        .filter(|item| matches!(item, ShipmentDetail::Line(_)))
        .count();
    let shipments = detail
        .iter()
        .filter(|item| matches!(item, ShipmentDetail::Shipment(_)))
        .count();
    assert_eq!((shipments, lines), (1, 2), "{detail:?}");
    // Lines sort before the shipment on GSI1 (`p#` < `sh#`).
    assert!(matches!(detail.last(), Some(ShipmentDetail::Shipment(_))));
}

/// Entities that do share constant text keep it in the condition: fewer items read.
#[test]
fn a_collection_whose_sort_keys_share_a_prefix_reads_that_prefix() {
    #[derive(Table)]
    #[dynamo(name = "docs", pk = "PK", sk = "SK")]
    struct Docs;

    #[derive(Entity, Serialize, Deserialize, Debug, PartialEq)]
    #[dynamo(table = Docs, pk = "WS#{workspace}", sk = "DOC#{doc}")]
    struct Document {
        workspace: String,
        doc: String,
    }

    #[derive(Entity, Serialize, Deserialize, Debug, PartialEq)]
    #[dynamo(table = Docs, pk = "WS#{workspace}", sk = "DOC#{doc}#CMT#{comment}")]
    struct Comment {
        workspace: String,
        doc: String,
        comment: String,
    }

    #[derive(Collection, Debug, PartialEq)]
    enum Thread {
        Document(Document),
        Comment(Comment),
    }

    let db = common::offline::<Docs>();
    let request = db
        .query(Comment::partition("w1"))
        .collection::<Thread>()
        .params()
        .unwrap();
    assert_eq!(
        request.body["KeyConditionExpression"],
        "#n0 = :v0 AND begins_with(#n1, :v1)"
    );
    assert_eq!(
        request.body["ExpressionAttributeValues"][":v1"]["S"],
        "DOC#"
    );
    // A part given first narrows the collection by the starting entity's template.
    let one_document = db
        .query(Comment::partition("w1"))
        .sort(Comment::DOC, "d1".to_owned())
        .collection::<Thread>()
        .params()
        .unwrap();
    assert_eq!(
        one_document.body["ExpressionAttributeValues"][":v1"]["S"],
        "DOC#d1#CMT#"
    );
}

/// AWS's version-control pattern: `v0` holds the latest version of a document and
/// `v{version}` each version. A `u64` part always writes 20 digits, so `v{version}` is never
/// `v0`, and the two entities share the table (and a collection) without a refusal.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "doc#{doc_id}", sk = "v{version}")]
struct DocVersion {
    doc_id: String,
    version: u64,
    body: String,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "doc#{doc_id}", sk = "v0")]
struct DocLatest {
    doc_id: String,
    latest: u64,
    body: String,
}

#[derive(Collection, Debug, PartialEq)]
enum DocHistory {
    Latest(DocLatest),
    Version(DocVersion),
}

#[tokio::test]
async fn a_fixed_width_part_is_no_collision_with_a_constant() {
    let db = singletable::testing::table::<Shop>().await.unwrap();
    let latest = DocLatest {
        doc_id: "readme".into(),
        latest: 2,
        body: "second".into(),
    };
    let versions: Vec<DocVersion> = (1..=2)
        .map(|version| DocVersion {
            doc_id: "readme".into(),
            version,
            body: if version == 1 { "first" } else { "second" }.into(),
        })
        .collect();
    db.put(&latest).send().await.unwrap();
    for version in &versions {
        db.put(version).send().await.unwrap();
    }
    assert_eq!(
        db.get(DocLatest::key("readme").unwrap())
            .send()
            .await
            .unwrap(),
        latest
    );
    let history = db
        .query(DocLatest::partition("readme"))
        .collection::<DocHistory>()
        .all()
        .await
        .unwrap();
    // `v0` sorts before `v00000000000000000001`.
    let mut expected = vec![DocHistory::Latest(latest)];
    expected.extend(versions.into_iter().map(DocHistory::Version));
    assert_eq!(history, expected);
}

/// The shop's customer, whose id another tool kept only in its keys (`PK = SK = c#12345`).
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "c#{customer_id}", sk = "c#{customer_id}")]
struct Customer {
    customer_id: String,
    email: String,
}

fn string(text: &str) -> AttributeValue {
    AttributeValue::S(text.to_owned())
}

/// An item as another tool wrote it: its keys, the entity attribute and `attributes`.
fn foreign_item(entity: &str, keys: &[(&str, &str)], attributes: &[(&str, &str)]) -> Item {
    let mut item: Item = keys
        .iter()
        .chain(attributes)
        .map(|(name, value)| ((*name).to_owned(), string(value)))
        .collect();
    item.insert("_type".to_owned(), string(entity));
    item
}

#[tokio::test]
async fn fields_kept_only_in_keys_are_read_from_the_keys() {
    let db = singletable::testing::table::<Shop>().await.unwrap();
    let items = [
        foreign_item(
            "Customer",
            &[("PK", "c#12345"), ("SK", "c#12345")],
            &[("email", "ana@example.com")],
        ),
        // A line whose order, product and shipment live only in its table and index keys.
        foreign_item(
            "OrderLine",
            &[("PK", "o#12345"), ("SK", "p#99")],
            &[("GSI1PK", "sh#s1"), ("GSI1SK", "p#99")],
        ),
        // A fixed-width integer part: the version, read as the number it renders.
        foreign_item(
            "DocVersion",
            &[("PK", "doc#readme"), ("SK", "v00000000000000000003")],
            &[("body", "third")],
        ),
    ];
    for mut item in items {
        if item.get("_type") == Some(&string("OrderLine")) {
            item.insert("quantity".to_owned(), AttributeValue::N("2".to_owned()));
        }
        singletable::testing::put_raw(&db, item).await.unwrap();
    }
    assert_eq!(
        db.get(Customer::key("12345").unwrap())
            .send()
            .await
            .unwrap(),
        Customer {
            customer_id: "12345".into(),
            email: "ana@example.com".into(),
        }
    );
    let line = OrderLine {
        order_id: "12345".into(),
        product_id: "99".into(),
        shipment_id: "s1".into(),
        quantity: 2,
    };
    assert_eq!(
        db.get(OrderLine::key("12345", "99").unwrap())
            .send()
            .await
            .unwrap(),
        line
    );
    // Through the index and through the partition, as through a get.
    assert_eq!(
        db.query(Shipment::gsi1("s1"))
            .collection::<ShipmentDetail>()
            .all()
            .await
            .unwrap(),
        vec![ShipmentDetail::Line(line.clone())]
    );
    assert_eq!(
        db.query(DocVersion::partition("readme"))
            .all()
            .await
            .unwrap(),
        vec![DocVersion {
            doc_id: "readme".into(),
            version: 3,
            body: "third".into(),
        }]
    );
    // A time part, and fields kept only in an index's keys: a device's state change.
    let change = foreign_item(
        "DeviceState",
        &[("PK", "d9"), ("SK", "2020-04-27T09:12:00.000000000Z")],
        &[
            ("GSI1PK", "OP#Liz"),
            ("GSI1SK", "NORMAL#2020-04-27T09:12:00.000000000Z"),
        ],
    );
    singletable::testing::put_raw(&db, change).await.unwrap();
    assert_eq!(
        db.query(DeviceState::partition("d9")).all().await.unwrap(),
        vec![DeviceState {
            device_id: "d9".into(),
            at: "2020-04-27T09:12:00Z".parse().unwrap(),
            operator: "Liz".into(),
            state: "NORMAL".into(),
        }]
    );
    // Written back by the library, the item gains the fields and keeps its keys.
    db.put(&line).send().await.unwrap();
    let stored = common::raw_items(&db)
        .await
        .into_iter()
        .find(|item| item.get("SK") == Some(&string("p#99")))
        .unwrap();
    assert_eq!(stored.get("order_id"), Some(&string("12345")));
    assert_eq!(stored.get("PK"), Some(&string("o#12345")));
}

#[tokio::test]
async fn a_key_that_does_not_give_its_field_is_an_error_naming_the_field_and_template() {
    let db = singletable::testing::table::<Shop>().await.unwrap();
    // Another tool's id holds the template's separator: `c#12#34` could be `12#34` or more.
    let ambiguous = foreign_item(
        "Customer",
        &[("PK", "c#12#34"), ("SK", "c#12#34")],
        &[("email", "bo@example.com")],
    );
    singletable::testing::put_raw(&db, ambiguous).await.unwrap();
    // Not the digits a `u64` part writes.
    let not_a_number = foreign_item(
        "DocVersion",
        &[("PK", "doc#notes"), ("SK", "vLATEST")],
        &[("body", "?")],
    );
    singletable::testing::put_raw(&db, not_a_number)
        .await
        .unwrap();
    let errors: Vec<Result<Customer, Error>> = db.scan::<Customer>().items().collect().await;
    let versions: Vec<Result<DocVersion, Error>> = db.scan::<DocVersion>().items().collect().await;
    let errors: Vec<Error> = (errors.into_iter().filter_map(Result::err))
        .chain(versions.into_iter().filter_map(Result::err))
        .collect();
    let described: Vec<(&str, &str)> = errors
        .iter()
        .map(|error| match error {
            Error::Decode(DecodeError::FieldFromKey {
                field, template, ..
            }) => (*field, *template),
            other => panic!("expected a field the key does not give, got {other:?}"),
        })
        .collect();
    assert_eq!(
        described,
        [
            ("customer_id", "c#{customer_id}"),
            ("version", "v{version}")
        ]
    );
    let message = errors[0].to_string();
    assert!(message.contains("`customer_id`"), "{message}");
    assert!(message.contains("c#{customer_id}"), "{message}");
}

/// A missing field that no key renders is named as the attribute, not as the item (`.`).
#[tokio::test]
async fn a_missing_attribute_is_named() {
    let db = singletable::testing::table::<Shop>().await.unwrap();
    let without_email = foreign_item("Customer", &[("PK", "c#7"), ("SK", "c#7")], &[]);
    singletable::testing::put_raw(&db, without_email)
        .await
        .unwrap();
    let error = db
        .get(Customer::key("7").unwrap())
        .send()
        .await
        .unwrap_err();
    let Error::Decode(DecodeError::Attribute { attribute, .. }) = &error else {
        panic!("expected a missing attribute, got {error:?}");
    };
    assert_eq!(attribute, "email");
}
/// AWS's device state log: each state change of a device at its time, and on GSI1 the
/// changes an operator sees by state and time (`State#Date`).
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "{device_id}", sk = "{at}",
         gsi1pk = "OP#{operator}", gsi1sk = "{state}#{at}")]
struct DeviceState {
    device_id: String,
    at: chrono::DateTime<chrono::Utc>,
    operator: String,
    state: String,
}

fn time(text: &str) -> chrono::DateTime<chrono::Utc> {
    text.parse().unwrap()
}

async fn device_log(db: &singletable::Db<Shop>) -> Vec<DeviceState> {
    let changes = [
        ("d1", "2020-04-24T14:40:00Z", "NORMAL"),
        ("d1", "2020-04-27T09:12:00Z", "WARNING1"),
        ("d1", "2020-04-27T16:03:00Z", "WARNING4"),
        ("d2", "2020-04-27T23:59:59Z", "WARNING4"),
        ("d2", "2020-04-28T00:00:00Z", "WARNING4"),
        ("d2", "2021-01-02T08:00:00Z", "WARNING4#2"),
    ];
    let mut written = Vec::new();
    for (device_id, at, state) in changes {
        let change = DeviceState {
            device_id: device_id.into(),
            at: time(at),
            operator: "Liz".into(),
            state: state.into(),
        };
        // `WARNING4#2` holds the template's separator: refused, and not stored.
        if db.put(&change).send().await.is_ok() {
            written.push(change);
        }
    }
    written
}

#[tokio::test]
async fn a_part_prefix_selects_a_string_start_or_a_truncated_time() {
    let db = singletable::testing::table::<Shop>().await.unwrap();
    let log = device_log(&db).await;
    assert_eq!(log.len(), 5, "the state holding `#` is refused");
    let states = |items: Vec<DeviceState>| -> Vec<(String, String)> {
        items
            .into_iter()
            .map(|change| (change.device_id, change.at.to_rfc3339()))
            .collect()
    };
    // The reference's begins_with(State#Date, "WARNING4#2020-04-27"): a state and a day.
    let request = db
        .query(DeviceState::gsi1("Liz"))
        .sort(DeviceState::STATE, "WARNING4".to_owned())
        .begins_with(
            DeviceState::AT,
            Truncated::day(&time("2020-04-27T12:00:00Z")),
        );
    assert_eq!(
        request.params().unwrap().body["ExpressionAttributeValues"][":v1"]["S"],
        "WARNING4#2020-04-27"
    );
    assert_eq!(
        states(request.all().await.unwrap()),
        [
            ("d1".to_owned(), "2020-04-27T16:03:00+00:00".to_owned()),
            ("d2".to_owned(), "2020-04-27T23:59:59+00:00".to_owned()),
        ]
    );
    // The states that start with `WARNING`, of any number, on any day.
    let warnings = db
        .query(DeviceState::gsi1("Liz"))
        .begins_with(DeviceState::STATE, "WARNING")
        .all()
        .await
        .unwrap();
    assert_eq!(warnings.len(), 4);
    // A device's states of a month, an hour and a year, on the table's sort key.
    let in_month = db
        .query(DeviceState::partition("d2"))
        .begins_with(
            DeviceState::AT,
            Truncated::month(&time("2020-04-01T00:00:00Z")),
        )
        .all()
        .await
        .unwrap();
    assert_eq!(in_month.len(), 2);
    let in_hour = db
        .query(DeviceState::partition("d1"))
        .begins_with(
            DeviceState::AT,
            Truncated::hour(&time("2020-04-27T09:59:59Z")),
        )
        .all()
        .await
        .unwrap();
    assert_eq!(
        states(in_hour),
        [("d1".to_owned(), "2020-04-27T09:12:00+00:00".to_owned())]
    );
    let in_year = db
        .query(DeviceState::partition("d1"))
        .begins_with(
            DeviceState::AT,
            Truncated::year(&time("2021-06-01T00:00:00Z")),
        )
        .all()
        .await
        .unwrap();
    assert!(in_year.is_empty());
}

#[tokio::test]
async fn a_string_prefix_holding_a_separator_is_refused_before_sending() {
    let db = singletable::testing::table::<Shop>().await.unwrap();
    device_log(&db).await;
    // `WARNING4#2020` would run past the state into the time: no exact condition.
    let refused = db
        .query(DeviceState::gsi1("Liz"))
        .begins_with(DeviceState::STATE, "WARNING4#2020")
        .all()
        .await
        .unwrap_err();
    assert!(
        matches!(
            &refused,
            Error::Key(singletable::KeyError::Separator {
                field: "state",
                separator: '#',
                ..
            })
        ),
        "{refused:?}"
    );
}

/// The developer guide's GSI overloading: GSI1's partition key is the table's sort key
/// attribute, its sort key a `Data` attribute each entity fills with what it is searched by.
#[derive(Table)]
#[dynamo(
    name = "hr_overloading",
    pk = "PK",
    sk = "SK",
    gsi1(name = "GSI1", pk = "SK", sk = "Data")
)]
struct Hr;

/// An employee: on GSI1 under `EMPLOYEE`, by name.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Hr, pk = "HR-{employee_id}", sk = "EMPLOYEE",
         gsi1pk = "EMPLOYEE", gsi1sk = name)]
struct Employee {
    employee_id: String,
    #[serde(rename = "Data")]
    name: String,
}

/// An employee's sales of a quarter: on GSI1 under the quarter, by amount (as text).
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Hr, pk = "HR-{employee_id}", sk = "Q#{quarter}",
         gsi1pk = "Q#{quarter}", gsi1sk = amount)]
struct QuarterSales {
    employee_id: String,
    quarter: String,
    #[serde(rename = "Data")]
    amount: String,
}

#[tokio::test]
async fn an_index_keyed_on_the_tables_sort_key_is_written_and_queried() {
    let db = singletable::testing::table::<Hr>().await.unwrap();
    let employees = [("e1", "John"), ("e2", "Ana"), ("e3", "Mia")].map(|(id, name)| Employee {
        employee_id: id.into(),
        name: name.into(),
    });
    for employee in &employees {
        db.put(employee).send().await.unwrap();
    }
    for (id, quarter, amount) in [
        ("e1", "2019Q1", "05000"),
        ("e2", "2019Q1", "07500"),
        ("e2", "2019Q2", "01000"),
    ] {
        let sales = QuarterSales {
            employee_id: id.into(),
            quarter: quarter.into(),
            amount: amount.into(),
        };
        db.put(&sales).send().await.unwrap();
    }
    let request = db.query(Employee::gsi1()).params().unwrap();
    assert_eq!(request.body["IndexName"], "GSI1");
    assert_eq!(request.body["ExpressionAttributeNames"]["#n0"], "SK");
    // Every employee, by name.
    let by_name: Vec<String> = db
        .query(Employee::gsi1())
        .all()
        .await
        .unwrap()
        .into_iter()
        .map(|employee| employee.name)
        .collect();
    assert_eq!(by_name, ["Ana", "John", "Mia"]);
    // A typed key condition on the index's sort key.
    let from_j = db
        .query(Employee::gsi1())
        .ge(Employee::NAME, "J".to_owned())
        .all()
        .await
        .unwrap();
    assert_eq!(from_j.len(), 2);
    // A quarter's sales across employees, highest first.
    let quarter: Vec<String> = db
        .query(QuarterSales::gsi1("2019Q1"))
        .descending()
        .all()
        .await
        .unwrap()
        .into_iter()
        .map(|sales| sales.employee_id)
        .collect();
    assert_eq!(quarter, ["e2", "e1"]);
    // Each item is written once, its sort key serving the index.
    let stored = common::raw_items(&db).await;
    assert_eq!(stored.len(), 6);
    assert!(stored.iter().all(|item| !item.contains_key("GSI1PK")));
}

/// AWS's atomic counter: `SET Latest = if_not_exists(Latest, 0) + 1` on an item that may not
/// exist yet. Several counters in flight on one absent key each count once.
#[tokio::test]
async fn an_upsert_counts_from_its_initial_value_and_concurrent_ones_each_count_once() {
    let db = singletable::testing::table::<Shop>().await.unwrap();
    let initial = |doc_id: &str| DocLatest {
        doc_id: doc_id.into(),
        latest: 0,
        body: String::new(),
    };
    let count = |doc_id: &'static str| {
        db.update(DocLatest::key(doc_id).unwrap())
            .increment(DocLatest::LATEST, 1)
            .or_create(&initial(doc_id))
            .send()
    };
    assert_eq!(
        count("readme").await.unwrap().latest,
        1,
        "created at 0, counted once"
    );
    assert_eq!(count("readme").await.unwrap().latest, 2, "then updated");
    // Eight writers at once on a key none has created: each counts exactly once, whichever
    // creates the item; the others update it.
    let writers = 8;
    let results = futures::future::join_all((0..writers).map(|_| count("guide"))).await;
    let mut seen: Vec<u64> = results
        .into_iter()
        .map(|result| result.unwrap().latest)
        .collect();
    seen.sort_unstable();
    assert_eq!(seen, (1..=writers).collect::<Vec<u64>>());
    assert_eq!(
        db.get(DocLatest::key("guide").unwrap())
            .consistent()
            .send()
            .await
            .unwrap()
            .latest,
        writers
    );
    // The initial value must have the update's key.
    let refused = db
        .update(DocLatest::key("readme").unwrap())
        .increment(DocLatest::LATEST, 1)
        .or_create(&initial("other"))
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(
            refused,
            Error::Update(singletable::op::update::UpdateError::NotApplicableToNewItem { .. })
        ),
        "{refused:?}"
    );
}

/// A table with every managed attribute, for an upsert's guarantees.
#[derive(Table)]
#[dynamo(
    name = "club",
    pk = "PK",
    sk = "SK",
    ttl = "expires_at",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
struct Club;

/// A member: active ones on the sparse GSI1, a unique email, an expiry, a version and
/// timestamps.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Club, pk = "MEMBER#{id}", sk = "MEMBER",
         gsi1pk = "ACTIVE", gsi1sk = "MEMBER#{id}", gsi1_when = ClubMember::is_active(active))]
struct ClubMember {
    id: String,
    #[dynamo(unique)]
    email: String,
    active: bool,
    visits: u32,
    #[dynamo(ttl)]
    expires_at: Option<u64>,
    #[dynamo(version)]
    version: u64,
    #[dynamo(created_at)]
    created_at: u64,
    #[dynamo(updated_at)]
    updated_at: u64,
}

impl ClubMember {
    fn is_active(active: &bool) -> bool {
        *active
    }

    fn new(id: &str, active: bool) -> Self {
        ClubMember {
            id: id.into(),
            email: format!("{id}@example.com"),
            active,
            visits: 0,
            expires_at: Some(4_102_444_800),
            version: 0,
            created_at: 0,
            updated_at: 0,
        }
    }
}

#[tokio::test]
async fn an_upsert_creates_with_every_guarantee_a_put_keeps() {
    let db = singletable::testing::table::<Club>().await.unwrap();
    let visit = |id: &str| {
        db.update(ClubMember::key(id).unwrap())
            .increment(ClubMember::VISITS, 1)
            .or_create(&ClubMember::new(id, true))
            .send()
    };
    let created = visit("m1").await.unwrap();
    assert_eq!((created.visits, created.version), (1, 1));
    assert!(created.created_at > 0 && created.created_at == created.updated_at);
    assert_eq!(created.expires_at, Some(4_102_444_800));
    let again = visit("m1").await.unwrap();
    assert_eq!((again.visits, again.version), (2, 2));
    assert_eq!(again.created_at, created.created_at, "created once");
    // Its index keys, by its sparse rule: active members are on GSI1.
    let active = db.query(ClubMember::gsi1()).all().await.unwrap();
    assert_eq!(active, vec![again.clone()]);
    // Created inactive: not on the index.
    let inactive = db
        .update(ClubMember::key("m2").unwrap())
        .set(ClubMember::ACTIVE, false)
        .or_create(&ClubMember::new("m2", true))
        .send()
        .await
        .unwrap();
    assert!(!inactive.active);
    assert_eq!(db.query(ClubMember::gsi1()).all().await.unwrap().len(), 1);
    // Its unique email is claimed: another member cannot take it.
    let mut thief = ClubMember::new("m3", true);
    thief.email = "m1@example.com".into();
    let taken = db.put(&thief).send().await.unwrap_err();
    assert!(matches!(taken, Error::Unique { .. }), "{taken:?}");
    // An upsert at an expected version cannot create.
    let refused = db
        .update(ClubMember::key("m4").unwrap())
        .increment(ClubMember::VISITS, 1)
        .expect_version(3)
        .or_create(&ClubMember::new("m4", true))
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(
            refused,
            Error::Update(singletable::op::update::UpdateError::ConditionedCreation { .. })
        ),
        "{refused:?}"
    );
}
