//! Bulk throughput on the engine `SINGLETABLE_ENGINE` chooses (dynoxide by default):
//! `SINGLETABLE_BULK_ITEMS` items (100,000 unless set) loaded by `batch_write` at concurrency
//! 1, 4 and 16 and by `put_stream` at 16, against a hand-written loop of `BatchWriteItem`
//! calls; then a distributed sweep of as many old items by 1, 2 and 4 workers. Each run gets a
//! fresh table. Every figure is timed from the records in memory to the last response, encoding
//! included. Prints items per second, the process's resident memory after each run (which the
//! engine's own tables, in the same process, dominate), and the run's peak heap: the most bytes
//! allocated at once during the run above what was allocated when it started (the engine's
//! allocations, in the same process, included).
//!
//! ```sh
//! cargo bench --bench bulk
//! ```

mod common;
#[path = "common/heap.rs"]
mod heap;

use aws_sdk_dynamodb::types::AttributeValue;
use common::{records, send_all, write_old, Bulk, Record};
use singletable::{testing, Item};
use std::time::{Duration, Instant};

fn report(what: &str, items: u64, elapsed: Duration, heap_at_start: usize) {
    let rss = heap::resident_mb().map_or_else(|| "?".to_owned(), |mb| format!("{mb:.0}"));
    let peak = heap::peak_since(heap_at_start) as f64 / 1e6;
    println!(
        "{what:<44} {items:>7} items in {:>7.2} s: {:>8.0} items/s, peak heap +{peak:.0} MB, RSS {rss} MB",
        elapsed.as_secs_f64(),
        items as f64 / elapsed.as_secs_f64()
    );
}

/// The baseline: the items encoded by `serde_dynamo` with their keys written by hand, sent 25
/// at a time, unprocessed ones resent; timed from the records, as the library's loads are.
async fn hand_written(db: &singletable::Db<Bulk>, count: u64) -> Duration {
    let all: Vec<Record> = records(count).collect();
    let started = Instant::now();
    let items: Vec<Item> = all
        .iter()
        .map(|record| {
            let mut item: Item = serde_dynamo::to_item(record).expect("a record encodes");
            for (name, value) in [
                ("PK", format!("ITEM#{:020}", record.id)),
                ("SK", "ITEM".to_owned()),
                ("GSI1PK", format!("GROUP#{:010}", record.group)),
                ("GSI1SK", format!("ITEM#{:020}", record.id)),
                ("_type", "Record".to_owned()),
            ] {
                item.insert(name.to_owned(), AttributeValue::S(value));
            }
            item.insert("_sv".to_owned(), AttributeValue::N("2".to_owned()));
            item
        })
        .collect();
    for chunk in items.chunks(25) {
        send_all(db, chunk.iter().cloned().map(common::put_request).collect()).await;
    }
    started.elapsed()
}

fn main() {
    let count: u64 = common::setting("SINGLETABLE_BULK_ITEMS", 100_000);
    let runtime = common::runtime();
    runtime.block_on(async {
        let engine = singletable::local::Engine::from_env().expect("an engine");
        println!("bulk writes and sweeps on {engine}, {count} items each");
        {
            let db = testing::table::<Bulk>().await.expect("a table");
            let heap = heap::start_peak();
            let elapsed = hand_written(&db, count).await;
            report("hand-written BatchWriteItem loop", count, elapsed, heap);
        }
        for concurrency in [1, 4, 16] {
            let db = testing::table::<Bulk>().await.expect("a table");
            let heap = heap::start_peak();
            let all: Vec<Record> = records(count).collect();
            let started = Instant::now();
            let output = db
                .batch_write()
                .put_all(&all)
                .concurrency(concurrency)
                .send()
                .await
                .expect("the load");
            assert_eq!(output.written as u64, count);
            report(
                &format!("batch_write, concurrency {concurrency}"),
                count,
                started.elapsed(),
                heap,
            );
        }
        {
            let db = testing::table::<Bulk>().await.expect("a table");
            let heap = heap::start_peak();
            let started = Instant::now();
            let output = db
                .put_stream(futures::stream::iter(records(count)))
                .concurrency(16)
                .send()
                .await
                .expect("the load");
            assert_eq!(output.written as u64, count);
            report("put_stream, concurrency 16", count, started.elapsed(), heap);
        }
        for workers in [1, 2, 4] {
            let db = testing::table::<Bulk>().await.expect("a table");
            write_old(&db, records(count), 1).await;
            let heap = heap::start_peak();
            let started = Instant::now();
            let running: Vec<_> = (0..workers)
                .map(|worker| {
                    tokio::spawn(
                        db.admin()
                            .sweep::<Record>()
                            .segments(16)
                            .distributed("bench")
                            .worker_id(format!("w{worker}"))
                            .worker(),
                    )
                })
                .collect();
            let mut backfilled = 0;
            for worker in running {
                backfilled += worker
                    .await
                    .expect("a worker")
                    .expect("the sweep")
                    .counts
                    .backfilled;
            }
            assert_eq!(backfilled, count);
            report(
                &format!("distributed sweep, {workers} workers"),
                count,
                started.elapsed(),
                heap,
            );
        }
    });
}
