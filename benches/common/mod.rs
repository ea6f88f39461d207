//! What the bulk, latency, rate, sweep and memory benches share: their table, their records
//! (about 200 bytes, one GSI, a partition key each), the version-1 items a sweep backfills, and
//! a `Db` whose requests go through the fault proxy.

// Each bench uses a part of this module.
#![allow(dead_code)]

use aws_sdk_dynamodb::types::{AttributeValue, PutRequest, WriteRequest};
use serde::{Deserialize, Serialize};
use singletable::{testing, Db, Entity, Table};
use singletable_fault::{self as fault, FaultPlan, FaultStats, Latency};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

#[derive(Table)]
#[dynamo(
    name = "bulk",
    pk = "PK",
    sk = "SK",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
pub struct Bulk;

/// Version 2 adds the GSI1 keys, which a sweep backfills into version 1's items.
#[derive(Entity, Serialize, Deserialize, Clone)]
#[dynamo(table = Bulk, schema_version = 2, pk = "ITEM#{id}", sk = "ITEM",
         gsi1pk = "GROUP#{group}", gsi1sk = "ITEM#{id}")]
pub struct Record {
    pub id: u64,
    pub group: u32,
    pub payload: String,
}

pub fn record(id: u64) -> Record {
    Record {
        id,
        group: (id % 97) as u32,
        payload: format!(
            "payload of record {id}, about a hundred bytes long to be typical of small items"
        ),
    }
}

pub fn records(count: u64) -> impl Iterator<Item = Record> {
    (0..count).map(record)
}

/// A fresh table, and a `Db` on it whose requests go through a proxy with `plan`.
pub async fn proxied_table(plan: FaultPlan) -> (testing::TestTable<Bulk>, Db<Bulk>, FaultStats) {
    let table = testing::table::<Bulk>().await.expect("a table");
    let (client, stats) = fault::client(plan).await.expect("the proxy");
    let db = Db::<Bulk>::new(client).with_table_name(table.table_name());
    (table, db, stats)
}

/// `item` as a `PutRequest` of a batch.
pub fn put_request(item: singletable::Item) -> WriteRequest {
    WriteRequest::builder()
        .put_request(
            PutRequest::builder()
                .set_item(Some(item))
                .build()
                .expect("an item"),
        )
        .build()
}

/// Sends `requests` in one `BatchWriteItem`, and again what comes back unprocessed.
pub async fn send_all<T: Table>(db: &Db<T>, mut requests: Vec<WriteRequest>) {
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

/// `record` as version 1 wrote it: no GSI1 keys.
pub fn old_item<E: Entity + Serialize>(record: &E) -> singletable::Item {
    let mut item = singletable::item::encode(record).expect("a record encodes");
    item.remove("GSI1PK");
    item.remove("GSI1SK");
    item.insert("_sv".to_owned(), AttributeValue::N("1".to_owned()));
    item
}

/// Writes `records` as version 1 wrote them, for a sweep to backfill, 25 to a request and
/// `concurrency` requests at a time.
pub async fn write_old<T: Table, E: Entity<Table = T> + Serialize>(
    db: &Db<T>,
    records: impl Iterator<Item = E>,
    concurrency: usize,
) {
    use futures::StreamExt;
    futures::stream::iter(records)
        .chunks(25)
        .for_each_concurrent(concurrency, |chunk| {
            send_all(
                db,
                chunk
                    .iter()
                    .map(|record| put_request(old_item(record)))
                    .collect(),
            )
        })
        .await;
}

/// How many items of `E` a dry run of a sweep still finds below its schema version: none,
/// after a sweep that lost no write.
pub async fn old_left<E: Entity>(db: &Db<E::Table>) -> u64 {
    let dry_run = db.admin().sweep::<E>().dry_run().send().await;
    dry_run.expect("the dry run").counts.old
}

/// The benches' runtime: four worker threads, timers and sockets.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// `SINGLETABLE_…` settings of the benches: the number in the variable, or `default`.
pub fn setting<N: std::str::FromStr>(variable: &str, default: N) -> N {
    std::env::var(variable)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// The modelled round trip: `Latency::IN_REGION` (8 ms ± 2), or `SINGLETABLE_LATENCY_MS`
/// milliseconds with a quarter of it as jitter.
pub fn latency() -> Latency {
    match std::env::var("SINGLETABLE_LATENCY_MS")
        .ok()
        .and_then(|value| value.parse::<u64>().ok())
    {
        Some(millis) => Latency::with_mean(Duration::from_millis(millis)),
        None => Latency::IN_REGION,
    }
}

/// A `fault-proxy` process with the engine inside it.
pub struct ProxyProcess {
    process: Child,
    pub endpoint: String,
}

impl ProxyProcess {
    /// Builds the binary if needed and starts it, injecting no faults, with DynamoDB's
    /// partition limits and `flags`.
    pub fn start(flags: &[String]) -> Self {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let built = Command::new(cargo)
            .args(["build", "--release", "-q", "-p", "singletable-fault"])
            .args(["--bin", "fault-proxy"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo");
        assert!(built.success(), "building fault-proxy");
        let binary =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/fault-proxy");
        let mut process = Command::new(binary)
            // Its engine is its own, not the endpoint an earlier proxy left in the variable.
            .env_remove("AWS_ENDPOINT_URL_DYNAMODB")
            .args(["--rate", "0", "--partition-limits"])
            .args(flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the fault-proxy process");
        // Both lines are read before the pipe closes: a write to a closed pipe ends the proxy.
        let lines: Vec<String> = BufReader::new(process.stdout.take().expect("its output"))
            .lines()
            .take(2)
            .collect::<Result<_, _>>()
            .expect("its endpoints");
        let endpoint = lines
            .first()
            .and_then(|line| line.strip_prefix("AWS_ENDPOINT_URL_DYNAMODB="))
            .expect("the endpoint line")
            .to_owned();
        ProxyProcess { process, endpoint }
    }

    /// Interrupts the proxy and returns the report it prints: requests, faults, throttled keys.
    pub fn stop(self) -> String {
        let pid = self.process.id().to_string();
        let _ = Command::new("kill").args(["-INT", &pid]).status();
        let output = self.process.wait_with_output().expect("the proxy's report");
        String::from_utf8_lossy(&output.stderr).trim().to_owned()
    }
}
