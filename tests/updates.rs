//! Checked updates on the seed's ticket: status changes re-sort the GSI in one UpdateItem,
//! closing leaves the sparse queue, reopening comes back, stale callers are refused.
// The derive names nothing with a character outside ASCII: a crate that denies non-ASCII
// identifiers, as some do, still derives its entities.
#![deny(
    non_ascii_idents,
    uncommon_codepoints,
    confusable_idents,
    mixed_script_confusables
)]

mod common;
use common::Needs;

use common::{db, App, Status, Ticket};
use singletable::error::UpdateError;
use singletable::{Db, Error};

#[test]
fn status_change_is_one_update_item_that_sets_status_and_gsi1sk() {
    let db = common::offline();
    let request = db
        .update(Ticket::key("8842").unwrap())
        .set(Ticket::STATUS, Status::Pending)
        .given(Ticket::TEAM_ID, 7)
        .params()
        .unwrap();
    assert_eq!(
        request.to_string(),
        r##"UpdateItem {
  "ConditionExpression": "attribute_exists(#n3) AND #n4 = :v3",
  "ExpressionAttributeNames": {
    "#n0": "status",
    "#n1": "GSI1PK",
    "#n2": "GSI1SK",
    "#n3": "PK",
    "#n4": "team_id"
  },
  "ExpressionAttributeValues": {
    ":v0": {
      "S": "pending"
    },
    ":v1": {
      "S": "TEAM#0000000007"
    },
    ":v2": {
      "S": "STATUS#pending#TICKET#8842"
    },
    ":v3": {
      "N": "7"
    }
  },
  "Key": {
    "PK": {
      "S": "TICKET#8842"
    },
    "SK": {
      "S": "TICKET"
    }
  },
  "ReturnValues": "ALL_NEW",
  "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
  "TableName": "app",
  "UpdateExpression": "SET #n0 = :v0, #n1 = :v1, #n2 = :v2"
}"##
    );
}

#[test]
fn closing_removes_the_sparse_index_keys_and_reopening_restores_them() {
    let db = common::offline();
    let close = db
        .update(Ticket::key("8842").unwrap())
        .set(Ticket::STATUS, Status::Closed)
        .given(Ticket::TEAM_ID, 7)
        .params()
        .unwrap();
    assert_eq!(
        close.body["UpdateExpression"],
        "SET #n0 = :v0 REMOVE #n1, #n2"
    );
    assert_eq!(close.body["ExpressionAttributeNames"]["#n1"], "GSI1PK");
    assert_eq!(close.body["ExpressionAttributeNames"]["#n2"], "GSI1SK");
    let reopen = db
        .update(Ticket::key("8842").unwrap())
        .set(Ticket::STATUS, Status::Open)
        .given(Ticket::TEAM_ID, 7)
        .params()
        .unwrap();
    assert_eq!(
        reopen.body["UpdateExpression"],
        "SET #n0 = :v0, #n1 = :v1, #n2 = :v2"
    );
    assert_eq!(
        reopen.body["ExpressionAttributeValues"][":v2"]["S"],
        "STATUS#open#TICKET#8842"
    );
}

/// An order is on its region's board while it is large: a rule of two fields, one of them
/// (`number`) a primary key field, which an update never supplies: it is read back from the key.
#[derive(singletable::Entity, serde::Serialize, serde::Deserialize)]
#[dynamo(table = App, pk = "CUSTOMER#{customer}", sk = "ORDER#{number}",
         gsi1pk = "REGION#{region}", gsi1sk = "TOTAL#{total}#ORDER#{number}",
         gsi1_when = Order::on_board(number, total))]
struct Order {
    customer: String,
    number: u32,
    region: String,
    total: u64,
}

impl Order {
    fn on_board(number: &u32, total: &u64) -> bool {
        *number != 0 && *total >= 1000
    }
}

#[test]
fn a_rule_reads_its_arguments_in_order_key_fields_included() {
    let db = common::offline();
    let update = |number: u32, total: u64| {
        let request = db
            .update(Order::key("ann", number).unwrap())
            .set(Order::TOTAL, total)
            .given(Order::REGION, "eu".to_owned())
            .params()
            .unwrap();
        (
            request.body["UpdateExpression"].clone(),
            request.body["ExpressionAttributeValues"][":v2"]["S"].clone(),
        )
    };
    let (board, sort_key) = update(42, 5000);
    assert_eq!(board, "SET #n0 = :v0, #n1 = :v1, #n2 = :v2");
    assert_eq!(sort_key, "TOTAL#00000000000000005000#ORDER#0000000042");
    // Each argument decides: the number, from the key, and the total, set.
    assert_eq!(update(0, 5000).0, "SET #n0 = :v0 REMOVE #n1, #n2");
    assert_eq!(update(42, 999).0, "SET #n0 = :v0 REMOVE #n1, #n2");
}

#[test]
fn fields_outside_every_index_update_alone() {
    let db = common::offline();
    let request = db
        .update(Ticket::key("8842").unwrap())
        .set(Ticket::TITLE, "Printer fixed".to_owned())
        .condition(Ticket::STATUS.ne(Status::Closed))
        .params()
        .unwrap();
    assert_eq!(request.body["UpdateExpression"], "SET #n0 = :v0");
    assert_eq!(
        request.body["ConditionExpression"],
        "attribute_exists(#n1) AND (attribute_not_exists(#n2) OR #n2 <> :v1)"
    );
}

async fn queue(db: &Db<App>, team: u32) -> Vec<String> {
    let output = db
        .client()
        .query()
        .table_name(db.table_name())
        .index_name("GSI1")
        .key_condition_expression("GSI1PK = :pk")
        .expression_attribute_values(
            ":pk",
            aws_sdk_dynamodb::types::AttributeValue::S(format!("TEAM#{team:010}")),
        )
        .send()
        .await
        .unwrap();
    output
        .items()
        .iter()
        .filter_map(|item| item.get("GSI1SK")?.as_s().ok().cloned())
        .collect()
}

#[tokio::test]
async fn the_team_queue_follows_every_status_change() {
    if common::skips(Needs::IndexReadAfterWrite) {
        return;
    }
    let db = db().await;
    for (id, status) in [
        ("1", Status::Open),
        ("2", Status::Pending),
        ("3", Status::Open),
    ] {
        db.put(&Ticket::new(id, 7, status, "t"))
            .send()
            .await
            .unwrap();
    }
    assert_eq!(
        queue(&db, 7).await,
        [
            "STATUS#open#TICKET#1",
            "STATUS#open#TICKET#3",
            "STATUS#pending#TICKET#2"
        ]
    );
    let updated = db
        .update(Ticket::key("1").unwrap())
        .set(Ticket::STATUS, Status::Pending)
        .given(Ticket::TEAM_ID, 7)
        .send()
        .await
        .unwrap();
    assert_eq!(updated.status, Status::Pending);
    assert_eq!(
        queue(&db, 7).await,
        [
            "STATUS#open#TICKET#3",
            "STATUS#pending#TICKET#1",
            "STATUS#pending#TICKET#2"
        ]
    );
    db.update(Ticket::key("3").unwrap())
        .set(Ticket::STATUS, Status::Closed)
        .given(Ticket::TEAM_ID, 7)
        .send()
        .await
        .unwrap();
    assert_eq!(
        queue(&db, 7).await,
        ["STATUS#pending#TICKET#1", "STATUS#pending#TICKET#2"]
    );
    db.update(Ticket::key("3").unwrap())
        .set(Ticket::STATUS, Status::Open)
        .given(Ticket::TEAM_ID, 7)
        .send()
        .await
        .unwrap();
    assert_eq!(
        queue(&db, 7).await,
        [
            "STATUS#open#TICKET#3",
            "STATUS#pending#TICKET#1",
            "STATUS#pending#TICKET#2"
        ]
    );
}

#[tokio::test]
async fn a_stale_supplied_value_fails_its_condition_instead_of_writing_a_wrong_index_key() {
    if common::skips(Needs::IndexReadAfterWrite) {
        return;
    }
    let db = db().await;
    db.put(&Ticket::new("9", 8, Status::Open, "moved to team 8"))
        .send()
        .await
        .unwrap();
    // The caller still believes the ticket belongs to team 7.
    let error = db
        .update(Ticket::key("9").unwrap())
        .set(Ticket::STATUS, Status::Pending)
        .given(Ticket::TEAM_ID, 7)
        .send()
        .await
        .unwrap_err();
    assert!(error.is_condition_failed(), "{error}");
    assert_eq!(error.current_item::<Ticket>().unwrap().unwrap().team_id, 8);
    assert!(
        queue(&db, 7).await.is_empty(),
        "nothing was written under team 7"
    );
    assert_eq!(queue(&db, 8).await, ["STATUS#open#TICKET#9"]);
}

#[tokio::test]
async fn updating_a_missing_item_is_not_found_and_creates_nothing() {
    let db = db().await;
    let error = db
        .update(Ticket::key("ghost").unwrap())
        .set(Ticket::TITLE, "boo".to_owned())
        .send()
        .await
        .unwrap_err();
    assert!(error.is_not_found(), "{error}");
    assert!(db
        .get(Ticket::key("ghost").unwrap())
        .send()
        .await
        .unwrap_err()
        .is_not_found());
}

/// An entity with lists, maps, optional and numeric fields, for the other update actions.
#[derive(singletable::Entity, serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "NOTE#{id}", sk = "NOTE")]
struct Note {
    id: String,
    tags: Vec<String>,
    labels: std::collections::BTreeMap<String, String>,
    remark: Option<String>,
    views: u32,
}

#[test]
fn nested_paths_and_every_action_render_with_placeholders() {
    let db = common::offline::<App>();
    let request = db
        .update(Note::key("n1").unwrap())
        .set_nested(Note::LABELS.key("team.name"), "support".to_owned())
        .remove_nested(Note::TAGS.at(2))
        .add(Note::VIEWS, 1)
        .remove(Note::REMARK)
        .condition(
            Note::TAGS
                .at(0)
                .eq("pinned".to_owned())
                .and(Note::TAGS.contains_element(&"x".to_owned()).not()),
        )
        .params()
        .unwrap();
    assert_eq!(
        request.body["UpdateExpression"], "SET #n0.#n1 = :v0 REMOVE #n2[2], #n3 ADD #n4 :v1",
        "clauses in order, placeholders numbered as they are read"
    );
    assert_eq!(
        request.body["ExpressionAttributeNames"]["#n1"], "team.name",
        "a dot in a key is a name, not a path"
    );
    assert_eq!(
        request.body["ConditionExpression"],
        "attribute_exists(#n5) AND #n2[0] = :v2 AND NOT contains(#n2, :v3)"
    );
}

#[tokio::test]
async fn every_action_applies_on_the_engine() {
    let db = db().await;
    let note = Note {
        id: "n1".into(),
        tags: vec!["pinned".into(), "a".into(), "b".into()],
        labels: [("team".to_owned(), "ops".to_owned())].into(),
        remark: Some("remove me".into()),
        views: 1,
    };
    db.put(&note).send().await.unwrap();
    // Two updates: DynamoDB refuses a list's append and the removal of one of its elements in
    // one expression (their document paths overlap; see the test below).
    db.update(Note::key("n1").unwrap())
        .remove_nested(Note::TAGS.at(2))
        .send()
        .await
        .unwrap();
    let updated = db
        .update(Note::key("n1").unwrap())
        .set_nested(Note::LABELS.key("team"), "support".to_owned())
        .add(Note::VIEWS, 2)
        .append(Note::TAGS, vec!["new".to_owned()])
        .remove(Note::REMARK)
        .condition(Note::TAGS.at(0).eq("pinned".to_owned()))
        .send()
        .await
        .unwrap();
    assert_eq!(updated.tags, ["pinned", "a", "new"]);
    assert_eq!(updated.labels["team"], "support");
    assert_eq!(updated.remark, None);
    assert_eq!(updated.views, 3);
    let refused = db
        .update(Note::key("n1").unwrap())
        .increment(Note::VIEWS, 1)
        .condition(Note::VIEWS.gt(100))
        .send()
        .await
        .unwrap_err();
    assert!(refused.is_condition_failed(), "{refused}");
}

/// DynamoDB rejects an update expression with two overlapping document paths ("Two document
/// paths overlap with each other; must remove or rewrite one of these paths"); moto accepts it
/// (so a test on moto alone passes where production fails). The library refuses it before
/// sending, on every engine, naming both actions.
#[tokio::test]
async fn overlapping_document_paths_are_refused_before_sending() {
    let db = db().await;
    let note = Note {
        id: "n2".into(),
        tags: vec!["a".into(), "b".into(), "c".into()],
        labels: [("team".to_owned(), "ops".to_owned())].into(),
        remark: None,
        views: 0,
    };
    db.put(&note).send().await.unwrap();
    let overlapping = [
        db.update(Note::key("n2").unwrap())
            .remove_nested(Note::TAGS.at(2))
            .append(Note::TAGS, vec!["d".to_owned()]),
        db.update(Note::key("n2").unwrap())
            .set(Note::VIEWS, 1)
            .increment(Note::VIEWS, 1),
        db.update(Note::key("n2").unwrap())
            .set_nested(Note::LABELS.key("team"), "support".to_owned())
            .set(Note::LABELS, std::collections::BTreeMap::new()),
    ];
    let expected = [
        ("REMOVE tags[2]", "SET tags = list_append(tags, ..)"),
        ("SET views = ..", "SET views = views + .."),
        ("SET labels.team = ..", "SET labels = .."),
    ];
    for (update, (first, second)) in overlapping.into_iter().zip(expected) {
        let refused = update.params().unwrap_err();
        match &refused {
            Error::Update(UpdateError::OverlappingPaths { entity, .. }) => {
                assert_eq!(*entity, "Note")
            }
            other => panic!("expected OverlappingPaths, got {other:?}"),
        }
        let message = refused.to_string();
        assert!(
            message.contains(first) && message.contains(second),
            "{message}"
        );
    }
    let refused = db
        .update(Note::key("n2").unwrap())
        .remove_nested(Note::TAGS.at(2))
        .append(Note::TAGS, vec!["d".to_owned()])
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(refused, Error::Update(UpdateError::OverlappingPaths { .. })),
        "{refused:?}"
    );
    let stored = db.get(Note::key("n2").unwrap()).send().await.unwrap();
    assert_eq!(stored, note, "nothing was sent");
    // Paths side by side do not overlap: two elements of one list, two keys of one map.
    db.update(Note::key("n2").unwrap())
        .remove_nested(Note::TAGS.at(2))
        .remove_nested(Note::TAGS.at(1))
        .set_nested(Note::LABELS.key("team"), "support".to_owned())
        .set_nested(Note::LABELS.key("site"), "oslo".to_owned())
        .send()
        .await
        .unwrap();
}

/// Labels stored as a DynamoDB string set.
#[derive(singletable::Entity, serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "TAGGED#{id}", sk = "TAGGED")]
struct Tagged {
    id: String,
    #[serde(with = "serde_dynamo::string_set")]
    labels: std::collections::BTreeSet<String>,
}

/// DynamoDB refuses an empty set ("An string set may not be empty"), in an item as in an
/// update's operand. The library refuses it first, naming the attribute or the action, and
/// sends nothing.
#[tokio::test]
async fn empty_sets_are_refused_before_sending() {
    let db = db().await;
    let empty = Tagged {
        id: "t".into(),
        labels: Default::default(),
    };
    let refused = db.put(&empty).send().await.unwrap_err();
    assert!(
        matches!(&refused, Error::Encode { message, .. } if message.contains("`labels`") && message.contains("empty set")),
        "{refused:?}"
    );
    let tagged = Tagged {
        id: "t".into(),
        labels: ["a".to_owned()].into(),
    };
    db.put(&tagged).send().await.unwrap();
    for update in [
        db.update(Tagged::key("t").unwrap())
            .add(Tagged::LABELS, Default::default()),
        db.update(Tagged::key("t").unwrap())
            .delete_elements(Tagged::LABELS, Default::default()),
    ] {
        let refused = update.params().unwrap_err();
        assert!(
            matches!(
                &refused,
                Error::Update(UpdateError::EmptySet {
                    entity: "Tagged",
                    ..
                })
            ),
            "{refused:?}"
        );
        assert!(refused.to_string().contains("labels"), "{refused}");
    }
    // Sets with elements go through, as DynamoDB sets.
    let added = db
        .update(Tagged::key("t").unwrap())
        .add(Tagged::LABELS, ["b".to_owned()].into())
        .send()
        .await
        .unwrap();
    assert_eq!(added.labels, ["a".to_owned(), "b".to_owned()].into());
}

/// A count guarded by the last sequence number it applied, on a field of its own.
#[derive(singletable::Entity, serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "TALLY#{id}", sk = "TALLY")]
struct Tally {
    id: String,
    count: u64,
    last: Option<u64>,
}

/// `advance` on a field: the update applies only past the stored sequence number (or where
/// there is none). The stored number again names the update already applied, which is
/// returned as the item is, unchanged (a replay); one below it fails its guard and changes
/// nothing.
#[tokio::test]
async fn an_advance_applies_each_sequence_once_and_refuses_an_older_one() {
    let db = common::db().await;
    db.put(&Tally {
        id: "t1".into(),
        count: 0,
        last: None,
    })
    .send()
    .await
    .unwrap();
    let count = |sequence: u64| {
        db.update(Tally::key("t1").unwrap())
            .add(Tally::COUNT, 1)
            .advance(Tally::LAST, Some(sequence))
            .send()
    };
    assert_eq!(count(5).await.unwrap().count, 1);
    let replayed = count(5).await.unwrap();
    assert_eq!((replayed.count, replayed.last), (1, Some(5)));
    let refused = count(3).await;
    assert!(
        matches!(refused, Err(singletable::Error::ConditionFailed { .. })),
        "{refused:?}"
    );
    let counted = count(9).await.unwrap();
    assert_eq!((counted.count, counted.last), (2, Some(9)));
    let request = db
        .update(Tally::key("t1").unwrap())
        .add(Tally::COUNT, 1)
        .advance(Tally::LAST, Some(10))
        .params()
        .unwrap();
    assert_eq!(
        request.body["ConditionExpression"],
        "attribute_exists(#n2) AND (attribute_not_exists(#n0) OR #n0 < :v2)",
        "{request}"
    );
}
