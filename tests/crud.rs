//! get / put / delete / create-table on the local engine.

mod common;

use aws_sdk_dynamodb::types::AttributeValue;
use common::{db, App, Status, Team, Ticket};
use singletable::{DecodeError, Entity, Error, OptionalExt};

#[singletable::test]
async fn put_then_get_round_trips_the_item(
    db: singletable::Db<App>,
) -> Result<(), singletable::Error> {
    let ticket = Ticket::new("8842", 7, Status::Open, "Printer on fire");
    db.put(&ticket).send().await?;
    let read = db.get(Ticket::key("8842")?).send().await?;
    assert_eq!(read, ticket);
    let consistent = db.get(Ticket::key("8842")?).consistent().send().await?;
    assert_eq!(consistent, ticket);
    Ok(())
}

#[tokio::test]
async fn stored_item_carries_keys_index_keys_and_entity_type() {
    let db = db().await;
    db.put(&Ticket::new("1", 7, Status::Pending, "t"))
        .send()
        .await
        .unwrap();
    let raw = db
        .client()
        .get_item()
        .table_name(db.table_name())
        .set_key(Some(Ticket::key("1").unwrap().to_attributes()))
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    let text = |name: &str| raw.get(name).and_then(|value| value.as_s().ok()).cloned();
    assert_eq!(text("PK").as_deref(), Some("TICKET#1"));
    assert_eq!(text("SK").as_deref(), Some("TICKET"));
    assert_eq!(text("GSI1PK").as_deref(), Some("TEAM#0000000007"));
    assert_eq!(text("GSI1SK").as_deref(), Some("STATUS#pending#TICKET#1"));
    assert_eq!(text("_type").as_deref(), Some("Ticket"));
    assert_eq!(text("status").as_deref(), Some("pending"));
}

#[tokio::test]
async fn sparse_index_keys_are_omitted_when_the_rule_fails() {
    let db = db().await;
    db.put(&Ticket::new("2", 7, Status::Closed, "done"))
        .send()
        .await
        .unwrap();
    let params = db
        .put(&Ticket::new("2", 7, Status::Closed, "done"))
        .params()
        .unwrap();
    let item = &params.body["Item"];
    assert!(
        item.get("GSI1PK").is_none(),
        "closed tickets are not indexed: {item}"
    );
    assert!(item.get("GSI1SK").is_none());
    assert_eq!(
        db.get(Ticket::key("2").unwrap())
            .send()
            .await
            .unwrap()
            .status,
        Status::Closed
    );
}

#[tokio::test]
async fn missing_item_is_not_found() {
    let db = db().await;
    let error = db
        .get(Ticket::key("nope").unwrap())
        .send()
        .await
        .unwrap_err();
    assert!(error.is_not_found(), "{error}");
    assert_eq!(
        error.to_string(),
        "Ticket not found at PK = ‹hidden›, SK = ‹hidden›"
    );
    let optional = db
        .get(Ticket::key("nope").unwrap())
        .send()
        .await
        .optional()
        .unwrap();
    assert_eq!(optional, None);
}

#[tokio::test]
async fn put_only_if_absent_refuses_to_overwrite_and_returns_the_existing_item() {
    let db = db().await;
    let first = Ticket::new("3", 7, Status::Open, "first");
    db.put(&first).only_if_absent().send().await.unwrap();
    let error = db
        .put(&Ticket::new("3", 9, Status::Open, "second"))
        .only_if_absent()
        .send()
        .await
        .unwrap_err();
    assert!(error.is_condition_failed(), "{error}");
    let current = error.current_item::<Ticket>().unwrap().unwrap();
    assert_eq!(current, first);
    assert_eq!(
        db.get(Ticket::key("3").unwrap()).send().await.unwrap(),
        first
    );
}

#[tokio::test]
async fn delete_removes_and_only_if_exists_reports_not_found() {
    let db = db().await;
    db.put(&Ticket::new("4", 7, Status::Open, "x"))
        .send()
        .await
        .unwrap();
    db.delete(Ticket::key("4").unwrap())
        .only_if_exists()
        .send()
        .await
        .unwrap();
    assert!(db
        .get(Ticket::key("4").unwrap())
        .send()
        .await
        .unwrap_err()
        .is_not_found());
    // Plain delete of a missing item succeeds, as DynamoDB's does.
    db.delete(Ticket::key("4").unwrap()).send().await.unwrap();
    let error = db
        .delete(Ticket::key("4").unwrap())
        .only_if_exists()
        .send()
        .await
        .unwrap_err();
    assert!(error.is_not_found(), "{error}");
}

#[tokio::test]
async fn another_entitys_item_is_never_mistaken_for_this_one() {
    let db = db().await;
    db.put(&Team {
        id: 7,
        name: "Support".into(),
    })
    .send()
    .await
    .unwrap();
    // Write a Team item under a Ticket key with the raw SDK, as another tool might.
    let mut item = singletable::item::encode(&Team {
        id: 7,
        name: "Support".into(),
    })
    .unwrap();
    item.extend(Ticket::key("5").unwrap().to_attributes());
    singletable::testing::put_raw(&db, item).await.unwrap();
    match db.get(Ticket::key("5").unwrap()).send().await {
        Err(Error::Decode(DecodeError::WrongEntity {
            expected, found, ..
        })) => {
            assert_eq!(expected, "Ticket");
            assert_eq!(found.as_deref(), Some("Team"));
        }
        other => panic!("expected WrongEntity, got {other:?}"),
    }
}

#[tokio::test]
async fn malformed_item_names_the_key_and_the_attribute() {
    let db = db().await;
    let mut item = singletable::item::encode(&Ticket::new("6", 7, Status::Open, "x")).unwrap();
    item.insert(
        "team_id".into(),
        aws_sdk_dynamodb::types::AttributeValue::S("seven".into()),
    );
    singletable::testing::put_raw(&db, item).await.unwrap();
    let error = db.get(Ticket::key("6").unwrap()).send().await.unwrap_err();
    match &error {
        Error::Decode(DecodeError::Attribute {
            entity,
            key,
            attribute,
            ..
        }) => {
            assert_eq!(*entity, "Ticket");
            assert_eq!(key.partition.1, "TICKET#6");
            assert_eq!(attribute, "team_id");
        }
        other => panic!("expected an attribute error, got {other:?}"),
    }
}

#[tokio::test]
async fn ensure_table_is_idempotent_and_matches_the_declaration() {
    let db = db().await;
    assert!(
        !db.admin().ensure_table().await.unwrap(),
        "the helper already created it"
    );
    let description = db
        .client()
        .describe_table()
        .table_name(db.table_name())
        .send()
        .await
        .unwrap();
    let table = description.table.unwrap();
    let gsis = table.global_secondary_indexes();
    assert_eq!(gsis.len(), 1);
    assert_eq!(gsis[0].index_name(), Some("GSI1"));
    let params = db.admin().create_table().params().unwrap();
    assert_eq!(params.operation, "CreateTable");
    assert_eq!(params.body["BillingMode"], "PAY_PER_REQUEST");
    assert_eq!(
        params.body["GlobalSecondaryIndexes"][0]["IndexName"],
        "GSI1"
    );
}

#[test]
fn params_show_the_exact_request() {
    let client = aws_sdk_dynamodb::Client::from_conf(
        aws_sdk_dynamodb::Config::builder()
            .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
            .build(),
    );
    let db = singletable::Db::<App>::new(client);
    let get = db
        .get(Ticket::key("8842").unwrap())
        .consistent()
        .params()
        .unwrap();
    assert_eq!(
        get.to_string(),
        r#"GetItem {
  "ConsistentRead": true,
  "Key": {
    "PK": {
      "S": "TICKET#8842"
    },
    "SK": {
      "S": "TICKET"
    }
  },
  "TableName": "app"
}"#
    );
    let put = db
        .put(&Ticket::new("8842", 7, Status::Open, "Printer"))
        .only_if_absent()
        .params()
        .unwrap();
    assert_eq!(put.body["ConditionExpression"], "attribute_not_exists(#n0)");
    assert_eq!(put.body["ExpressionAttributeNames"]["#n0"], "PK");
    assert_eq!(put.body["Item"]["GSI1SK"]["S"], "STATUS#open#TICKET#8842");
    assert_eq!(
        Ticket::SCHEMA.indexes[0].rule.map(|rule| rule.source),
        Some("Ticket::is_open(status)")
    );
}

#[tokio::test]
async fn return_values_come_back_typed() {
    let db = db().await;
    let first = Ticket::new("7", 7, Status::Open, "first");
    assert_eq!(db.put(&first).send_returning_old().await.unwrap(), None);
    let second = Ticket::new("7", 7, Status::Open, "second");
    assert_eq!(
        db.put(&second).send_returning_old().await.unwrap(),
        Some(first)
    );
    let before = db
        .update(Ticket::key("7").unwrap())
        .set(Ticket::TITLE, "third".to_owned())
        .send_returning_old()
        .await
        .unwrap();
    assert_eq!(before, second);
    let changed = db
        .update(Ticket::key("7").unwrap())
        .set(Ticket::TITLE, "fourth".to_owned())
        .send_returning_updated_new()
        .await
        .unwrap();
    assert_eq!(changed.len(), 1, "only the updated attribute: {changed:?}");
    assert_eq!(
        changed.get("title"),
        Some(&AttributeValue::S("fourth".into()))
    );
    let before_change = db
        .update(Ticket::key("7").unwrap())
        .set(Ticket::TITLE, "fifth".to_owned())
        .send_returning_updated_old()
        .await
        .unwrap();
    assert_eq!(
        before_change,
        singletable::Item::from([("title".into(), AttributeValue::S("fourth".into()))])
    );
    let deleted = db
        .delete(Ticket::key("7").unwrap())
        .send_returning_old()
        .await
        .unwrap();
    assert_eq!(deleted.map(|ticket| ticket.title), Some("fifth".to_owned()));
    assert_eq!(
        db.delete(Ticket::key("7").unwrap())
            .send_returning_old()
            .await
            .unwrap(),
        None
    );
}
