//! A sweep worker as an AWS Lambda function: each invocation runs a worker of a distributed
//! sweep until shortly before the invocation's deadline, leaves its segment at the
//! checkpoint (its lease released, so the next invocation takes it at once), and answers
//! whether work is left. A Step Functions loop, or a schedule, invokes it again while it is
//! (docs/production.md shows both); several invocations at once share the segments.
//!
//! The migration: version 2 of a ticket adds its team's index, written over 4 keys
//! (`TEAM#{team}#{shard(id, 4)}`), which the tickets version 1 wrote lack until the sweep
//! backfills them.
//!
//! Run with `cargo run --example lambda_sweep`: off Lambda, it writes 400 version-1 tickets to
//! the local engine and invokes the handler with deadlines 200 ms away until the sweep is done.
//! On Lambda (`AWS_LAMBDA_RUNTIME_API` is set) it serves invocations on the table `TABLE_NAME`
//! names, stopping a second before each deadline.

use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, Error, Table};
use std::time::{Duration, SystemTime};

#[derive(Table)]
#[dynamo(
    name = "lambda-sweep-example",
    pk = "PK",
    sk = "SK",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
pub struct App;

/// The ticket after the migration.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, schema_version = 2, pk = "TICKET#{id}", sk = "TICKET",
         gsi1pk = "TEAM#{team}#{shard(id, 4)}", gsi1sk = "TICKET#{id}")]
pub struct Ticket {
    pub id: String,
    pub team: u32,
    pub title: String,
}

/// The ticket as the code before the migration writes it.
pub mod v1 {
    use super::App;
    use serde::{Deserialize, Serialize};
    use singletable::Entity;

    #[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
    #[dynamo(table = App, name = "Ticket", pk = "TICKET#{id}", sk = "TICKET")]
    pub struct Ticket {
        pub id: String,
        pub team: u32,
        pub title: String,
    }
}

/// An invocation's input (the state machine's state): the sweep to work on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Invocation {
    /// The distributed sweep's name, which every invocation shares.
    pub sweep: String,
}

/// An invocation's answer: whether to invoke again, and what this one did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Outcome {
    /// The sweep's name, passed on to the next invocation.
    pub sweep: String,
    /// Segments are left: invoke again.
    pub work_left: bool,
    /// Tickets this invocation backfilled.
    pub backfilled: u64,
    /// Segments this invocation finished.
    pub segments_finished: usize,
}

/// Runs a worker of the sweep until `stop_at`, and says whether work is left.
pub async fn handle(
    db: &Db<App>,
    invocation: Invocation,
    stop_at: SystemTime,
) -> Result<Outcome, Error> {
    let report = db
        .admin()
        .sweep::<Ticket>()
        .segments(4)
        .page_size(20)
        .concurrency(4)
        .distributed(invocation.sweep.clone())
        .worker_until(stop_at)
        .await?;
    Ok(Outcome {
        sweep: invocation.sweep,
        work_left: report.work_left,
        backfilled: report.counts.backfilled,
        segments_finished: report.finished.len(),
    })
}

/// Writes `count` tickets as version 1 does.
async fn old_tickets(db: &Db<App>, count: u32) -> Result<(), Error> {
    let mut batch = db.batch_write();
    for number in 0..count {
        batch = batch.put(&v1::Ticket {
            id: format!("t{number:04}"),
            team: number % 3,
            title: format!("ticket {number}"),
        });
    }
    let sent = batch.send().await?;
    assert!(
        sent.unprocessed.is_empty(),
        "the local engine throttles nothing"
    );
    Ok(())
}

/// Invokes the handler, each time with a deadline `budget` away, until no work is left;
/// every invocation's outcome, in order.
async fn invoke_until_done(
    db: &Db<App>,
    sweep: &str,
    budget: Duration,
) -> Result<Vec<Outcome>, Error> {
    let mut outcomes = Vec::new();
    for _ in 0..1_000 {
        let invocation = Invocation {
            sweep: sweep.to_owned(),
        };
        let outcome = handle(db, invocation, SystemTime::now() + budget).await?;
        let work_left = outcome.work_left;
        outcomes.push(outcome);
        if !work_left {
            return Ok(outcomes);
        }
    }
    panic!("the sweep went on for 1,000 invocations");
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    if std::env::var_os("AWS_LAMBDA_RUNTIME_API").is_some() {
        let config = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await;
        let table = std::env::var("TABLE_NAME").map_err(|_| "set TABLE_NAME to the table")?;
        let db = Db::<App>::new(aws_sdk_dynamodb::Client::new(&config)).with_table_name(table);
        let db = &db;
        let function = lambda_runtime::service_fn(
            move |event: lambda_runtime::LambdaEvent<Invocation>| async move {
                // A second for the answer to reach Lambda, whatever the last page took.
                let stop_at = event.context.deadline() - Duration::from_secs(1);
                Ok::<_, lambda_runtime::Error>(handle(db, event.payload, stop_at).await?)
            },
        );
        return lambda_runtime::run(function).await;
    }

    let client = singletable::local::client().await?;
    let table_name = format!("lambda-sweep-example-{}", std::process::id());
    let db = Db::<App>::new(client).with_table_name(table_name);
    db.admin().ensure_table().await?;
    old_tickets(&db, 400).await?;
    let outcomes = invoke_until_done(&db, "tickets-v2", Duration::from_millis(200)).await?;
    for (number, outcome) in outcomes.iter().enumerate() {
        println!(
            "invocation {}: backfilled {}, finished {} segments, work left: {}",
            number + 1,
            outcome.backfilled,
            outcome.segments_finished,
            outcome.work_left
        );
    }
    let coverage = (db.admin().coverage(Ticket::SCHEMA))
        .distributed("tickets-v2")
        .segments(4)
        .send()
        .await?;
    println!("{coverage}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn invocations_with_short_deadlines_complete_the_sweep_backfilling_each_ticket_once() {
        let db = singletable::testing::table::<App>().await.unwrap();
        old_tickets(&db, 400).await.unwrap();
        let outcomes = invoke_until_done(&db, "tickets-v2", Duration::from_millis(200))
            .await
            .unwrap();
        assert!(
            outcomes.len() >= 2,
            "400 tickets in one invocation of 200 ms: {outcomes:?}"
        );
        // Each ticket backfilled once, over every invocation.
        let backfilled: u64 = outcomes.iter().map(|outcome| outcome.backfilled).sum();
        assert_eq!(backfilled, 400);
        let finished: usize = outcomes.iter().map(|o| o.segments_finished).sum();
        assert_eq!(finished, 4);
        let coverage = (db.admin().coverage(Ticket::SCHEMA))
            .distributed("tickets-v2")
            .segments(4)
            .send()
            .await
            .unwrap();
        assert!(coverage.is_done(), "{coverage}");
        let team = db.query(Ticket::gsi1(1u32)).all().await.unwrap();
        assert_eq!(team.len(), 133, "team 1's tickets on its sharded index");
        // Invoked again once done, a worker finds nothing left.
        let again = invoke_until_done(&db, "tickets-v2", Duration::from_millis(200))
            .await
            .unwrap();
        assert_eq!(again.len(), 1);
        assert!(!again[0].work_left && again[0].backfilled == 0);
    }

    #[tokio::test]
    async fn an_invocation_with_no_time_left_takes_no_segment_and_says_work_is_left() {
        let db = singletable::testing::table::<App>().await.unwrap();
        old_tickets(&db, 10).await.unwrap();
        let outcome = handle(
            &db,
            Invocation {
                sweep: "late".into(),
            },
            SystemTime::now(),
        )
        .await
        .unwrap();
        assert!(outcome.work_left && outcome.backfilled == 0, "{outcome:?}");
        let status = db
            .admin()
            .sweep::<Ticket>()
            .segments(4)
            .distributed("late")
            .status()
            .await
            .unwrap();
        assert!(status
            .segments
            .iter()
            .all(|segment| segment.owner.is_none()));
    }
}
