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

mod common;

use common::{proxied_table, records, Bulk, Record};
use singletable::Db;
use singletable_fault::{FaultPlan, Latency, PartitionLimits};
use std::time::{Duration, Instant};

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

/// Loads `count` records with `load` at `concurrency`; the time from the records in memory to
/// the last response.
async fn run(db: &Db<Bulk>, load: Load, concurrency: usize, count: u64) -> Duration {
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
    let base: u64 = common::setting("SINGLETABLE_LATENCY_ITEMS", 2_000);
    let runtime = common::runtime();
    runtime.block_on(async {
        let engine = singletable::local::Engine::from_env().expect("an engine");
        let latency = common::latency();
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
                let (_table, db, stats) = proxied_table(modelled(point as u64, latency)).await;
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
        let (_table, db, stats) = proxied_table(plan).await;
        let elapsed = run(&db, Load::PutStream, 64, count).await;
        println!(
            "put_stream at 64 without latency (the engine's ceiling): {count} items in {:.2} s, {:.0} items/s, {} requests",
            elapsed.as_secs_f64(),
            count as f64 / elapsed.as_secs_f64(),
            stats.report().requests
        );
    });
}
