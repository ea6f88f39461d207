//! DynamoDB's documented limits, checked before sending: a request that would break one is a
//! typed error naming the limit, the size and the maximum, and nothing is written. One test
//! per row of the table in docs/reliability.md that these tests own (the other rows name
//! their tests there). Each runs on the engine, which enforces fewer of the limits than
//! DynamoDB does, so the check must be the library's.
mod common;

use serde::{Deserialize, Serialize};
use singletable::{Entity, Error, LimitError, Table};

#[derive(Table)]
#[dynamo(name = "limits", pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "DOC")]
struct Doc {
    id: u32,
    body: String,
    /// A document of any shape.
    data: serde_json::Value,
}

fn doc(id: u32, body_bytes: usize) -> Doc {
    Doc {
        id,
        body: "x".repeat(body_bytes),
        data: serde_json::Value::Null,
    }
}

/// `leaf` inside `maps` single-key maps.
fn nested(maps: usize) -> serde_json::Value {
    (0..maps).fold(
        serde_json::json!("leaf"),
        |inner, _| serde_json::json!({ "n": inner }),
    )
}

async fn empty() -> singletable::testing::TestTable<App> {
    singletable::testing::table::<App>().await.unwrap()
}

/// The table holds no item: what a refused request left.
async fn nothing_written(db: &singletable::Db<App>) {
    let items = common::raw_items(db).await;
    assert!(items.is_empty(), "written: {} items", items.len());
}

/// TransactWriteItems: 4 MB in all. Twelve 350 KB items (4.2 MB) are refused whole; eleven
/// (3.85 MB) are written.
#[tokio::test]
async fn a_transaction_above_4_mb_is_refused_with_nothing_written() {
    let db = empty().await;
    let mut transaction = db.transaction();
    for id in 0..12 {
        transaction = transaction.with(db.put(&doc(id, 350 * 1024)));
    }
    match transaction.send().await {
        Err(Error::Limit(LimitError::TransactionSize { count, size, max })) => {
            assert_eq!((count, max), (12, 4 * 1024 * 1024));
            assert!(size > 12 * 350 * 1024, "{size}");
        }
        other => panic!("expected LimitError::TransactionSize, got {other:?}"),
    }
    nothing_written(&db).await;
    let mut transaction = db.transaction();
    for id in 0..11 {
        transaction = transaction.with(db.put(&doc(id, 350 * 1024)));
    }
    transaction.send().await.unwrap();
    assert_eq!(common::raw_items(&db).await.len(), 11);
}

/// A document nests at most 32 levels, its attribute the first: a scalar inside 31 maps is
/// written and read back; inside 32 it is refused, in a put and as an update's value.
#[tokio::test]
async fn a_document_nested_beyond_32_levels_is_refused_with_nothing_written() {
    let db = empty().await;
    let mut deep = doc(1, 1);
    deep.data = nested(32);
    match db.put(&deep).send().await {
        Err(Error::Limit(LimitError::NestingDepth {
            attribute,
            depth,
            max,
        })) => assert_eq!((attribute.as_str(), depth, max), ("data", 33, 32)),
        other => panic!("expected LimitError::NestingDepth, got {other:?}"),
    }
    nothing_written(&db).await;
    let mut deepest = doc(1, 1);
    deepest.data = nested(31);
    db.put(&deepest).send().await.unwrap();
    assert_eq!(db.get(Doc::key(1).unwrap()).send().await.unwrap(), deepest);
    let update = db
        .update(Doc::key(1).unwrap())
        .set(Doc::DATA, nested(32))
        .send()
        .await;
    assert!(
        matches!(
            update,
            Err(Error::Limit(LimitError::NestingDepth {
                depth: 33,
                max: 32,
                ..
            }))
        ),
        "{update:?}"
    );
    assert_eq!(db.get(Doc::key(1).unwrap()).send().await.unwrap(), deepest);
}

/// A `ClientRequestToken` is 1 to 36 characters.
#[tokio::test]
async fn a_client_request_token_above_36_characters_is_refused_with_nothing_written() {
    let db = empty().await;
    for (token, length) in [("t".repeat(37), 37), (String::new(), 0)] {
        let sent = db
            .transaction()
            .with(db.put(&doc(1, 1)))
            .client_request_token(token)
            .send()
            .await;
        match sent {
            Err(Error::Limit(LimitError::ClientRequestToken { length: got, max })) => {
                assert_eq!((got, max), (length, 36))
            }
            other => panic!("expected LimitError::ClientRequestToken, got {other:?}"),
        }
    }
    nothing_written(&db).await;
    db.transaction()
        .with(db.put(&doc(1, 1)))
        .client_request_token("t".repeat(36))
        .send()
        .await
        .unwrap();
    assert_eq!(common::raw_items(&db).await.len(), 1);
}

/// Expression attribute names and values: 2 MB in one request. A condition that compares the
/// body with a hundred 24 KB texts (2.4 MB of values) is refused.
#[tokio::test]
async fn expression_values_above_2_mb_are_refused_with_nothing_written() {
    let db = empty().await;
    let texts: Vec<String> = (0..100)
        .map(|n| format!("{n:03}{}", "y".repeat(24 * 1024)))
        .collect();
    let sent = db
        .put(&doc(1, 1))
        .condition(Doc::BODY.is_in(&texts).not())
        .send()
        .await;
    match sent {
        Err(Error::Limit(LimitError::Substitutions { size, max })) => {
            assert_eq!(max, 2 * 1024 * 1024);
            assert!(size > 100 * 24 * 1024, "{size}");
        }
        other => panic!("expected LimitError::Substitutions, got {other:?}"),
    }
    nothing_written(&db).await;
    // A query's filter is held to it too.
    let query = db
        .query(Doc::partition(1))
        .filter(Doc::BODY.is_in(&texts))
        .all()
        .await;
    assert!(
        matches!(query, Err(Error::Limit(LimitError::Substitutions { .. }))),
        "{query:?}"
    );
}

/// An item is at most 400 KB, as DynamoDB counts it.
#[tokio::test]
async fn an_item_above_400_kb_is_refused_with_nothing_written() {
    let db = empty().await;
    match db.put(&doc(1, 400 * 1024)).send().await {
        Err(Error::Limit(LimitError::ItemSize { size, max, .. })) => {
            assert_eq!(max, 400 * 1024);
            assert!(size > max);
        }
        other => panic!("expected LimitError::ItemSize, got {other:?}"),
    }
    nothing_written(&db).await;
}

/// An expression is at most 4 KB.
#[tokio::test]
async fn an_expression_above_4_kb_is_refused_with_nothing_written() {
    let db = empty().await;
    let mut condition = Doc::BODY.eq("a".to_owned());
    for n in 0..400 {
        condition = condition.or(Doc::BODY.eq(n.to_string()));
    }
    match db.put(&doc(1, 1)).condition(condition).send().await {
        Err(Error::Limit(LimitError::Expression { kind, size, max })) => {
            assert_eq!((kind, max), ("ConditionExpression", 4096));
            assert!(size > max);
        }
        other => panic!("expected LimitError::Expression, got {other:?}"),
    }
    nothing_written(&db).await;
}

/// `IN` takes at most 100 operands.
#[tokio::test]
async fn an_in_of_more_than_100_operands_is_refused_with_nothing_written() {
    let db = empty().await;
    let bodies: Vec<String> = (0..101).map(|n| n.to_string()).collect();
    let sent = db
        .put(&doc(1, 1))
        .condition(Doc::BODY.is_in(&bodies).not())
        .send()
        .await;
    match sent {
        Err(Error::Limit(LimitError::InOperands { count, max })) => {
            assert_eq!((count, max), (101, 100))
        }
        other => panic!("expected LimitError::InOperands, got {other:?}"),
    }
    nothing_written(&db).await;
}
