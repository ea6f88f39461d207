//! Seed 003, end to end on the local engine (or the endpoint in `AWS_ENDPOINT_URL_DYNAMODB`):
//! a live workspace table gets a new access pattern, "every comment a member wrote, newest
//! first", which needs a new GSI and a backfill of the comments written before it.
//!
//! Run with `cargo run --example migration`.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use singletable::migrate::ApplyEvent;
use singletable::{schema_of, Db, Entity, Rate, Table};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};

const TABLE: &str = "migration-example";

/// Yesterday's code: documents and comments, no index.
mod before {
    use super::*;

    #[derive(Table)]
    #[dynamo(name = "migration-example", pk = "PK", sk = "SK")]
    pub struct Workspace;

    #[derive(Entity, Serialize, Deserialize, Clone, Debug)]
    #[dynamo(table = Workspace, name = "Document", pk = "WS#{workspace}", sk = "DOC#{date}#{doc}")]
    pub struct Document {
        pub workspace: String,
        pub date: NaiveDate,
        pub doc: String,
        pub title: String,
    }

    /// A comment lives under its document: the document's comments are one `Query`.
    #[derive(Entity, Serialize, Deserialize, Clone, Debug)]
    #[dynamo(table = Workspace, name = "Comment", pk = "WS#{workspace}",
             sk = "DOC#{date}#{doc}#CMT#{comment}")]
    pub struct Comment {
        pub workspace: String,
        pub date: NaiveDate,
        pub doc: String,
        pub comment: ulid::Ulid,
        pub author: String,
        pub created_at: DateTime<Utc>,
        pub text: String,
    }
}

/// Today's code: GSI2 serves a member's comments, newest first; comments are at schema
/// version 2, so items version 1 wrote are found and backfilled.
#[derive(Table)]
#[dynamo(
    name = "migration-example",
    pk = "PK",
    sk = "SK",
    gsi2(name = "GSI2", pk = "GSI2PK", sk = "GSI2SK")
)]
pub struct Workspace;

#[derive(Entity, Serialize, Deserialize, Clone, Debug)]
#[dynamo(table = Workspace, pk = "WS#{workspace}", sk = "DOC#{date}#{doc}")]
pub struct Document {
    pub workspace: String,
    pub date: NaiveDate,
    pub doc: String,
    pub title: String,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug)]
#[dynamo(table = Workspace, schema_version = 2, pk = "WS#{workspace}",
         sk = "DOC#{date}#{doc}#CMT#{comment}",
         gsi2pk = "MEMBER#{author}", gsi2sk = "{created_at}")]
pub struct Comment {
    pub workspace: String,
    pub date: NaiveDate,
    pub doc: String,
    pub comment: ulid::Ulid,
    pub author: String,
    pub created_at: DateTime<Utc>,
    pub text: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!(
        "engine: {}",
        singletable::local::endpoint_description().await?
    );
    let client = singletable::local::client().await?;

    // Yesterday: the table without GSI2, and a workspace's documents and comments.
    let old = Db::<before::Workspace>::new(client.clone());
    // The example starts from scratch each run (on a persistent endpoint too).
    let _ = client.delete_table().table_name(TABLE).send().await;
    old.admin().ensure_table().await?;
    let members = ["u44", "u45", "u46"];
    let mut batch = old.batch_write();
    for n in 0..3u32 {
        batch = batch.put(&before::Document {
            workspace: "a91".into(),
            date: NaiveDate::from_ymd_opt(2026, 4, 1 + n).ok_or("date")?,
            doc: format!("x{n}"),
            title: format!("Design doc {n}"),
        });
    }
    for n in 0..60u32 {
        batch = batch.put(&before::Comment {
            workspace: "a91".into(),
            date: NaiveDate::from_ymd_opt(2026, 4, 1 + n % 3).ok_or("date")?,
            doc: format!("x{}", n % 3),
            comment: ulid::Ulid::from_parts(1_775_000_000_000 + u64::from(n), u128::from(n)),
            author: members[n as usize % 3].into(),
            created_at: DateTime::from_timestamp(1_775_120_000 + i64::from(n) * 90, 0)
                .ok_or("time")?,
            text: format!("comment {n}"),
        });
    }
    if !batch.send().await?.is_complete() {
        return Err("the engine left some writes unprocessed".into());
    }
    println!("\nyesterday: table {TABLE} with 3 documents and 60 comments, no GSI2");

    // Today's code, on the same table.
    let db = Db::<Workspace>::new(client);
    let entities = [schema_of::<Document>(), schema_of::<Comment>()];
    println!(
        "\n{}",
        singletable::migrate::Design::new(TABLE, Workspace::SCHEMA, &entities)
    );

    // 1. Plan: what the live table lacks.
    let plan = db.admin().table_migration(&entities).plan().await?;
    println!("plan:\n{plan}");

    // 2. Apply: one UpdateTable per index, then poll until ACTIVE.
    db.admin()
        .table_migration(&entities)
        .poll_interval(std::time::Duration::from_millis(200))
        .on_progress(|event| match event {
            ApplyEvent::Started(action) => println!("apply: {action} ..."),
            ApplyEvent::Waiting {
                resource, status, ..
            } => println!("apply:   {resource} is {status}"),
            ApplyEvent::Finished { elapsed, .. } => {
                println!("apply:   done in {:.1}s", elapsed.as_secs_f64())
            }
            ApplyEvent::Planned(_) => {}
        })
        .send()
        .await?;

    // 3. The index is there, but the old comments lack its attributes.
    let ana = db.query(Comment::gsi2("u44")).descending().all().await?;
    println!(
        "\nGSI2 for member u44 before the backfill: {} comments",
        ana.len()
    );

    // 4. Lazy backfill on read: a comment someone opens reaches the new shape at once.
    let opened = db
        .query(Comment::partition("a91"))
        .sort(
            Comment::DATE,
            NaiveDate::from_ymd_opt(2026, 4, 1).ok_or("date")?,
        )
        .sort(Comment::DOC, "x0".to_owned())
        .limit(1)
        .page(None)
        .await?
        .items
        .into_iter()
        .next()
        .ok_or("no comment")?;
    let key = opened.primary_key()?;
    let read = db.get_and_backfill(key).await?;
    println!(
        "lazily backfilled on read: {} by {}",
        read.comment, read.author
    );

    // 5. The sweep: a dry run counts, then the real one, throttled, with a checkpoint.
    let checkpoint = std::env::temp_dir().join(format!("{TABLE}-{}.json", std::process::id()));
    let dry = db.admin().sweep::<Comment>().dry_run().send().await?;
    println!("\n{dry}");
    let reported = AtomicU64::new(0);
    let report = db
        .admin()
        .sweep::<Comment>()
        .segments(2)
        .page_size(20)
        .rate(Rate::ItemsPerSecond(100.0))
        .checkpoint(&checkpoint)
        .on_progress(move |progress| {
            // Called after every item: report every 20 writes.
            let backfilled = progress.counts.backfilled;
            if backfilled >= reported.load(Ordering::Relaxed) + 20 {
                reported.store(backfilled, Ordering::Relaxed);
                eprintln!(
                    "sweep: {backfilled} backfilled, {} items examined, {:.1}s",
                    progress.counts.examined,
                    progress.elapsed.as_secs_f64()
                );
            }
            ControlFlow::Continue(())
        })
        .send()
        .await?;
    println!("{report}");

    // 6. Verify: nothing behind, and the sweep covered the whole table; record it.
    let coverage = db
        .admin()
        .coverage(schema_of::<Comment>())
        .checkpoint(&checkpoint)
        .send()
        .await?;
    println!("{coverage}");
    if coverage.is_done() {
        let record = db
            .admin()
            .migration_marker(schema_of::<Comment>())
            .mark_complete(&coverage)
            .await?;
        println!("migration marked complete at {}", record.completed_at);
    }
    let _ = std::fs::remove_file(&checkpoint);

    // 7. The new access pattern: every comment of a member, newest first.
    let comments = db.query(Comment::gsi2("u44")).descending().all().await?;
    println!("\nmember u44, newest first ({} comments):", comments.len());
    for comment in comments.iter().take(5) {
        println!(
            "  {}  {}  {}",
            comment.created_at, comment.doc, comment.text
        );
    }
    Ok(())
}
