//! A migration tool for your own schema: your binary declares (or imports) the table and its
//! entities and hands them to `singletable::cli::run`, which provides `plan`, `apply`,
//! `backfill`, `verify` and `describe`.
//!
//! ```sh
//! cargo run --example cli --features cli -- --help
//! cargo run --example cli --features cli -- describe
//! cargo run --example cli --features cli -- plan
//! cargo run --example cli --features cli -- backfill --entity Comment --dry-run
//! ```
//!
//! It runs against the local engine, or the endpoint in `AWS_ENDPOINT_URL_DYNAMODB`. So that
//! there is something to migrate, a missing table is first created in yesterday's shape (no
//! GSI2, comments at schema version 1). The embedded engine keeps its data in memory, so each
//! run starts over, unless `SINGLETABLE_LOCAL_DATA` names a file to keep it in: then the steps
//! run as separate processes against one table, as they would against DynamoDB.
//!
//! ```sh
//! export SINGLETABLE_LOCAL_DATA=target/cli-demo.sqlite
//! cargo run --example cli --features cli -- plan
//! cargo run --example cli --features cli -- apply
//! cargo run --example cli --features cli -- backfill --entity Comment
//! cargo run --example cli --features cli -- verify --entity Comment --mark-complete
//! ```

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use singletable::cli::{self, Entities};
use singletable::{Db, Entity, Table};
use std::process::ExitCode;

/// The table as the code declares it today.
#[derive(Table)]
#[dynamo(
    name = "singletable-cli-example",
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

/// Version 2 added GSI2: "every comment a member wrote, newest first".
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

/// Yesterday's declaration, to create the demo data in the old shape.
mod yesterday {
    use super::*;

    #[derive(Table)]
    #[dynamo(name = "singletable-cli-example", pk = "PK", sk = "SK")]
    pub struct Workspace;

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

/// Creates the table in yesterday's shape, with old comments, if it does not exist.
async fn demo_data(client: &aws_sdk_dynamodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    let old = Db::<yesterday::Workspace>::new(client.clone());
    if !old.admin().ensure_table().await? {
        return Ok(());
    }
    let mut batch = old.batch_write();
    for n in 0..250u32 {
        batch = batch.put(&yesterday::Comment {
            workspace: "a91".into(),
            date: NaiveDate::from_ymd_opt(2026, 4, 1 + n % 20).ok_or("date")?,
            doc: format!("x{}", n % 20),
            comment: ulid::Ulid::from_parts(1_775_000_000_000 + u64::from(n), u128::from(n)),
            author: ["u44", "u45", "u46", "u47"][n as usize % 4].into(),
            created_at: DateTime::from_timestamp(1_775_120_000 + i64::from(n) * 60, 0)
                .ok_or("time")?,
            text: format!("comment {n}"),
        });
    }
    if !batch.send().await?.is_complete() {
        return Err("the engine left some writes unprocessed".into());
    }
    eprintln!(
        "(created {} in yesterday's shape: 250 comments at schema version 1, no GSI2)",
        Workspace::SCHEMA.name
    );
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let client = match singletable::local::client().await {
        Ok(client) => client,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(error) = demo_data(&client).await {
        eprintln!("error: creating the demo data: {error}");
        return ExitCode::FAILURE;
    }
    // This is all a real tool needs: the table handle and the entities stored in it.
    let db = Db::<Workspace>::new(client);
    cli::run(db, Entities::new().with::<Document>().with::<Comment>()).await
}
