//! Seed 003's workspace: documents and their comments in one partition (an item collection),
//! read with typed key conditions, a member's comments newest first on a GSI, and paging with
//! an opaque cursor. Each request is printed before it is sent.
//!
//! Run with `cargo run --example workspace`.

use futures::TryStreamExt;
use serde::{Deserialize, Serialize};
use singletable::{Collection, Entity, Table};

#[derive(Table)]
#[dynamo(
    name = "workspace-example",
    pk = "PK",
    sk = "SK",
    gsi2(name = "GSI2", pk = "GSI2PK", sk = "GSI2SK")
)]
pub struct App;

#[derive(Entity, Serialize, Deserialize, Clone, Debug)]
#[dynamo(table = App, pk = "WS#{workspace}", sk = "DOC#{date}#{doc}")]
pub struct Document {
    pub workspace: String,
    pub date: chrono::NaiveDate,
    pub doc: String,
    pub title: String,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug)]
#[dynamo(table = App, pk = "WS#{workspace}", sk = "DOC#{date}#{doc}#CMT#{comment}",
         gsi2pk = "MEMBER#{author}", gsi2sk = "{created_at}")]
pub struct Comment {
    pub workspace: String,
    pub date: chrono::NaiveDate,
    pub doc: String,
    pub comment: ulid::Ulid,
    pub author: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub text: String,
}

/// Everything in a workspace partition.
#[derive(Collection, Debug)]
pub enum WorkspaceItem {
    Document(Document),
    Comment(Comment),
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!(
        "engine: {}",
        singletable::local::endpoint_description().await?
    );
    let db = singletable::Db::<App>::new(singletable::local::client().await?);
    db.admin().ensure_table().await?;

    let date: chrono::NaiveDate = "2026-04-01".parse()?;
    let document = Document {
        workspace: "w1".into(),
        date,
        doc: "x7".into(),
        title: "Q2 plan".into(),
    };
    db.put(&document).send().await?;
    let mut batch = db.batch_write();
    for n in 0..12u32 {
        let created_at =
            chrono::DateTime::from_timestamp(1_775_000_000 + i64::from(n) * 60, 0).ok_or("time")?;
        batch = batch.put(&Comment {
            workspace: "w1".into(),
            date,
            doc: "x7".into(),
            comment: ulid::Ulid::from_parts(1_775_000_000_000 + u64::from(n), u128::from(n)),
            author: if n % 3 == 0 {
                "ana".into()
            } else {
                "bo".into()
            },
            created_at,
            text: format!("comment {n}"),
        });
    }
    let written = batch.send().await?;
    println!(
        "=> batch wrote {} comments in {} request(s)",
        written.written, written.requests
    );

    // A document's comments: the first two sort key parts give begins_with on the prefix.
    let comments = db
        .query(Comment::partition("w1"))
        .sort(Comment::DATE, date)
        .sort(Comment::DOC, "x7".to_owned())
        // Strongly consistent: the batch above just wrote them.
        .consistent();
    println!("\n{}", comments.params()?);
    println!("=> {} comments on x7", comments.all().await?.len());

    // Everything in the partition, decoded by entity.
    let everything = db
        .query(Document::partition("w1"))
        .consistent()
        .collection::<WorkspaceItem>();
    println!("\n{}", everything.params()?);
    let page = everything.page(None).await?;
    for item in &page.items {
        match item {
            WorkspaceItem::Document(document) => println!("=> document {}", document.title),
            WorkspaceItem::Comment(comment) => {
                println!("=>   comment {} by {}", comment.text, comment.author)
            }
        }
    }

    // A member's comments, newest first, two per page, with a cursor a web API could hand out.
    // A global index is eventually consistent (it takes no strongly consistent read): right
    // after the batch, it may not list every comment yet.
    let by_member = db.query(Comment::gsi2("ana")).descending().limit(2);
    println!("\n{}", by_member.params()?);
    let mut cursor = None;
    loop {
        let page = by_member.page(cursor.as_ref()).await?;
        for comment in &page.items {
            println!("=> {} at {}", comment.text, comment.created_at);
        }
        match page.cursor {
            Some(next) => {
                let token = next.encode();
                println!("   next page token: {token}");
                cursor = Some(singletable::op::query::Cursor::decode(&token)?);
            }
            None => break,
        }
    }
    let streamed: Vec<Comment> = db
        .query(Comment::gsi2("bo"))
        .descending()
        .items()
        .try_collect()
        .await?;
    println!("\n=> bo wrote {} comments", streamed.len());
    Ok(())
}
