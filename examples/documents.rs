//! Seed 002: insert a document update only if its time is newer than every update already
//! accepted for that document, under concurrent writers: a latest-pointer item and one
//! `TransactWriteItems` per append. Outcomes are typed: accepted, stale (never retried), and
//! transaction conflicts are retried with backoff.
//!
//! Run with `cargo run --example documents`.

use serde::{Deserialize, Serialize};
use singletable::op::append::Appended;
use singletable::{Entity, Table};

#[derive(Table)]
#[dynamo(name = "documents-example", pk = "PK", sk = "SK")]
pub struct App;

/// Update times are milliseconds since the Unix epoch from the writer's clock; every writer
/// must use the same unit (the library compares numbers, not meanings).
#[derive(Entity, Serialize, Deserialize, Clone, Debug)]
#[dynamo(table = App, pk = "DOC#{document_id}", sk = "UPDATE#{update_time}")]
pub struct DocumentUpdate {
    pub document_id: String,
    pub update_time: u64,
    pub body: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!(
        "engine: {}",
        singletable::local::endpoint_description().await?
    );
    let db = singletable::Db::<App>::new(singletable::local::client().await?);
    db.admin().ensure_table().await?;

    // History written before appends were guarded: initialise the pointer from it.
    for time in [100, 200] {
        db.put(&DocumentUpdate {
            document_id: "A".into(),
            update_time: time,
            body: format!("v{time}"),
        })
        .send()
        .await?;
    }
    let latest = db
        .admin()
        .init_latest(DocumentUpdate::partition("A"), DocumentUpdate::UPDATE_TIME)
        .await?;
    println!("pointer initialised from history: {latest:?}");

    let update = DocumentUpdate {
        document_id: "A".into(),
        update_time: 150,
        body: "late".into(),
    };
    let append = db.append(&update, DocumentUpdate::UPDATE_TIME);
    println!("\n{}", append.explain()?);
    match append.send().await? {
        Appended::Accepted => println!("=> 150 accepted"),
        Appended::Stale { latest } => {
            println!("=> 150 is stale: the document is already at {latest}")
        }
        Appended::Duplicate => println!("=> 150 already exists"),
    }

    // Eight writers racing on one document: only strictly newer updates get in.
    let writers = (0..8u64).map(|writer| {
        let db = db.clone();
        tokio::spawn(async move {
            let mut outcomes = (0u32, 0u32);
            for step in 0..10u64 {
                let time = 1_000 + (writer * 37 + step * 101) % 500;
                let update = DocumentUpdate {
                    document_id: "A".into(),
                    update_time: time,
                    body: format!("writer {writer}"),
                };
                match db.append(&update, DocumentUpdate::UPDATE_TIME).send().await {
                    Ok(Appended::Accepted) => outcomes.0 += 1,
                    Ok(_) => outcomes.1 += 1,
                    Err(error) => eprintln!("writer {writer}: {error}"),
                }
            }
            outcomes
        })
    });
    let (mut accepted, mut stale) = (0, 0);
    for outcome in futures::future::join_all(writers).await {
        let (yes, no) = outcome?;
        accepted += yes;
        stale += no;
    }
    let history = db
        .query(DocumentUpdate::partition("A"))
        .consistent()
        .all()
        .await?;
    let times: Vec<u64> = history.iter().map(|update| update.update_time).collect();
    println!("\n=> {accepted} accepted, {stale} stale; history: {times:?}");
    Ok(())
}
