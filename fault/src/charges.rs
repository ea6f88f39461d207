//! What a request costs: the partition key each of its items falls on and the read or write
//! units it is charged there, from the request's JSON and the engine's answer.

use crate::partition_limits::PartitionKey;
use crate::table_keys::TableKeys;
use serde_json::Value;
use singletable_runtime::item::value_size;
use singletable_runtime::wire;
use std::collections::HashMap;

/// One item's charge on its key.
#[derive(Debug, Clone)]
pub(crate) struct Charge {
    pub(crate) key: PartitionKey,
    pub(crate) units: f64,
}

/// The partition key of an item or a key, on the table or on `index`.
pub(crate) fn partition_key(
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
pub(crate) fn key_text(value: &Value) -> Option<String> {
    let (_, inner) = value.as_object()?.iter().next()?;
    inner.as_str().map(str::to_owned)
}

/// The partition key a query's key condition names: `attribute = :value`, where the attribute
/// is named as it is or through `ExpressionAttributeNames`, in either order around `=`.
pub(crate) fn queried_key(
    keys: &TableKeys,
    table: &str,
    index: Option<&str>,
    body: &Value,
) -> Option<PartitionKey> {
    let attribute = keys.attribute(index)?;
    let expression = body.get("KeyConditionExpression")?.as_str()?;
    Some(PartitionKey {
        table: table.to_owned(),
        index: index.map(str::to_owned),
        value: key_text(equated_value(body, expression, attribute)?)?,
    })
}

/// The value `expression` (of `body`, with its placeholders) sets `attribute` equal to:
/// `attribute = :value`, the attribute named as it is or through `ExpressionAttributeNames`,
/// in either order around `=` (a key condition's equality, an update's `SET`).
pub(crate) fn equated_value<'b>(
    body: &'b Value,
    expression: &str,
    attribute: &str,
) -> Option<&'b Value> {
    let values = body.get("ExpressionAttributeValues")?;
    let names_attribute = |operand: &str| names(body, operand, attribute);
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
        if let Some(value) = values.get(placeholder) {
            return Some(value);
        }
    }
    None
}

/// Whether `operand` of an expression in `body` names `attribute`: as it is, or as a
/// placeholder of `ExpressionAttributeNames`.
fn names(body: &Value, operand: &str, attribute: &str) -> bool {
    operand == attribute
        || body
            .get("ExpressionAttributeNames")
            .and_then(|names| names.get(operand))
            .and_then(Value::as_str)
            == Some(attribute)
}

/// Whether update `expression` (of `body`) removes `attribute`: it is named, as it is or through
/// `ExpressionAttributeNames`, in the expression's `REMOVE` clause.
pub(crate) fn removes(body: &Value, expression: &str, attribute: &str) -> bool {
    let named = |operand: &str| names(body, operand, attribute);
    let words: Vec<&str> = expression.split_whitespace().collect();
    let clause = |word: &str| {
        ["SET", "REMOVE", "ADD", "DELETE"]
            .iter()
            .any(|keyword| word.eq_ignore_ascii_case(keyword))
    };
    let Some(start) = words
        .iter()
        .position(|word| word.eq_ignore_ascii_case("REMOVE"))
    else {
        return false;
    };
    (words.iter().skip(start + 1))
        .take_while(|word| !clause(word))
        .flat_map(|word| word.split(','))
        .any(|operand| named(operand.trim()))
}

/// Whether a read (or a batch's table entry) asks for strong consistency.
pub(crate) fn consistent(body: &Value) -> bool {
    body.get("ConsistentRead").and_then(Value::as_bool) == Some(true)
}

/// Read units for `bytes`: one per 4 KB or part of it, half when eventually consistent,
/// times `factor` (2 in a transaction).
pub(crate) fn read_units(bytes: usize, consistent: bool, factor: f64) -> f64 {
    let units = bytes.div_ceil(4 * 1024).max(1) as f64;
    let units = if consistent { units } else { units / 2.0 };
    units * factor
}

/// Write units for `bytes`: one per 1 KB or part of it, times `factor` (2 in a transaction).
pub(crate) fn write_units(bytes: usize, factor: f64) -> f64 {
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

/// The single write a transaction's `Put`, `Update` or `Delete` stands for; `None` for a
/// `ConditionCheck`, which changes no item.
pub(crate) fn transact_write_operation(action: &str) -> Option<&'static str> {
    match action {
        "Put" => Some("PutItem"),
        "Update" => Some("UpdateItem"),
        "Delete" => Some("DeleteItem"),
        _ => None,
    }
}

/// One `PutRequest` or `DeleteRequest` of a batch, as the single write it stands for.
pub(crate) fn batch_write_request(request: &Value) -> Option<(&'static str, &Value)> {
    match (request.get("PutRequest"), request.get("DeleteRequest")) {
        (Some(put), _) => Some(("PutItem", put)),
        (None, Some(delete)) => Some(("DeleteItem", delete)),
        (None, None) => None,
    }
}

/// Every charge of a write: its table key's (first), and the partition key of each global
/// index entry it writes, charged the same units there, as DynamoDB charges a write to each
/// index it changes, and holds the table's write back when an index's partition has no room
/// (`IndexWriteKeyRangeThroughputExceeded`). A put's entries are in its item; an update's,
/// where its `SET` gives an index key attribute its value (as the library's updates do when
/// an index input changes). The entries a write removes from an index, whose keys the request
/// does not hold, are the proxy's record of items to charge ([`crate::seen_items`]).
pub(crate) fn write_charges(
    keys: &TableKeys,
    table: &str,
    operation: &str,
    body: &Value,
    factor: f64,
) -> Vec<Charge> {
    let Some(charge) = write_charge(keys, table, operation, body, factor) else {
        return Vec::new();
    };
    let units = charge.units;
    let mut charges = vec![charge];
    for (index, attribute) in &keys.indexes {
        let value = match operation {
            "PutItem" => body.get("Item").and_then(|item| item.get(attribute)),
            "UpdateItem" => body
                .get("UpdateExpression")
                .and_then(Value::as_str)
                .and_then(|expression| equated_value(body, expression, attribute)),
            _ => None,
        };
        if let Some(value) = value.and_then(key_text) {
            charges.push(Charge {
                key: PartitionKey {
                    table: table.to_owned(),
                    index: Some(index.clone()),
                    value,
                },
                units,
            });
        }
    }
    charges
}

/// The rest of a single write's charges when the engine reported its units: what the table's
/// own, and each global index's whose entry the write was charged for on arrival (`taken`),
/// exceed that charge by (an index entry is charged its size, as DynamoDB charges it, which an
/// update's request does not show).
pub(crate) fn reported_write_rest(answer: &Value, taken: Vec<Charge>) -> Vec<Charge> {
    let Some(consumed) = answer.get("ConsumedCapacity") else {
        return Vec::new();
    };
    let reported = |index: Option<&str>| {
        let units = match index {
            None => consumed.get("Table"),
            Some(index) => consumed.get("GlobalSecondaryIndexes")?.get(index),
        };
        units?.get("CapacityUnits")?.as_f64()
    };
    // What was taken, per table or index (an entry moved within an index is charged twice
    // there: its removal and its put).
    let mut taken_on: Vec<(Option<String>, f64)> = Vec::new();
    let mut firsts = Vec::new();
    for charge in taken {
        match taken_on
            .iter_mut()
            .find(|(index, _)| *index == charge.key.index)
        {
            Some((_, units)) => *units += charge.units,
            None => {
                taken_on.push((charge.key.index.clone(), charge.units));
                firsts.push(charge.key);
            }
        }
    }
    firsts
        .into_iter()
        .zip(taken_on)
        .filter_map(|(key, (index, taken))| {
            let units = reported(index.as_deref())? - taken;
            (units > 0.0).then_some(Charge { key, units })
        })
        .collect()
}

/// The rest of a read's charge once its items are known: their units less the least charge
/// taken when the read arrived.
pub(crate) fn read_charges(
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
pub(crate) fn item_size(item: &Value) -> usize {
    item.as_object().map_or(0, |attributes| {
        attributes
            .iter()
            .map(|(name, value)| name.len() + json_value_size(value))
            .sum()
    })
}

pub(crate) fn json_value_size(value: &Value) -> usize {
    // A value that does not parse is the engine's to refuse; it is charged nothing here.
    wire::parse_value(value).map_or(0, |value| value_size(&value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition_limits::test_key as key;
    use crate::table_keys::test_keys as keys;
    use serde_json::json;

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
}
