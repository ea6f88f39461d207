//! Entities as serde users write them: `None` stored as no attribute, attribute names from
//! serde, a set written by `serde_dynamo::string_set` updated as a DynamoDB set, and a field
//! serde never stores left without a typed path. The refusals are trybuild cases
//! (`tests/ui/serde_attributes.rs`).

mod common;
use common::Needs;

use aws_sdk_dynamodb::types::AttributeValue;
use serde::{Deserialize, Serialize};
use singletable::testing::TestTable;
use singletable::{Entity, Error, Item, Table};
use std::collections::BTreeSet;

#[derive(Table)]
#[dynamo(
    name = "shapes",
    pk = "PK",
    sk = "SK",
    gsi1(name = "ByAssignee", pk = "assignee", sk = "created")
)]
struct Desk;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Desk, pk = "NOTE#{id}", sk = "NOTE", gsi1pk = assignee, gsi1sk = created)]
struct Note {
    id: String,
    remark: Option<String>,
    /// An optional index key: a note without an assignee is not in the index.
    assignee: Option<String>,
    created: String,
    /// A DynamoDB string set: DynamoDB stores no empty set, so an empty one is left out.
    #[serde(
        rename = "lbl",
        with = "serde_dynamo::string_set",
        default,
        skip_serializing_if = "BTreeSet::is_empty"
    )]
    labels: BTreeSet<String>,
    /// Never stored: no typed path is generated for it.
    #[serde(skip)]
    cache: u32,
}

fn note(id: &str, remark: Option<&str>, assignee: Option<&str>) -> Note {
    Note {
        id: id.into(),
        remark: remark.map(Into::into),
        assignee: assignee.map(Into::into),
        created: format!("2026-12-0{}", id.len()),
        labels: BTreeSet::new(),
        cache: 0,
    }
}

async fn table() -> TestTable<Desk> {
    singletable::testing::table::<Desk>().await.unwrap()
}

async fn raw(db: &singletable::Db<Desk>, id: &str) -> Item {
    db.client()
        .get_item()
        .table_name(db.table_name())
        .set_key(Some(Note::key(id).unwrap().to_attributes()))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
        .unwrap()
}

#[tokio::test]
async fn none_is_no_attribute_in_puts_updates_and_conditions() {
    let db = table().await;
    db.put(&note("n1", None, None)).send().await.unwrap();
    let stored = raw(&db, "n1").await;
    assert!(!stored.contains_key("remark"), "{stored:?}");
    assert!(!stored.contains_key("assignee"), "{stored:?}");
    // An empty string set is no attribute either (DynamoDB stores no empty set).
    assert!(!stored.contains_key("lbl"), "{stored:?}");
    assert_eq!(
        db.get(Note::key("n1").unwrap()).send().await.unwrap(),
        note("n1", None, None)
    );

    // `exists()` means `Some`, `not_exists()` means `None`.
    let refused = db
        .update(Note::key("n1").unwrap())
        .set(Note::REMARK, Some("x".to_owned()))
        .condition(Note::REMARK.exists())
        .send()
        .await
        .unwrap_err();
    assert!(refused.is_condition_failed(), "{refused:?}");
    let set = db
        .update(Note::key("n1").unwrap())
        .set(Note::REMARK, Some("first".to_owned()))
        .condition(Note::REMARK.not_exists())
        .send()
        .await
        .unwrap();
    assert_eq!(set.remark.as_deref(), Some("first"));
    // `eq(None)` is absent, `ne(None)` present.
    let request = db
        .update(Note::key("n1").unwrap())
        .set(Note::CREATED, "x")
        .condition(Note::REMARK.ne(None))
        .params()
        .unwrap();
    let condition = request.body["ConditionExpression"].as_str().unwrap();
    assert!(condition.contains("attribute_exists(#n2)"), "{condition}");

    // `set(field, None)` is `REMOVE`, the same request as `remove(field)`.
    let set_none = db
        .update(Note::key("n1").unwrap())
        .set(Note::REMARK, None)
        .params()
        .unwrap();
    let removed = db
        .update(Note::key("n1").unwrap())
        .remove(Note::REMARK)
        .params()
        .unwrap();
    assert_eq!(set_none.body, removed.body);
    assert_eq!(set_none.body["UpdateExpression"], "REMOVE #n0");
    let cleared = db
        .update(Note::key("n1").unwrap())
        .set(Note::REMARK, None)
        .condition(Note::REMARK.eq(Some("first".to_owned())))
        .send()
        .await
        .unwrap();
    assert_eq!(cleared.remark, None);
    assert!(!raw(&db, "n1").await.contains_key("remark"));
}

#[tokio::test]
async fn items_stored_with_null_still_read_as_none() {
    let db = table().await;
    let mut item = Note::key("old").unwrap().to_attributes();
    for (name, value) in [
        ("_type", AttributeValue::S("Note".into())),
        ("id", AttributeValue::S("old".into())),
        // (DynamoDB refuses `NULL` in an index key attribute, so only a plain one had it.)
        ("remark", AttributeValue::Null(true)),
        ("created", AttributeValue::S("2026-12-01".into())),
    ] {
        item.insert(name.into(), value);
    }
    db.client()
        .put_item()
        .table_name(db.table_name())
        .set_item(Some(item))
        .send()
        .await
        .unwrap();
    let read = db.get(Note::key("old").unwrap()).send().await.unwrap();
    assert_eq!((read.remark, read.assignee), (None, None));
}

#[tokio::test]
async fn an_optional_attribute_keys_a_sparse_index() {
    if common::skips(Needs::IndexReadAfterWrite) {
        return;
    }
    let db = table().await;
    db.put(&note("n1", None, Some("ana"))).send().await.unwrap();
    db.put(&note("n22", None, None)).send().await.unwrap();
    db.put(&note("n333", None, Some("ana")))
        .send()
        .await
        .unwrap();
    let ana: Vec<Note> = db
        .query(Note::gsi1(&Some("ana".to_owned())))
        .all()
        .await
        .unwrap();
    let ids: Vec<&str> = ana.iter().map(|note| note.id.as_str()).collect();
    assert_eq!(ids, ["n1", "n333"]);
    // Unassigning takes the note off the index.
    db.update(Note::key("n1").unwrap())
        .set(Note::ASSIGNEE, None)
        .send()
        .await
        .unwrap();
    let ana = db
        .query(Note::gsi1(&Some("ana".to_owned())))
        .all()
        .await
        .unwrap();
    assert_eq!(ana.len(), 1);
}

#[tokio::test]
async fn a_string_set_field_is_written_as_a_set_by_updates_too() {
    let db = table().await;
    db.put(&note("n1", None, None)).send().await.unwrap();
    let labels: BTreeSet<String> = ["b".to_owned(), "a".to_owned()].into();
    let updated = db
        .update(Note::key("n1").unwrap())
        .set(Note::LABELS, labels.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(updated.labels, labels);
    match raw(&db, "n1").await.get("lbl") {
        Some(AttributeValue::Ss(set)) => assert_eq!(set.len(), 2),
        other => panic!("expected a string set under `lbl`, got {other:?}"),
    }
    // Setting it empty removes it, as DynamoDB stores no empty set.
    let request = db
        .update(Note::key("n1").unwrap())
        .set(Note::LABELS, BTreeSet::new())
        .params()
        .unwrap();
    assert_eq!(request.body["UpdateExpression"], "REMOVE #n0");
    // A condition compares it as stored.
    let held = db
        .update(Note::key("n1").unwrap())
        .set(Note::CREATED, "y")
        .condition(Note::LABELS.eq(labels))
        .send()
        .await;
    assert!(held.is_ok(), "{held:?}");
    let error = db
        .update(Note::key("n1").unwrap())
        .set(Note::CREATED, "z")
        .condition(Note::LABELS.eq(BTreeSet::from(["c".to_owned()])))
        .send()
        .await
        .unwrap_err();
    assert!(matches!(error, Error::ConditionFailed { .. }), "{error:?}");
}
