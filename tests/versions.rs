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
