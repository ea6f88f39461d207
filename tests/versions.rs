//! Optimistic locking and library-maintained timestamps.

use serde::{Deserialize, Serialize};
use singletable::{Entity, Error, Table};

#[derive(Table)]
#[dynamo(name = "docs", pk = "PK", sk = "SK")]
struct Docs;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Docs, pk = "DOC#{id}", sk = "DOC")]
struct Document {
    id: String,
    body: String,
    #[dynamo(version)]
    version: u64,
    #[dynamo(created_at)]
    created_at: chrono::DateTime<chrono::Utc>,
    #[dynamo(updated_at)]
    updated_at: i64,
}

fn document(id: &str, body: &str) -> Document {
    Document {
        id: id.into(),
        body: body.into(),
        version: 0,
        created_at: chrono::DateTime::UNIX_EPOCH,
        updated_at: 0,
    }
}

async fn db() -> singletable::testing::TestTable<Docs> {
    match singletable::testing::table::<Docs>().await {
        Ok(db) => db,
        Err(error) => panic!("{error}"),
    }
}

#[tokio::test]
async fn put_creates_at_version_one_and_stamps_times() {
    let db = db().await;
    let before = chrono::Utc::now();
    db.put(&document("a", "hello")).send().await.unwrap();
    let stored = db.get(Document::key("a").unwrap()).send().await.unwrap();
    assert_eq!(stored.version, 1);
    assert!(
        stored.created_at >= before - chrono::Duration::seconds(1),
        "{stored:?}"
    );
    assert!(stored.updated_at >= before.timestamp_millis() - 1000);
    // A second create of the same document (version 0) conflicts.
    let error = db.put(&document("a", "again")).send().await.unwrap_err();
    match &error {
        Error::VersionConflict {
            expected, found, ..
        } => assert_eq!((*expected, *found), (0, 1)),
        other => panic!("expected VersionConflict, got {other:?}"),
    }
}

#[tokio::test]
async fn a_lost_race_is_a_version_conflict_with_the_current_item() {
    let db = db().await;
    db.put(&document("b", "v1")).send().await.unwrap();
    let mine = db.get(Document::key("b").unwrap()).send().await.unwrap();
    let theirs = mine.clone();
    // They write first.
    db.put(&Document {
        body: "theirs".into(),
        ..theirs
    })
    .send()
    .await
    .unwrap();
    // My write, based on version 1, must not overwrite theirs.
    let error = db
        .put(&Document {
            body: "mine".into(),
            ..mine
        })
        .send()
        .await
        .unwrap_err();
    assert!(error.is_version_conflict(), "{error}");
    let current: Document = error.current_item().unwrap().unwrap();
    assert_eq!((current.body.as_str(), current.version), ("theirs", 2));
}

#[tokio::test]
async fn updates_increment_the_version_and_check_it_when_asked() {
    let db = db().await;
    db.put(&document("c", "v1")).send().await.unwrap();
    let updated = db
        .update(Document::key("c").unwrap())
        .set(Document::BODY, "v2".to_owned())
        .expect_version(1)
        .send()
        .await
        .unwrap();
    assert_eq!((updated.body.as_str(), updated.version), ("v2", 2));
    let stale = db
        .update(Document::key("c").unwrap())
        .set(Document::BODY, "stale".to_owned())
        .expect_version(1)
        .send()
        .await
        .unwrap_err();
    match &stale {
        Error::VersionConflict {
            expected, found, ..
        } => assert_eq!((*expected, *found), (1, 2)),
        other => panic!("expected VersionConflict, got {other:?}"),
    }
    assert_eq!(
        db.get(Document::key("c").unwrap())
            .send()
            .await
            .unwrap()
            .body,
        "v2"
    );
}

#[tokio::test]
async fn concurrent_writers_at_the_same_version_have_exactly_one_winner() {
    let db = db().await;
    db.put(&document("d", "start")).send().await.unwrap();
    let read = db.get(Document::key("d").unwrap()).send().await.unwrap();
    let writers = (0..8).map(|writer| {
        let db = db.clone();
        let mut copy = read.clone();
        copy.body = format!("writer {writer}");
        tokio::spawn(async move { db.put(&copy).send().await })
    });
    let results = futures::future::join_all(writers).await;
    let wins = results
        .iter()
        .filter(|result| matches!(result, Ok(Ok(()))))
        .count();
    let conflicts = results
        .iter()
        .filter(|result| matches!(result, Ok(Err(error)) if error.is_version_conflict()))
        .count();
    assert_eq!((wins, conflicts), (1, 7));
    assert_eq!(
        db.get(Document::key("d").unwrap())
            .send()
            .await
            .unwrap()
            .version,
        2
    );
}

/// A small version type, to reach its maximum in a test.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Docs, pk = "NOTE#{id}", sk = "NOTE")]
struct Note {
    id: String,
    body: String,
    #[dynamo(version)]
    version: u16,
}

fn raw_note(id: &str, version: Option<u16>) -> singletable::Item {
    use aws_sdk_dynamodb::types::AttributeValue;
    let mut item = singletable::Item::new();
    item.insert("PK".into(), AttributeValue::S(format!("NOTE#{id}")));
    item.insert("SK".into(), AttributeValue::S("NOTE".into()));
    item.insert("_type".into(), AttributeValue::S("Note".into()));
    item.insert("id".into(), AttributeValue::S(id.into()));
    item.insert("body".into(), AttributeValue::S("old".into()));
    if let Some(version) = version {
        item.insert("version".into(), AttributeValue::N(version.to_string()));
    }
    item
}

/// An item another tool wrote without the version attribute is at version 0, for updates as
/// for puts: the first update stores version 1, and `expect_version(0)` holds.
#[tokio::test]
async fn an_item_without_its_version_attribute_is_at_version_zero() {
    let db = db().await;
    singletable::testing::put_raw(&db, raw_note("a", None))
        .await
        .unwrap();
    let updated = db
        .update(Note::key("a").unwrap())
        .set(Note::BODY, "new".to_owned())
        .send()
        .await
        .unwrap();
    assert_eq!(updated.version, 1);
    singletable::testing::put_raw(&db, raw_note("b", None))
        .await
        .unwrap();
    let updated = db
        .update(Note::key("b").unwrap())
        .set(Note::BODY, "new".to_owned())
        .expect_version(0)
        .send()
        .await
        .unwrap();
    assert_eq!(updated.version, 1);
}

/// A version at its type's maximum cannot count another write: puts and updates refuse it
/// with a typed error instead of storing a number the field cannot read back.
#[tokio::test]
async fn a_version_at_its_maximum_is_refused_not_overflowed() {
    let db = db().await;
    singletable::testing::put_raw(&db, raw_note("full", Some(u16::MAX)))
        .await
        .unwrap();
    let overflow = |error: &Error| matches!(error, Error::VersionOverflow { entity: "Note", version, .. } if *version == u64::from(u16::MAX));
    let unexpected = db
        .update(Note::key("full").unwrap())
        .set(Note::BODY, "new".to_owned())
        .send()
        .await
        .unwrap_err();
    assert!(overflow(&unexpected), "{unexpected:?}");
    let expected = db
        .update(Note::key("full").unwrap())
        .set(Note::BODY, "new".to_owned())
        .expect_version(u64::from(u16::MAX))
        .params()
        .unwrap_err();
    assert!(overflow(&expected), "{expected:?}");
    let put = db
        .put(&Note {
            id: "full".into(),
            body: "new".into(),
            version: u16::MAX,
        })
        .params()
        .unwrap_err();
    assert!(overflow(&put), "{put:?}");
    let stored = db.get(Note::key("full").unwrap()).send().await.unwrap();
    assert_eq!((stored.version, stored.body.as_str()), (u16::MAX, "old"));
    assert!(unexpected.to_string().contains("65535"), "{unexpected}");
}
