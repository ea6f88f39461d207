//! Seed 003 on the local engine: a live workspace table gets a new access pattern ("every
//! comment a member wrote, newest first"), which needs a new GSI; comments written before it
//! lack its attributes until they are backfilled, lazily or by a sweep that runs while the
//! application keeps writing.
//!
//! Two declarations of the same table name stand for the code before and after the change:
//! `WorkspaceV1` (no GSI2) with `CommentV1` (schema version 1), and `Workspace` (GSI2) with
//! `Comment` (schema version 2, keys on GSI2).
//!
//! Where an engine differs from DynamoDB, the test names the `Deviation` and asserts what the
//! engine does support:
//! - `IndexesActiveAtOnce` (moto, dynoxide): a new global index is `ACTIVE` in the
//!   `UpdateTable` answer, with no `CREATING` phase and no `Backfilling` flag, so apply never
//!   waits (DynamoDB reports `CREATING` and `Backfilling: true` for minutes to hours);
//! - `FlatUpdateCapacity` (moto): `UpdateItem` reports 0.5 units whatever the item's size and
//!   the indexes written, so a write-unit rate limit lets about twice as many writes through.
//!
//! On every engine a new global index returns the existing items that have its key attributes
//! once it is `ACTIVE` (DynamoDB copies them in during backfilling; no engine indexes items that
//! lack them).

mod common;
use common::Needs;

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use singletable::local::{Deviation, Engine};
use singletable::migrate::{
    ApplyEvent, BackfillOutcome, Checkpoint, MigrationError, PlanAction, RecordedSweep,
};
use singletable::testing::TestTable;
use singletable::{Db, Entity, Error, Item, Rate, Table};
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Bounds every engine test.
const TIMEOUT: Duration = Duration::from_secs(180);

// ----------------------------------------------------------------------------------------
// The code before the migration.

#[derive(Table)]
#[dynamo(name = "workspace", pk = "PK", sk = "SK")]
struct WorkspaceV1;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = WorkspaceV1, name = "Document", pk = "WS#{workspace}", sk = "DOC#{date}#{doc}")]
struct DocumentV1 {
    workspace: String,
    date: NaiveDate,
    doc: String,
    title: String,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = WorkspaceV1, name = "Comment", pk = "WS#{workspace}",
         sk = "DOC#{date}#{doc}#CMT#{comment}")]
struct CommentV1 {
    workspace: String,
    date: NaiveDate,
    doc: String,
    comment: ulid::Ulid,
    author: String,
    created_at: DateTime<Utc>,
    text: String,
}

// ----------------------------------------------------------------------------------------
// The code after: GSI2 serves "a member's comments, newest first" from rendered keys, which
// old items lack. GSI3 serves the same from the plain `author` and `created_at` attributes,
// which old items have: it needs no backfill, and a backfill must never touch them.

#[derive(Table)]
#[dynamo(
    name = "workspace",
    pk = "PK",
    sk = "SK",
    gsi2(name = "GSI2", pk = "GSI2PK", sk = "GSI2SK"),
    gsi3(name = "ByAuthor", pk = "author", sk = "created_at")
)]
struct Workspace;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Workspace, pk = "WS#{workspace}", sk = "DOC#{date}#{doc}")]
struct Document {
    workspace: String,
    date: NaiveDate,
    doc: String,
    title: String,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Workspace, schema_version = 2, pk = "WS#{workspace}",
         sk = "DOC#{date}#{doc}#CMT#{comment}",
         gsi2pk = "MEMBER#{author}", gsi2sk = "{created_at}",
         gsi3pk = author, gsi3sk = created_at)]
struct Comment {
    workspace: String,
    date: NaiveDate,
    doc: String,
    comment: ulid::Ulid,
    author: String,
    created_at: DateTime<Utc>,
    text: String,
}

const MEMBERS: [&str; 3] = ["ana", "bo", "cy"];

fn old_comment(n: u32) -> CommentV1 {
    CommentV1 {
        workspace: "a91".into(),
        date: NaiveDate::from_ymd_opt(2026, 4, 1 + n % 3).unwrap(),
        doc: format!("x{}", n % 3),
        comment: ulid::Ulid::from_parts(1_775_000_000_000 + u64::from(n), u128::from(n)),
        author: MEMBERS[n as usize % MEMBERS.len()].into(),
        created_at: DateTime::from_timestamp(1_775_000_000 + i64::from(n) * 60, 0).unwrap(),
        text: format!("comment {n}"),
    }
}

fn upgraded(comment: &CommentV1) -> Comment {
    Comment {
        workspace: comment.workspace.clone(),
        date: comment.date,
        doc: comment.doc.clone(),
        comment: comment.comment,
        author: comment.author.clone(),
        created_at: comment.created_at,
        text: comment.text.clone(),
    }
}

/// A fresh table in the old shape with `comments` comments on three documents; every
/// `without_version`-th comment is stored without a schema version attribute at all, as items
/// written before versions were recorded are.
async fn old_workspace(
    comments: u32,
    without_version: u32,
) -> (TestTable<WorkspaceV1>, Vec<CommentV1>) {
    let db = singletable::testing::table::<WorkspaceV1>().await.unwrap();
    let documents: Vec<DocumentV1> = (0..3)
        .map(|n| DocumentV1 {
            workspace: "a91".into(),
            date: NaiveDate::from_ymd_opt(2026, 4, 1 + n).unwrap(),
            doc: format!("x{n}"),
            title: format!("document {n}"),
        })
        .collect();
    let all: Vec<CommentV1> = (0..comments).map(old_comment).collect();
    let (unversioned, versioned): (Vec<_>, Vec<_>) = all
        .iter()
        .cloned()
        .enumerate()
        .partition(|(n, _)| without_version > 0 && (*n as u32).is_multiple_of(without_version));
    let versioned: Vec<CommentV1> = versioned.into_iter().map(|(_, c)| c).collect();
    let output = db
        .batch_write()
        .put_all(&documents)
        .put_all(&versioned)
        .send()
        .await
        .unwrap();
    assert!(output.is_complete());
    for (_, comment) in unversioned {
        let mut item = singletable::item::encode(&comment).unwrap();
        item.remove("_sv");
        singletable::testing::put_raw(&db, item).await.unwrap();
    }
    (db, all)
}

/// The same table through the new code.
fn new_code(db: &Db<WorkspaceV1>) -> Db<Workspace> {
    Db::<Workspace>::new(db.client().clone()).with_table_name(db.table_name())
}

async fn raw_item(db: &Db<Workspace>, comment: &Comment) -> Item {
    db.client()
        .get_item()
        .table_name(db.table_name())
        .set_key(Some(comment.primary_key().unwrap().to_attributes()))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
        .unwrap()
}

fn text<'a>(item: &'a Item, name: &str) -> Option<&'a str> {
    match item.get(name) {
        Some(AttributeValue::S(text)) => Some(text),
        Some(AttributeValue::N(number)) => Some(number),
        _ => None,
    }
}

/// The item has the new shape: schema version 2 and GSI2 keys computed from its own fields.
fn assert_new_shape(item: &Item, comment: &Comment) {
    assert_eq!(text(item, "_sv"), Some("2"), "{item:?}");
    let mut keys = Item::new();
    comment.write_index_keys(&mut keys).unwrap();
    assert_eq!(
        text(item, "GSI2PK"),
        Some(format!("MEMBER#{}", comment.author).as_str())
    );
    assert_eq!(item.get("GSI2PK"), keys.get("GSI2PK"));
    assert_eq!(item.get("GSI2SK"), keys.get("GSI2SK"));
}

/// Every comment has the new shape and its data unchanged, and the coverage, with the sweep's
/// checkpoint, says the migration is done.
async fn every_comment_backfilled(
    db: &Db<Workspace>,
    comments: &[CommentV1],
    checkpoint: &PathBuf,
) {
    for comment in comments {
        let comment = upgraded(comment);
        let item = raw_item(db, &comment).await;
        assert_eq!(
            singletable::item::decode::<Comment>(item.clone()).unwrap(),
            comment
        );
        assert_new_shape(&item, &comment);
    }
    let after = (db.admin().coverage(Comment::SCHEMA))
        .checkpoint(checkpoint)
        .send()
        .await
        .unwrap();
    assert!(after.is_done(), "{after}");
}

fn temp_checkpoint(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "singletable-migration-{}-{name}.json",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    path
}

/// A member's comments on GSI2, newest first.
async fn member_comments(db: &Db<Workspace>, member: &str) -> Vec<Comment> {
    db.query(Comment::gsi2(member))
        .descending()
        .all()
        .await
        .unwrap()
}

#[tokio::test]
async fn the_seed_story_add_gsi2_backfill_under_concurrent_writes_verify_and_query() {
    if common::skips(Needs::IndexReadAfterWrite) {
        return;
    }
    if common::skips(Needs::TableChange) {
        return;
    }
    tokio::time::timeout(TIMEOUT, seed_story()).await.unwrap();
}

async fn seed_story() {
    let (old, comments) = old_workspace(90, 9).await;
    let db = new_code(&old);
    let entities = [Document::SCHEMA, Comment::SCHEMA];

    // Plan: both indexes and their key attributes are missing; comments need a backfill; the
    // entities' keys are recorded last.
    let plan = db.admin().table_migration(&entities).plan().await.unwrap();
    assert!(!plan.is_blocked(), "{plan}");
    let [PlanAction::CreateIndex(change), PlanAction::CreateIndex(by_author), PlanAction::RecordKeys {
        entity: "Document",
        schema_version: 1,
    }, PlanAction::RecordKeys {
        entity: "Comment",
        schema_version: 2,
    }] = plan.actions.as_slice()
    else {
        panic!("expected two indexes to create and two entities' keys to record:\n{plan}");
    };
    assert_eq!(by_author.index.name, "ByAuthor");
    assert_eq!(change.index.name, "GSI2");
    let string = singletable::schema::ScalarType::String;
    assert_eq!(
        change.new_attribute_definitions,
        [("GSI2PK", string), ("GSI2SK", string)]
    );
    assert_eq!(change.written_by, [("Comment", 2)]);
    assert_eq!(plan.backfills.len(), 1);
    assert_eq!(plan.backfills[0].entity, "Comment");
    assert_eq!(plan.backfills[0].indexes, ["GSI2", "ByAuthor"]);
    let shown = plan.to_string();
    assert!(
        shown.contains("create global index GSI2 (GSI2PK HASH, GSI2SK RANGE)"),
        "{shown}"
    );
    assert_eq!(
        serde_json::to_value(&plan).unwrap()["actions"][0]["action"],
        "create_index"
    );

    // Apply: one UpdateTable per index, each followed by polls until ACTIVE.
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let applied = db
        .admin()
        .table_migration(&entities)
        .poll_interval(Duration::from_millis(50))
        .timeout(Duration::from_secs(60))
        .on_progress(move |event| {
            seen.lock().unwrap().push(match event {
                ApplyEvent::Planned(_) => "planned".to_owned(),
                ApplyEvent::Started(action) => format!("started {action}"),
                ApplyEvent::Waiting { status, .. } => format!("waiting {status}"),
                ApplyEvent::Finished { .. } => "finished".to_owned(),
            })
        })
        .send()
        .await
        .unwrap();
    assert_eq!(applied.plan.actions.len(), 4);
    let events = events.lock().unwrap().clone();
    // DynamoDB reports a new index CREATING, then ACTIVE, so apply may poll ("waiting") between
    // an index's start and its finish, and nowhere else.
    let steps: Vec<&str> = events
        .iter()
        .filter(|event| !event.starts_with("waiting"))
        .map(String::as_str)
        .collect();
    assert_eq!(steps.len(), 9, "{events:?}");
    assert_eq!(steps[0], "planned");
    assert!(
        steps[1].starts_with("started create global index GSI2"),
        "{events:?}"
    );
    assert_eq!(steps[2], "finished");
    assert!(
        steps[3].starts_with("started create global index ByAuthor"),
        "{events:?}"
    );
    assert_eq!(steps[4], "finished");
    assert!(
        steps[5].starts_with("started record Document's keys at schema version 1"),
        "{events:?}"
    );
    assert!(
        steps[7].starts_with("started record Comment's keys at schema version 2"),
        "{events:?}"
    );
    let mut in_change = false;
    for event in &events {
        if event.starts_with("started") {
            in_change = true;
        } else if event == "finished" {
            in_change = false;
        } else if event.starts_with("waiting") {
            assert!(in_change, "a poll outside a change: {events:?}");
        }
    }
    let engine = Engine::from_env().unwrap();
    let active_at_once = engine.deviates(Deviation::IndexesActiveAtOnce);
    if active_at_once {
        // Checked, so that an engine that gains the CREATING phase is noticed.
        assert!(
            events.iter().all(|event| !event.starts_with("waiting")),
            "{engine} (Deviation::IndexesActiveAtOnce) made apply wait: {events:?}"
        );
    }
    let described = db
        .client()
        .describe_table()
        .table_name(db.table_name())
        .send()
        .await
        .unwrap();
    let table = described.table().unwrap();
    assert_eq!(table.global_secondary_indexes().len(), 2);
    for index in table.global_secondary_indexes() {
        assert_eq!(index.index_status().map(|s| s.as_str()), Some("ACTIVE"));
        if active_at_once {
            // DynamoDB reports `Backfilling: true` while it copies items in.
            assert_eq!(index.backfilling(), None, "{engine}");
        }
    }
    let mut defined: Vec<&str> = table
        .attribute_definitions()
        .iter()
        .map(|definition| definition.attribute_name())
        .collect();
    defined.sort_unstable();
    // The key's definitions are still there: apply resends them, for engines whose UpdateTable
    // replaces the definitions instead of adding to them.
    assert_eq!(
        defined,
        ["GSI2PK", "GSI2SK", "PK", "SK", "author", "created_at"]
    );
    let again = db.admin().table_migration(&entities).plan().await.unwrap();
    assert!(again.is_up_to_date(), "{again}");
    assert_eq!(again.up_to_date, ["GSI2", "ByAuthor"]);

    // GSI2 exists but old comments lack its attributes: invisible there. ByAuthor reads
    // attributes every comment has, so it serves them all at once.
    for member in MEMBERS {
        assert!(member_comments(&db, member).await.is_empty());
        let by_author = db
            .query(Comment::gsi3(&member.to_owned()))
            .all()
            .await
            .unwrap();
        assert_eq!(by_author.len(), 30);
    }
    // The old read path still works: the base table serves a document's comments.
    let on_x0 = db
        .query(Comment::partition("a91"))
        .sort(Comment::DATE, comments[0].date)
        .sort(Comment::DOC, "x0".to_owned())
        .all()
        .await
        .unwrap();
    assert_eq!(on_x0.len(), 30);

    // Coverage before any backfill: everything behind, no sweep.
    let before = db.admin().coverage(Comment::SCHEMA).send().await.unwrap();
    assert_eq!((before.items, before.behind), (90, 90));
    assert_eq!(before.by_version, BTreeMap::from([(0, 10), (1, 80)]));
    assert!(!before.is_done());
    let refused = db
        .admin()
        .migration_marker(Comment::SCHEMA)
        .mark_complete(&before)
        .await
        .unwrap_err();
    assert!(
        matches!(refused, Error::Migration(MigrationError::NotDone { .. })),
        "{refused}"
    );

    // Lazy backfill on read: the item reaches GSI2 as soon as it is read.
    let first = upgraded(&comments[0]);
    let read = db
        .get_and_backfill(first.primary_key().unwrap())
        .await
        .unwrap();
    assert_eq!(read, first);
    assert_new_shape(&raw_item(&db, &first).await, &first);
    assert_eq!(
        member_comments(&db, "ana").await,
        std::slice::from_ref(&first)
    );

    // The sweep runs while the application writes through the new code: some comments get
    // their text edited (not an index input), some move to another member (an index input:
    // the update rewrites GSI2's keys itself), some are replaced whole (the new shape).
    let expected: Arc<Mutex<BTreeMap<ulid::Ulid, Comment>>> = Arc::new(Mutex::new(
        comments
            .iter()
            .map(|comment| (comment.comment, upgraded(comment)))
            .collect(),
    ));
    let checkpoint = temp_checkpoint("story");
    let sweep = tokio::spawn(
        db.admin()
            .sweep::<Comment>()
            .segments(3)
            .page_size(7)
            .rate(Rate::ItemsPerSecond(150.0))
            .checkpoint(&checkpoint)
            .send(),
    );
    let writers: Vec<_> = (0..3u32)
        .map(|writer| {
            let db = db.clone();
            let expected = expected.clone();
            let mine: Vec<Comment> = comments
                .iter()
                .enumerate()
                .filter(|(n, _)| *n > 0 && (*n as u32 / 3) % 3 == writer)
                .map(|(_, comment)| upgraded(comment))
                .collect();
            tokio::spawn(async move {
                for (round, comment) in mine.iter().enumerate() {
                    let key = comment.primary_key().unwrap();
                    let now = match writer {
                        0 => db
                            .update(key)
                            .set(Comment::TEXT, format!("edited {round}"))
                            .send()
                            .await
                            .unwrap(),
                        1 => db
                            .update(key)
                            .set(Comment::AUTHOR, "dee".to_owned())
                            .given(Comment::CREATED_AT, comment.created_at)
                            .send()
                            .await
                            .unwrap(),
                        _ => {
                            let mut replaced = comment.clone();
                            replaced.text = format!("rewritten {round}");
                            db.put(&replaced).send().await.unwrap();
                            replaced
                        }
                    };
                    expected.lock().unwrap().insert(now.comment, now);
                    tokio::time::sleep(Duration::from_millis(7)).await;
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
    let report = sweep.await.unwrap().unwrap();
    assert!(report.complete, "{report}");
    let counts = report.this_run;
    assert_eq!(counts.failed, 0, "{report}");
    // Every old comment was either backfilled or left to a writer that wrote the new shape.
    assert_eq!(
        counts.backfilled + counts.changed_concurrently + counts.already_current,
        counts.old,
        "{report}"
    );
    assert!(counts.old <= 89 && counts.backfilled > 0, "{report}");
    let engine = Engine::from_env().unwrap();
    if engine.deviates(Deviation::FlatUpdateCapacity) {
        assert_eq!(
            counts.write_units,
            counts.backfilled as f64 * 0.5,
            "{engine} (Deviation::FlatUpdateCapacity): {report}"
        );
    } else {
        // DynamoDB: one write unit per KB of the (small) comment, one for the GSI2 entry that
        // the backfill creates, and one for ByAuthor's entry, whose keys stay but whose
        // projection (ALL) takes the new attributes.
        assert_eq!(
            counts.write_units,
            counts.backfilled as f64 * 3.0,
            "{engine}: {report}"
        );
    }
    assert!(report.to_string().contains("backfilled"), "{report}");

    // No concurrent write was overwritten, and every comment has the new shape.
    let expected = expected.lock().unwrap().clone();
    for comment in expected.values() {
        let item = raw_item(&db, comment).await;
        let stored: Comment = singletable::item::decode(item.clone()).unwrap();
        assert_eq!(&stored, comment);
        assert_new_shape(&item, comment);
    }

    // Coverage: 100%, and the checkpoint says the sweep covered every segment.
    let coverage = db
        .admin()
        .coverage(Comment::SCHEMA)
        .checkpoint(&checkpoint)
        .segments(2)
        .send()
        .await
        .unwrap();
    assert_eq!((coverage.items, coverage.behind), (90, 0), "{coverage}");
    assert_eq!(coverage.sweep, RecordedSweep::Complete);
    assert!(coverage.is_done(), "{coverage}");
    assert_eq!(coverage.percent(), 100.0);
    let migration = db.admin().migration_marker(Comment::SCHEMA);
    assert!(!migration.is_complete().await.unwrap());
    let record = migration.mark_complete(&coverage).await.unwrap();
    assert_eq!(record.items, 90);
    assert!(migration.is_complete().await.unwrap());
    // The record is not an entity: scans of the entities never see it.
    let documents: Vec<Document> = futures::TryStreamExt::try_collect(db.scan().items())
        .await
        .unwrap();
    assert_eq!(documents.len(), 3);

    // The new access pattern: each member's comments, newest first, every one of them.
    for member in MEMBERS.iter().chain(&["dee"]) {
        let mut wanted: Vec<Comment> = expected
            .values()
            .filter(|comment| comment.author == *member)
            .cloned()
            .collect();
        wanted.sort_by_key(|comment| std::cmp::Reverse(comment.created_at));
        assert!(!wanted.is_empty());
        assert_eq!(
            member_comments(&db, member).await,
            wanted,
            "member {member}"
        );
    }
    let _ = std::fs::remove_file(&checkpoint);
}

#[tokio::test]
async fn a_backfill_never_writes_keys_computed_from_stale_fields() {
    tokio::time::timeout(TIMEOUT, stale_fields()).await.unwrap();
}

async fn stale_fields() {
    let (old, comments) = old_workspace(3, 0).await;
    let db = new_code(&old);
    let comment = upgraded(&comments[1]);
    let stale = raw_item(&db, &comment).await;

    // The request: index keys and version only, conditioned on every input read.
    let request = db
        .admin()
        .backfill_params::<Comment>(&stale)
        .unwrap()
        .unwrap();
    let body = &request.body;
    assert_eq!(
        body["UpdateExpression"],
        "SET #n0 = :v0, #n1 = :v1, #n2 = :v2"
    );
    assert_eq!(
        body["ConditionExpression"],
        "attribute_exists(#n3) AND #n4 = :v3 AND (attribute_not_exists(#n2) OR #n2 < :v4) \
         AND #n5 = :v5 AND #n6 = :v6"
    );
    let names = &body["ExpressionAttributeNames"];
    assert_eq!(
        [&names["#n3"], &names["#n4"], &names["#n5"], &names["#n6"]],
        ["PK", "_type", "author", "created_at"]
    );

    // A writer moves the comment to another member after the backfill read it.
    let moved = db
        .update(comment.primary_key().unwrap())
        .set(Comment::AUTHOR, "dee".to_owned())
        .given(Comment::CREATED_AT, comment.created_at)
        .send()
        .await
        .unwrap();
    let done = db
        .admin()
        .backfill_item::<Comment>(stale.clone())
        .await
        .unwrap();
    // The condition failed on `author`; the keys were computed again from the item as the
    // writer left it, never from the stale read.
    assert!(
        matches!(
            done.outcome,
            BackfillOutcome::Written {
                after_change: true,
                ..
            }
        ),
        "{done:?}"
    );
    assert_eq!(done.entity.as_ref(), Some(&moved));
    assert_new_shape(&raw_item(&db, &moved).await, &moved);

    // A writer that wrote the new shape wins; the backfill writes nothing.
    let other = upgraded(&comments[2]);
    let stale = raw_item(&db, &other).await;
    let mut rewritten = other.clone();
    rewritten.text = "rewritten".into();
    db.put(&rewritten).send().await.unwrap();
    let done = db.admin().backfill_item::<Comment>(stale).await.unwrap();
    assert_eq!(done.outcome, BackfillOutcome::ChangedConcurrently);
    let item = raw_item(&db, &rewritten).await;
    assert_eq!(text(&item, "text"), Some("rewritten"));

    // A deleted item stays deleted.
    let gone = upgraded(&comments[0]);
    let stale = raw_item(&db, &gone).await;
    db.delete(gone.primary_key().unwrap()).send().await.unwrap();
    let done = db.admin().backfill_item::<Comment>(stale).await.unwrap();
    assert_eq!(done.outcome, BackfillOutcome::ChangedConcurrently);
    assert_eq!(done.entity, None);
    let missing = db
        .client()
        .get_item()
        .table_name(db.table_name())
        .set_key(Some(gone.primary_key().unwrap().to_attributes()))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    assert!(missing.item.is_none());

    // An item already in the new shape needs nothing.
    assert!(db
        .admin()
        .backfill_params::<Comment>(&item)
        .unwrap()
        .is_none());
}

#[tokio::test]
async fn a_killed_sweep_resumes_from_its_checkpoint_and_processes_every_item_once() {
    tokio::time::timeout(TIMEOUT, killed_and_resumed())
        .await
        .unwrap();
}

async fn killed_and_resumed() {
    let (old, comments) = old_workspace(120, 7).await;
    let db = new_code(&old);
    let checkpoint = temp_checkpoint("killed");

    // Kill the sweep (abort its task, as a crash would) once it has backfilled 35 items.
    let backfilled = Arc::new(AtomicU64::new(0));
    let progress = backfilled.clone();
    let sweep = tokio::spawn(
        db.admin()
            .sweep::<Comment>()
            .segments(2)
            .page_size(10)
            .checkpoint(&checkpoint)
            .on_progress(move |snapshot| {
                progress.store(snapshot.counts.backfilled, Ordering::SeqCst);
                ControlFlow::Continue(())
            })
            .send(),
    );
    while backfilled.load(Ordering::SeqCst) < 35 {
        assert!(
            !sweep.is_finished(),
            "the sweep finished before it was killed"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    sweep.abort();
    assert!(sweep.await.unwrap_err().is_cancelled());
    // Like a crash, the kill can leave a request on the wire; let the engine finish it.
    tokio::time::sleep(Duration::from_millis(300)).await;

    let saved = Checkpoint::load(&checkpoint).unwrap().unwrap();
    assert!(!saved.is_complete());
    assert_eq!(saved.total_segments, 2);
    let before = db.admin().coverage(Comment::SCHEMA).send().await.unwrap();
    assert!(before.behind > 0 && before.behind <= 120 - 35, "{before}");
    assert!(matches!(before.sweep, RecordedSweep::NotRecorded { .. }));

    // Resuming with another segment count would scan other item sets: refused.
    let refused = db
        .admin()
        .sweep::<Comment>()
        .segments(3)
        .checkpoint(&checkpoint)
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(
            refused,
            Error::Migration(MigrationError::CheckpointMismatch { .. })
        ),
        "{refused}"
    );

    // Resume: exactly the items still behind are backfilled, each once.
    let report = db
        .admin()
        .sweep::<Comment>()
        .checkpoint(&checkpoint)
        .send()
        .await
        .unwrap();
    assert!(report.complete, "{report}");
    assert_eq!(report.total_segments, 2);
    assert_eq!(report.this_run.backfilled, before.behind, "{report}");
    assert_eq!(report.this_run.old, before.behind, "{report}");
    assert_eq!(
        report.this_run.changed_concurrently + report.this_run.already_current,
        0
    );

    every_comment_backfilled(&db, &comments, &checkpoint).await;

    // A finished sweep run again reads nothing more and writes nothing.
    let again = db
        .admin()
        .sweep::<Comment>()
        .checkpoint(&checkpoint)
        .send()
        .await
        .unwrap();
    assert_eq!(again.this_run.examined, 0);
    assert!(again.complete);
    let _ = std::fs::remove_file(&checkpoint);
}

/// A sweep with many backfill writes in flight, whose responses are lost a quarter of the
/// time (each write then sent again, and applied once), stopped mid-page: its checkpoint holds
/// only pages whose every write finished, so the resumed sweep finds every item still behind
/// and the table ends fully backfilled, each item's data unchanged.
#[tokio::test]
async fn a_concurrent_sweep_checkpoints_only_pages_whose_writes_all_finished() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    tokio::time::timeout(TIMEOUT, concurrent_stopped_and_resumed())
        .await
        .unwrap();
}

async fn concurrent_stopped_and_resumed() {
    use singletable_fault::{self as fault, Fault, FaultKind, FaultPlan};
    let (old, comments) = old_workspace(300, 7).await;
    let db = new_code(&old);
    let checkpoint = temp_checkpoint("concurrent");
    let lost = [FaultKind::Timeout, FaultKind::ConnectionDropped].map(Fault::after);
    let plan = FaultPlan::new(5, 0.25).with_kinds(lost);
    let (client, stats) = fault::client(plan).await.unwrap();
    let faulty = Db::<Workspace>::new(client).with_table_name(db.table_name());
    // Stopped once 130 items are backfilled, mid-page: the writes in flight finish, no new one
    // starts, and the page is not recorded as read.
    let stopped = faulty
        .admin()
        .sweep::<Comment>()
        .segments(2)
        .page_size(40)
        .concurrency(16)
        .checkpoint(&checkpoint)
        .on_progress(|snapshot| match snapshot.counts.backfilled >= 130 {
            true => ControlFlow::Break(()),
            false => ControlFlow::Continue(()),
        })
        .send()
        .await
        .unwrap();
    assert!(!stopped.complete, "{stopped}");
    assert!(stats.report().injected_total() > 0, "responses were lost");

    let saved = Checkpoint::load(&checkpoint).unwrap().unwrap();
    assert!(!saved.is_complete());
    let before = db.admin().coverage(Comment::SCHEMA).send().await.unwrap();
    assert!(before.behind > 0 && before.behind <= 300 - 130, "{before}");
    let report = db
        .admin()
        .sweep::<Comment>()
        .concurrency(16)
        .checkpoint(&checkpoint)
        .send()
        .await
        .unwrap();
    assert!(report.complete, "{report}");
    // Every item still behind was found again: none lay before a recorded page's end.
    assert_eq!(report.this_run.old, before.behind, "{report}");
    assert_eq!(report.this_run.backfilled, before.behind, "{report}");
    every_comment_backfilled(&db, &comments, &checkpoint).await;
    let _ = std::fs::remove_file(&checkpoint);
}

#[tokio::test]
async fn dry_runs_count_and_a_progress_callback_can_stop_the_sweep() {
    tokio::time::timeout(TIMEOUT, dry_run_and_stop())
        .await
        .unwrap();
}

async fn dry_run_and_stop() {
    let (old, _) = old_workspace(40, 4).await;
    let db = new_code(&old);
    let checkpoint = temp_checkpoint("dry");

    let dry = db
        .admin()
        .sweep::<Comment>()
        .dry_run()
        .checkpoint(&checkpoint)
        .send()
        .await
        .unwrap();
    assert!(dry.dry_run && dry.complete);
    assert_eq!(dry.this_run.old, 40);
    assert_eq!(dry.this_run.examined, 43); // the three documents are read too
    assert_eq!(dry.this_run.backfilled, 0);
    assert!(!checkpoint.exists(), "a dry run writes no checkpoint");
    assert_eq!(
        db.admin()
            .coverage(Comment::SCHEMA)
            .send()
            .await
            .unwrap()
            .behind,
        40
    );

    let stopped = db
        .admin()
        .sweep::<Comment>()
        .page_size(8)
        .checkpoint(&checkpoint)
        .on_progress(|snapshot| {
            if snapshot.counts.backfilled >= 5 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .send()
        .await
        .unwrap();
    assert!(stopped.stopped && !stopped.complete, "{stopped}");
    assert_eq!(stopped.this_run.backfilled, 5);
    let finished = db
        .admin()
        .sweep::<Comment>()
        .checkpoint(&checkpoint)
        .rate(Rate::WriteUnitsPerSecond(500.0))
        .send()
        .await
        .unwrap();
    assert!(finished.complete);
    assert_eq!(finished.this_run.backfilled, 35);
    let _ = std::fs::remove_file(&checkpoint);
}

#[cfg(feature = "cli")]
mod cli {
    use super::*;
    use singletable::cli::{Entities, EXIT_FAILURE, EXIT_OK, EXIT_USAGE};

    async fn run(db: &Db<Workspace>, args: &[&str]) -> (u8, String, String) {
        let entities = Entities::new().with::<Document>().with::<Comment>();
        common::run_cli(db, entities, "migrate", args).await
    }

    /// `verify` names the items still behind by their key attributes; their values (which
    /// can be customer data) only with `--show-values`, for that command alone.
    #[tokio::test]
    async fn the_command_line_shows_key_values_only_when_asked() {
        let (old, _) = old_workspace(3, 0).await;
        let db = new_code(&old);
        let (code, out, err) = run(&db, &["verify", "--entity", "Comment"]).await;
        assert_eq!(code, EXIT_FAILURE, "{err}");
        assert!(
            out.contains("behind: PK = ‹hidden›, SK = ‹hidden›"),
            "{out}"
        );
        assert!(!out.contains("WS#a91"), "{out}");
        let (code, out, err) = run(&db, &["verify", "--entity", "Comment", "--show-values"]).await;
        assert_eq!(code, EXIT_FAILURE, "{err}");
        assert!(out.contains("behind: PK = \"WS#a91\""), "{out}");
        assert!(!singletable::error::values_shown());
    }

    #[tokio::test]
    async fn the_command_line_plans_applies_backfills_and_verifies() {
        tokio::time::timeout(TIMEOUT, command_line()).await.unwrap();
    }

    async fn command_line() {
        let (old, _) = old_workspace(25, 5).await;
        let db = new_code(&old);
        let checkpoint = temp_checkpoint("cli");
        let checkpoint_arg = checkpoint.to_str().unwrap();

        let (code, out, _) = run(&db, &["--help"]).await;
        assert_eq!(code, EXIT_OK);
        assert!(
            out.contains("backfill") && out.contains("Exit codes"),
            "{out}"
        );
        let (code, _, err) = run(&db, &["backfill"]).await;
        assert_eq!(code, EXIT_USAGE, "{err}");
        let (code, _, err) = run(&db, &["backfill", "--entity", "Nope"]).await;
        assert_eq!(code, EXIT_USAGE);
        assert!(err.contains("Comment"), "{err}");

        let (code, out, _) = run(&db, &["describe"]).await;
        assert_eq!(code, EXIT_OK);
        assert!(out.contains("GSI2PK = MEMBER#{author}"), "{out}");
        assert!(out.contains("GSI2SK = {created_at}"), "{out}");

        let (code, out, _) = run(&db, &["plan", "--json"]).await;
        assert_eq!(code, EXIT_OK);
        let plan: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(plan["actions"][0]["index"], "GSI2");

        let (code, out, err) = run(&db, &["apply", "--poll", "0.05"]).await;
        assert_eq!(code, EXIT_OK, "{err}");
        assert!(err.contains("create global index GSI2"), "{err}");
        assert!(out.contains("applied"), "{out}");

        let (code, out, _) = run(
            &db,
            &[
                "verify",
                "--entity",
                "comment",
                "--checkpoint",
                checkpoint_arg,
            ],
        )
        .await;
        assert_eq!(code, EXIT_FAILURE, "{out}");
        assert!(out.contains("not done"), "{out}");

        let (code, out, err) = run(
            &db,
            &[
                "backfill",
                "--entity",
                "Comment",
                "--dry-run",
                "--resume",
                checkpoint_arg,
            ],
        )
        .await;
        assert_eq!(code, EXIT_OK, "{err}");
        assert!(out.contains("would backfill 25 items"), "{out}");

        let (code, out, err) = run(
            &db,
            &[
                "backfill",
                "--entity",
                "Comment",
                "--segments",
                "2",
                "--rate",
                "500",
                "--resume",
                checkpoint_arg,
                "--json",
            ],
        )
        .await;
        assert_eq!(code, EXIT_OK, "{err}");
        let report: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(report["complete"], true);
        assert_eq!(report["this_run"]["backfilled"], 25);

        let (code, out, err) = run(
            &db,
            &[
                "verify",
                "--entity",
                "Comment",
                "--checkpoint",
                checkpoint_arg,
                "--mark-complete",
                "--json",
            ],
        )
        .await;
        assert_eq!(code, EXIT_OK, "{err}");
        let coverage: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(coverage["done"], true);
        assert_eq!(coverage["behind"], 0);
        assert_eq!(coverage["marked_complete"]["items"], 25);
        assert!(db
            .admin()
            .migration_marker(Comment::SCHEMA)
            .is_complete()
            .await
            .unwrap());
        let _ = std::fs::remove_file(&checkpoint);
    }
}

/// A checkpoint belongs to one table, not to a name: one left by a sweep of an earlier table
/// with this name (another environment, or the table deleted and created again) is refused,
/// and does not count as coverage, instead of making a sweep read nothing and say "complete".
#[tokio::test]
async fn a_checkpoint_of_an_earlier_table_with_the_same_name_is_refused() {
    tokio::time::timeout(TIMEOUT, foreign_checkpoint())
        .await
        .unwrap();
}

async fn foreign_checkpoint() {
    let (old, _) = old_workspace(20, 0).await;
    let db = new_code(&old);
    let checkpoint = temp_checkpoint("foreign");
    let report = db
        .admin()
        .sweep::<Comment>()
        .checkpoint(&checkpoint)
        .send()
        .await
        .unwrap();
    assert!(report.complete, "{report}");

    // The same name, a new table, old comments again.
    db.client()
        .delete_table()
        .table_name(db.table_name())
        .send()
        .await
        .unwrap();
    let again = Db::<WorkspaceV1>::new(db.client().clone()).with_table_name(db.table_name());
    again.admin().ensure_table().await.unwrap();
    let comments: Vec<CommentV1> = (0..20).map(old_comment).collect();
    assert!(again
        .batch_write()
        .put_all(&comments)
        .send()
        .await
        .unwrap()
        .is_complete());

    let refused = db
        .admin()
        .sweep::<Comment>()
        .checkpoint(&checkpoint)
        .send()
        .await
        .unwrap_err();
    match &refused {
        Error::Migration(MigrationError::CheckpointMismatch { message, .. }) => {
            assert!(message.contains("another table"), "{refused}")
        }
        other => panic!("expected CheckpointMismatch, got {other:?}"),
    }
    let coverage = db
        .admin()
        .coverage(Comment::SCHEMA)
        .checkpoint(&checkpoint)
        .send()
        .await
        .unwrap();
    assert_eq!(coverage.behind, 20, "{coverage}");
    assert!(
        matches!(coverage.sweep, RecordedSweep::NotRecorded { .. }),
        "{coverage}"
    );
    let _ = std::fs::remove_file(&checkpoint);
}

/// A sweep stopped in the middle of a page, then resumed, reports what happened in all: the
/// items backfilled in the page that was cut short count once, and nothing counts twice.
#[tokio::test]
async fn combined_counts_after_a_stop_and_resume_are_whole() {
    tokio::time::timeout(TIMEOUT, stopped_and_resumed())
        .await
        .unwrap();
}

async fn stopped_and_resumed() {
    let (old, _) = old_workspace(200, 0).await;
    let db = new_code(&old);
    let checkpoint = temp_checkpoint("stopped");
    let first = db
        .admin()
        .sweep::<Comment>()
        .page_size(25)
        .checkpoint(&checkpoint)
        .on_progress(|snapshot| {
            if snapshot.counts.backfilled >= 61 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .send()
        .await
        .unwrap();
    assert!(first.stopped && !first.complete, "{first}");
    assert_eq!(first.this_run.backfilled, 61, "{first}");
    let second = db
        .admin()
        .sweep::<Comment>()
        .checkpoint(&checkpoint)
        .send()
        .await
        .unwrap();
    assert!(second.complete, "{second}");
    assert_eq!(second.this_run.backfilled, 139, "{second}");
    let all = second.counts;
    assert_eq!(all.backfilled, 200, "{second}");
    assert_eq!(all.old, 200, "{second}");
    // 200 comments and 3 documents, each examined once.
    assert_eq!(all.examined, 203, "{second}");
    assert_eq!(all.failed, 0, "{second}");
    let _ = std::fs::remove_file(&checkpoint);
}

/// A rate-limited sweep through a proxy that throttles a third of its requests, with the SDK's
/// retries off so that every throttle reaches the sweep: it lowers its rate (reported in its
/// progress), sends each throttled read and write again, and backfills every item in one run.
/// Its report names the partition key its throttled writes went to, which DynamoDB's
/// throttling error never does (it names the table).
#[tokio::test]
async fn a_throttled_sweep_lowers_its_rate_and_backfills_every_item() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    tokio::time::timeout(TIMEOUT, throttled_sweep(Some(Rate::ItemsPerSecond(400.0))))
        .await
        .unwrap();
}

/// The same sweep without a rate: with no budget to lower, it still sends each throttled read
/// and write again, with backoff, rather than ending at the first throttle the SDK passes on,
/// and its report names the partition key its throttled writes went to.
#[tokio::test]
async fn a_throttled_sweep_without_a_rate_backfills_every_item_and_names_the_hot_key() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    tokio::time::timeout(TIMEOUT, throttled_sweep(None))
        .await
        .unwrap();
}

async fn throttled_sweep(rate: Option<Rate>) {
    use singletable_fault::{self as fault, Fault, FaultKind, FaultPlan};
    let (old, _) = old_workspace(60, 0).await;
    let plan = FaultPlan::new(7, 0.33)
        .with_kinds([
            Fault::before(FaultKind::ProvisionedThroughputExceeded),
            Fault::before(FaultKind::Throttling),
        ])
        .without_sdk_retries();
    let (client, stats) = fault::client(plan).await.unwrap();
    let db = Db::<Workspace>::new(client).with_table_name(old.table_name());
    // The lowest rate the progress reports, and whether it reported one exactly when the
    // sweep has a rate.
    let lowest = Arc::new(Mutex::new((f64::MAX, true)));
    let seen = lowest.clone();
    let mut sweep = db
        .admin()
        .sweep::<Comment>()
        .page_size(20)
        .on_progress(move |snapshot| {
            let mut seen = seen.lock().unwrap();
            seen.0 = seen.0.min(snapshot.rate.unwrap_or(f64::MAX));
            seen.1 &= snapshot.rate.is_some() == rate.is_some();
            ControlFlow::Continue(())
        });
    if let Some(rate) = rate {
        sweep = sweep.rate(rate);
    }
    // Its scans are throttled too, and resent as its writes are: one run gets through.
    let report = sweep.send().await.unwrap();
    assert_eq!(report.this_run.backfilled, 60, "{report}");
    assert!(report.complete, "{report}");
    assert_eq!(report.this_run.failed, 0, "{report}");
    let injected = stats.report().injected_total();
    assert!(injected > 0);
    // Every comment is in one partition; the scans' throttles have no key, and are not counted.
    let throttled: u64 = report.throttled_keys.values().sum();
    assert_eq!(
        report.throttled_keys.keys().collect::<Vec<_>>(),
        ["WS#a91"],
        "{report}"
    );
    assert!(throttled <= injected, "{throttled} of {injected}");
    assert!(report.to_string().contains("throttled: "), "{report}");
    let (lowest, rate_reported_as_set) = *lowest.lock().unwrap();
    assert!(
        rate_reported_as_set,
        "progress reported a rate the sweep was not given, or none"
    );
    if rate.is_some() {
        assert!(
            lowest < 400.0,
            "the rate was never lowered (lowest {lowest})"
        );
    }
    let plain = new_code(&old);
    assert_eq!(
        plain
            .admin()
            .coverage(Comment::SCHEMA)
            .send()
            .await
            .unwrap()
            .behind,
        0
    );
}

/// A sweep started right after the old code wrote backfills what it wrote, although the
/// table's eventually consistent reads lag those writes: its scan reads strongly consistent,
/// which DynamoDB documents as seeing every write that completed before the scan began.
#[tokio::test]
async fn a_sweep_backfills_items_written_just_before_it_while_reads_lag() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    tokio::time::timeout(TIMEOUT, sweep_while_reads_lag())
        .await
        .unwrap();
}

async fn sweep_while_reads_lag() {
    use singletable_fault::{self as fault, FaultPlan, IndexLag};
    let (old, _) = old_workspace(0, 0).await;
    let lag = Duration::from_millis(600);
    let plan = FaultPlan::new(5, 0.0).with_index_lag(IndexLag::new(lag, lag));
    let (client, stats) = fault::client(plan).await.unwrap();
    let old_code = Db::<WorkspaceV1>::new(client.clone()).with_table_name(old.table_name());
    // A first read copies the table to the lagging replica as it is: no comment yet.
    assert!(old_code.scan::<CommentV1>().all().await.unwrap().is_empty());
    let comments: Vec<CommentV1> = (0..12).map(old_comment).collect();
    let written = std::time::Instant::now();
    let output = old_code
        .batch_write()
        .put_all(&comments)
        .send()
        .await
        .unwrap();
    assert!(output.is_complete());
    let db = Db::<Workspace>::new(client).with_table_name(old.table_name());
    let report = db.admin().sweep::<Comment>().send().await.unwrap();
    // Only meaningful while the lag holds: the sweep ran before the writes could reach the
    // replica.
    if written.elapsed() < lag {
        assert_eq!(report.this_run.backfilled, 12, "{report}");
    }
    stats.caught_up().await;
    let coverage = db.admin().coverage(Comment::SCHEMA).send().await.unwrap();
    assert_eq!((coverage.items, coverage.behind), (12, 0), "{coverage}");
    assert!(stats.report().lagging_reads > 0, "{}", stats.report());
}

/// `Comment` with its `author` field renamed in Rust, the attribute kept: the same keys.
mod renamed {
    use chrono::{DateTime, NaiveDate, Utc};
    use serde::{Deserialize, Serialize};
    use singletable::Entity;

    #[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
    #[dynamo(table = super::Workspace, name = "Comment", schema_version = 2, pk = "WS#{workspace}",
             sk = "DOC#{date}#{doc}#CMT#{comment}",
             gsi2pk = "MEMBER#{writer}", gsi2sk = "{created_at}",
             gsi3pk = writer, gsi3sk = created_at)]
    pub(super) struct Comment {
        workspace: String,
        date: NaiveDate,
        doc: String,
        comment: ulid::Ulid,
        #[serde(rename = "author")]
        writer: String,
        created_at: DateTime<Utc>,
        text: String,
    }
}

/// The plan compares keys by the attributes they are written from: a field renamed in Rust
/// whose attribute stays (`#[serde(rename)]`) changes no key, in a template or in an index that
/// reads the attribute as is, and the plan does not refuse it.
#[tokio::test]
async fn a_field_renamed_in_rust_that_keeps_its_attribute_changes_no_key() {
    let db = singletable::testing::table::<Workspace>().await.unwrap();
    let applied = (db.admin().table_migration(&[Comment::SCHEMA]))
        .send()
        .await
        .unwrap();
    assert_eq!(applied.plan.actions.len(), 1, "{}", applied.plan);
    let plan = (db.admin().table_migration(&[renamed::Comment::SCHEMA]))
        .plan()
        .await
        .unwrap();
    assert!(plan.is_up_to_date(), "{plan}");
}
