//! Peak heap of a bulk load and of a sweep, at 100,000 and at 1,000,000 items
//! (`SINGLETABLE_MEMORY_ITEMS`, a comma-separated list, sets others;
//! `SINGLETABLE_MEMORY_SWEEP_ITEMS` others for the sweep alone): `put_stream` at
//! concurrency 16 from a lazy stream of records, then `sweep().segments(16)` over as many
//! version-1 records in a fresh table. The engine runs in a `fault-proxy` process (no faults,
//! no latency), so the heap counted here, by a global allocator, is the library's, the SDK's
//! and the bench's alone: the most bytes allocated at once during each run, above what was
//! allocated when it started. Prints one CSV line per run.
//!
//! ```sh
//! cargo bench --bench memory
//! ```

mod common;
#[path = "common/heap.rs"]
mod heap;

use common::{records, write_old, Bulk, ProxyProcess, Record};
use singletable::testing;
use std::time::Instant;

fn main() {
    let list = |variable: &str| -> Option<Vec<u64>> {
        let list = std::env::var(variable).ok()?;
        Some(
            list.split(',')
                .filter_map(|n| n.trim().parse().ok())
                .collect(),
        )
    };
    let sizes = list("SINGLETABLE_MEMORY_ITEMS").unwrap_or_else(|| vec![100_000, 1_000_000]);
    let sweep_sizes = list("SINGLETABLE_MEMORY_SWEEP_ITEMS").unwrap_or_else(|| sizes.clone());
    let proxy = ProxyProcess::start(&[]);
    // Set before the runtime's threads exist.
    std::env::set_var("AWS_ENDPOINT_URL_DYNAMODB", &proxy.endpoint);
    let runtime = common::runtime();
    println!("run,items,seconds,items_per_second,peak_heap_mb");
    runtime.block_on(async {
        for &items in &sizes {
            let db = testing::table::<Bulk>().await.expect("a table");
            let heap = heap::start_peak();
            let started = Instant::now();
            let output = db
                .put_stream(futures::stream::iter(records(items)))
                .concurrency(16)
                .send()
                .await
                .expect("the load");
            let elapsed = started.elapsed().as_secs_f64();
            assert_eq!(output.written as u64, items);
            println!(
                "put_stream,{items},{elapsed:.1},{:.0},{:.2}",
                items as f64 / elapsed,
                heap::peak_since(heap) as f64 / 1e6
            );
        }
        for &items in &sweep_sizes {
            let db = testing::table::<Bulk>().await.expect("a table");
            write_old(&db, records(items), 16).await;
            let heap = heap::start_peak();
            let started = Instant::now();
            let report = db
                .admin()
                .sweep::<Record>()
                .segments(16)
                .send()
                .await
                .expect("the sweep");
            let elapsed = started.elapsed().as_secs_f64();
            assert_eq!(report.counts.backfilled, items);
            println!(
                "sweep,{items},{elapsed:.1},{:.0},{:.2}",
                items as f64 / elapsed,
                heap::peak_since(heap) as f64 / 1e6
            );
        }
    });
    drop(runtime);
    eprintln!("proxy: {}", proxy.stop());
}
