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

use aws_sdk_dynamodb::types::{AttributeValue, PutRequest, WriteRequest};
use serde::{Deserialize, Serialize};
use singletable::{testing, Entity, Item, Table};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The system allocator, counting the bytes allocated now and the most at once.
struct Counting;

static ALLOCATED: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            let now = ALLOCATED.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(pointer, layout) };
        ALLOCATED.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let moved = unsafe { System.realloc(pointer, layout, size) };
        if !moved.is_null() {
            ALLOCATED.fetch_sub(layout.size(), Ordering::Relaxed);
            let now = ALLOCATED.fetch_add(size, Ordering::Relaxed) + size;
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        moved
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Starts a run's peak: returns the bytes allocated now, and the peak restarts from them.
fn start_peak() -> usize {
    let now = ALLOCATED.load(Ordering::Relaxed);
    PEAK.store(now, Ordering::Relaxed);
    now
}

#[derive(Table)]
#[dynamo(
    name = "bulk",
    pk = "PK",
    sk = "SK",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
pub struct Bulk;

/// Version 2 adds the GSI1 keys, which the sweep backfills into version 1's items.
#[derive(Entity, Serialize, Deserialize, Clone)]
#[dynamo(table = Bulk, schema_version = 2, pk = "ITEM#{id}", sk = "ITEM",
         gsi1pk = "GROUP#{group}", gsi1sk = "ITEM#{id}")]
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

/// The process's resident set, from `/proc` (Linux); `None` elsewhere.
fn resident_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn report(what: &str, items: u64, elapsed: Duration, heap_at_start: usize) {
    let rss = resident_mb().map_or_else(|| "?".to_owned(), |mb| format!("{mb:.0}"));
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(heap_at_start) as f64 / 1e6;
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
        let requests: Vec<WriteRequest> = chunk
            .iter()
            .map(|item| {
                WriteRequest::builder()
                    .put_request(
                        PutRequest::builder()
                            .set_item(Some(item.clone()))
                            .build()
                            .expect("an item"),
                    )
                    .build()
            })
            .collect();
        send_all(db, requests).await;
    }
    started.elapsed()
}

/// Sends `requests` in one `BatchWriteItem`, and again what comes back unprocessed.
async fn send_all(db: &singletable::Db<Bulk>, mut requests: Vec<WriteRequest>) {
    while !requests.is_empty() {
        let output = db
            .client()
            .batch_write_item()
            .request_items(db.table_name(), requests)
            .send()
            .await
            .expect("BatchWriteItem");
        requests = output
            .unprocessed_items
            .and_then(|mut left| left.remove(db.table_name()))
            .unwrap_or_default();
    }
}

/// Writes `count` records as version 1 wrote them (no index keys), for the sweep.
async fn old_records(db: &singletable::Db<Bulk>, count: u64) {
    let mut batch = Vec::new();
    for record in records(count) {
        let mut item = singletable::item::encode(&record).expect("a record encodes");
        item.remove("GSI1PK");
        item.remove("GSI1SK");
        item.insert("_sv".to_owned(), AttributeValue::N("1".to_owned()));
        batch.push(
            WriteRequest::builder()
                .put_request(
                    PutRequest::builder()
                        .set_item(Some(item))
                        .build()
                        .expect("an item"),
                )
                .build(),
        );
        if batch.len() == 25 {
            send_all(db, std::mem::take(&mut batch)).await;
        }
    }
    assert!(batch.is_empty(), "the count is a multiple of 25");
}

fn main() {
    let count: u64 = std::env::var("SINGLETABLE_BULK_ITEMS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(100_000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let engine = singletable::local::Engine::from_env().expect("an engine");
        println!("bulk writes and sweeps on {engine}, {count} items each");
        {
            let db = testing::table::<Bulk>().await.expect("a table");
            let heap = start_peak();
            let elapsed = hand_written(&db, count).await;
            report("hand-written BatchWriteItem loop", count, elapsed, heap);
        }
        for concurrency in [1, 4, 16] {
            let db = testing::table::<Bulk>().await.expect("a table");
            let heap = start_peak();
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
            let heap = start_peak();
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
            old_records(&db, count).await;
            let heap = start_peak();
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
