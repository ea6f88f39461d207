//! Bulk writes where a round trip, not the engine, sets the pace: `batch_write` and
//! `put_stream` at concurrency 1, 4, 16 and 64 through the fault proxy with DynamoDB's
//! latency and partition limits modelled (`Latency::IN_REGION`, 8 ms ± 2 per request, and
//! `PartitionLimits::DYNAMODB`, 1,000 write units a second per partition key), no faults
//! injected. Each point gets a fresh table and proxy; every record has a partition key of its
//! own, so no key comes near its limit, and the proxy's count of throttled writes says so.
//!
//! The points load `SINGLETABLE_LATENCY_ITEMS` records (2,000 unless set) at concurrency 1
//! and 4, and that many per four requests in flight above (8,000 at 16, 32,000 at 64), so that
//! every point runs many rounds of requests. A last line runs `put_stream` at 64 through a
//! proxy without latency: the engine's own ceiling on this machine, which the modelled points
//! cannot pass (the engine writes one request at a time). `SINGLETABLE_LATENCY_MS` sets
//! another mean latency (the jitter is a quarter of it), to see how far the library's
//! concurrency carries when the engine's ceiling is further away.
//!
//! ```sh
//! cargo bench --bench bulk_latency
//! ```

use serde::{Deserialize, Serialize};
use singletable::{testing, Db, Entity, Table};
use singletable_fault::{self as fault, FaultPlan, FaultStats, Latency, PartitionLimits};
use std::time::{Duration, Instant};

#[derive(Table)]
#[dynamo(
    name = "bulk_latency",
    pk = "PK",
    sk = "SK",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
pub struct Bench;

/// The records of `benches/bulk.rs`: about 200 bytes, one GSI.
#[derive(Entity, Serialize, Deserialize, Clone)]
#[dynamo(table = Bench, pk = "ITEM#{id}", sk = "ITEM", gsi1pk = "GROUP#{group}", gsi1sk = "ITEM#{id}")]
pub struct Record {
    pub id: u64,
    pub group: u32,
    pub payload: String,
}

fn records(count: u64) -> impl Iterator<Item = Record> {
    (0..count).map(|id| Record {
        id,
        group: (id % 97) as u32,
        payload: format!(
            "payload of record {id}, about a hundred bytes long to be typical of small items"
        ),
    })
}

const CONCURRENCY: [usize; 4] = [1, 4, 16, 64];

#[derive(Clone, Copy, PartialEq)]
enum Load {
    BatchWrite,
    PutStream,
}

impl Load {
    fn name(self) -> &'static str {
        match self {
            Load::BatchWrite => "batch_write",
            Load::PutStream => "put_stream",
        }
    }
}

/// A fresh table, and a `Db` on it whose requests go through a proxy with `plan`.
async fn db(plan: FaultPlan) -> (testing::TestTable<Bench>, Db<Bench>, FaultStats) {
    let table = testing::table::<Bench>().await.expect("a table");
    let (client, stats) = fault::client(plan).await.expect("the proxy");
    let db = Db::<Bench>::new(client).with_table_name(table.table_name());
    (table, db, stats)
}

/// Loads `count` records with `load` at `concurrency`; the time from the records in memory to
/// the last response.
async fn run(db: &Db<Bench>, load: Load, concurrency: usize, count: u64) -> Duration {
    let started = Instant::now();
    let written = match load {
        Load::BatchWrite => {
            let all: Vec<Record> = records(count).collect();
            db.batch_write()
                .put_all(&all)
                .concurrency(concurrency)
                .send()
                .await
                .expect("the load")
                .written
        }
        Load::PutStream => {
            db.put_stream(futures::stream::iter(records(count)))
                .concurrency(concurrency)
                .send()
                .await
                .expect("the load")
                .written
        }
    };
    let elapsed = started.elapsed();
    assert_eq!(written as u64, count);
    elapsed
}

fn modelled(seed: u64, latency: Latency) -> FaultPlan {
    FaultPlan::new(seed, 0.0)
        .with_latency(latency)
        .with_partition_limits(PartitionLimits::DYNAMODB)
        // Far above the modelled round trip: a request waiting for the engine behind 63
        // others must not time out.
        .with_attempt_timeout(Duration::from_secs(10))
}

fn main() {
    let base: u64 = std::env::var("SINGLETABLE_LATENCY_ITEMS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(2_000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let engine = singletable::local::Engine::from_env().expect("an engine");
        let latency = match std::env::var("SINGLETABLE_LATENCY_MS")
            .ok()
            .and_then(|value| value.parse::<u64>().ok())
        {
            Some(millis) => Latency::new(
                Duration::from_millis(millis),
                Duration::from_millis(millis) / 4,
            ),
            None => Latency::IN_REGION,
        };
        println!(
            "bulk writes on {engine} behind the proxy: latency {:?} ± {:?} a request, {} write units a second per partition key",
            latency.base,
            latency.jitter,
            PartitionLimits::DYNAMODB.write_units_per_second
        );
        println!(
            "{:<12} {:>11} {:>7} {:>8} {:>9} {:>8} {:>9} {:>9}",
            "load", "concurrency", "items", "seconds", "items/s", "vs 1", "requests", "throttled"
        );
        for load in [Load::BatchWrite, Load::PutStream] {
            let mut at_one = None;
            for (point, concurrency) in CONCURRENCY.into_iter().enumerate() {
                let count = base * (concurrency as u64 / 4).max(1);
                let (_table, db, stats) = db(modelled(point as u64, latency)).await;
                let elapsed = run(&db, load, concurrency, count).await;
                let rate = count as f64 / elapsed.as_secs_f64();
                let at_one = *at_one.get_or_insert(rate);
                let report = stats.report();
                println!(
                    "{:<12} {concurrency:>11} {count:>7} {:>8.2} {rate:>9.0} {:>7.1}× {:>9} {:>9}",
                    load.name(),
                    elapsed.as_secs_f64(),
                    rate / at_one,
                    report.requests,
                    report.throttled_total()
                );
            }
        }
        // The engine's ceiling: the same proxy without its latency.
        let count = base * 16;
        let plan = FaultPlan::new(99, 0.0).with_attempt_timeout(Duration::from_secs(10));
        let (_table, db, stats) = db(plan).await;
        let elapsed = run(&db, Load::PutStream, 64, count).await;
        println!(
            "put_stream at 64 without latency (the engine's ceiling): {count} items in {:.2} s, {:.0} items/s, {} requests",
            elapsed.as_secs_f64(),
            count as f64 / elapsed.as_secs_f64(),
            stats.report().requests
        );
    });
}
