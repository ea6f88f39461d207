//! DynamoDB's throughput limit per partition, modelled per partition key value: the rules
//! are on [`PartitionLimits`].

use crate::charges::{
    batch_write_request, consistent, partition_key, queried_key, read_charges, read_units,
    reported_write_rest, transact_write_operation, write_charges, Charge,
};
use crate::http::{json_response, Message};
use crate::lock::lock;
use crate::partition_limits::{Access, PartitionKey, PartitionLimits};
use crate::seen_items::SeenItems;
use crate::table_keys::{describe, table_names, TableKeys};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::OnceCell;
#[derive(Debug)]
struct Bucket {
    units: f64,
    refilled: Instant,
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
    /// What the items written through the proxy hold, for the charges requests do not show.
    seen: SeenItems,
}

impl CapacityModel {
    pub(crate) fn new(limits: PartitionLimits, region: String) -> Self {
        CapacityModel {
            limits,
            region,
            buckets: Mutex::new(HashMap::new()),
            tables: Mutex::new(HashMap::new()),
            seen: SeenItems::default(),
        }
    }

    /// A write's charges: those its request shows (its table key first), and what the item the
    /// proxy saw written adds (its size before the write, the index entries it removes or
    /// moves).
    fn write_charges(
        &self,
        keys: &TableKeys,
        table: &str,
        operation: &str,
        body: &Value,
        factor: f64,
    ) -> Vec<Charge> {
        let mut charges = write_charges(keys, table, operation, body, factor);
        let extra = (self.seen).extra_charges(keys, table, operation, body, factor, &charges);
        // One charge per key, so that a write held back is counted once against it.
        for charge in extra {
            match charges.iter_mut().find(|taken| taken.key == charge.key) {
                Some(taken) => taken.units += charge.units,
                None => charges.push(charge),
            }
        }
        charges
    }

    /// Remembers what each write of a request the engine applied left of its item.
    fn record_writes(&self, operation: &str, body: &Value, answer: &Value) {
        let tables = self.known_tables();
        let record = |table: &str, operation: &str, request: &Value| {
            if let Some(keys) = tables.get(table) {
                self.seen.record(keys, table, operation, request);
            }
        };
        match operation {
            "PutItem" | "UpdateItem" | "DeleteItem" => {
                if let Some(table) = body.get("TableName").and_then(Value::as_str) {
                    record(table, operation, body);
                }
            }
            "BatchWriteItem" => {
                let Some(requested) = body.get("RequestItems").and_then(Value::as_object) else {
                    return;
                };
                for (table, list) in requested {
                    let unprocessed = answer
                        .pointer(&format!(
                            "/UnprocessedItems/{}",
                            table.replace('~', "~0").replace('/', "~1")
                        ))
                        .and_then(Value::as_array);
                    for request in list.as_array().into_iter().flatten() {
                        if unprocessed.is_some_and(|left| left.contains(request)) {
                            continue;
                        }
                        if let Some((operation, request)) = batch_write_request(request) {
                            record(table, operation, request);
                        }
                    }
                }
            }
            "TransactWriteItems" => {
                let items = body.get("TransactItems").and_then(Value::as_array);
                for item in items.into_iter().flatten() {
                    let Some((action, request)) =
                        item.as_object().and_then(|item| item.iter().next())
                    else {
                        continue;
                    };
                    let Some(operation) = transact_write_operation(action) else {
                        continue;
                    };
                    if let Some(table) = request.get("TableName").and_then(Value::as_str) {
                        record(table, operation, request);
                    }
                }
            }
            _ => {}
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
        let batched_writes = matches!(operation, "BatchWriteItem" | "TransactWriteItems");
        if response.status() != Some(200)
            || !(writes
                || batched_writes
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
        if batched_writes {
            self.record_writes(operation, &body, &answer);
            return;
        }
        let tables = self.known_tables();
        if writes {
            let table = body.get("TableName").and_then(Value::as_str);
            if let Some((table, keys)) = table.and_then(|table| Some((table, tables.get(table)?))) {
                // What was taken on arrival, by the item as it was before this write.
                let taken = self.write_charges(keys, table, operation, &body, 1.0);
                for charge in reported_write_rest(&answer, taken) {
                    self.overdraw(Access::Write, &charge);
                }
            }
            self.record_writes(operation, &body, &answer);
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
        let (access, charges) = match operation {
            "GetItem" => {
                let Some(key) = body
                    .get("Key")
                    .and_then(|key| partition_key(keys, table, None, key))
                else {
                    return Admission::Whole;
                };
                let units = read_units(0, consistent(body), 1.0);
                (Access::Read, vec![Charge { key, units }])
            }
            "Query" => {
                let index = body.get("IndexName").and_then(Value::as_str);
                let Some(key) = queried_key(keys, table, index, body) else {
                    return Admission::Whole;
                };
                let units = read_units(0, consistent(body), 1.0);
                (Access::Read, vec![Charge { key, units }])
            }
            _ => (
                Access::Write,
                self.write_charges(keys, table, operation, body, 1.0),
            ),
        };
        match self.take_all(access, &charges) {
            Ok(()) => Admission::Whole,
            Err(refused) => {
                let throttled = (refused.iter())
                    .filter_map(|position| charges.get(*position))
                    .map(|charge| (access, charge.key.clone()))
                    .collect::<Vec<_>>();
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
                let charges: Vec<Charge> = if reads {
                    (partition_key(keys, table, None, &request).into_iter())
                        .map(|key| Charge {
                            key,
                            units: read_units(0, consistent_read, 1.0),
                        })
                        .collect()
                } else {
                    (batch_write_request(&request).into_iter())
                        .flat_map(|(operation, body)| {
                            self.write_charges(keys, table, operation, body, 1.0)
                        })
                        .collect()
                };
                match self.take_all(access, &charges) {
                    Ok(()) => kept.push(request),
                    Err(refused) => {
                        throttled.extend(
                            (refused.iter())
                                .filter_map(|position| charges.get(*position))
                                .map(|charge| (access, charge.key.clone())),
                        );
                        moved.push(request);
                    }
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
            let item_charges: Vec<Charge> = if reads {
                (request.get("Key"))
                    .and_then(|key| partition_key(keys, table, None, key))
                    .map(|key| Charge {
                        key,
                        units: read_units(0, true, 2.0),
                    })
                    .into_iter()
                    .collect()
            } else {
                match transact_write_operation(action) {
                    Some(operation) => self.write_charges(keys, table, operation, request, 2.0),
                    // A condition check is charged as a write of its key, and changes no item.
                    None => write_charges(keys, table, "DeleteItem", request, 2.0),
                }
            };
            for charge in item_charges {
                charges.push(charge);
                positions.push(position);
            }
        }
        let Err(refused) = self.take_all(access, &charges) else {
            return Admission::Whole;
        };
        let mut refused_positions: Vec<usize> = refused
            .iter()
            .filter_map(|index| positions.get(*index).copied())
            .collect();
        // An item refused on its table key and an index key is one cancelled item.
        refused_positions.dedup();
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
    /// most; a bucket already further below (a charge above one second's units, let through)
    /// stays where it is.
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
        bucket.units = bucket
            .units
            .min((bucket.units - charge.units).max(-per_second));
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
        self.seen.forget(&table);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition_limits::test_key as key;

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
    fn the_rest_of_a_charge_never_refills_an_overdrawn_bucket() {
        let model = CapacityModel::new(PartitionLimits::new(10.0, 10.0), "local".to_owned());
        let charge = |value, units| Charge {
            key: key(value),
            units,
        };
        // Above one second's units: let through on a full bucket, which it leaves 40 below
        // zero. The rest of its charge, from the item's size, leaves it there.
        assert_eq!(model.take_all(Access::Read, &[charge("hot", 50.0)]), Ok(()));
        model.overdraw(Access::Read, &charge("hot", 5.0));
        // A rest alone takes a full bucket one second below zero at most: 10 below, not 15.
        model.overdraw(Access::Read, &charge("cold", 25.0));
        std::thread::sleep(std::time::Duration::from_millis(1200));
        // 12 units back at 10 a second: "cold" is at 2, "hot" still 28 below zero.
        assert_eq!(model.take_all(Access::Read, &[charge("cold", 0.5)]), Ok(()));
        assert_eq!(
            model.take_all(Access::Read, &[charge("hot", 0.5)]),
            Err(vec![0])
        );
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
