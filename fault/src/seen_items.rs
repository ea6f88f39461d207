//! What the proxy saw written of each item: its size and the partition of each global index
//! its entry is in. DynamoDB charges a write that removes or moves an index entry (a delete, a
//! put that replaces the item, an update that changes or removes the index's key) on the
//! partition the entry leaves, and charges a delete or an update by the larger of the item
//! before and after; the request does not show either, so the model remembers them. An item
//! the proxy never saw written is charged as its request shows (a lower bound).

use crate::charges::{
    equated_value, item_size, json_value_size, key_text, removes, write_units, Charge,
};
use crate::lock::lock;
use crate::partition_limits::PartitionKey;
use crate::table_keys::TableKeys;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

/// An item, by its table and key values.
type ItemId = (String, String, Option<String>);

/// One item as last written through the proxy.
#[derive(Debug, Clone, Default, PartialEq)]
struct Seen {
    /// Its size, as DynamoDB counts it (a lower bound after an update).
    bytes: usize,
    /// Its entry in each global index that has one: the entry's partition and sort key values.
    entries: BTreeMap<String, (String, Option<String>)>,
}

/// The items written through the proxy, by table and key.
#[derive(Debug, Default)]
pub(crate) struct SeenItems {
    items: Mutex<HashMap<ItemId, Seen>>,
}

impl SeenItems {
    /// The charges a single write (`PutItem`, `UpdateItem`, `DeleteItem`, or a transaction's
    /// or a batch's item as one) owes beyond `charged`, the ones its request shows: the rest of
    /// the item's size on its table key, and each index entry it removes or moves, on the
    /// partition the entry leaves (and, for an update that moves an entry without naming its
    /// partition key, the partition it stays in).
    pub(crate) fn extra_charges(
        &self,
        keys: &TableKeys,
        table: &str,
        operation: &str,
        body: &Value,
        factor: f64,
        charged: &[Charge],
    ) -> Vec<Charge> {
        let Some(id) = item_id(keys, table, operation, body) else {
            return Vec::new();
        };
        let Some(before) = lock(&self.items).get(&id).cloned() else {
            return Vec::new();
        };
        let Some(table_charge) = charged.iter().find(|charge| charge.key.index.is_none()) else {
            return Vec::new();
        };
        let after = after(keys, operation, body, &before);
        let units = table_charge.units.max(write_units(before.bytes, factor));
        let mut extra = Vec::new();
        if units > table_charge.units {
            extra.push(Charge {
                key: table_charge.key.clone(),
                units: units - table_charge.units,
            });
        }
        let on = |index: &str, partition: &str| PartitionKey {
            table: table.to_owned(),
            index: Some(index.to_owned()),
            value: partition.to_owned(),
        };
        for (index, entry) in &before.entries {
            let moved_to = after.entries.get(index);
            if moved_to == Some(entry) {
                continue;
            }
            extra.push(Charge {
                key: on(index, &entry.0),
                units,
            });
            let put_charged =
                (charged.iter()).any(|charge| charge.key.index.as_ref() == Some(index));
            if let Some((partition, _)) = moved_to.filter(|_| !put_charged) {
                extra.push(Charge {
                    key: on(index, partition),
                    units,
                });
            }
        }
        extra
    }

    /// Remembers what a write the engine applied left of its item.
    pub(crate) fn record(&self, keys: &TableKeys, table: &str, operation: &str, body: &Value) {
        let Some(id) = item_id(keys, table, operation, body) else {
            return;
        };
        let mut items = lock(&self.items);
        let before = items.get(&id).cloned().unwrap_or_default();
        let after = after(keys, operation, body, &before);
        match operation {
            "DeleteItem" => {
                items.remove(&id);
            }
            _ => {
                items.insert(id, after);
            }
        }
    }

    /// Forgets a deleted table's items.
    pub(crate) fn forget(&self, table: &str) {
        lock(&self.items).retain(|(name, _, _), _| name != table);
    }
}

/// The item a write names, by its key (a put's item holds it).
fn item_id(keys: &TableKeys, table: &str, operation: &str, body: &Value) -> Option<ItemId> {
    let attributes = match operation {
        "PutItem" => body.get("Item")?,
        "UpdateItem" | "DeleteItem" => body.get("Key")?,
        _ => return None,
    };
    let partition = key_text(attributes.get(&keys.partition_key)?)?;
    let sort = match &keys.sort_key {
        Some(sort_key) => Some(key_text(attributes.get(sort_key)?)?),
        None => None,
    };
    Some((table.to_owned(), partition, sort))
}

/// What the item is after the write, from what it was (`before`) and the request.
fn after(keys: &TableKeys, operation: &str, body: &Value, before: &Seen) -> Seen {
    match operation {
        "PutItem" => {
            let Some(item) = body.get("Item") else {
                return Seen::default();
            };
            let value = |attribute: &str| item.get(attribute).and_then(key_text);
            let entries = (keys.indexes.iter())
                .filter_map(|(index, partition_key)| {
                    Some((index.clone(), entry(keys, index, partition_key, value)?))
                })
                .collect();
            Seen {
                bytes: item_size(item),
                entries,
            }
        }
        "UpdateItem" => {
            let expression = body
                .get("UpdateExpression")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let entries = (keys.indexes.iter())
                .filter_map(|(index, partition_key)| {
                    let old = before.entries.get(index);
                    let value = |attribute: &str| {
                        if removes(body, expression, attribute) {
                            return None;
                        }
                        match equated_value(body, expression, attribute) {
                            Some(value) => key_text(value),
                            None if attribute == partition_key => old.map(|(p, _)| p.clone()),
                            None => old.and_then(|(_, s)| s.clone()),
                        }
                    };
                    Some((index.clone(), entry(keys, index, partition_key, value)?))
                })
                .collect();
            let set_bytes = body
                .get("ExpressionAttributeValues")
                .and_then(Value::as_object)
                .map_or(0, |values| {
                    values.values().map(json_value_size).sum::<usize>()
                });
            Seen {
                bytes: before.bytes.max(set_bytes),
                entries,
            }
        }
        _ => Seen::default(),
    }
}

/// An index's entry from the values of its key attributes: none unless the item has them all
/// (DynamoDB indexes only items that hold the index's key attributes).
fn entry(
    keys: &TableKeys,
    index: &str,
    partition_key: &str,
    value: impl Fn(&str) -> Option<String>,
) -> Option<(String, Option<String>)> {
    let partition = value(partition_key)?;
    let sort = match keys.index_sort_keys.get(index) {
        Some(sort_key) => Some(value(sort_key)?),
        None => None,
    };
    Some((partition, sort))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charges::write_charges;
    use crate::table_keys::test_keys as keys;
    use serde_json::json;

    /// The extra charges of `body` after `seen` saw `written`, as (index, partition, units).
    fn extra(
        written: &[(&str, Value)],
        operation: &str,
        body: Value,
    ) -> Vec<(Option<String>, String, f64)> {
        let (keys, seen) = (keys(), SeenItems::default());
        for (operation, body) in written {
            seen.record(&keys, "t", operation, body);
        }
        let charged = write_charges(&keys, "t", operation, &body, 1.0);
        (seen
            .extra_charges(&keys, "t", operation, &body, 1.0, &charged)
            .into_iter())
        .map(|charge| (charge.key.index, charge.key.value, charge.units))
        .collect()
    }

    fn put(gsi1pk: &str, gsi1sk: &str, kilobytes: usize) -> (&'static str, Value) {
        let item = json!({
            "PK": {"S": "a"}, "SK": {"S": "1"},
            "GSI1PK": {"S": gsi1pk}, "GSI1SK": {"S": gsi1sk},
            "payload": {"S": "x".repeat(kilobytes * 1024)},
        });
        ("PutItem", json!({"TableName": "t", "Item": item}))
    }

    fn key() -> Value {
        json!({"PK": {"S": "a"}, "SK": {"S": "1"}})
    }

    #[test]
    fn a_delete_is_charged_the_item_it_deletes_and_the_entry_it_removes() {
        let delete = json!({"TableName": "t", "Key": key()});
        let charges = extra(&[put("TEAM#7", "s", 5)], "DeleteItem", delete);
        let table = (None, "a".to_owned(), 5.0);
        let index = (Some("GSI1".to_owned()), "TEAM#7".to_owned(), 6.0);
        assert_eq!(charges, [table, index]);
    }

    #[test]
    fn an_update_that_moves_an_entry_within_its_partition_removes_and_puts_it_there() {
        let update = json!({
            "TableName": "t", "Key": key(),
            "UpdateExpression": "SET #sk = :sk",
            "ExpressionAttributeNames": {"#sk": "GSI1SK"},
            "ExpressionAttributeValues": {":sk": {"S": "t"}},
        });
        let charges = extra(&[put("TEAM#7", "s", 0)], "UpdateItem", update);
        let on = |units| (Some("GSI1".to_owned()), "TEAM#7".to_owned(), units);
        assert_eq!(charges, [on(1.0), on(1.0)]);
    }

    #[test]
    fn an_update_that_removes_the_key_and_a_put_that_moves_it_leave_the_old_partition() {
        let remove = json!({
            "TableName": "t", "Key": key(),
            "UpdateExpression": "SET n = :n REMOVE GSI1PK, GSI1SK",
            "ExpressionAttributeValues": {":n": {"N": "1"}},
        });
        let charges = extra(&[put("TEAM#7", "s", 0)], "UpdateItem", remove);
        assert_eq!(
            charges,
            [(Some("GSI1".to_owned()), "TEAM#7".to_owned(), 1.0)]
        );
        let (_, moved) = put("TEAM#8", "s", 0);
        let charges = extra(&[put("TEAM#7", "s", 0)], "PutItem", moved);
        assert_eq!(
            charges,
            [(Some("GSI1".to_owned()), "TEAM#7".to_owned(), 1.0)]
        );
    }

    #[test]
    fn writes_that_leave_the_entry_where_it_is_or_items_never_seen_owe_nothing_more() {
        let (_, same) = put("TEAM#7", "s", 0);
        assert_eq!(extra(&[put("TEAM#7", "s", 0)], "PutItem", same), []);
        let delete = json!({"TableName": "t", "Key": key()});
        assert_eq!(extra(&[], "DeleteItem", delete.clone()), []);
        // Deleted, then deleted again: the second removes nothing.
        assert_eq!(
            extra(
                &[put("TEAM#7", "s", 0), ("DeleteItem", delete.clone())],
                "DeleteItem",
                delete
            ),
            []
        );
    }
}
