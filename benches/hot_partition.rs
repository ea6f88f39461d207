//! A sweep over a hot partition: `SINGLETABLE_HOT_ITEMS` version-1 records (1,600 unless set)
//! of about 20 KB crowd four partition keys, and `sweep().segments(16)` backfills them at
//! `Rate::WriteUnitsPerSecond(20000)`, through the fault proxy with DynamoDB's latency (8 ms ± 2)
//! and partition limits (1,000 write units a second per key). A 20 KB item costs 21 write units
//! (DynamoDB charges an update by the larger of the item before and after; the `Db` tracks
//! capacity, so the engine reports it and the proxy charges it): one segment writing one key a
//! round trip at a time asks for more than its key allows, and the proxy throttles it. The
//! limiter halves its rate on throttling and climbs back (AIMD); the sweep must end with every
//! record backfilled, and a dry run must find none left.
//!
//! Prints the table's write units per second the engine reported and the rate the limiter held,
//! every 250 ms, as CSV, draws them to `benches/plots/hot_partition.svg`, and names the keys
//! the proxy throttled. Then sweeps the same records on a fresh table without a rate: nothing
//! paces it, and every throttled write is counted against its key and sent again with backoff.
//!
//! ```sh
//! cargo bench --bench hot_partition
//! ```

mod common;
#[path = "common/plot.rs"]
mod plot;

use common::{write_old, Bulk};
use serde::{Deserialize, Serialize};
use singletable::migrate::SweepReport;
use singletable::testing::TestTable;
use singletable::{Entity, Rate};
use singletable_fault::{FaultPlan, FaultReport, FaultStats, Latency, PartitionLimits};
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Version 2 adds the GSI1 keys the sweep backfills.
#[derive(Entity, Serialize, Deserialize, Clone)]
#[dynamo(table = Bulk, schema_version = 2, pk = "HOT#{key}", sk = "ITEM#{id}",
         gsi1pk = "GROUP#{key}", gsi1sk = "ITEM#{id}")]
pub struct Crowded {
    pub key: u32,
    pub id: u64,
    pub payload: String,
}

const HOT_KEYS: u32 = 4;
const BUDGET: f64 = 20_000.0;
const SAMPLE: Duration = Duration::from_millis(250);

fn crowded(count: u64) -> impl Iterator<Item = Crowded> {
    (0..count).map(|id| Crowded {
        key: (id % u64::from(HOT_KEYS)) as u32,
        id,
        payload: "x".repeat(20 * 1024),
    })
}

/// A fresh table of `items` crowded records behind the proxy with DynamoDB's latency and
/// partition limits, and a `Db` on it that tracks capacity (so that the engine reports each
/// write's units and the proxy charges them to its key).
async fn hot_table(
    items: u64,
    latency: Latency,
) -> (TestTable<Bulk>, singletable::Db<Bulk>, FaultStats) {
    let plan = FaultPlan::new(7, 0.0)
        .with_latency(latency)
        .with_partition_limits(PartitionLimits::DYNAMODB)
        .with_attempt_timeout(Duration::from_secs(10));
    let (table, db, stats) = common::proxied_table(plan).await;
    // Loaded straight into the engine: the hot keys are the sweep's to throttle.
    write_old(&table, crowded(items), 4).await;
    (table, db.track_capacity(), stats)
}

/// Prints what the sweep did and what the proxy throttled, and checks that every record was
/// backfilled and that the report counts each key's throttled writes as the proxy does (the
/// sweep's writes surface each throttle: no SDK retries).
async fn check(
    name: &str,
    db: &singletable::Db<Bulk>,
    report: &SweepReport,
    proxy: &FaultReport,
    items: u64,
    elapsed: Duration,
) {
    let left = common::old_left::<Crowded>(db).await;
    println!(
        "{name}: {} backfilled, {} failed, {:.0} write units in {:.1} s ({:.0} items/s, {:.0} WCU/s); \
         old items left (dry run): {}",
        report.counts.backfilled,
        report.counts.failed,
        report.counts.write_units,
        elapsed.as_secs_f64(),
        report.counts.backfilled as f64 / elapsed.as_secs_f64(),
        report.counts.write_units / elapsed.as_secs_f64(),
        left
    );
    println!("{name}: writes the proxy throttled, per partition key:");
    for (key, count) in &proxy.throttled_writes {
        println!("  {key}: {count}");
    }
    println!("{name}: writes the sweep's report says were throttled, per partition key:");
    for (key, count) in &report.throttled_keys {
        println!("  {key:?}: {count}");
    }
    for (key, count) in &proxy.throttled_writes {
        let reported = report.throttled_keys.get(&key.value).copied();
        assert_eq!(
            reported,
            Some(*count),
            "{name}: the report's count for {key}"
        );
    }
    assert_eq!(
        report.counts.backfilled, items,
        "{name}: every record backfilled"
    );
    assert_eq!(report.counts.failed, 0);
    assert_eq!(left, 0, "{name}: no old record left");
}

fn main() {
    let items: u64 = common::setting("SINGLETABLE_HOT_ITEMS", 1_600);
    let runtime = common::runtime();
    runtime.block_on(async {
        let latency = common::latency();
        let (_table, db, stats) = hot_table(items, latency).await;
        println!(
            "hot-partition sweep: {items} records of 20 KB on {HOT_KEYS} partition keys, 16 segments, \
             Rate::WriteUnitsPerSecond({BUDGET}), {:?} ± {:?} a request, {} write units a second per key",
            latency.base, latency.jitter, PartitionLimits::DYNAMODB.write_units_per_second
        );
        let held = Arc::new(Mutex::new(None::<f64>));
        let started = Instant::now();
        let sweep = {
            let held = held.clone();
            let db = db.clone();
            tokio::spawn(async move {
                db.admin()
                    .sweep::<Crowded>()
                    .segments(16)
                    .rate(Rate::WriteUnitsPerSecond(BUDGET))
                    .on_progress(move |progress| {
                        *held.lock().unwrap_or_else(|e| e.into_inner()) = progress.rate;
                        ControlFlow::Continue(())
                    })
                    .send()
                    .await
            })
        };
        // The table's own units, which its keys' limits hold (the index's keys are held to theirs).
        let table_units = |db: &singletable::Db<Bulk>| {
            db.consumed()
                .map_or(0.0, |consumed| consumed.capacity_units - consumed.index_units)
        };
        let consumed_at_start = table_units(&db);
        let mut samples = vec![(Duration::ZERO, consumed_at_start)];
        let mut series = Vec::new();
        while !sweep.is_finished() {
            tokio::time::sleep(SAMPLE).await;
            let at = started.elapsed();
            let units = table_units(&db);
            samples.push((at, units));
            let window = samples
                .iter()
                .rev()
                .find(|(then, _)| at - *then >= Duration::from_secs(1))
                .or(samples.first());
            if let Some((then, earlier)) = window {
                let per_second = (units - earlier) / (at - *then).as_secs_f64().max(0.001);
                let rate = held.lock().unwrap_or_else(|e| e.into_inner()).unwrap_or(0.0);
                series.push((at.as_secs_f64(), per_second, rate));
            }
        }
        let report = sweep.await.expect("the sweep").expect("the sweep succeeded");
        let elapsed = started.elapsed();
        println!("seconds,write_units_per_second,limiter_rate");
        for (at, units, rate) in &series {
            println!("{at:.2},{units:.0},{rate:.0}");
        }
        check("with a rate", &db, &report, &stats.report(), items, elapsed).await;
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/plots/hot_partition.svg");
        plot::lines(
            path,
            "sweep of 4 hot partition keys, Rate::WriteUnitsPerSecond(20000)",
            ("seconds", "write units per second"),
            &[
                (
                    "consumed (last second)",
                    series.iter().map(|(at, units, _)| (*at, *units)).collect(),
                ),
                (
                    "limiter's rate",
                    series.iter().map(|(at, _, rate)| (*at, *rate)).collect(),
                ),
                (
                    "4 keys × 1,000 WCU/s",
                    vec![(0.0, 4_000.0), (elapsed.as_secs_f64(), 4_000.0)],
                ),
            ],
        )
        .expect("the plot");
        println!("plot: {path}");

        // The same records without a rate, on a fresh table.
        let (_table, db, stats) = hot_table(items, latency).await;
        let started = Instant::now();
        let report = db
            .admin()
            .sweep::<Crowded>()
            .segments(16)
            .send()
            .await
            .expect("the sweep without a rate succeeded");
        let elapsed = started.elapsed();
        check("without a rate", &db, &report, &stats.report(), items, elapsed).await;
    });
}
