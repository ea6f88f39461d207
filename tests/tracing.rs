//! Every operation emits one `tracing` span per request, with the fields named in
//! `singletable::trace`'s table (OpenTelemetry's names where they have one): asserted here
//! with a capturing subscriber, on the engine, and through the fault proxy for retries.
mod common;
use common::spans::{field, Capture, Captured};
use common::Needs;

use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, Table};
use singletable_fault::{self as fault, Fault, FaultKind, FaultPlan};
use tracing_subscriber::layer::SubscriberExt;

#[derive(Table)]
#[dynamo(name = "traced", pk = "PK", sk = "SK")]
struct Shop;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "ORDER#{id}", sk = "ORDER")]
struct Order {
    id: String,
    note: String,
}

fn order(id: &str) -> Order {
    Order {
        id: id.into(),
        note: "the-secret-note".into(),
    }
}

#[tokio::test]
async fn each_request_has_one_span_with_its_table_entity_capacity_and_outcome_and_no_values() {
    let capture = Capture::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let table = singletable::testing::table::<Shop>().await.unwrap();
    // The table's creation has spans of its own (see the administration test below).
    capture.take();
    let db = (*table).clone().track_capacity();

    db.put(&order("o1")).send().await.unwrap();
    let refused = db
        .put(&order("o1"))
        .only_if_absent()
        .send()
        .await
        .unwrap_err();
    assert!(refused.is_condition_failed());
    let missing = db.get(Order::key("o9").unwrap()).send().await.unwrap_err();
    assert!(missing.is_not_found());
    db.get(Order::key("o1").unwrap()).send().await.unwrap();
    let found = db.query(Order::partition("o1")).all().await.unwrap();
    assert_eq!(found.len(), 1);
    db.transaction()
        .with(db.delete(Order::key("o1").unwrap()))
        .send()
        .await
        .unwrap();

    let spans = capture.take();
    let names: Vec<&str> = spans.iter().map(|span| field(span, "otel.name")).collect();
    assert_eq!(
        names,
        [
            "DynamoDB.PutItem",
            "DynamoDB.PutItem",
            "DynamoDB.GetItem",
            "DynamoDB.GetItem",
            "DynamoDB.Query",
            "DynamoDB.TransactWriteItems"
        ],
        "one span per request"
    );
    for span in &spans {
        assert_eq!(field(span, "db.system.name"), "aws.dynamodb");
        assert_eq!(field(span, "rpc.service"), "DynamoDB");
        assert_eq!(
            field(span, "aws.dynamodb.table_names"),
            serde_json::to_string(&[table.table_name()]).unwrap()
        );
        assert_eq!(field(span, "singletable.entity"), "Order");
        assert_eq!(field(span, "singletable.attempts"), "1");
        // DynamoDB reports capacity with a response, not with a failed condition. moto
        // reports none for transactions (`Deviation::NoTransactionCapacity`): the span then
        // records none rather than a zero.
        let engine = singletable::local::Engine::from_env().unwrap();
        let transaction = field(span, "db.operation.name") == "TransactWriteItems";
        if transaction && engine.deviates(singletable::local::Deviation::NoTransactionCapacity) {
            assert!(
                !span.fields.contains_key("aws.dynamodb.consumed_capacity"),
                "{span:#?}"
            );
        } else if field(span, "singletable.outcome") == "ok"
            || field(span, "singletable.outcome") == "not_found"
        {
            let capacity: f64 = field(span, "singletable.capacity_units").parse().unwrap();
            assert!(capacity > 0.0, "capacity is tracked: {span:#?}");
            // OpenTelemetry's form: each entry DynamoDB reported, as JSON text.
            let entries: Vec<String> =
                serde_json::from_str(field(span, "aws.dynamodb.consumed_capacity")).unwrap();
            let units: f64 = entries
                .iter()
                .map(|entry| {
                    let entry: serde_json::Value = serde_json::from_str(entry).unwrap();
                    assert_eq!(entry["TableName"], table.table_name(), "{entry}");
                    entry["CapacityUnits"].as_f64().unwrap()
                })
                .sum();
            assert_eq!(units, capacity, "{span:#?}");
        }
        // No value of the item's, not even its key, in any field of the span or its events
        // (the key part `o1` is looked for as the engine would print it, not as two letters a
        // request id can hold).
        let fields = span
            .fields
            .values()
            .chain(span.events.iter().flat_map(|e| e.values()));
        for value in fields {
            assert!(
                !value.contains("the-secret-note")
                    && !value.contains("ORDER#")
                    && !value.contains("\"o1\""),
                "no attribute value by default: {span:#?}"
            );
        }
        assert!(!span.fields.contains_key("singletable.key"), "{span:#?}");
    }
    assert_eq!(field(&spans[0], "singletable.outcome"), "ok");
    assert_eq!(field(&spans[0], "otel.status_code"), "OK");
    // A failed condition and an item not found are outcomes the caller asked about, not
    // errors of the request: the span's status stays unset, with no `error.type`.
    assert_eq!(field(&spans[1], "singletable.outcome"), "condition_failed");
    assert_eq!(field(&spans[2], "singletable.outcome"), "not_found");
    for span in &spans[..3] {
        assert!(!span.fields.contains_key("error.type"), "{span:#?}");
    }
    for span in &spans[1..3] {
        assert!(!span.fields.contains_key("otel.status_code"), "{span:#?}");
    }
    for span in &spans {
        assert_eq!(
            field(span, "cloud.region"),
            table.client().config().region().unwrap().as_ref()
        );
        assert!(!field(span, "aws.request_id").is_empty(), "{span:#?}");
    }
    assert!(
        !spans[1].fields.contains_key("error.message"),
        "messages only on opt-in"
    );
    assert_eq!(field(&spans[3], "db.operation.name"), "GetItem");
}

#[tokio::test]
async fn error_messages_are_recorded_only_when_the_db_opts_in() {
    let capture = Capture::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let table = singletable::testing::table::<Shop>().await.unwrap();
    capture.take();
    let db = (*table).clone().trace_values();
    db.put(&order("o1")).send().await.unwrap();
    // An order another program wrote without its note: reading it is an error, whose message
    // names the attribute.
    use aws_sdk_dynamodb::types::AttributeValue::S;
    db.client()
        .put_item()
        .table_name(db.table_name())
        .item("PK", S("ORDER#o2".into()))
        .item("SK", S("ORDER".into()))
        .item("_type", S("Order".into()))
        .send()
        .await
        .unwrap();
    let unread = db.get(Order::key("o2").unwrap()).send().await.unwrap_err();
    assert_eq!(unread.kind(), "decode", "{unread:?}");
    let spans = capture.take();
    assert_eq!(field(&spans[1], "otel.status_code"), "ERROR");
    assert_eq!(field(&spans[1], "error.type"), "decode");
    let message = field(&spans[1], "error.message");
    assert!(message.contains("note"), "{message}");
    for (span, key) in spans.iter().zip(["ORDER#o1", "ORDER#o2"]) {
        assert!(field(span, "singletable.key").contains(key), "{span:#?}");
    }
}

/// Throttled attempts are counted into the span, with an event for each resend; the library's
/// own retries of a transaction conflict add backoff events.
#[tokio::test]
async fn retries_are_attempts_and_events_inside_the_span() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let capture = Capture::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let table = singletable::testing::table::<Shop>().await.unwrap();
    let plan = FaultPlan::new(7, 0.5).with_kinds([
        Fault::before(FaultKind::Throttling),
        Fault::before(FaultKind::TransactionConflict),
    ]);
    let (client, _stats) = fault::client(plan).await.unwrap();
    let db = Db::<Shop>::new(client).with_table_name(table.table_name());
    let (mut resent, mut backed_off) = (false, false);
    for n in 0..20 {
        let _ = db.put(&order(&format!("p{n}"))).send().await;
        let _ = db
            .transaction()
            .with(db.put(&order(&format!("t{n}"))))
            .send()
            .await;
        for span in capture.take() {
            let attempts: u32 = field(&span, "singletable.attempts").parse().unwrap();
            let resends = span
                .events
                .iter()
                .filter(|event| event.get("message").is_some_and(|m| m == "sending again"))
                .count();
            assert_eq!(
                resends as u32,
                attempts - 1,
                "one event per resend: {span:#?}"
            );
            resent |= attempts > 1;
            backed_off |= span.events.iter().any(|event| {
                event
                    .get("message")
                    .is_some_and(|m| m.starts_with("backing off"))
            });
        }
        if resent && backed_off {
            break;
        }
    }
    assert!(resent, "a throttled request was sent again within its span");
    assert!(
        backed_off,
        "a conflicting transaction backed off within its span"
    );
}

#[derive(Table)]
#[dynamo(name = "traced-stream", pk = "PK", sk = "SK", stream = "new_image")]
struct Streamed;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Streamed, pk = "NOTE#{id}", sk = "NOTE")]
struct Note {
    id: String,
}

/// Administration and the Streams API are requests too: each has its span, with the table's
/// name and no entity.
#[tokio::test]
async fn administration_and_stream_reads_have_spans() {
    let capture = Capture::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let table = singletable::testing::table::<Streamed>().await.unwrap();
    // Its creation asked whether the table exists: DynamoDB's answer, no, is an outcome.
    let created = capture.take();
    let asked = created
        .iter()
        .find(|span| field(span, "otel.name") == "DynamoDB.DescribeTable")
        .expect("a DescribeTable span");
    assert_eq!(field(asked, "singletable.outcome"), "not_found");
    assert!(!asked.fields.contains_key("otel.status_code"), "{asked:#?}");
    assert!(created
        .iter()
        .any(|span| field(span, "otel.name") == "DynamoDB.CreateTable"));
    let db = (*table).clone();
    db.admin().ensure_table().await.unwrap();
    db.admin().table_migration(&[]).plan().await.unwrap();
    db.put(&Note { id: "n1".into() }).send().await.unwrap();
    let streams = singletable::local::streams_client().await.unwrap();
    let mut reader = db.admin().stream_reader("traced", streams);
    reader.poll::<Note>().await.unwrap();

    let spans = capture.take();
    let named = |name: &str| -> Vec<&Captured> {
        spans
            .iter()
            .filter(|span| field(span, "otel.name") == name)
            .collect()
    };
    for (name, service) in [
        ("DynamoDB.DescribeTable", "DynamoDB"),
        ("DynamoDB.DescribeTimeToLive", "DynamoDB"),
        ("DynamoDB Streams.DescribeStream", "DynamoDB Streams"),
        ("DynamoDB Streams.GetShardIterator", "DynamoDB Streams"),
        ("DynamoDB Streams.GetRecords", "DynamoDB Streams"),
    ] {
        let found = named(name);
        assert!(!found.is_empty(), "no {name} span in {spans:#?}");
        for span in found {
            assert_eq!(field(span, "rpc.service"), service);
            assert_eq!(
                field(span, "aws.dynamodb.table_names"),
                serde_json::to_string(&[table.table_name()]).unwrap()
            );
            assert_eq!(field(span, "singletable.outcome"), "ok", "{span:#?}");
            assert!(!span.fields.contains_key("singletable.entity"), "{span:#?}");
        }
    }
}
