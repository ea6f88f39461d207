//! Each kind of request the library sends has a span whose attributes are the ones
//! OpenTelemetry's semantic conventions for DynamoDB define for that operation, with their
//! types, as pinned in `singletable`'s `trace` module (v1.39.0,
//! `docs/db/dynamodb.md`): checked here with a capturing subscriber, for the data
//! operations, a migration's table change, the table's description, and the Streams API's
//! reads.
mod common;
use common::spans::{field, Capture, Captured, Kind};
use common::Needs;

use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, Table};
use std::time::Duration;
use tracing_subscriber::layer::SubscriberExt;

/// The table as first created: no index.
#[derive(Table)]
#[dynamo(name = "conventions", pk = "PK", sk = "SK")]
struct Before;

/// The same table once its migration has added an index.
#[derive(Table)]
#[dynamo(
    name = "conventions",
    pk = "PK",
    sk = "SK",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
struct After;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = After, pk = "ORDER#{id}", sk = "ORDER",
         gsi1pk = "CUSTOMER#{customer}", gsi1sk = "ORDER#{id}")]
struct Order {
    id: String,
    customer: String,
    note: String,
}

/// An attribute's type in the conventions.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Type {
    String,
    /// Recorded as the JSON text of the array (`tracing` has no arrays).
    StringArray,
    Boolean,
    Int,
    Double,
}

/// The attributes every DynamoDB span may have (the AWS SDK's and the database client's), and
/// their types.
const COMMON: &[(&str, Type)] = &[
    ("db.system.name", Type::String),
    ("db.operation.name", Type::String),
    ("rpc.system", Type::String),
    ("rpc.service", Type::String),
    ("rpc.method", Type::String),
    ("cloud.region", Type::String),
    ("server.address", Type::String),
    ("server.port", Type::Int),
    ("aws.request_id", Type::String),
    ("aws.extended_request_id", Type::String),
    ("aws.dynamodb.table_names", Type::StringArray),
    ("aws.dynamodb.consumed_capacity", Type::StringArray),
];

/// The attributes v1.39.0 defines for `operation` beyond [`COMMON`], with their types.
fn defined(operation: &str) -> &'static [(&'static str, Type)] {
    match operation {
        "GetItem" => &[
            ("aws.dynamodb.consistent_read", Type::Boolean),
            ("aws.dynamodb.projection", Type::String),
        ],
        "Query" => &[
            ("aws.dynamodb.consistent_read", Type::Boolean),
            ("aws.dynamodb.index_name", Type::String),
            ("aws.dynamodb.limit", Type::Int),
            ("aws.dynamodb.projection", Type::String),
            ("aws.dynamodb.scan_forward", Type::Boolean),
            ("aws.dynamodb.select", Type::String),
        ],
        "Scan" => &[
            ("aws.dynamodb.consistent_read", Type::Boolean),
            ("aws.dynamodb.count", Type::Int),
            ("aws.dynamodb.index_name", Type::String),
            ("aws.dynamodb.limit", Type::Int),
            ("aws.dynamodb.projection", Type::String),
            ("aws.dynamodb.scanned_count", Type::Int),
            ("aws.dynamodb.segment", Type::Int),
            ("aws.dynamodb.select", Type::String),
            ("aws.dynamodb.total_segments", Type::Int),
        ],
        "CreateTable" => &[
            ("aws.dynamodb.global_secondary_indexes", Type::StringArray),
            ("aws.dynamodb.local_secondary_indexes", Type::StringArray),
            ("aws.dynamodb.provisioned_read_capacity", Type::Double),
            ("aws.dynamodb.provisioned_write_capacity", Type::Double),
        ],
        "UpdateTable" => &[
            ("aws.dynamodb.attribute_definitions", Type::StringArray),
            (
                "aws.dynamodb.global_secondary_index_updates",
                Type::StringArray,
            ),
            ("aws.dynamodb.provisioned_read_capacity", Type::Double),
            ("aws.dynamodb.provisioned_write_capacity", Type::Double),
        ],
        _ => &[],
    }
}

/// Fails unless every convention attribute of `span` is one its operation defines, of the
/// type defined (a `string[]` parsing as a JSON array of strings).
fn check(span: &Captured) {
    let operation = field(span, "db.operation.name");
    let allowed = COMMON.iter().chain(defined(operation));
    for (name, value) in &span.fields {
        let conventional = ["db.", "rpc.", "aws.", "server.", "cloud."]
            .iter()
            .any(|prefix| name.starts_with(prefix));
        if !conventional {
            continue;
        }
        let Some((_, kind)) = allowed.clone().find(|(known, _)| known == name) else {
            panic!("{operation}: `{name}` is not an attribute v1.39.0 defines for it: {span:#?}");
        };
        let recorded = span.kinds[name];
        let expected = match kind {
            Type::String | Type::StringArray => Kind::String,
            Type::Boolean => Kind::Boolean,
            Type::Int => Kind::Int,
            Type::Double => Kind::Double,
        };
        assert_eq!(recorded, expected, "{operation}: `{name}` {span:#?}");
        if *kind == Type::StringArray {
            let array: Result<Vec<String>, _> = serde_json::from_str(value);
            assert!(
                array.is_ok(),
                "{operation}: `{name}` is a string[]: {value}"
            );
        }
    }
}

/// The spans of `operation`, each checked.
fn of<'a>(spans: &'a [Captured], operation: &str) -> Vec<&'a Captured> {
    let found: Vec<&Captured> = spans
        .iter()
        .filter(|span| field(span, "db.operation.name") == operation)
        .collect();
    assert!(!found.is_empty(), "no {operation} span in {spans:#?}");
    found.iter().for_each(|span| check(span));
    found
}

fn order(id: &str) -> Order {
    Order {
        id: id.into(),
        customer: "ana".into(),
        note: "n".into(),
    }
}

#[derive(Table)]
#[dynamo(
    name = "conventions_streamed",
    pk = "PK",
    sk = "SK",
    stream = "keys_only"
)]
struct Streamed;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Streamed, pk = "NOTE#{id}", sk = "NOTE")]
struct Note {
    id: u32,
}

/// The Streams API's reads have spans of the same shape: the AWS SDK's attributes, the table,
/// and nothing the DynamoDB operations define.
#[tokio::test]
async fn stream_reads_have_the_aws_sdk_attributes_with_their_types() {
    let capture = Capture::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let table = singletable::testing::table::<Streamed>().await.unwrap();
    table.put(&Note { id: 1 }).send().await.unwrap();
    let streams = singletable::local::streams_client().await.unwrap();
    let mut reader = table.admin().stream_reader("conventions", streams);
    let page = reader.poll::<Note>().await.unwrap();
    reader.commit(&page).await.unwrap();
    let spans = capture.take();
    for operation in ["DescribeStream", "GetShardIterator", "GetRecords"] {
        for span in of(&spans, operation) {
            assert_eq!(field(span, "rpc.service"), "DynamoDB Streams");
            assert_eq!(field(span, "rpc.method"), operation);
            assert_eq!(field(span, "singletable.attempts"), "1", "{span:#?}");
            assert!(!field(span, "server.address").is_empty(), "{span:#?}");
            assert!(!field(span, "aws.request_id").is_empty(), "{span:#?}");
        }
    }
}

#[tokio::test]
async fn every_span_has_the_attributes_the_pinned_conventions_define_with_their_types() {
    if common::skips(Needs::TableChange) {
        return;
    }
    let capture = Capture::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let before = singletable::testing::table::<Before>().await.unwrap();
    let db = Db::<After>::new(before.client().clone())
        .with_table_name(before.table_name())
        .track_capacity();
    // A table change: its index is created by `UpdateTable`.
    db.admin()
        .table_migration(&[])
        .poll_interval(Duration::from_millis(50))
        .send()
        .await
        .unwrap();

    db.put(&order("o1")).send().await.unwrap();
    db.put(&order("o2")).send().await.unwrap();
    db.update(Order::key("o1").unwrap())
        .set(Order::NOTE, "m".to_owned())
        .send()
        .await
        .unwrap();
    db.get(Order::key("o1").unwrap())
        .consistent()
        .send()
        .await
        .unwrap();
    let newest = db
        .query(Order::gsi1("ana"))
        .descending()
        .limit(1)
        .all()
        .await
        .unwrap();
    assert_eq!(newest.len(), 2, "pages of one until the partition ends");
    let counted = db.query(Order::partition("o1")).count().await.unwrap();
    assert_eq!(counted, 1);
    let scanned: Vec<Order> = db.scan::<Order>().segments(2).limit(5).all().await.unwrap();
    assert_eq!(scanned.len(), 2);
    let keys = ["o1", "o2"].map(|id| Order::key(id).unwrap());
    let fetched = db.batch_get(keys.clone()).send().await.unwrap();
    assert_eq!(fetched.items.len(), 2);
    let mut get = db.transact_get();
    let _slot = get.get(keys[0].clone());
    get.send().await.unwrap();
    db.transaction()
        .with(db.delete(keys[1].clone()))
        .send()
        .await
        .unwrap();
    let written = db
        .batch_write()
        .delete(keys[0].clone())
        .send()
        .await
        .unwrap();
    assert!(written.unprocessed.is_empty());

    let spans = capture.take();
    for span in &spans {
        check(span);
    }

    let create = of(&spans, "CreateTable");
    assert!(!create[0]
        .fields
        .contains_key("aws.dynamodb.global_secondary_indexes"));
    let update = of(&spans, "UpdateTable");
    let updates: Vec<String> = serde_json::from_str(field(
        update[0],
        "aws.dynamodb.global_secondary_index_updates",
    ))
    .unwrap();
    let created: serde_json::Value = serde_json::from_str(&updates[0]).unwrap();
    assert_eq!(created["Create"]["IndexName"], "GSI1", "{created}");
    let definitions: Vec<String> =
        serde_json::from_str(field(update[0], "aws.dynamodb.attribute_definitions")).unwrap();
    assert!(
        definitions
            .iter()
            .any(|definition| definition.contains("GSI1PK")),
        "{definitions:?}"
    );
    of(&spans, "DescribeTable");

    let get = of(&spans, "GetItem");
    assert_eq!(field(get[0], "aws.dynamodb.consistent_read"), "true");
    let queries = of(&spans, "Query");
    let newest = queries
        .iter()
        .find(|span| span.fields.contains_key("aws.dynamodb.index_name"))
        .expect("the index query");
    assert_eq!(field(newest, "aws.dynamodb.index_name"), "GSI1");
    assert_eq!(field(newest, "aws.dynamodb.limit"), "1");
    assert_eq!(field(newest, "aws.dynamodb.scan_forward"), "false");
    assert_eq!(field(newest, "aws.dynamodb.consistent_read"), "false");
    let count = queries
        .iter()
        .find(|span| span.fields.contains_key("aws.dynamodb.select"))
        .expect("the count");
    assert_eq!(field(count, "aws.dynamodb.select"), "COUNT");
    let scans = of(&spans, "Scan");
    assert_eq!(scans.len(), 2, "one request per segment of one page each");
    let mut segments: Vec<&str> = scans
        .iter()
        .map(|span| field(span, "aws.dynamodb.segment"))
        .collect();
    segments.sort_unstable();
    assert_eq!(segments, ["0", "1"]);
    let mut read = 0;
    for scan in &scans {
        assert_eq!(field(scan, "aws.dynamodb.total_segments"), "2");
        assert_eq!(field(scan, "aws.dynamodb.limit"), "5");
        read += field(scan, "aws.dynamodb.count").parse::<u32>().unwrap();
        let scanned: u32 = field(scan, "aws.dynamodb.scanned_count").parse().unwrap();
        assert!(scanned >= field(scan, "aws.dynamodb.count").parse().unwrap());
    }
    assert_eq!(read, 2, "the two orders, counted by the responses");
    for operation in [
        "PutItem",
        "UpdateItem",
        "BatchGetItem",
        "TransactGetItems",
        "TransactWriteItems",
        "BatchWriteItem",
    ] {
        of(&spans, operation);
    }
    // Every span says where its request went: the one endpoint of the test's client.
    let address = field(&spans[0], "server.address");
    assert!(!address.is_empty());
    for span in spans
        .iter()
        .filter(|span| field(span, "rpc.service") == "DynamoDB")
    {
        assert_eq!(field(span, "server.address"), address, "{span:#?}");
        let port: u16 = field(span, "server.port").parse().unwrap();
        assert!(port > 0);
    }
}
