//! Index lag: global secondary indexes and eventually consistent reads served from a replica
//! that follows the table a seeded delay behind, as DynamoDB serves them. See [`IndexLag`].

mod copy;
mod touched;

use crate::http::Message;
use crate::lock::lock;
use copy::{call, copy_table, read_now, shape};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{watch, Notify};
use tokio::time::Instant;
pub(crate) use touched::{may_lag, reshapes, touched, writes};

/// How far behind its table a global secondary index, and an eventually consistent read,
/// may be: each write reaches them after a delay drawn between `shortest` and `longest`.
///
/// DynamoDB updates a global secondary index asynchronously, and answers an eventually
/// consistent read from any of an item's three copies, which may not have the latest write
/// yet. Its documentation gives no bound ("usually within a second"); the local engines have
/// no lag at all, so a read-after-write through an index passes every local test and fails
/// on AWS now and then. With an [`IndexLag`] in the plan
/// ([`FaultPlan::with_index_lag`](crate::FaultPlan::with_index_lag)), the proxy keeps a second
/// engine as a replica: after each write it reads the items the write touched from the
/// engine and applies them to the replica once their delay has passed, in order per item
/// (a later write of an item never reaches the replica before an earlier one), and it serves
/// every read DynamoDB may serve from the past from the replica. So such a read may miss an
/// item written within the last `longest`, or see its older version, and never sees a
/// state older than that. Strongly consistent reads, transactions' reads and every write
/// see the present.
///
/// The replica is the embedded engine (dynoxide), whatever the engine in front of which the
/// proxy runs. A table is copied to it when the proxy sees it made or reshaped
/// (`CreateTable`, `UpdateTable`, `UpdateTimeToLive`), and a table made around the proxy
/// when a request first touches it: a copy brings the replica to the present. Writes sent
/// around the proxy never reach the replica. Expired items leave the
/// replica by its own time-to-live sweep, within a second of the engine's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexLag {
    /// The shortest delay a write gets.
    pub shortest: Duration,
    /// The longest delay a write gets: no lagging read is older than this.
    pub longest: Duration,
}

impl IndexLag {
    /// Delays between `shortest` and `longest` (swapped if given the other way round).
    pub const fn new(shortest: Duration, longest: Duration) -> Self {
        if shortest.as_nanos() > longest.as_nanos() {
            IndexLag {
                shortest: longest,
                longest: shortest,
            }
        } else {
            IndexLag { shortest, longest }
        }
    }

    /// Delays between none and `longest`.
    pub const fn up_to(longest: Duration) -> Self {
        IndexLag::new(Duration::ZERO, longest)
    }

    /// One write's delay, uniform between the shortest and the longest, to the microsecond.
    fn draw(&self, schedule: &mut fastrand::Rng) -> Duration {
        let micros = crate::latency::duration_micros;
        let (shortest, longest) = (micros(self.shortest), micros(self.longest));
        Duration::from_micros(schedule.u64(shortest..=longest.max(shortest)))
    }
}

/// How often the replica deletes expired items, as the local engine does.
const TTL_SWEEP_INTERVAL: Duration = Duration::from_secs(1);

/// Why the replica could not start.
#[derive(Debug)]
pub(crate) struct ReplicaError(pub(crate) String);

/// The replica and what it still has to apply.
#[derive(Debug)]
pub(crate) struct Replica {
    lag: IndexLag,
    /// `host:port` of the engine the proxy is in front of.
    engine: String,
    /// `host:port` of the replica.
    endpoint: String,
    schedule: Mutex<fastrand::Rng>,
    /// The headers of the latest client request, for the requests the replica sends.
    headers: Mutex<Vec<(String, String)>>,
    /// The tables copied to the replica, by name. Locked before `reads`.
    tables: tokio::sync::Mutex<HashMap<String, Copied>>,
    /// Numbers the replica's reads of the engine (snapshots and copies) in the order they
    /// were made; held while one is made and queued, so that order is the queue's order.
    reads: tokio::sync::Mutex<u64>,
    queue: Mutex<Queue>,
    /// Wakes the applier when a change is queued.
    queued: Notify,
    /// Changes queued and not yet applied.
    pending: watch::Sender<usize>,
}

/// A table on the replica.
#[derive(Debug, Clone)]
struct Copied {
    /// Its key attributes.
    keys: Vec<String>,
    /// The number of the read that copied it: changes read before are older than the copy.
    at: u64,
}

/// Changes waiting for their time, in the order they are due.
#[derive(Debug, Default)]
struct Queue {
    due: BTreeMap<(Instant, u64), Change>,
    /// When each item's latest queued change is due: a later change never comes sooner.
    latest: HashMap<String, Instant>,
    /// Breaks ties between changes due at the same instant, in the order they were queued.
    counter: u64,
}

/// An item as the engine held it after a write, to be applied to the replica.
#[derive(Debug)]
struct Change {
    /// The number of the read that saw it.
    read: u64,
    table: String,
    key: Map<String, Value>,
    /// The item, or `None` where the write left none.
    item: Option<Map<String, Value>>,
    /// The item's name in [`Queue::latest`].
    id: String,
}

impl Replica {
    /// Starts an empty replica (the embedded engine, on the current tokio runtime) that
    /// follows `engine` with `lag`, delays drawn from `seed`.
    pub(crate) async fn start(
        lag: IndexLag,
        seed: u64,
        engine: String,
    ) -> Result<Arc<Replica>, ReplicaError> {
        let database = dynoxide::Database::memory()
            .map_err(|e| ReplicaError(format!("in-memory database: {e}")))?;
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .map_err(|e| ReplicaError(format!("binding a loopback port: {e}")))?;
        let endpoint = listener
            .local_addr()
            .map_err(|e| ReplicaError(format!("reading its port: {e}")))?
            .to_string();
        let sweeper = database.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(TTL_SWEEP_INTERVAL).await;
                let database = sweeper.clone();
                // A failed sweep is tried again at the next tick.
                let _ = tokio::task::spawn_blocking(move || database.sweep_ttl()).await;
            }
        });
        tokio::spawn(dynoxide::server::serve_with_shutdown(
            listener,
            database,
            std::future::pending(),
        ));
        let replica = Arc::new(Replica {
            lag,
            engine,
            endpoint,
            schedule: Mutex::new(fastrand::Rng::with_seed(seed)),
            headers: Mutex::new(Vec::new()),
            tables: tokio::sync::Mutex::new(HashMap::new()),
            reads: tokio::sync::Mutex::new(0),
            queue: Mutex::new(Queue::default()),
            queued: Notify::new(),
            pending: watch::channel(0).0,
        });
        tokio::spawn(Arc::clone(&replica).apply_when_due());
        Ok(replica)
    }

    /// Where a request goes: the replica for a read DynamoDB may answer from the past of a
    /// table it holds (copied now if need be), the engine for everything else.
    pub(crate) async fn upstream<'a>(
        &'a self,
        engine: &'a str,
        operation: &str,
        request: &Message,
    ) -> &'a str {
        let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
            return engine;
        };
        if !may_lag(operation, &body) {
            return engine;
        }
        self.remember_headers(request);
        for table in crate::table_keys::table_names(operation, &body) {
            if self.keys_of(&table).await.is_none() {
                // Not on the engine either: its answer (an error) is the one to give.
                return engine;
            }
        }
        &self.endpoint
    }

    /// After the engine answered `request`: reads the items a successful write touched, and
    /// queues them for the replica after a drawn delay; forgets a table that was reshaped.
    pub(crate) async fn follow(&self, operation: &str, request: &Message, response: &Message) {
        if response.status() != Some(200) {
            return;
        }
        let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
            return;
        };
        if reshapes(operation) {
            if let Some(name) = body.get("TableName").and_then(Value::as_str) {
                self.tables.lock().await.remove(name);
                // Copied now, so that the writes that follow reach it late; a table the
                // proxy never saw made is copied when first used, its latest writes in it.
                if operation != "DeleteTable" {
                    self.remember_headers(request);
                    let _ = self.keys_of(name).await;
                }
            }
            return;
        }
        if !writes(operation) {
            return;
        }
        self.remember_headers(request);
        let mut by_table: BTreeMap<String, Vec<touched::Touched>> = BTreeMap::new();
        for (table, item) in touched(operation, &body) {
            by_table.entry(table).or_default().push(item);
        }
        for (table, items) in by_table {
            let Some(keys) = self.keys_of(&table).await else {
                continue;
            };
            let item_keys: Vec<Map<String, Value>> =
                items.iter().filter_map(|item| item.key(&keys)).collect();
            self.snapshot(&table, &keys, item_keys).await;
        }
    }

    /// Waits until every change queued so far has reached the replica.
    pub(crate) async fn caught_up(&self) {
        let mut pending = self.pending.subscribe();
        // The sender lives as long as the replica, which outlives this borrow.
        let _ = pending.wait_for(|count| *count == 0).await;
    }

    /// The key attributes of `table`, copying it to the replica first if it is not there;
    /// `None` when the engine cannot describe it.
    async fn keys_of(&self, table: &str) -> Option<Vec<String>> {
        let mut tables = self.tables.lock().await;
        if let Some(copied) = tables.get(table) {
            return Some(copied.keys.clone());
        }
        let headers = lock(&self.headers).clone();
        let named = json!({ "TableName": table });
        let described = call(&self.engine, &headers, "DescribeTable", &named)
            .await
            .ok()?;
        let shape = shape(described.get("Table")?)?;
        // Numbered among the snapshots: the changes read before the copy are in it.
        let mut reads = self.reads.lock().await;
        *reads += 1;
        let at = *reads;
        copy_table(&self.engine, &self.endpoint, &headers, &shape)
            .await
            .ok()?;
        drop(reads);
        let keys = shape.keys;
        tables.insert(
            table.to_owned(),
            Copied {
                keys: keys.clone(),
                at,
            },
        );
        Some(keys)
    }

    /// Reads the items of `item_keys` as the engine holds them now and queues them.
    async fn snapshot(&self, table: &str, keys: &[String], item_keys: Vec<Map<String, Value>>) {
        if item_keys.is_empty() {
            return;
        }
        let headers = lock(&self.headers).clone();
        let mut reads = self.reads.lock().await;
        let Ok(items) = read_now(&self.engine, &headers, table, keys, &item_keys).await else {
            // The engine would not say: copy the table again when next asked.
            drop(reads);
            self.tables.lock().await.remove(table);
            return;
        };
        *reads += 1;
        let read = *reads;
        let delay = self.lag.draw(&mut lock(&self.schedule));
        let due = Instant::now() + delay;
        let count = item_keys.len();
        {
            let mut queue = lock(&self.queue);
            for (key, item) in item_keys.into_iter().zip(items) {
                let id = item_id(table, keys, &key);
                let due = queue.latest.get(&id).map_or(due, |latest| due.max(*latest));
                queue.latest.insert(id.clone(), due);
                queue.counter += 1;
                let order = queue.counter;
                queue.due.insert(
                    (due, order),
                    Change {
                        read,
                        table: table.to_owned(),
                        key,
                        item,
                        id,
                    },
                );
            }
        }
        self.pending.send_modify(|pending| *pending += count);
        drop(reads);
        self.queued.notify_one();
    }

    /// The applier: each change once it is due, in order.
    async fn apply_when_due(self: Arc<Self>) {
        loop {
            let next = lock(&self.queue).due.keys().next().copied();
            let Some((due, order)) = next else {
                self.queued.notified().await;
                continue;
            };
            if due > Instant::now() {
                tokio::select! {
                    () = tokio::time::sleep_until(due) => {}
                    () = self.queued.notified() => {}
                }
                continue;
            }
            let change = {
                let mut queue = lock(&self.queue);
                let change = queue.due.remove(&(due, order));
                if let Some(change) = &change {
                    if queue.latest.get(&change.id) == Some(&due) {
                        queue.latest.remove(&change.id);
                    }
                }
                change
            };
            if let Some(change) = change {
                self.apply(change).await;
                self.pending
                    .send_modify(|pending| *pending = pending.saturating_sub(1));
            }
        }
    }

    /// Writes one change to the replica, unless a copy of its table made since holds it.
    async fn apply(&self, change: Change) {
        let copied_at = self.tables.lock().await.get(&change.table).map(|t| t.at);
        match copied_at {
            Some(at) if at < change.read => {}
            // Copied since (the copy is newer), or to be copied when next touched.
            _ => return,
        }
        let headers = lock(&self.headers).clone();
        let applied = match change.item {
            Some(item) => {
                let put = json!({ "TableName": change.table, "Item": item });
                call(&self.endpoint, &headers, "PutItem", &put).await
            }
            None => {
                let delete = json!({ "TableName": change.table, "Key": change.key });
                call(&self.endpoint, &headers, "DeleteItem", &delete).await
            }
        };
        if applied.is_err() {
            // The replica's table is not the engine's any more: copy it again.
            self.tables.lock().await.remove(&change.table);
        }
    }

    fn remember_headers(&self, request: &Message) {
        let mut headers = lock(&self.headers);
        headers.clone_from(&request.headers);
    }
}

/// An item's name among the queued changes: its table and key values.
fn item_id(table: &str, keys: &[String], key: &Map<String, Value>) -> String {
    let mut id = table.to_owned();
    for name in keys {
        id.push('\0');
        id.push_str(&key.get(name).map(Value::to_string).unwrap_or_default());
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_stay_between_the_bounds_given_either_way() {
        let lag = IndexLag::new(Duration::from_millis(300), Duration::from_millis(100));
        assert_eq!(
            lag,
            IndexLag::new(Duration::from_millis(100), Duration::from_millis(300))
        );
        let mut schedule = fastrand::Rng::with_seed(5);
        let delays: Vec<Duration> = (0..1_000).map(|_| lag.draw(&mut schedule)).collect();
        assert!(delays
            .iter()
            .all(|delay| (lag.shortest..=lag.longest).contains(delay)));
        assert!(delays
            .iter()
            .any(|delay| *delay < Duration::from_millis(110)));
        assert!(delays
            .iter()
            .any(|delay| *delay > Duration::from_millis(290)));
        let none = IndexLag::up_to(Duration::ZERO);
        assert_eq!(none.draw(&mut schedule), Duration::ZERO);
    }
}
