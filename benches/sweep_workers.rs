//! A distributed sweep as the command line runs it: 1, 2, 4 and 8 worker processes, each
//! `backfill --entity Record --distributed NAME --worker` of the library's command line, share
//! the backfill of `SINGLETABLE_SWEEP_ITEMS` version-1 records (8,000 unless set) in one table,
//! over `SINGLETABLE_SWEEP_SEGMENTS` scan segments (32 unless set), coordinated by leases in the
//! table, each worker with `SINGLETABLE_SWEEP_CONCURRENCY` backfill writes in flight (64 unless
//! set; 1 is one item after another). The engine runs in a `fault-proxy` process (`--rate 0 --partition-limits`, and the
//! latency of `SINGLETABLE_LATENCY_MS`, 8 ms ± 2 unless set): every worker's request takes a
//! round trip, as on DynamoDB. The same sweeps then run without latency: the engine's ceiling.
//!
//! Each point gets a fresh table and is timed from starting the workers to the last one's
//! exit; the workers' reports must add up to every record, and a dry run afterwards must find
//! no old item left. Prints a table, then the points as CSV.
//!
//! ```sh
//! cargo bench --bench sweep_workers --features cli
//! ```
//!
//! The bench is its own worker: run with `SWEEP_WORKER_TABLE` set, it is a command line
//! (`singletable::cli::run`) for that table and the record entity, as a user's binary is.

mod common;
#[path = "common/plot.rs"]
mod plot;

use common::{write_old, Bulk, ProxyProcess, Record};
use singletable::cli::{self, Entities};
use singletable::{testing, Db};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// Names the table of a worker process; without it the process is the bench.
const WORKER_TABLE: &str = "SWEEP_WORKER_TABLE";
const WORKERS: [usize; 4] = [1, 2, 4, 8];

fn main() -> ExitCode {
    if let Ok(table) = std::env::var(WORKER_TABLE) {
        // As a user's `#[tokio::main]` binary runs.
        return tokio::runtime::Runtime::new()
            .expect("a runtime")
            .block_on(async {
                let client = singletable::local::client().await.expect("a client");
                let db = Db::<Bulk>::new(client).with_table_name(table);
                cli::run(db, Entities::new().with::<Record>()).await
            });
    }
    let items: u64 = common::setting("SINGLETABLE_SWEEP_ITEMS", 8_000);
    let segments: u32 = common::setting("SINGLETABLE_SWEEP_SEGMENTS", 32);
    let concurrency: usize = common::setting("SINGLETABLE_SWEEP_CONCURRENCY", 64);
    let latency = common::latency();
    let mut points = Vec::new();
    for (modelled, flags) in [
        (
            true,
            vec![
                "--latency-ms".to_owned(),
                latency.base.as_millis().to_string(),
            ],
        ),
        (false, Vec::new()),
    ] {
        let proxy = ProxyProcess::start(&flags);
        // Set while no other thread runs: the runtime of the points is made after it.
        std::env::set_var("AWS_ENDPOINT_URL_DYNAMODB", &proxy.endpoint);
        let runtime = common::runtime();
        println!(
            "distributed sweep of {items} records, {segments} segments, {concurrency} writes in flight per worker, worker processes of the command line, {}",
            if modelled {
                format!("through the proxy with {:?} ± {:?} a request and DynamoDB's partition limits", latency.base, latency.jitter)
            } else {
                "through the proxy without latency (the engine's ceiling)".to_owned()
            }
        );
        println!(
            "{:>7} {:>8} {:>9} {:>6}",
            "workers", "seconds", "items/s", "vs 1"
        );
        let mut at_one = None;
        for workers in WORKERS {
            let elapsed = runtime.block_on(sweep(
                &proxy.endpoint,
                workers,
                items,
                (segments, concurrency),
            ));
            let rate = items as f64 / elapsed.as_secs_f64();
            let at_one = *at_one.get_or_insert(rate);
            println!(
                "{workers:>7} {:>8.2} {rate:>9.0} {:>5.2}×",
                elapsed.as_secs_f64(),
                rate / at_one
            );
            points.push((modelled, workers, rate, rate / at_one));
        }
        drop(runtime);
        eprintln!("proxy: {}", proxy.stop());
    }
    println!("latency,workers,items_per_second,vs_one_worker");
    for (modelled, workers, rate, ratio) in &points {
        let latency = if *modelled { "modelled" } else { "none" };
        println!("{latency},{workers},{rate:.0},{ratio:.2}");
    }
    let line = |modelled: bool| -> Vec<(f64, f64)> {
        points
            .iter()
            .filter(|point| point.0 == modelled)
            .map(|(_, workers, rate, _)| (*workers as f64, *rate))
            .collect()
    };
    let modelled = line(true);
    let linear = modelled
        .first()
        .map(|(_, one)| {
            WORKERS
                .map(|workers| (workers as f64, one * workers as f64))
                .to_vec()
        })
        .unwrap_or_default();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/plots/sweep_workers.svg"
    );
    plot::lines(
        path,
        "distributed sweep: worker processes of the command line",
        ("worker processes", "items per second"),
        &[
            ("8 ms ± 2 a request", modelled),
            ("no latency (the engine's ceiling)", line(false)),
            ("1 worker × workers", linear),
        ],
    )
    .expect("the plot");
    println!("plot: {path}");
    ExitCode::SUCCESS
}

/// One point: a fresh table of old records, swept by `workers` processes.
async fn sweep(
    endpoint: &str,
    workers: usize,
    items: u64,
    (segments, concurrency): (u32, usize),
) -> Duration {
    let db = testing::table::<Bulk>().await.expect("a table");
    write_old(&db, common::records(items), 16).await;
    let name = format!("bench-{workers}");
    let started = Instant::now();
    let running: Vec<Child> = (0..workers)
        .map(|worker| {
            Command::new(std::env::current_exe().expect("the bench's path"))
                .env(WORKER_TABLE, db.table_name())
                .env("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
                .args(["--json", "backfill", "--entity", "Record", "--worker"])
                .args(["--distributed", &name, "--worker-id", &format!("w{worker}")])
                .args(["--segments", &segments.to_string()])
                .args(["--concurrency", &concurrency.to_string()])
                .stdout(Stdio::piped())
                .spawn()
                .expect("a worker process")
        })
        .collect();
    let mut backfilled = 0;
    for worker in running {
        let output = worker.wait_with_output().expect("a worker's report");
        assert!(
            output.status.success(),
            "a worker failed: {}",
            output.status
        );
        let report: serde_json::Value =
            serde_json::from_slice(&output.stdout).expect("the worker's JSON report");
        backfilled += report["counts"]["backfilled"]
            .as_u64()
            .expect("a count of backfilled items");
    }
    let elapsed = started.elapsed();
    assert_eq!(backfilled, items, "every record backfilled once");
    assert_eq!(
        common::old_left::<Record>(&db).await,
        0,
        "no old record left"
    );
    elapsed
}
