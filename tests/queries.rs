//! Typed queries: key conditions from templates, pagination, cursors, counts.

mod common;
use common::Needs;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use singletable::op::query::Cursor;
use singletable::testing::TestTable;
use singletable::{Entity, Error, KeyPart, Table};

#[derive(Table)]
#[dynamo(
    name = "workspace",
    pk = "PK",
    sk = "SK",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
    gsi2(name = "GSI2", pk = "GSI2PK", sk = "GSI2SK"),
    gsi3(name = "GSI3", pk = "author", sk = "score", sk_type = "N"),
    gsi4(name = "GSI4", pk = ["tenant", "region"], sk = ["day", "seq"], sk_type = ["S", "N"]),
    lsi1(name = "LSI1", sk = "LSI1SK")
)]
struct Workspace;

/// DynamoDB's multi-attribute GSI keys: two partition and two sort attributes, each typed.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Workspace, pk = "EVENT#{id}", sk = "EVENT",
         gsi4pk = [tenant, region], gsi4sk = [day, seq])]
struct Event {
    id: String,
    tenant: String,
    region: String,
    day: chrono::NaiveDate,
    seq: u32,
}

/// An index keyed on plain attributes: nothing extra is written, the index reads `author` and
/// `score` (a number, so it sorts numerically) from the item itself.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Workspace, pk = "REVIEW#{id}", sk = "REVIEW", gsi3pk = author, gsi3sk = score)]
struct Review {
    id: String,
    author: String,
    score: u32,
}

#[derive(KeyPart, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Status {
    Open,
    Pending,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Workspace, pk = "TICKET#{id}", sk = "TICKET",
         gsi1pk = "TEAM#{team_id}", gsi1sk = "STATUS#{status}#TICKET#{id}")]
struct Ticket {
    id: String,
    team_id: u32,
    status: Status,
}

/// Seed 003: comments live in their workspace's partition, under their document.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Workspace, pk = "WS#{workspace}", sk = "DOC#{date}#{doc}#CMT#{comment}",
         gsi2pk = "MEMBER#{author}", gsi2sk = "{created_at}",
         lsi1sk = "SEQ#{seq}")]
struct Comment {
    workspace: String,
    date: chrono::NaiveDate,
    doc: String,
    comment: ulid::Ulid,
    author: String,
    created_at: chrono::DateTime<chrono::Utc>,
    seq: u32,
    text: String,
}

/// Seed 003: documents share their workspace's partition with their comments.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Workspace, pk = "WS#{workspace}", sk = "DOC#{date}#{doc}")]
struct Document {
    workspace: String,
    date: chrono::NaiveDate,
    doc: String,
    title: String,
}

/// The workspace partition as one collection.
#[derive(singletable::Collection, Debug, PartialEq)]
enum WorkspaceItem {
    Document(Document),
    Comment(Comment),
}

fn day(text: &str) -> chrono::NaiveDate {
    text.parse().unwrap()
}

#[test]
fn team_tickets_by_status_on_gsi1() {
    let db = common::offline();
    let request = db
        .query(Ticket::gsi1(7))
        .sort(Ticket::STATUS, Status::Open)
        .params()
        .unwrap();
    assert_eq!(request.body["IndexName"], "GSI1");
    assert_eq!(
        request.body["KeyConditionExpression"],
        "#n0 = :v0 AND begins_with(#n1, :v1)"
    );
    assert_eq!(request.body["ExpressionAttributeNames"]["#n0"], "GSI1PK");
    assert_eq!(request.body["ExpressionAttributeNames"]["#n1"], "GSI1SK");
    assert_eq!(
        request.body["ExpressionAttributeValues"][":v0"]["S"],
        "TEAM#0000000007"
    );
    assert_eq!(
        request.body["ExpressionAttributeValues"][":v1"]["S"],
        "STATUS#open#TICKET#"
    );
    assert_eq!(
        request.body["FilterExpression"],
        "#n2 = :v2 OR attribute_not_exists(#n2) OR NOT attribute_type(#n2, :v3)"
    );
    assert_eq!(
        request.body["ExpressionAttributeValues"][":v2"]["S"],
        "Ticket"
    );
    // No sort part: the constant text still constrains the query to tickets.
    let all = db.query(Ticket::gsi1(7)).params().unwrap();
    assert_eq!(all.body["ExpressionAttributeValues"][":v1"]["S"], "STATUS#");
    // Every part: equality.
    let one = db
        .query(Ticket::gsi1(7))
        .sort(Ticket::STATUS, Status::Open)
        .sort(Ticket::ID, "8842".to_owned())
        .params()
        .unwrap();
    assert_eq!(
        one.body["KeyConditionExpression"],
        "#n0 = :v0 AND #n1 = :v1"
    );
    assert_eq!(
        one.body["ExpressionAttributeValues"][":v1"]["S"],
        "STATUS#open#TICKET#8842"
    );
}

#[test]
fn a_documents_comments_by_begins_with() {
    let db = common::offline();
    let request = db
        .query(Comment::partition("w1"))
        .sort(Comment::DATE, day("2026-04-01"))
        .sort(Comment::DOC, "x7".to_owned())
        .params()
        .unwrap();
    assert_eq!(
        request.body["KeyConditionExpression"],
        "#n0 = :v0 AND begins_with(#n1, :v1)"
    );
    assert_eq!(
        request.body["ExpressionAttributeValues"][":v0"]["S"],
        "WS#w1"
    );
    assert_eq!(
        request.body["ExpressionAttributeValues"][":v1"]["S"],
        "DOC#2026-04-01#x7#CMT#"
    );
    assert!(request.body.get("IndexName").is_none());
}

#[test]
fn a_members_comments_newest_first() {
    let db = common::offline();
    let request = db
        .query(Comment::gsi2("ana"))
        .descending()
        .limit(20)
        .params()
        .unwrap();
    assert_eq!(request.body["IndexName"], "GSI2");
    assert_eq!(request.body["ScanIndexForward"], false);
    assert_eq!(request.body["Limit"], 20);
    assert_eq!(request.body["KeyConditionExpression"], "#n0 = :v0");
    assert_eq!(
        request.body["ExpressionAttributeValues"][":v0"]["S"],
        "MEMBER#ana"
    );
}

/// DynamoDB's `Limit` is at least 1; a query asking for 0 is refused before sending, as a scan's is.
#[tokio::test]
async fn a_query_limit_of_zero_is_refused_before_sending() {
    let db = common::offline();
    let query = db.query(Comment::gsi2("ana")).limit(0);
    let error = query.params().unwrap_err();
    assert!(
        matches!(
            error,
            Error::OutOfRange {
                parameter: "Limit",
                value: 0,
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "Limit must be between 1 and 2147483647, not 0"
    );
    // Every way of reading reports it, and none reaches the engine (the offline client has none).
    assert!(matches!(
        query.page(None).await,
        Err(Error::OutOfRange { .. })
    ));
    assert!(matches!(query.count().await, Err(Error::OutOfRange { .. })));
    // Above i32::MAX, DynamoDB's own type, is refused too rather than clamped.
    let huge = db.query(Comment::gsi2("ana")).limit(u32::MAX).params();
    assert!(matches!(huge, Err(Error::OutOfRange { .. })), "{huge:?}");
}

#[test]
fn ranges_use_the_same_rendering_as_keys() {
    let db = common::offline();
    let between = db
        .query(Comment::partition("w1"))
        .between(Comment::DATE, day("2026-04-01"), day("2026-04-30"))
        .params()
        .unwrap();
    assert_eq!(
        between.body["KeyConditionExpression"],
        "#n0 = :v0 AND #n1 BETWEEN :v1 AND :v2"
    );
    assert_eq!(
        between.body["ExpressionAttributeValues"][":v1"]["S"],
        "DOC#2026-04-01#"
    );
    assert_eq!(
        between.body["ExpressionAttributeValues"][":v2"]["S"],
        "DOC#2026-04-30#\u{10FFFF}"
    );
    let since = db
        .query(Comment::lsi1("w1"))
        .ge(Comment::SEQ, 42)
        .consistent()
        .params()
        .unwrap();
    assert_eq!(since.body["IndexName"], "LSI1");
    assert_eq!(since.body["ConsistentRead"], true);
    assert_eq!(
        since.body["ExpressionAttributeValues"][":v1"]["S"],
        "SEQ#0000000042"
    );
    assert_eq!(
        since.body["ExpressionAttributeValues"][":v2"]["S"],
        "SEQ#\u{10FFFF}"
    );
    let before = db
        .query(Comment::lsi1("w1"))
        .lt(Comment::SEQ, 42)
        .params()
        .unwrap();
    assert_eq!(before.body["ExpressionAttributeValues"][":v1"]["S"], "SEQ#");
    assert_eq!(
        before.body["ExpressionAttributeValues"][":v2"]["S"],
        "SEQ#0000000041\u{10FFFF}"
    );
}

fn comment(workspace: &str, doc: &str, n: u32, author: &str) -> Comment {
    Comment {
        workspace: workspace.into(),
        date: day("2026-04-01") + chrono::Duration::days(i64::from(n % 3)),
        doc: doc.into(),
        comment: ulid::Ulid::from_parts(1_775_000_000_000 + u64::from(n), u128::from(n)),
        author: author.into(),
        created_at: chrono::DateTime::from_timestamp(1_775_000_000 + i64::from(n), 0).unwrap(),
        seq: n,
        text: format!("comment {n}"),
    }
}

async fn seeded(comments: u32) -> TestTable<Workspace> {
    let db = match singletable::testing::table::<Workspace>().await {
        Ok(db) => db,
        Err(error) => panic!("{error}"),
    };
    let mut batch = db.batch_write();
    for n in 0..comments {
        batch = batch.put(&comment(
            "w1",
            if n % 2 == 0 { "x7" } else { "y9" },
            n,
            if n % 5 == 0 { "ana" } else { "bo" },
        ));
    }
    for n in 0..50 {
        batch = batch.put(&Ticket {
            id: format!("{n}"),
            team_id: 7,
            status: Status::Open,
        });
    }
    let output = batch.send().await.unwrap();
    assert!(output.unprocessed.is_empty());
    db
}

/// `page` borrows its query, so each page sends the same filter with its values again.
#[tokio::test]
async fn a_filtered_query_keeps_its_filter_on_every_page() {
    let db = seeded(120).await;
    let query = db
        .query(Comment::partition("w1"))
        .filter(Comment::SEQ.ge(100))
        .limit(25);
    let mut sequences = Vec::new();
    let mut cursor: Option<Cursor> = None;
    for _ in 0..20 {
        let page = query.page(cursor.as_ref()).await.unwrap();
        sequences.extend(page.items.iter().map(|comment| comment.seq));
        cursor = page.cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert!(cursor.is_none(), "pagination does not end");
    sequences.sort_unstable();
    assert_eq!(sequences, (100..120).collect::<Vec<u32>>());
}

#[tokio::test]
async fn paging_through_a_partition_returns_every_item_exactly_once_and_cursors_resume() {
    let db = seeded(2_000).await;
    let query = db.query(Comment::partition("w1")).limit(150);
    let mut seen = std::collections::BTreeSet::new();
    let mut cursor: Option<Cursor> = None;
    let mut pages = 0;
    loop {
        let page = query.page(cursor.as_ref()).await.unwrap();
        assert!(page.errors.is_empty());
        pages += 1;
        for item in page.items {
            assert!(seen.insert(item.seq), "seq {} seen twice", item.seq);
        }
        // Round-trip the cursor through its string form, as a web API would.
        match page.cursor {
            Some(next) => cursor = Some(Cursor::decode(&next.encode()).unwrap()),
            None => break,
        }
        assert!(pages < 100, "pagination does not end");
    }
    assert_eq!(seen.len(), 2_000);
    assert_eq!(
        db.query(Comment::partition("w1")).count().await.unwrap(),
        2_000
    );
    let streamed: Vec<Comment> = db
        .query(Comment::partition("w1"))
        .limit(333)
        .all()
        .await
        .unwrap();
    assert_eq!(streamed.len(), 2_000);
}

#[tokio::test]
async fn cursors_of_another_query_or_tampered_cursors_are_refused() {
    let db = seeded(30).await;
    let first = db
        .query(Comment::partition("w1"))
        .limit(10)
        .page(None)
        .await
        .unwrap();
    let cursor = first.cursor.unwrap();
    // Another index.
    let other = db
        .query(Comment::gsi2("ana"))
        .page(Some(&cursor))
        .await
        .unwrap_err();
    assert!(matches!(other, Error::Cursor(_)), "{other}");
    // Another partition.
    let other = db
        .query(Comment::partition("w2"))
        .page(Some(&cursor))
        .await
        .unwrap_err();
    assert!(matches!(other, Error::Cursor(_)), "{other}");
    // Garbage.
    assert!(Cursor::decode("not a cursor").is_err());
    let forged = aws_smithy_types::base64::encode("{\"i\":null,\"k\":{\"PK\":{\"Q\":1}}}");
    assert!(Cursor::decode(&forged).is_err());
}

#[tokio::test]
async fn key_conditions_select_the_right_items_on_the_engine() {
    if common::skips(Needs::IndexReadAfterWrite) {
        return;
    }
    let db = seeded(300).await;
    let docs: Vec<Comment> = db
        .query(Comment::partition("w1"))
        .sort(Comment::DATE, day("2026-04-01"))
        .sort(Comment::DOC, "x7".to_owned())
        .all()
        .await
        .unwrap();
    assert!(!docs.is_empty());
    assert!(docs
        .iter()
        .all(|c| c.doc == "x7" && c.date == day("2026-04-01")));
    assert_eq!(
        docs.len(),
        (0..300).filter(|n| n % 2 == 0 && n % 3 == 0).count()
    );
    let newest: Vec<Comment> = db
        .query(Comment::gsi2("ana"))
        .descending()
        .all()
        .await
        .unwrap();
    assert_eq!(newest.len(), 60);
    assert!(newest
        .windows(2)
        .all(|pair| pair[0].created_at > pair[1].created_at));
    let low: Vec<Comment> = db
        .query(Comment::lsi1("w1"))
        .lt(Comment::SEQ, 10)
        .all()
        .await
        .unwrap();
    assert_eq!(
        low.iter().map(|c| c.seq).collect::<Vec<_>>(),
        (0..10).collect::<Vec<_>>()
    );
    let mid: Vec<Comment> = db
        .query(Comment::lsi1("w1"))
        .between(Comment::SEQ, 10, 19)
        .all()
        .await
        .unwrap();
    assert_eq!(mid.len(), 10);
    let high = db
        .query(Comment::lsi1("w1"))
        .gt(Comment::SEQ, 289)
        .count()
        .await
        .unwrap();
    assert_eq!(high, 10);
    let tickets = db
        .query(Ticket::gsi1(7))
        .sort(Ticket::STATUS, Status::Open)
        .items();
    assert_eq!(tickets.count().await, 50);
    let filtered = db
        .query(Comment::partition("w1"))
        .filter(Comment::AUTHOR.eq("ana".to_owned()))
        .count()
        .await
        .unwrap();
    assert_eq!(filtered, 60);
}

#[tokio::test]
async fn the_collection_query_decodes_mixed_entities_and_reports_unknown_ones() {
    let db = seeded(40).await;
    for (doc, title) in [("x7", "Plan"), ("y9", "Budget")] {
        let document = Document {
            workspace: "w1".into(),
            date: day("2026-04-01"),
            doc: doc.into(),
            title: title.into(),
        };
        db.put(&document).send().await.unwrap();
    }
    // An item some other tool wrote into the partition.
    let mut stranger = singletable::item::encode(&Document {
        workspace: "w1".into(),
        date: day("2026-04-02"),
        doc: "z1".into(),
        title: "?".into(),
    })
    .unwrap();
    stranger.insert(
        "_type".into(),
        aws_sdk_dynamodb::types::AttributeValue::S("Attachment".into()),
    );
    singletable::testing::put_raw(&db, stranger).await.unwrap();

    let page = db
        .query(Document::partition("w1"))
        .collection::<WorkspaceItem>()
        .page(None)
        .await
        .unwrap();
    let documents = page
        .items
        .iter()
        .filter(|item| matches!(item, WorkspaceItem::Document(_)))
        .count();
    let comments = page
        .items
        .iter()
        .filter(|item| matches!(item, WorkspaceItem::Comment(_)))
        .count();
    assert_eq!(
        (documents, comments),
        (2, 40),
        "errors: {:?}",
        page.errors.first()
    );
    assert_eq!(
        page.errors.len(),
        1,
        "the unknown item is reported, not dropped"
    );
    match &page.errors[0] {
        singletable::DecodeError::WrongEntity {
            expected, found, ..
        } => {
            assert_eq!(*expected, "WorkspaceItem");
            assert_eq!(found.as_deref(), Some("Attachment"));
        }
        other => panic!("unexpected {other:?}"),
    }
    // The documents-only query never sees comments or strangers.
    let only_documents = db.query(Document::partition("w1")).all().await.unwrap();
    assert_eq!(only_documents.len(), 2);
    let request = db
        .query(Document::partition("w1"))
        .collection::<WorkspaceItem>()
        .params()
        .unwrap();
    // A collection names no entity: its filter only leaves out the library's own items.
    let filter = request.body["FilterExpression"].as_str().unwrap();
    assert!(filter.starts_with("NOT "), "{filter}");
    let values = request.body["ExpressionAttributeValues"].to_string();
    assert!(
        !values.contains("Document") && !values.contains("Comment"),
        "{values}"
    );
}

#[test]
fn indexes_on_plain_attributes_query_typed_values() {
    let db = common::offline();
    let request = db
        .query(Review::gsi3(&"ana".to_owned()))
        .gt(Review::SCORE, 5)
        .params()
        .unwrap();
    assert_eq!(request.body["IndexName"], "GSI3");
    assert_eq!(
        request.body["KeyConditionExpression"],
        "#n0 = :v0 AND #n1 > :v1"
    );
    assert_eq!(request.body["ExpressionAttributeNames"]["#n0"], "author");
    assert_eq!(request.body["ExpressionAttributeNames"]["#n1"], "score");
    assert_eq!(request.body["ExpressionAttributeValues"][":v0"]["S"], "ana");
    assert_eq!(request.body["ExpressionAttributeValues"][":v1"]["N"], "5");
    let item = db
        .put(&Review {
            id: "r1".into(),
            author: "ana".into(),
            score: 7,
        })
        .params()
        .unwrap();
    assert!(
        item.body["Item"].get("GSI3PK").is_none(),
        "nothing extra is written"
    );
    // Changing `score` needs nothing else: the index reads the attribute itself.
    let update = db
        .update(Review::key("r1").unwrap())
        .set(Review::SCORE, 9)
        .params()
        .unwrap();
    assert_eq!(update.body["UpdateExpression"], "SET #n0 = :v0");
    let create = db.admin().create_table().params().unwrap();
    let definitions = create.body["AttributeDefinitions"].as_array().unwrap();
    assert!(definitions
        .iter()
        .any(|d| d["AttributeName"] == "score" && d["AttributeType"] == "N"));
    assert!(definitions
        .iter()
        .any(|d| d["AttributeName"] == "author" && d["AttributeType"] == "S"));
}

/// DynamoDB refuses an empty string as a key attribute of an index, and a key above its size
/// limit, with a `ValidationException`. A plain attribute that keys an index is checked before
/// sending, in puts and in updates, as rendered index keys are.
#[test]
fn index_key_attributes_are_checked_before_sending() {
    let db = common::offline();
    let review = |author: &str| Review {
        id: "r1".into(),
        author: author.into(),
        score: 7,
    };
    let empty = db.put(&review("")).params().unwrap_err();
    assert!(
        matches!(
            empty,
            Error::Key(singletable::KeyError::EmptyIndexKey {
                attribute: "author",
                index: "GSI3"
            })
        ),
        "{empty:?}"
    );
    assert_eq!(
        empty.to_string(),
        "`author` keys index GSI3 and is empty; DynamoDB refuses an empty key attribute \
         (leave the attribute out to keep the item off the index)"
    );
    let updated = db
        .update(Review::key("r1").unwrap())
        .set(Review::AUTHOR, "")
        .params()
        .unwrap_err();
    assert!(
        matches!(
            updated,
            Error::Key(singletable::KeyError::EmptyIndexKey {
                attribute: "author",
                ..
            })
        ),
        "{updated:?}"
    );
    let long = "a".repeat(2049);
    for refused in [
        db.put(&review(&long)).params().unwrap_err(),
        db.update(Review::key("r1").unwrap())
            .set(Review::AUTHOR, long.as_str())
            .params()
            .unwrap_err(),
    ] {
        assert!(
            matches!(
                refused,
                Error::Key(singletable::KeyError::TooLong {
                    size: 2049,
                    max: 2048,
                    role: "partition",
                    ..
                })
            ),
            "{refused:?}"
        );
    }
    // At the limit, both are sent.
    let at_limit = "a".repeat(2048);
    assert!(db.put(&review(&at_limit)).params().is_ok());
    assert!(db
        .update(Review::key("r1").unwrap())
        .set(Review::AUTHOR, at_limit.as_str())
        .params()
        .is_ok());
}

#[tokio::test]
async fn indexes_on_plain_attributes_follow_updates_on_the_engine() {
    if common::skips(Needs::IndexReadAfterWrite) {
        return;
    }
    let db = seeded(0).await;
    for (id, score) in [("r1", 3u32), ("r2", 8), ("r3", 12)] {
        db.put(&Review {
            id: id.into(),
            author: "ana".into(),
            score,
        })
        .send()
        .await
        .unwrap();
    }
    let high: Vec<Review> = db
        .query(Review::gsi3(&"ana".to_owned()))
        .ge(Review::SCORE, 8)
        .all()
        .await
        .unwrap();
    assert_eq!(
        high.iter().map(|r| r.score).collect::<Vec<_>>(),
        [8, 12],
        "numeric order, not text"
    );
    db.update(Review::key("r1").unwrap())
        .set(Review::SCORE, 20)
        .send()
        .await
        .unwrap();
    let top: Vec<Review> = db
        .query(Review::gsi3(&"ana".to_owned()))
        .descending()
        .limit(1)
        .all()
        .await
        .unwrap();
    assert_eq!(top[0].id, "r1");
}

#[test]
fn multi_attribute_keys_build_left_to_right_conditions() {
    let db = common::offline::<Workspace>();
    let request = db
        .query(Event::gsi4(&"acme".to_owned(), &"eu".to_owned()))
        .sort(Event::DAY, day("2026-04-01"))
        .gt(Event::SEQ, 3)
        .params()
        .unwrap();
    assert_eq!(
        request.body["KeyConditionExpression"],
        "#n0 = :v0 AND #n1 = :v1 AND #n2 = :v2 AND #n3 > :v3"
    );
    assert_eq!(request.body["ExpressionAttributeNames"]["#n2"], "day");
    assert_eq!(request.body["ExpressionAttributeValues"][":v3"]["N"], "3");
    let create = db.admin().create_table().params().unwrap();
    let gsi4 = create.body["GlobalSecondaryIndexes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|index| index["IndexName"] == "GSI4")
        .unwrap();
    assert_eq!(gsi4["KeySchema"].as_array().unwrap().len(), 4);
    assert_eq!(gsi4["KeySchema"][1]["KeyType"], "HASH");
    assert_eq!(gsi4["KeySchema"][3]["KeyType"], "RANGE");
}

#[tokio::test]
async fn multi_attribute_keys_query_on_the_engine() {
    if common::skips(Needs::IndexReadAfterWrite) {
        return;
    }
    let db = seeded(0).await;
    for (id, region, date, seq) in [
        ("1", "eu", "2026-04-01", 1u32),
        ("2", "eu", "2026-04-01", 5),
        ("3", "eu", "2026-04-02", 7),
        ("4", "us", "2026-04-01", 9),
    ] {
        let event = Event {
            id: id.into(),
            tenant: "acme".into(),
            region: region.into(),
            day: day(date),
            seq,
        };
        db.put(&event).send().await.unwrap();
    }
    let eu: Vec<Event> = db
        .query(Event::gsi4(&"acme".to_owned(), &"eu".to_owned()))
        .all()
        .await
        .unwrap();
    assert_eq!(eu.len(), 3);
    let later: Vec<Event> = db
        .query(Event::gsi4(&"acme".to_owned(), &"eu".to_owned()))
        .sort(Event::DAY, day("2026-04-01"))
        .ge(Event::SEQ, 2)
        .all()
        .await
        .unwrap();
    assert_eq!(
        later
            .iter()
            .map(|event| event.id.as_str())
            .collect::<Vec<_>>(),
        ["2"]
    );
}

#[tokio::test]
async fn projections_read_some_attributes_into_a_typed_struct() {
    if common::skips(Needs::IndexReadAfterWrite) {
        return;
    }
    #[derive(singletable::Projection, serde::Deserialize, Debug, PartialEq)]
    #[dynamo(entity = Comment, index = gsi2)]
    struct Said {
        author: String,
        text: String,
    }
    let db = seeded(12).await;
    let query = db.query(Comment::gsi2("ana")).descending().select::<Said>();
    let request = query.params().unwrap();
    // The table's keys, then the projection's attributes.
    assert_eq!(projected(&request), ["PK", "SK", "author", "text"]);
    let said: Vec<Said> = query
        .all()
        .await
        .unwrap()
        .into_iter()
        .map(|projected| projected.value)
        .collect();
    assert_eq!(
        said.iter()
            .map(|said| said.text.as_str())
            .collect::<Vec<_>>(),
        ["comment 10", "comment 5", "comment 0"]
    );
    assert!(said.iter().all(|said| said.author == "ana"));
}

/// The attribute names a request's `ProjectionExpression` reads, in order.
fn projected(request: &singletable::Request) -> Vec<String> {
    let names = &request.body["ExpressionAttributeNames"];
    request.body["ProjectionExpression"]
        .as_str()
        .unwrap()
        .split(", ")
        .map(|placeholder| names[placeholder].as_str().unwrap().to_owned())
        .collect()
}

/// One projection API: `select` reads part of each item of the table too, with a projection
/// derived for the table (no `index`), and returns each item's key with it.
#[tokio::test]
async fn selecting_from_the_table_reads_part_of_each_item_with_its_key() {
    #[derive(singletable::Projection, serde::Deserialize, Debug, PartialEq)]
    #[dynamo(entity = Comment)]
    struct Text {
        text: String,
    }
    let db = seeded(12).await;
    // Strongly consistent: the items were written just before, and the table can be read so.
    let query = db
        .query(Comment::partition("w1"))
        .consistent()
        .select::<Text>();
    let request = query.params().unwrap();
    assert_eq!(request.body.get("IndexName"), None);
    assert_eq!(projected(&request), ["PK", "SK", "text"]);
    let entries = query.all().await.unwrap();
    let mut texts: Vec<String> = entries
        .iter()
        .map(|entry| entry.value.text.clone())
        .collect();
    texts.sort();
    let mut expected: Vec<String> = (0..12).map(|n| format!("comment {n}")).collect();
    expected.sort();
    assert_eq!(texts, expected);
    // Each key is the key of the comment whose text came with it.
    for entry in &entries {
        let whole = db.get(entry.key.clone()).consistent().send().await.unwrap();
        assert_eq!(whole.text, entry.value.text);
    }
}

#[derive(Table)]
#[dynamo(name = "names", pk = "PK", sk = "SK")]
struct Names;

/// The sort key of issue 29's report: a string as the last part.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Names, pk = "LIST#{list}", sk = "NAME#{name}")]
struct Named {
    list: String,
    name: String,
}

/// Ranges on a last string part returned keys that merely start with the bound (`le(b)` gave
/// `ba` and `bz`) and left out longer values above it (`gt(b)` missed them): each bound was
/// the part's text plus U+10FFFF, right only for parts of one width.
#[tokio::test]
async fn ranges_on_a_last_string_part_return_exactly_the_range() {
    let db = singletable::testing::table::<Names>().await.unwrap();
    for name in ["a", "b", "ba", "bz", "c"] {
        db.put(&Named {
            list: "l".into(),
            name: name.into(),
        })
        .send()
        .await
        .unwrap();
    }
    let names = |found: Vec<Named>| -> Vec<String> { found.into_iter().map(|n| n.name).collect() };
    let query = || db.query(Named::partition("l"));
    let b = || "b".to_owned();
    assert_eq!(
        names(query().gt(Named::NAME, b()).all().await.unwrap()),
        ["ba", "bz", "c"]
    );
    assert_eq!(
        names(query().le(Named::NAME, b()).all().await.unwrap()),
        ["a", "b"]
    );
    assert_eq!(
        names(
            query()
                .between(Named::NAME, "a".into(), b())
                .all()
                .await
                .unwrap()
        ),
        ["a", "b"]
    );
    assert_eq!(
        names(query().lt(Named::NAME, b()).all().await.unwrap()),
        ["a"]
    );
    assert_eq!(
        names(query().ge(Named::NAME, b()).all().await.unwrap()),
        ["b", "ba", "bz", "c"]
    );
    // Empty ranges select nothing rather than send a BETWEEN DynamoDB refuses.
    assert!(query()
        .lt(Named::NAME, String::new())
        .all()
        .await
        .unwrap()
        .is_empty());
    assert!(query()
        .between(Named::NAME, "c".into(), "a".into())
        .all()
        .await
        .unwrap()
        .is_empty());
}
