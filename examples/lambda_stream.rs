//! An AWS Lambda function that consumes a table's DynamoDB stream as typed changes and keeps a
//! view of each team's tickets, applying every change idempotently and reporting partial batch
//! failures.
//!
//! Lambda delivers each record at least once, and retries a batch from the first record the
//! function reports in `batchItemFailures` (with `FunctionResponseTypes:
//! ["ReportBatchItemFailures"]` on the event source mapping). So the handler applies records
//! in order, stops at the first one it cannot apply and reports it: the records before it stay
//! applied, and it and those after it come again. Each view item records the sequence number
//! of the record that wrote it, and a write applies only a newer record (a condition on that
//! number), so a record delivered again changes nothing.
//!
//! A record that can never be applied (here, an item that does not decode as a ticket) is
//! reported on every retry: give the mapping a `MaximumRetryAttempts` and an on-failure
//! destination, so that Lambda parks it and moves on.
//!
//! Run with `cargo run --example lambda_stream`: off Lambda, it runs the handler on the event
//! fixtures in `tests/fixtures/lambda_stream/` against the local engine (a batch, the same
//! batch again, and a batch with a bad record). On Lambda (`AWS_LAMBDA_RUNTIME_API` is set) it
//! serves events, on the table that `TABLE_NAME` names, with the function's role: the policy
//! `IamPolicy::for_table::<App>(..).with_streams()` prints.

use aws_lambda_events::event::dynamodb::Event;
use aws_lambda_events::event::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use serde::{Deserialize, Serialize};
use singletable::stream::{self, Change, Record};
use singletable::{Db, Entity, Error, Table};

#[derive(Table)]
#[dynamo(
    name = "lambda-example",
    pk = "PK",
    sk = "SK",
    stream = "new_and_old_images"
)]
pub struct App;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "TICKET#{id}", sk = "TICKET")]
pub struct Ticket {
    pub id: String,
    pub team: String,
    pub open: bool,
}

/// A ticket as its team's view holds it: written only by the function.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "TEAM#{team}", sk = "TICKET#{id}")]
pub struct TeamTicket {
    pub team: String,
    pub id: String,
    /// Open, closed, or gone from the team (moved, or deleted): a record of a ticket that left
    /// stays, so that an older record delivered late cannot bring it back.
    pub state: State,
    /// The sequence number of the record that wrote this, zero-padded to DynamoDB's 40 digits
    /// so that text order is number order.
    pub sequence: String,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Open,
    Closed,
    Gone,
}

/// The table's entities: the stream carries the view's own changes too.
#[derive(singletable::Collection, Debug)]
pub enum Item {
    Ticket(Ticket),
    TeamTicket(TeamTicket),
}

/// The view writes a ticket's record makes: `(team, ticket, state)`.
fn writes(change: &Change<Item, stream::NewAndOldImages>) -> Vec<(&str, &str, State)> {
    let state = |ticket: &Ticket| {
        if ticket.open {
            State::Open
        } else {
            State::Closed
        }
    };
    match change {
        Change::Insert {
            new: Item::Ticket(new),
        } => vec![(&new.team, &new.id, state(new))],
        Change::Modify {
            old: Item::Ticket(old),
            new: Item::Ticket(new),
        } if old.team != new.team => vec![
            (&old.team, &old.id, State::Gone),
            (&new.team, &new.id, state(new)),
        ],
        Change::Modify {
            new: Item::Ticket(new),
            ..
        } => vec![(&new.team, &new.id, state(new))],
        Change::Remove {
            old: Item::Ticket(old),
            ..
        } => vec![(&old.team, &old.id, State::Gone)],
        // The view's own changes.
        _ => Vec::new(),
    }
}

/// Applies one record to the view, once: each write is conditioned on the view item being
/// absent or older than the record, so a record delivered again fails the condition and
/// changes nothing.
async fn apply(db: &Db<App>, record: &Record<Item>) -> Result<(), Error> {
    let sequence = format!("{:0>40}", record.sequence_number);
    for (team, id, state) in writes(&record.change) {
        let view = TeamTicket {
            team: team.to_owned(),
            id: id.to_owned(),
            state,
            sequence: sequence.clone(),
        };
        let newer = TeamTicket::SEQUENCE
            .not_exists()
            .or(TeamTicket::SEQUENCE.lt(sequence.as_str()));
        match db.put(&view).condition(newer).send().await {
            Ok(()) => {}
            Err(error) if error.is_condition_failed() => {} // Applied before.
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// The function: applies the event's records in order and reports the first it cannot apply,
/// with its sequence number, so that Lambda retries from there. Never an `Err`: a failed
/// batch is reported record by record, which keeps the records before it applied.
pub async fn handle(db: &Db<App>, event: Event) -> DynamoDbEventResponse {
    let mut response = DynamoDbEventResponse::default();
    for record in stream::lambda::records::<Item>(event) {
        let failed = match &record {
            Ok(record) => match apply(db, record).await {
                Ok(()) => None,
                Err(error) => Some((Some(record.sequence_number.clone()), error.kind())),
            },
            Err(error) => Some((error.sequence_number().map(str::to_owned), "undecodable")),
        };
        if let Some((sequence, reason)) = failed {
            // The error's kind: a stable word to count and alert on. (Its text hides the
            // item's values too, unless `error::show_values` is on.)
            eprintln!("record {sequence:?} not applied: {reason}");
            // A record without a sequence number is reported without one, which Lambda
            // takes as the whole batch failing: it retries all of it.
            let mut failure = DynamoDbBatchItemFailure::default();
            failure.item_identifier = sequence;
            response.batch_item_failures.push(failure);
            break;
        }
    }
    response
}

/// Every ticket the view holds for `team`, as `(id, state)`.
async fn view(db: &Db<App>, team: &str) -> Result<Vec<(String, State)>, Error> {
    let tickets = db
        .query(TeamTicket::partition(team))
        .consistent()
        .all()
        .await?;
    Ok(tickets
        .into_iter()
        .map(|ticket| (ticket.id, ticket.state))
        .collect())
}

fn fixture(text: &str) -> Result<Event, serde_json::Error> {
    serde_json::from_str(text)
}

const BATCH: &str = include_str!("../tests/fixtures/lambda_stream/batch.json");
const BAD_RECORD: &str = include_str!("../tests/fixtures/lambda_stream/bad_record.json");

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    if std::env::var_os("AWS_LAMBDA_RUNTIME_API").is_some() {
        let config = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await;
        let table = std::env::var("TABLE_NAME").map_err(|_| "set TABLE_NAME to the table")?;
        let db = Db::<App>::new(aws_sdk_dynamodb::Client::new(&config)).with_table_name(table);
        let db = &db;
        let function = lambda_runtime::service_fn(
            move |event: lambda_runtime::LambdaEvent<Event>| async move {
                Ok::<_, lambda_runtime::Error>(handle(db, event.payload).await)
            },
        );
        return lambda_runtime::run(function).await;
    }

    let client = singletable::local::client().await?;
    let table_name = format!("lambda-example-{}", std::process::id());
    let db = Db::<App>::new(client).with_table_name(table_name);
    db.admin().ensure_table().await?;
    for (name, text) in [
        ("batch", BATCH),
        ("the same batch again", BATCH),
        ("a bad record", BAD_RECORD),
    ] {
        let response = handle(&db, fixture(text)?).await;
        let failed: Vec<_> = response
            .batch_item_failures
            .iter()
            .filter_map(|failure| failure.item_identifier.as_deref())
            .collect();
        println!("{name}: batchItemFailures {failed:?}");
    }
    for team in ["blue", "red"] {
        println!("team {team}: {:?}", view(&db, team).await?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failures(response: &DynamoDbEventResponse) -> Vec<&str> {
        let failures = response.batch_item_failures.iter();
        failures
            .filter_map(|failure| failure.item_identifier.as_deref())
            .collect()
    }

    fn ticket(id: &str, state: State) -> (String, State) {
        (id.to_owned(), state)
    }

    #[tokio::test]
    async fn a_batch_applies_once_however_often_it_is_delivered() {
        let db = singletable::testing::table::<App>().await.unwrap();
        for _ in 0..2 {
            let response = handle(&db, fixture(BATCH).unwrap()).await;
            assert_eq!(failures(&response), Vec::<&str>::new());
            let blue = vec![ticket("t1", State::Closed), ticket("t3", State::Open)];
            assert_eq!(view(&db, "blue").await.unwrap(), blue);
            let red = vec![ticket("t2", State::Gone), ticket("t3", State::Gone)];
            assert_eq!(view(&db, "red").await.unwrap(), red);
        }
    }

    #[tokio::test]
    async fn an_older_record_delivered_late_changes_nothing() {
        let db = singletable::testing::table::<App>().await.unwrap();
        let mut batch = fixture(BATCH).unwrap();
        handle(&db, fixture(BATCH).unwrap()).await;
        // The insert of t2, after its removal was applied.
        batch.records.truncate(2);
        batch.records.remove(0);
        assert_eq!(failures(&handle(&db, batch).await), Vec::<&str>::new());
        let red = view(&db, "red").await.unwrap();
        assert_eq!(
            red,
            vec![ticket("t2", State::Gone), ticket("t3", State::Gone)]
        );
    }

    #[tokio::test]
    async fn a_bad_record_is_reported_and_the_records_before_it_stay_applied() {
        let db = singletable::testing::table::<App>().await.unwrap();
        let event = fixture(BAD_RECORD).unwrap();
        let bad = event.records[1].change.sequence_number.clone().unwrap();
        for _ in 0..2 {
            // Lambda retries from the reported record: the first stays applied once, the bad
            // one is reported again, and the one after it waits.
            let response = handle(&db, fixture(BAD_RECORD).unwrap()).await;
            assert_eq!(failures(&response), vec![bad.as_str()]);
            assert_eq!(
                view(&db, "red").await.unwrap(),
                vec![ticket("t4", State::Open)]
            );
        }
    }

    #[tokio::test]
    async fn a_failed_write_is_reported_at_its_record() {
        // A table that does not exist: the first write fails, so the first record is reported.
        let table = singletable::testing::table::<App>().await.unwrap();
        let db = table.clone().with_table_name("lambda-example-missing");
        let event = fixture(BATCH).unwrap();
        let first = event.records[0].change.sequence_number.clone().unwrap();
        let response = handle(&db, event).await;
        assert_eq!(failures(&response), vec![first.as_str()]);
    }
}
