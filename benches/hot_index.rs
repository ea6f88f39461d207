//! A hot global index partition, and write sharding as its remedy: one team's tickets put at
//! about three times what one partition key of an index may take (`SINGLETABLE_HOT_RATE` puts a
//! second, 300 unless set, of about 10 KB: 10 write units each, on the table and on the index,
//! for `SINGLETABLE_HOT_SECONDS` seconds, 4 unless set), through the fault proxy with DynamoDB's
//! latency (8 ms ± 2) and partition limits (1,000 write units a second per key, on the table and
//! on each index). Every ticket has a table key of its own; the team's index key is one key
//! (`TEAM#{team}`), or spread over 4 or 8 (`TEAM#{team}#{shard(id, N)}`).
//!
//! For each layout it prints the writes the proxy held back on the index
//! (`IndexWriteKeyRangeThroughputExceeded`), the tickets written a second, the puts that failed
//! after the `Db`'s retries, and the latency of the team's first page of 25 tickets (one query,
//! or N sent together and merged); draws `benches/plots/hot_index.svg`.
//!
//! ```sh
//! cargo bench --bench hot_index
//! ```

mod common;
#[path = "common/plot.rs"]
mod plot;

use common::Bulk;
use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, Error};
use singletable_fault::{FaultPlan, FaultStats, PartitionLimits};
use std::future::Future;
use std::time::{Duration, Instant};

/// The team's tickets on one index key.
#[derive(Entity, Serialize, Deserialize, Clone)]
#[dynamo(table = Bulk, name = "Unsharded", pk = "ONE#{id}", sk = "TICKET",
         gsi1pk = "TEAM#{team}", gsi1sk = "TICKET#{id}")]
struct Unsharded {
    team: u32,
    id: u64,
    payload: String,
}

/// The team's tickets over 4 index keys.
#[derive(Entity, Serialize, Deserialize, Clone)]
#[dynamo(table = Bulk, name = "FourShards", pk = "FOUR#{id}", sk = "TICKET",
         gsi1pk = "TEAM4#{team}#{shard(id, 4)}", gsi1sk = "TICKET#{id}")]
struct FourShards {
    team: u32,
    id: u64,
    payload: String,
}

/// The team's tickets over 8 index keys.
#[derive(Entity, Serialize, Deserialize, Clone)]
#[dynamo(table = Bulk, name = "EightShards", pk = "EIGHT#{id}", sk = "TICKET",
         gsi1pk = "TEAM8#{team}#{shard(id, 8)}", gsi1sk = "TICKET#{id}")]
struct EightShards {
    team: u32,
    id: u64,
    payload: String,
}

const TEAM: u32 = 7;
const PAGE: u32 = 25;
const QUERIES: usize = 40;

/// What one layout did.
struct Outcome {
    shards: u32,
    offered: u64,
    written: u64,
    failed: u64,
    throttled: u64,
    seconds: f64,
    query_median: Duration,
    query_p90: Duration,
}

/// Puts `rate` tickets a second for `seconds` (each its own task, as a service's requests
/// are), then times the team's first page `QUERIES` times, one after another.
async fn run<E, P, Q>(
    shards: u32,
    rate: u64,
    seconds: u64,
    ticket: impl Fn(u64) -> E,
    put: impl Fn(Db<Bulk>, E) -> P,
    first_page: impl Fn(Db<Bulk>) -> Q,
) -> Outcome
where
    E: Entity<Table = Bulk> + Send + 'static,
    P: Future<Output = Result<(), Error>> + Send + 'static,
    Q: Future<Output = Result<usize, Error>>,
{
    let plan = FaultPlan::new(31, 0.0)
        .with_latency(common::latency())
        .with_partition_limits(PartitionLimits::DYNAMODB)
        .with_attempt_timeout(Duration::from_secs(10));
    let (_table, db, stats): (_, Db<Bulk>, FaultStats) = common::proxied_table(plan).await;
    let offered = rate * seconds;
    let mut every = tokio::time::interval(Duration::from_secs_f64(1.0 / rate as f64));
    let mut puts = tokio::task::JoinSet::new();
    let started = Instant::now();
    for id in 0..offered {
        every.tick().await;
        puts.spawn(put(db.clone(), ticket(id)));
    }
    let (mut written, mut failed) = (0, 0);
    while let Some(done) = puts.join_next().await {
        match done.expect("a put's task") {
            Ok(()) => written += 1,
            Err(_) => failed += 1,
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let throttled = (stats.report().throttled_writes.iter())
        .filter(|(key, _)| key.index.is_some())
        .map(|(_, count)| count)
        .sum();
    let mut latencies = Vec::new();
    for _ in 0..QUERIES {
        let asked = Instant::now();
        let items = first_page(db.clone()).await.expect("the team's first page");
        latencies.push(asked.elapsed());
        assert_eq!(items, PAGE as usize, "a full first page");
    }
    latencies.sort();
    Outcome {
        shards,
        offered,
        written,
        failed,
        throttled,
        seconds: elapsed,
        query_median: latencies[QUERIES / 2],
        query_p90: latencies[QUERIES * 9 / 10],
    }
}

/// One layout's run: its ticket type, its number of index keys.
macro_rules! layout {
    ($ticket:ident, $shards:expr, $rate:expr, $seconds:expr) => {
        run(
            $shards,
            $rate,
            $seconds,
            |id| $ticket {
                team: TEAM,
                id,
                payload: payload(),
            },
            |db, ticket| async move { db.put(&ticket).send().await.map(|_| ()) },
            |db| async move {
                let page = db.query($ticket::gsi1(TEAM)).limit(PAGE).page(None).await?;
                Ok(page.items.len())
            },
        )
        .await
    };
}

fn payload() -> String {
    "x".repeat(9 * 1024 + 512)
}

fn main() {
    let rate: u64 = common::setting("SINGLETABLE_HOT_RATE", 300);
    let seconds: u64 = common::setting("SINGLETABLE_HOT_SECONDS", 4);
    let runtime = common::runtime();
    let outcomes = runtime.block_on(async {
        println!(
            "hot index: {rate} puts a second of about 10 KB for {seconds} s on one team's index \
             partition ({} write units a second against a key's {}), {:?} ± {:?} a request",
            rate * 10,
            PartitionLimits::DYNAMODB.write_units_per_second,
            common::latency().base,
            common::latency().jitter,
        );
        vec![
            layout!(Unsharded, 1, rate, seconds),
            layout!(FourShards, 4, rate, seconds),
            layout!(EightShards, 8, rate, seconds),
        ]
    });
    println!(
        "| index keys | puts offered | written | failed | writes throttled on the index | tickets written a second | first page, median | first page, p90 |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for outcome in &outcomes {
        println!(
            "| {} | {} | {} | {} | {} | {:.0} | {:.1} ms | {:.1} ms |",
            outcome.shards,
            outcome.offered,
            outcome.written,
            outcome.failed,
            outcome.throttled,
            outcome.written as f64 / outcome.seconds,
            outcome.query_median.as_secs_f64() * 1000.0,
            outcome.query_p90.as_secs_f64() * 1000.0,
        );
    }
    let series = |value: fn(&Outcome) -> f64| -> Vec<(f64, f64)> {
        (outcomes.iter())
            .map(|outcome| (f64::from(outcome.shards), value(outcome)))
            .collect()
    };
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/plots/hot_index.svg");
    plot::lines(
        path,
        &format!("one team's index partition at {rate} puts/s of 10 KB, by index keys"),
        ("index keys (shards)", "a second"),
        &[
            (
                "tickets written",
                series(|outcome| outcome.written as f64 / outcome.seconds),
            ),
            (
                "writes throttled on the index",
                series(|outcome| outcome.throttled as f64 / outcome.seconds),
            ),
        ],
    )
    .expect("the plot");
    println!("plot: {path}");
}
