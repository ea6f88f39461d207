//! DynamoDB's throughput limit per partition, modelled per partition key value: the rules
//! are on [`PartitionLimits`].

use super::{json_response, lock, send_upstream, Message};
use serde_json::{json, Map, Value};
use singletable_runtime::item::value_size;
use singletable_runtime::wire;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::OnceCell;

/// The throughput one partition key value may use, per second, which the proxy enforces when
/// a plan has [`FaultPlan::with_partition_limits`](crate::FaultPlan::with_partition_limits).
///
/// # What DynamoDB documents
///
/// "By default, every partition in a DynamoDB table is designed to deliver a maximum capacity
/// of 3,000 read units per second and 1,000 write units per second. One read unit represents
/// one strongly consistent read operation per second, or two eventually consistent read
/// operations per second, for an item up to 4 KB in size. One write unit represents one write
/// operation per second for an item up to 1 KB in size." ([Best practices for designing and
/// using partition keys effectively](https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html)).
/// Adaptive capacity may give a frequently accessed item a partition of its own, and then
/// "DynamoDB can deliver throughput up to the partition maximum of 3,000 RCUs and 1,000 WCUs
/// to that single item's primary key" ([Burst and adaptive capacity](https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/burst-adaptive-capacity.html)):
/// one partition key value never gets more, in on-demand and in provisioned mode alike
/// ([Key range throughput exceeded](https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/throttling-key-range-limit-exceeded-mitigation.html)).
/// Transactions cost twice: two write units per 1 KB written, two read units per 4 KB read
/// ([Capacity management for transactions](https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling)).
/// A request refused for a partition's limit fails with
/// `ProvisionedThroughputExceededException` (HTTP 400), whose `ThrottlingReasons` name it
/// `TableWriteKeyRangeThroughputExceeded` (or `TableRead…`, `IndexRead…`) and give the table's
/// or the index's ARN ([`ThrottlingReason`](https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_ThrottlingReason.html)).
///
/// # What the model does
///
/// - **A token bucket per partition key value**, one for writes and one for reads, for each
///   table (and, for reads, each global secondary index a query names). A bucket refills at the
///   limit's rate and holds at most one second of it, so a quiet key can absorb a burst of one
///   second's units and no more: DynamoDB's burst capacity comes from the table's unused
///   throughput, but the partition's own limit still caps it. A request charged more than one
///   second's units on one key (a large transaction) waits for a full bucket and overdraws
///   it, rather than being refused for ever.
/// - **Which attribute is the partition key** the proxy learns from the engine, with one
///   `DescribeTable` per table (sent with the client's headers; no local engine checks
///   signatures), and forgets when a `CreateTable` or `DeleteTable` for that name goes
///   through it. Requests on a table it cannot describe are not modelled.
/// - **Writes** are charged before the engine sees them, from what the request carries:
///   `PutItem` by the item's size; `UpdateItem` by the key's size plus the values the update
///   sets; `DeleteItem` and a transaction's `ConditionCheck` by the key's size; each rounded up
///   to 1 KB, at least one unit, twice in `TransactWriteItems`. DynamoDB charges a put, an
///   update or a delete by the larger of the item before and after, which only the engine
///   knows: when the engine's answer reports it (a client that asked for
///   `ReturnConsumedCapacity: INDEXES`, whose `Table` units are the table's own), the rest is
///   taken then, as for reads, and may overdraw the bucket; otherwise the model's charge is a
///   lower bound, so it never throttles a write DynamoDB would let through at the same rate.
/// - **Reads** (`GetItem`, `Query`, `BatchGetItem`, `TransactGetItems`) take their least
///   possible charge when they arrive (one unit per key, half for an eventually consistent
///   read, twice in a transaction) and the rest when the engine's answer shows the items' sizes,
///   rounded up to 4 KB (per item, and over a query's items together, as DynamoDB does). That
///   rest may overdraw the bucket, by at most one second's units, which delays the key's next
///   reads. A query is charged for the items it returns, which a filter or a projection makes
///   smaller than what DynamoDB reads and charges. A `Scan` spans partitions and is not
///   modelled, nor are writes to global secondary indexes.
///
/// # How the proxy refuses
///
/// - A single-item request, or a `BatchWriteItem` or `BatchGetItem` of which nothing fits,
///   fails with HTTP 400 `ProvisionedThroughputExceededException` and its throttling reasons
///   (never `ThrottlingException`, which the model leaves to the fault schedule).
///   DynamoDB documents that a batch fails so only when none of its items can be processed;
///   otherwise the items over their key's limit come back in `UnprocessedItems` (or
///   `UnprocessedKeys`) and the rest is forwarded.
/// - A transaction is all or nothing: when one of its items does not fit, none is charged and
///   it fails with HTTP 400 `TransactionCanceledException`, whose reason for that item is
///   `ThrottlingError` on an on-demand table and `ProvisionedThroughputExceeded` on a
///   provisioned one (the codes the `TransactWriteItems` reference gives), `None` for the others.
///
/// Every refused item is counted against its key in
/// [`FaultReport::throttled_writes`](crate::FaultReport::throttled_writes) and
/// [`throttled_reads`](crate::FaultReport::throttled_reads).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PartitionLimits {
    /// Write units per second: one unit writes up to 1 KB.
    pub write_units_per_second: f64,
    /// Read units per second: one unit reads up to 4 KB strongly consistent, or twice that
    /// eventually consistent.
    pub read_units_per_second: f64,
}

impl PartitionLimits {
    /// DynamoDB's: 1,000 write units and 3,000 read units per second per partition.
    pub const DYNAMODB: PartitionLimits = PartitionLimits::new(1_000.0, 3_000.0);

    /// Other limits, for a test that wants throttling sooner.
    pub const fn new(write_units_per_second: f64, read_units_per_second: f64) -> Self {
        PartitionLimits {
            write_units_per_second,
            read_units_per_second,
        }
    }

    fn per_second(&self, access: Access) -> f64 {
        match access {
            Access::Read => self.read_units_per_second,
            Access::Write => self.write_units_per_second,
        }
    }
}

/// A partition key value of a table, or of one of its global secondary indexes: what the
/// model throttles.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PartitionKey {
    /// The table's name.
    pub table: String,
    /// The index a query read, if it read one.
    pub index: Option<String>,
    /// The partition key's value as text: a string as it is, a number as DynamoDB's text of
    /// it, a binary in base64.
    pub value: String,
}

impl fmt::Display for PartitionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.index {
            Some(index) => write!(f, "{}/{index} {:?}", self.table, self.value),
            None => write!(f, "{} {:?}", self.table, self.value),
        }
    }
}

/// Reads or writes: each has its own limit and bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Access {
    Read,
    Write,
}

/// What the proxy learned of a table from `DescribeTable`.
#[derive(Debug, Clone)]
struct TableKeys {
    /// The table's partition key attribute.
    partition_key: String,
    /// Each global secondary index's partition key attribute.
    indexes: HashMap<String, String>,
    /// Billed per request: a throttled transaction item's code is then `ThrottlingError`.
    on_demand: bool,
}

impl TableKeys {
    fn attribute(&self, index: Option<&str>) -> Option<&str> {
        match index {
            Some(index) => self.indexes.get(index).map(String::as_str),
            None => Some(&self.partition_key),
        }
    }
}

#[derive(Debug)]
struct Bucket {
    units: f64,
    refilled: Instant,
}

/// One item's charge on its key.
#[derive(Debug, Clone)]
struct Charge {
    key: PartitionKey,
    units: f64,
}

/// Whether a request goes to the engine, and in what shape.
#[derive(Debug)]
pub(crate) enum Admission {
    /// As it came: within its keys' limits (now charged), or not modelled.
    Whole,
    /// Not at all: answer this.
    Refused {
        response: Message,
        throttled: Vec<(Access, PartitionKey)>,
    },
    /// A batch of which only this body goes to the engine; the rest is reported unprocessed
    /// (`unprocessed` is in the shape of `UnprocessedItems` or `UnprocessedKeys`).
    Part {
        body: Vec<u8>,
        unprocessed: Map<String, Value>,
        throttled: Vec<(Access, PartitionKey)>,
    },
}

/// The partition model of one proxy: its limits, its buckets and what it knows of tables.
#[derive(Debug)]
pub(crate) struct CapacityModel {
    limits: PartitionLimits,
    /// For the ARNs in throttling reasons.
    region: String,
    buckets: Mutex<HashMap<(Access, PartitionKey), Bucket>>,
    tables: Mutex<HashMap<String, Arc<OnceCell<TableKeys>>>>,
}

/// A table the engine could not describe (it does not exist, say).
struct Undescribed;

impl CapacityModel {
    pub(crate) fn new(limits: PartitionLimits, region: String) -> Self {
        CapacityModel {
            limits,
            region,
            buckets: Mutex::new(HashMap::new()),
            tables: Mutex::new(HashMap::new()),
        }
    }

    /// Charges `request`'s writes, or the least charge of its reads, and says whether and
    /// how it goes to the engine.
    pub(crate) async fn admit(
        &self,
        upstream: &str,
        operation: &str,
        request: &Message,
    ) -> Admission {
        if matches!(operation, "CreateTable" | "DeleteTable") {
            self.forget(request);
            return Admission::Whole;
        }
        if !matches!(
            operation,
            "PutItem"
                | "UpdateItem"
                | "DeleteItem"
                | "GetItem"
                | "Query"
                | "BatchWriteItem"
                | "BatchGetItem"
                | "TransactWriteItems"
                | "TransactGetItems"
        ) {
            return Admission::Whole;
        }
        let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
            return Admission::Whole;
        };
        let tables = self
            .describe_all(upstream, request, table_names(operation, &body))
            .await;
        match operation {
            "BatchWriteItem" | "BatchGetItem" => self.admit_batch(operation, body, &tables),
            "TransactWriteItems" | "TransactGetItems" => {
                self.admit_transaction(operation, &body, &tables)
            }
            _ => self.admit_single(operation, &body, &tables),
        }
    }

    /// After the engine answered: the rest of a read's charge, from the items' sizes, or of a
    /// single write's, from the table's units the engine reported.
    pub(crate) fn charge_rest(&self, operation: &str, request: &Message, response: &Message) {
        let writes = matches!(operation, "PutItem" | "UpdateItem" | "DeleteItem");
        if response.status() != Some(200)
            || !(writes
                || matches!(
                    operation,
                    "GetItem" | "Query" | "BatchGetItem" | "TransactGetItems"
                ))
        {
            return;
        }
        let (Ok(body), Ok(answer)) = (
            serde_json::from_slice::<Value>(&request.body),
            serde_json::from_slice::<Value>(&response.body),
        ) else {
            return;
        };
        let tables = self.known_tables();
        if writes {
            if let Some(charge) = reported_write_rest(operation, &body, &answer, &tables) {
                self.overdraw(Access::Write, &charge);
            }
            return;
        }
        for charge in read_charges(operation, &body, &answer, &tables) {
            self.overdraw(Access::Read, &charge);
        }
    }

    fn admit_single(
        &self,
        operation: &str,
        body: &Value,
        tables: &HashMap<String, TableKeys>,
    ) -> Admission {
        let Some(table) = body.get("TableName").and_then(Value::as_str) else {
            return Admission::Whole;
        };
        let Some(keys) = tables.get(table) else {
            return Admission::Whole;
        };
        let (access, charge) = match operation {
            "GetItem" => {
                let Some(key) = body
                    .get("Key")
                    .and_then(|key| partition_key(keys, table, None, key))
                else {
                    return Admission::Whole;
                };
                let units = read_units(0, consistent(body), 1.0);
                (Access::Read, Charge { key, units })
            }
            "Query" => {
                let index = body.get("IndexName").and_then(Value::as_str);
                let Some(key) = queried_key(keys, table, index, body) else {
                    return Admission::Whole;
                };
                let units = read_units(0, consistent(body), 1.0);
                (Access::Read, Charge { key, units })
            }
            _ => {
                let Some(charge) = write_charge(keys, table, operation, body, 1.0) else {
                    return Admission::Whole;
                };
                (Access::Write, charge)
            }
        };
        match self.take_all(access, std::slice::from_ref(&charge)) {
            Ok(()) => Admission::Whole,
            Err(_) => {
                let throttled = vec![(access, charge.key)];
                Admission::Refused {
                    response: self.throughput_exceeded(&throttled),
                    throttled,
                }
            }
        }
    }

    /// Each item of a batch on its own: those over their key's limit are left unprocessed.
    fn admit_batch(
        &self,
        operation: &str,
        mut body: Value,
        tables: &HashMap<String, TableKeys>,
    ) -> Admission {
        let reads = operation == "BatchGetItem";
        let access = if reads { Access::Read } else { Access::Write };
        let Some(requested) = body.get_mut("RequestItems").and_then(Value::as_object_mut) else {
            return Admission::Whole;
        };
        let mut unprocessed = Map::new();
        let mut throttled = Vec::new();
        for (table, entry) in requested.iter_mut() {
            let Some(keys) = tables.get(table) else {
                continue;
            };
            let consistent_read = consistent(entry);
            let list = if reads {
                entry.get_mut("Keys").and_then(Value::as_array_mut)
            } else {
                entry.as_array_mut()
            };
            let Some(list) = list else {
                continue;
            };
            let mut kept = Vec::new();
            let mut moved = Vec::new();
            for request in list.drain(..) {
                let charge = if reads {
                    partition_key(keys, table, None, &request).map(|key| Charge {
                        key,
                        units: read_units(0, consistent_read, 1.0),
                    })
                } else {
                    batch_write_charge(keys, table, &request)
                };
                match charge {
                    Some(charge)
                        if self
                            .take_all(access, std::slice::from_ref(&charge))
                            .is_err() =>
                    {
                        throttled.push((access, charge.key));
                        moved.push(request);
                    }
                    _ => kept.push(request),
                }
            }
            *list = kept;
            if !moved.is_empty() {
                let part = if reads {
                    // The table's `KeysAndAttributes` (projection, consistency) with these keys.
                    let mut part = entry.clone();
                    if let Some(object) = part.as_object_mut() {
                        object.insert("Keys".to_owned(), Value::Array(moved));
                    }
                    part
                } else {
                    Value::Array(moved)
                };
                unprocessed.insert(table.clone(), part);
            }
        }
        if throttled.is_empty() {
            return Admission::Whole;
        }
        requested.retain(|_, entry| {
            let list = if reads {
                entry.get("Keys").and_then(Value::as_array)
            } else {
                entry.as_array()
            };
            list.is_some_and(|list| !list.is_empty())
        });
        if requested.is_empty() {
            return Admission::Refused {
                response: self.throughput_exceeded(&throttled),
                throttled,
            };
        }
        Admission::Part {
            body: body.to_string().into_bytes(),
            unprocessed,
            throttled,
        }
    }

    /// All or nothing: charged whole, or cancelled with a reason per item.
    fn admit_transaction(
        &self,
        operation: &str,
        body: &Value,
        tables: &HashMap<String, TableKeys>,
    ) -> Admission {
        let reads = operation == "TransactGetItems";
        let access = if reads { Access::Read } else { Access::Write };
        let Some(items) = body.get("TransactItems").and_then(Value::as_array) else {
            return Admission::Whole;
        };
        // Charges with their item's position; items on tables not described are free.
        let mut charges = Vec::new();
        let mut positions = Vec::new();
        for (position, item) in items.iter().enumerate() {
            let Some((action, request)) = item.as_object().and_then(|item| item.iter().next())
            else {
                continue;
            };
            let Some(table) = request.get("TableName").and_then(Value::as_str) else {
                continue;
            };
            let Some(keys) = tables.get(table) else {
                continue;
            };
            let charge = if reads {
                request
                    .get("Key")
                    .and_then(|key| partition_key(keys, table, None, key))
                    .map(|key| Charge {
                        key,
                        units: read_units(0, true, 2.0),
                    })
            } else {
                let operation = match action.as_str() {
                    "Put" => "PutItem",
                    "Update" => "UpdateItem",
                    // A condition check is charged as a write of its key, as a delete is.
                    _ => "DeleteItem",
                };
                write_charge(keys, table, operation, request, 2.0)
            };
            if let Some(charge) = charge {
                charges.push(charge);
                positions.push(position);
            }
        }
        let Err(refused) = self.take_all(access, &charges) else {
            return Admission::Whole;
        };
        let refused_positions: Vec<usize> = refused
            .iter()
            .filter_map(|index| positions.get(*index).copied())
            .collect();
        let on_demand = refused
            .first()
            .and_then(|index| charges.get(*index))
            .and_then(|charge| tables.get(&charge.key.table))
            .is_none_or(|keys| keys.on_demand);
        let throttled = refused
            .iter()
            .filter_map(|index| charges.get(*index))
            .map(|charge| (access, charge.key.clone()))
            .collect();
        Admission::Refused {
            response: transaction_cancelled(items.len(), &refused_positions, on_demand),
            throttled,
        }
    }

    /// Takes every charge, or none when one of their keys lacks room; the positions of the
    /// charges whose key lacked it otherwise.
    fn take_all(&self, access: Access, charges: &[Charge]) -> Result<(), Vec<usize>> {
        let per_second = self.limits.per_second(access);
        let now = Instant::now();
        let mut buckets = lock(&self.buckets);
        let mut wanted: HashMap<&PartitionKey, f64> = HashMap::new();
        for charge in charges {
            *wanted.entry(&charge.key).or_insert(0.0) += charge.units;
        }
        let short: Vec<&PartitionKey> = wanted
            .iter()
            .filter(|(key, units)| {
                let bucket = refilled(&mut buckets, access, key, per_second, now);
                // A charge above one second's units waits for a full bucket, then overdraws
                // it: it is not refused for ever.
                bucket.units < units.min(per_second)
            })
            .map(|(key, _)| *key)
            .collect();
        if !short.is_empty() {
            return Err(charges
                .iter()
                .enumerate()
                .filter(|(_, charge)| short.contains(&&charge.key))
                .map(|(index, _)| index)
                .collect());
        }
        for (key, units) in wanted {
            refilled(&mut buckets, access, key, per_second, now).units -= units;
        }
        Ok(())
    }

    /// Takes a charge's rest, which may leave its bucket below zero, by one second's units at
    /// most.
    fn overdraw(&self, access: Access, charge: &Charge) {
        let per_second = self.limits.per_second(access);
        let mut buckets = lock(&self.buckets);
        let bucket = refilled(
            &mut buckets,
            access,
            &charge.key,
            per_second,
            Instant::now(),
        );
        bucket.units = (bucket.units - charge.units).max(-per_second);
    }

    fn forget(&self, request: &Message) {
        let Some(table) = serde_json::from_slice::<Value>(&request.body)
            .ok()
            .and_then(|body| Some(body.get("TableName")?.as_str()?.to_owned()))
        else {
            return;
        };
        lock(&self.tables).remove(&table);
        lock(&self.buckets).retain(|(_, key), _| key.table != table);
    }

    fn known_tables(&self) -> HashMap<String, TableKeys> {
        lock(&self.tables)
            .iter()
            .filter_map(|(name, cell)| Some((name.clone(), cell.get()?.clone())))
            .collect()
    }

    async fn describe_all(
        &self,
        upstream: &str,
        template: &Message,
        names: Vec<String>,
    ) -> HashMap<String, TableKeys> {
        let mut tables = HashMap::new();
        for name in names {
            let cell = lock(&self.tables).entry(name.clone()).or_default().clone();
            let described = cell
                .get_or_try_init(|| describe(upstream, template, &name))
                .await;
            if let Ok(keys) = described {
                tables.insert(name, keys.clone());
            }
        }
        tables
    }

    /// `ProvisionedThroughputExceededException` naming each throttled key's table or index.
    fn throughput_exceeded(&self, throttled: &[(Access, PartitionKey)]) -> Message {
        let mut reasons: Vec<Value> = Vec::new();
        for (access, key) in throttled {
            let reason = json!({
                "reason": format!(
                    "{}{}KeyRangeThroughputExceeded",
                    if key.index.is_some() { "Index" } else { "Table" },
                    match access {
                        Access::Read => "Read",
                        Access::Write => "Write",
                    }
                ),
                "resource": self.arn(key),
            });
            if !reasons.contains(&reason) {
                reasons.push(reason);
            }
        }
        json_response(
            400,
            "Bad Request",
            &json!({
                "__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
                "message": "The request rate for a partition key exceeds its partition's throughput limit (modelled by singletable-fault)",
                "ThrottlingReasons": reasons,
            }),
        )
    }

    fn arn(&self, key: &PartitionKey) -> String {
        let table = format!(
            "arn:aws:dynamodb:{}:000000000000:table/{}",
            self.region, key.table
        );
        match &key.index {
            Some(index) => format!("{table}/index/{index}"),
            None => table,
        }
    }
}

/// The bucket of `key`, refilled up to `now`; a new key's starts full.
fn refilled<'a>(
    buckets: &'a mut HashMap<(Access, PartitionKey), Bucket>,
    access: Access,
    key: &PartitionKey,
    per_second: f64,
    now: Instant,
) -> &'a mut Bucket {
    let bucket = buckets.entry((access, key.clone())).or_insert(Bucket {
        units: per_second,
        refilled: now,
    });
    let elapsed = now.saturating_duration_since(bucket.refilled).as_secs_f64();
    bucket.units = (bucket.units + elapsed * per_second).min(per_second);
    bucket.refilled = now;
    bucket
}

/// `TransactionCanceledException` with the throttled items' code and `None` for the others.
fn transaction_cancelled(items: usize, refused: &[usize], on_demand: bool) -> Message {
    let (code, message) = if on_demand {
        (
            "ThrottlingError",
            "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try again shortly. If exceptions persist, check if you have a hot key: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html. (modelled by singletable-fault)",
        )
    } else {
        (
            "ProvisionedThroughputExceeded",
            "The level of configured provisioned throughput for the table was exceeded (modelled by singletable-fault)",
        )
    };
    let reasons: Vec<Value> = (0..items)
        .map(|position| {
            if refused.contains(&position) {
                json!({ "Code": code, "Message": message })
            } else {
                json!({ "Code": "None" })
            }
        })
        .collect();
    let codes: Vec<&str> = (0..items)
        .map(|position| {
            if refused.contains(&position) {
                code
            } else {
                "None"
            }
        })
        .collect();
    json_response(
        400,
        "Bad Request",
        &json!({
            "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
            "Message": format!(
                "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
                codes.join(", ")
            ),
            "CancellationReasons": reasons,
        }),
    )
}

/// Asks the engine for a table's key schema, with the client's headers.
async fn describe(
    upstream: &str,
    template: &Message,
    name: &str,
) -> Result<TableKeys, Undescribed> {
    let mut headers: Vec<(String, String)> = template
        .headers
        .iter()
        .filter(|(header, _)| !header.eq_ignore_ascii_case("x-amz-target"))
        .cloned()
        .collect();
    headers.push((
        "X-Amz-Target".to_owned(),
        "DynamoDB_20120810.DescribeTable".to_owned(),
    ));
    let request = Message {
        start: "POST / HTTP/1.1".to_owned(),
        headers,
        body: json!({ "TableName": name }).to_string().into_bytes(),
    };
    let response = send_upstream(upstream, &request)
        .await
        .map_err(|_| Undescribed)?;
    if response.status() != Some(200) {
        return Err(Undescribed);
    }
    let answer: Value = serde_json::from_slice(&response.body).map_err(|_| Undescribed)?;
    let table = answer.get("Table").ok_or(Undescribed)?;
    let partition_key = table
        .get("KeySchema")
        .and_then(hash_key)
        .ok_or(Undescribed)?;
    let indexes = table
        .get("GlobalSecondaryIndexes")
        .and_then(Value::as_array)
        .map(|indexes| {
            indexes
                .iter()
                .filter_map(|index| {
                    let name = index.get("IndexName")?.as_str()?.to_owned();
                    Some((name, hash_key(index.get("KeySchema")?)?))
                })
                .collect()
        })
        .unwrap_or_default();
    let on_demand = table
        .pointer("/BillingModeSummary/BillingMode")
        .and_then(Value::as_str)
        == Some("PAY_PER_REQUEST");
    Ok(TableKeys {
        partition_key,
        indexes,
        on_demand,
    })
}

/// The `HASH` attribute of a `KeySchema`.
fn hash_key(schema: &Value) -> Option<String> {
    schema
        .as_array()?
        .iter()
        .find(|element| element.get("KeyType").and_then(Value::as_str) == Some("HASH"))?
        .get("AttributeName")?
        .as_str()
        .map(str::to_owned)
}

/// The tables a request names.
fn table_names(operation: &str, body: &Value) -> Vec<String> {
    let mut names: Vec<String> = match operation {
        "BatchWriteItem" | "BatchGetItem" => body
            .get("RequestItems")
            .and_then(Value::as_object)
            .map(|tables| tables.keys().cloned().collect())
            .unwrap_or_default(),
        "TransactWriteItems" | "TransactGetItems" => body
            .get("TransactItems")
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|item| {
                        let (_, request) = item.as_object()?.iter().next()?;
                        Some(request.get("TableName")?.as_str()?.to_owned())
                    })
                    .collect()
            })
            .unwrap_or_default(),
        _ => body
            .get("TableName")
            .and_then(Value::as_str)
            .map(|name| vec![name.to_owned()])
            .unwrap_or_default(),
    };
    names.sort();
    names.dedup();
    names
}

/// The partition key of an item or a key, on the table or on `index`.
fn partition_key(
    keys: &TableKeys,
    table: &str,
    index: Option<&str>,
    attributes: &Value,
) -> Option<PartitionKey> {
    let value = attributes.get(keys.attribute(index)?)?;
    Some(PartitionKey {
        table: table.to_owned(),
        index: index.map(str::to_owned),
        value: key_text(value)?,
    })
}

/// A key attribute's value as text: `S`, `N` and `B` all carry a JSON string.
fn key_text(value: &Value) -> Option<String> {
    let (_, inner) = value.as_object()?.iter().next()?;
    inner.as_str().map(str::to_owned)
}

/// The partition key a query's key condition names: `attribute = :value`, where the attribute
/// is named as it is or through `ExpressionAttributeNames`, in either order around `=`.
fn queried_key(
    keys: &TableKeys,
    table: &str,
    index: Option<&str>,
    body: &Value,
) -> Option<PartitionKey> {
    let attribute = keys.attribute(index)?;
    let expression = body.get("KeyConditionExpression")?.as_str()?;
    let names = body.get("ExpressionAttributeNames");
    let values = body.get("ExpressionAttributeValues")?;
    let names_attribute = |operand: &str| {
        operand == attribute
            || names
                .and_then(|names| names.get(operand))
                .and_then(Value::as_str)
                == Some(attribute)
    };
    let separators = |c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',';
    for (position, _) in expression.match_indices('=') {
        let (before, after) = expression.split_at(position);
        if before.ends_with(['<', '>']) {
            continue;
        }
        let left = before
            .trim_end()
            .rsplit(separators)
            .next()
            .unwrap_or_default();
        let right = after
            .get(1..)
            .unwrap_or_default()
            .trim_start()
            .split(separators)
            .next()
            .unwrap_or_default();
        let placeholder = if names_attribute(left) {
            right
        } else if names_attribute(right) {
            left
        } else {
            continue;
        };
        return Some(PartitionKey {
            table: table.to_owned(),
            index: index.map(str::to_owned),
            value: key_text(values.get(placeholder)?)?,
        });
    }
    None
}

/// Whether a read (or a batch's table entry) asks for strong consistency.
fn consistent(body: &Value) -> bool {
    body.get("ConsistentRead").and_then(Value::as_bool) == Some(true)
}

/// Read units for `bytes`: one per 4 KB or part of it, half when eventually consistent,
/// times `factor` (2 in a transaction).
fn read_units(bytes: usize, consistent: bool, factor: f64) -> f64 {
    let units = bytes.div_ceil(4 * 1024).max(1) as f64;
    let units = if consistent { units } else { units / 2.0 };
    units * factor
}

/// Write units for `bytes`: one per 1 KB or part of it, times `factor` (2 in a transaction).
fn write_units(bytes: usize, factor: f64) -> f64 {
    bytes.div_ceil(1024).max(1) as f64 * factor
}

/// The charge of a `PutItem`, `UpdateItem` or `DeleteItem` body (or a transaction's item).
fn write_charge(
    keys: &TableKeys,
    table: &str,
    operation: &str,
    body: &Value,
    factor: f64,
) -> Option<Charge> {
    let (attributes, bytes) = if operation == "PutItem" {
        let item = body.get("Item")?;
        (item, item_size(item))
    } else {
        let key = body.get("Key")?;
        let mut bytes = item_size(key);
        if operation == "UpdateItem" {
            // The values the update sets: a lower bound of the item after it.
            bytes += body
                .get("ExpressionAttributeValues")
                .and_then(Value::as_object)
                .map_or(0, |values| values.values().map(json_value_size).sum());
        }
        (key, bytes)
    };
    Some(Charge {
        key: partition_key(keys, table, None, attributes)?,
        units: write_units(bytes, factor),
    })
}

/// The charge of one `PutRequest` or `DeleteRequest` of a batch.
fn batch_write_charge(keys: &TableKeys, table: &str, request: &Value) -> Option<Charge> {
    if let Some(put) = request.get("PutRequest") {
        write_charge(keys, table, "PutItem", put, 1.0)
    } else {
        write_charge(
            keys,
            table,
            "DeleteItem",
            request.get("DeleteRequest")?,
            1.0,
        )
    }
}

/// The rest of a single write's charge when the engine reported the table's own units: what
/// they exceed the charge taken on arrival by.
fn reported_write_rest(
    operation: &str,
    body: &Value,
    answer: &Value,
    tables: &HashMap<String, TableKeys>,
) -> Option<Charge> {
    let reported = answer
        .get("ConsumedCapacity")?
        .get("Table")?
        .get("CapacityUnits")?
        .as_f64()?;
    let table = body.get("TableName")?.as_str()?;
    let taken = write_charge(tables.get(table)?, table, operation, body, 1.0)?;
    let units = reported - taken.units;
    (units > 0.0).then_some(Charge {
        key: taken.key,
        units,
    })
}

/// The rest of a read's charge once its items are known: their units less the least charge
/// taken when the read arrived.
fn read_charges(
    operation: &str,
    body: &Value,
    answer: &Value,
    tables: &HashMap<String, TableKeys>,
) -> Vec<Charge> {
    let rest = |key: PartitionKey, bytes: usize, consistent: bool, factor: f64| Charge {
        key,
        units: read_units(bytes, consistent, factor) - read_units(0, consistent, factor),
    };
    let mut charges = Vec::new();
    match operation {
        "GetItem" | "Query" => {
            let Some(table) = body.get("TableName").and_then(Value::as_str) else {
                return charges;
            };
            let Some(keys) = tables.get(table) else {
                return charges;
            };
            let (key, bytes) = if operation == "GetItem" {
                let key = body
                    .get("Key")
                    .and_then(|key| partition_key(keys, table, None, key));
                (key, answer.get("Item").map_or(0, item_size))
            } else {
                let index = body.get("IndexName").and_then(Value::as_str);
                let bytes = answer
                    .get("Items")
                    .and_then(Value::as_array)
                    .map_or(0, |items| items.iter().map(item_size).sum());
                (queried_key(keys, table, index, body), bytes)
            };
            if let Some(key) = key {
                charges.push(rest(key, bytes, consistent(body), 1.0));
            }
        }
        "BatchGetItem" => {
            let Some(responses) = answer.get("Responses").and_then(Value::as_object) else {
                return charges;
            };
            for (table, items) in responses {
                let Some(keys) = tables.get(table) else {
                    continue;
                };
                let consistent_read = body
                    .get("RequestItems")
                    .and_then(|requested| requested.get(table))
                    .is_some_and(consistent);
                for item in items.as_array().into_iter().flatten() {
                    if let Some(key) = partition_key(keys, table, None, item) {
                        charges.push(rest(key, item_size(item), consistent_read, 1.0));
                    }
                }
            }
        }
        "TransactGetItems" => {
            let requested = body.get("TransactItems").and_then(Value::as_array);
            let responses = answer.get("Responses").and_then(Value::as_array);
            let (Some(requested), Some(responses)) = (requested, responses) else {
                return charges;
            };
            // Responses come in the order of the items asked for.
            for (item, response) in requested.iter().zip(responses) {
                let Some(get) = item.get("Get") else {
                    continue;
                };
                let Some(table) = get.get("TableName").and_then(Value::as_str) else {
                    continue;
                };
                let key = tables
                    .get(table)
                    .and_then(|keys| partition_key(keys, table, None, get.get("Key")?));
                if let Some(key) = key {
                    let bytes = response.get("Item").map_or(0, item_size);
                    charges.push(rest(key, bytes, true, 2.0));
                }
            }
        }
        _ => {}
    }
    charges
}

/// An item's size as DynamoDB counts it (the library's [`value_size`] for each value, plus
/// the attribute names), from its JSON form.
fn item_size(item: &Value) -> usize {
    item.as_object().map_or(0, |attributes| {
        attributes
            .iter()
            .map(|(name, value)| name.len() + json_value_size(value))
            .sum()
    })
}

fn json_value_size(value: &Value) -> usize {
    // A value that does not parse is the engine's to refuse; it is charged nothing here.
    wire::parse_value(value).map_or(0, |value| value_size(&value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> TableKeys {
        TableKeys {
            partition_key: "PK".to_owned(),
            indexes: HashMap::from([("GSI1".to_owned(), "GSI1PK".to_owned())]),
            on_demand: true,
        }
    }

    fn key(value: &str) -> PartitionKey {
        PartitionKey {
            table: "t".to_owned(),
            index: None,
            value: value.to_owned(),
        }
    }

    #[test]
    fn sizes_are_counted_as_dynamodb_counts_them() {
        // "PK" (2) + "a#1" (3), "n" (1) + 12345 (3 digits' bytes: 1 per two, plus 1),
        // "b" (1) + 3 bytes, "l" (1) + 3 + (1 + 1) for `[true]`.
        let item = json!({
            "PK": {"S": "a#1"},
            "n": {"N": "12345"},
            "b": {"B": "AQID"},
            "l": {"L": [{"BOOL": true}]},
        });
        assert_eq!(item_size(&item), 5 + 5 + 4 + 6);
    }

    #[test]
    fn units_round_up_per_kilobyte_and_per_four() {
        assert_eq!(write_units(0, 1.0), 1.0);
        assert_eq!(write_units(1024, 1.0), 1.0);
        assert_eq!(write_units(1025, 1.0), 2.0);
        assert_eq!(write_units(1025, 2.0), 4.0);
        assert_eq!(read_units(4096, true, 1.0), 1.0);
        assert_eq!(read_units(4097, true, 1.0), 2.0);
        assert_eq!(read_units(4097, false, 1.0), 1.0);
        assert_eq!(read_units(10, false, 2.0), 1.0);
    }

    #[test]
    fn a_query_names_its_partition_key_however_it_is_written() {
        let keys = keys();
        for (expression, names) in [
            (
                "#pk = :pk AND begins_with(#sk, :sk)",
                json!({"#pk": "PK", "#sk": "SK"}),
            ),
            ("PK=:pk", json!({})),
            (":pk = PK and SK >= :sk", json!({})),
            ("begins_with(SK, :sk) AND (#p = :pk)", json!({"#p": "PK"})),
        ] {
            let body = json!({
                "KeyConditionExpression": expression,
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": {":pk": {"S": "hot"}, ":sk": {"S": "x"}},
            });
            assert_eq!(
                queried_key(&keys, "t", None, &body),
                Some(key("hot")),
                "{expression}"
            );
        }
        let on_index = json!({
            "KeyConditionExpression": "GSI1PK = :g",
            "ExpressionAttributeValues": {":g": {"S": "group"}},
        });
        let found = queried_key(&keys, "t", Some("GSI1"), &on_index);
        assert_eq!(found.and_then(|key| key.index), Some("GSI1".to_owned()));
        let other = json!({
            "KeyConditionExpression": "SK = :sk",
            "ExpressionAttributeValues": {":sk": {"S": "x"}},
        });
        assert_eq!(queried_key(&keys, "t", None, &other), None);
    }

    #[test]
    fn a_bucket_holds_one_second_and_refills_at_the_limit() {
        let model = CapacityModel::new(PartitionLimits::new(100.0, 300.0), "local".to_owned());
        let charge = |units| Charge {
            key: key("hot"),
            units,
        };
        assert_eq!(model.take_all(Access::Write, &[charge(60.0)]), Ok(()));
        // 40 left: a charge of 50 is refused, and takes nothing.
        assert_eq!(model.take_all(Access::Write, &[charge(50.0)]), Err(vec![0]));
        assert_eq!(model.take_all(Access::Write, &[charge(40.0)]), Ok(()));
        // Another key, and reads of the same key, have buckets of their own.
        let other = Charge {
            key: key("cold"),
            units: 100.0,
        };
        assert_eq!(model.take_all(Access::Write, &[other]), Ok(()));
        assert_eq!(model.take_all(Access::Read, &[charge(300.0)]), Ok(()));
        std::thread::sleep(std::time::Duration::from_millis(120));
        // About 12 units back, at 100 a second.
        assert_eq!(model.take_all(Access::Write, &[charge(10.0)]), Ok(()));
        assert!(model.take_all(Access::Write, &[charge(10.0)]).is_err());
    }

    #[test]
    fn a_transaction_is_charged_whole_or_not_at_all() {
        let model = CapacityModel::new(PartitionLimits::new(100.0, 300.0), "local".to_owned());
        let charge = |value, units| Charge {
            key: key(value),
            units,
        };
        assert_eq!(
            model.take_all(Access::Write, &[charge("hot", 30.0)]),
            Ok(())
        );
        let charges = [
            charge("cold", 10.0),
            charge("hot", 40.0),
            charge("hot", 40.0),
        ];
        // 80 units on "hot" do not fit in the 70 left: both of its items are named, and
        // nothing is taken, not even from "cold".
        assert_eq!(model.take_all(Access::Write, &charges), Err(vec![1, 2]));
        assert_eq!(
            model.take_all(Access::Write, &charges[..2]),
            Ok(()),
            "the refused transaction took nothing"
        );
    }

    #[test]
    fn a_throttled_transaction_names_its_reasons_in_order() -> Result<(), serde_json::Error> {
        let response = transaction_cancelled(3, &[1], true);
        assert_eq!(response.status(), Some(400));
        let body: Value = serde_json::from_slice(&response.body)?;
        let codes: Vec<&str> = body
            .get("CancellationReasons")
            .and_then(Value::as_array)
            .map(|reasons| {
                reasons
                    .iter()
                    .filter_map(|reason| reason.get("Code").and_then(Value::as_str))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(codes, ["None", "ThrottlingError", "None"]);
        Ok(())
    }
}
