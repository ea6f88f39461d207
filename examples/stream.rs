//! A stream consumer that keeps each team's count of open tickets, on the local engine (or the
//! endpoints in `AWS_ENDPOINT_URL_DYNAMODB` and `AWS_ENDPOINT_URL_DYNAMODB_STREAMS`).
//!
//! Delivery is at least once: a consumer that stops between applying a page and committing
//! it is given the page again. Each count therefore records, per shard, the sequence number
//! of the last record it applied, and an update applies a record only if its sequence number
//! is greater (`advance`). A record delivered twice finds its sequence number stored and
//! changes nothing (the update returns the count as it is); the guard also lets the library
//! resend an update whose response was lost.
//!
//! Run with `cargo run --example stream`.

use serde::{Deserialize, Serialize};
use singletable::stream::{Change, Record, StreamReader};
use singletable::{Db, Entity, Error, Table};
use std::collections::{BTreeMap, HashMap};

#[derive(Table)]
#[dynamo(
    name = "stream-example",
    pk = "PK",
    sk = "SK",
    ttl = "expires_at",
    stream = "new_and_old_images"
)]
pub struct App;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "TICKET#{id}", sk = "TICKET")]
pub struct Ticket {
    pub id: String,
    pub team: String,
    pub open: bool,
    /// Closed tickets are kept for a while, then DynamoDB's time to live deletes them.
    #[dynamo(ttl)]
    pub expires_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// A team's count of open tickets, maintained by the consumer.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "COUNT#{team}", sk = "OPEN_TICKETS")]
pub struct OpenTickets {
    pub team: String,
    pub open: i64,
    /// Per shard, the sequence number of the last record applied, zero-padded to DynamoDB's
    /// 40 digits so that text order is number order.
    pub applied: HashMap<String, String>,
}

/// The table's entities: the stream carries the counts' own changes too.
#[derive(singletable::Collection, Debug)]
pub enum Item {
    Ticket(Ticket),
    OpenTickets(OpenTickets),
}

/// The change a record makes to its team's count, if it is a ticket's.
fn delta(change: &Change<Item, singletable::stream::NewAndOldImages>) -> Option<(&str, i64)> {
    let open = |ticket: &Ticket| i64::from(ticket.open);
    match change {
        Change::Insert {
            new: Item::Ticket(new),
        } => Some((&new.team, open(new))),
        Change::Modify {
            old: Item::Ticket(old),
            new: Item::Ticket(new),
        } => Some((&new.team, open(new) - open(old))),
        Change::Remove {
            old: Item::Ticket(old),
            ..
        } => Some((&old.team, -open(old))),
        _ => None,
    }
}

/// Applies a ticket's record to its team's count, once: a record applied before (delivered
/// again) finds its sequence number stored, and changes nothing.
async fn apply(db: &Db<App>, shard: &str, record: &Record<Item>) -> Result<(), Error> {
    let Some((team, delta)) = delta(&record.change) else {
        return Ok(());
    };
    let sequence = format!("{:0>40}", record.sequence_number);
    // The count exists before its first update, so the update can set a path inside `applied`.
    let empty = OpenTickets {
        team: team.to_owned(),
        open: 0,
        applied: HashMap::new(),
    };
    match db.put(&empty).only_if_absent().send().await {
        Ok(()) => {}
        Err(error) if error.is_condition_failed() => {}
        Err(error) => return Err(error),
    }
    // The guard makes the update safe to resend after a lost response, which the library does.
    let applied = db
        .update(OpenTickets::key(team)?)
        .add(OpenTickets::OPEN, delta)
        .advance(OpenTickets::APPLIED.key(shard), sequence)
        .send()
        .await;
    match applied {
        Ok(_) => Ok(()),
        // The count holds a later record of this shard: this one was applied before it.
        Err(error) if error.is_condition_failed() => Ok(()),
        Err(error) => Err(error),
    }
}

/// Reads until the stream has nothing new, applying and committing each page; with
/// `crash_before_commit`, stops after applying the first page without committing it.
/// Returns how many ticket records it applied.
async fn consume(
    db: &Db<App>,
    reader: &mut StreamReader<'_, App>,
    crash_before_commit: bool,
) -> Result<usize, Error> {
    let mut applied = 0;
    loop {
        let page = reader.poll::<Item>().await?;
        if page.is_empty() && reader.is_caught_up() {
            return Ok(applied);
        }
        let shard = page.shard().unwrap_or_default().to_owned();
        for record in page.records() {
            let record = record
                .as_ref()
                .map_err(|error| Error::from(error.clone()))?;
            if delta(&record.change).is_none() {
                continue; // A count's own change.
            }
            apply(db, &shard, record).await?;
            applied += 1;
        }
        if crash_before_commit {
            return Ok(applied);
        }
        reader.commit(&page).await?;
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = singletable::local::client().await?;
    let table_name = format!("stream-example-{}", std::process::id());
    let db = Db::<App>::new(client).with_table_name(table_name);
    db.admin().ensure_table().await?;
    println!("table {}: stream and time to live on", db.table_name());

    let ticket = |id: &str, team: &str| Ticket {
        id: id.into(),
        team: team.into(),
        open: true,
        expires_at: None,
    };
    for (id, team) in [("t1", "blue"), ("t2", "blue"), ("t3", "red"), ("t4", "red")] {
        db.put(&ticket(id, team)).send().await?;
    }
    // Closing a ticket sets it to expire (a second ago, so the engine deletes it soon).
    let expired = chrono::Utc::now() - chrono::Duration::seconds(1);
    db.update(Ticket::key("t1")?)
        .set(Ticket::OPEN, false)
        .set(Ticket::EXPIRES_AT, Some(expired))
        .send()
        .await?;
    db.delete(Ticket::key("t4")?).send().await?;

    let streams = singletable::local::streams_client().await?;
    let mut first = db.admin().stream_reader("open-tickets", streams.clone());
    let before_crash = consume(&db, &mut first, true).await?;
    println!("consumer 1 applied {before_crash} records, then stopped before its commit");
    drop(first);

    let mut second = db.admin().stream_reader("open-tickets", streams);
    let resumed = consume(&db, &mut second, false).await?;
    println!(
        "consumer 2 resumed: {resumed} records applied, the {before_crash} of consumer 1's uncommitted page among them, counted once"
    );

    let mut counts = BTreeMap::new();
    for team in ["blue", "red"] {
        // Strongly consistent: the counts the consumers just wrote, not a replica's.
        let count = db.get(OpenTickets::key(team)?).consistent().send().await?;
        counts.insert(team.to_owned(), count.open);
    }
    let mut expected = BTreeMap::from([("blue".to_owned(), 0), ("red".to_owned(), 0)]);
    for ticket in db
        .scan::<Ticket>()
        .include_expired()
        .consistent()
        .all()
        .await?
    {
        *expected.entry(ticket.team).or_default() += i64::from(ticket.open);
    }
    println!("open tickets per team: {counts:?}");
    if counts != expected {
        return Err(format!("the counts {counts:?} disagree with the table {expected:?}").into());
    }
    println!("the counts agree with the tickets in the table");
    Ok(())
}
