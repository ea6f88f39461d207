//! Which items a write touched, and which reads DynamoDB may serve from the past: what the
//! replica follows and what it answers.

use serde_json::{Map, Value};

/// An item a write names: by its key, or by the whole item it puts (whose key the table's
/// key schema picks out).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Touched {
    Key(Map<String, Value>),
    Item(Map<String, Value>),
}

impl Touched {
    /// The item's key: its attributes named by the table's key schema, or `None` when one
    /// is missing (a request the engine refused anyway).
    pub(crate) fn key(&self, attributes: &[String]) -> Option<Map<String, Value>> {
        let (Touched::Key(map) | Touched::Item(map)) = self;
        attributes
            .iter()
            .map(|name| Some((name.clone(), map.get(name)?.clone())))
            .collect()
    }
}

/// The operations that change items, for which the replica reads what they left.
pub(crate) fn writes(operation: &str) -> bool {
    matches!(
        operation,
        "PutItem" | "UpdateItem" | "DeleteItem" | "BatchWriteItem" | "TransactWriteItems"
    )
}

/// The operations after which the replica copies a table anew: its key schema, indexes or
/// time to live may have changed, or it may be gone.
pub(crate) fn reshapes(operation: &str) -> bool {
    matches!(
        operation,
        "CreateTable" | "UpdateTable" | "DeleteTable" | "UpdateTimeToLive"
    )
}

/// The items a write request names, with their tables, in the request's order. A
/// `ConditionCheck` changes nothing and is left out.
pub(crate) fn touched(operation: &str, body: &Value) -> Vec<(String, Touched)> {
    let object = |value: &Value| value.as_object().cloned();
    let table = |value: &Value| value.get("TableName")?.as_str().map(str::to_owned);
    match operation {
        "PutItem" => table(body)
            .zip(body.get("Item").and_then(object))
            .map(|(table, item)| vec![(table, Touched::Item(item))])
            .unwrap_or_default(),
        "UpdateItem" | "DeleteItem" => table(body)
            .zip(body.get("Key").and_then(object))
            .map(|(table, key)| vec![(table, Touched::Key(key))])
            .unwrap_or_default(),
        "BatchWriteItem" => {
            let Some(tables) = body.get("RequestItems").and_then(Value::as_object) else {
                return Vec::new();
            };
            let mut touched = Vec::new();
            for (table, requests) in tables {
                for request in requests.as_array().into_iter().flatten() {
                    if let Some(item) = request.pointer("/PutRequest/Item").and_then(object) {
                        touched.push((table.clone(), Touched::Item(item)));
                    } else if let Some(key) = request.pointer("/DeleteRequest/Key").and_then(object)
                    {
                        touched.push((table.clone(), Touched::Key(key)));
                    }
                }
            }
            touched
        }
        "TransactWriteItems" => body
            .get("TransactItems")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|action| {
                let (kind, request) = action.as_object()?.iter().next()?;
                let touched = match kind.as_str() {
                    "Put" => Touched::Item(request.get("Item").and_then(object)?),
                    "Update" | "Delete" => Touched::Key(request.get("Key").and_then(object)?),
                    _ => return None,
                };
                Some((table(request)?, touched))
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether DynamoDB may answer this read from before the latest writes: a read of a global
/// index, or any eventually consistent `GetItem`, `BatchGetItem`, `Query` or `Scan`. A
/// transaction's reads and strongly consistent ones see the present.
pub(crate) fn may_lag(operation: &str, body: &Value) -> bool {
    let consistent = |value: &Value| value.get("ConsistentRead") == Some(&Value::Bool(true));
    match operation {
        "GetItem" | "Query" | "Scan" => !consistent(body),
        "BatchGetItem" => body
            .get("RequestItems")
            .and_then(Value::as_object)
            .is_some_and(|tables| !tables.is_empty() && !tables.values().any(consistent)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(touched: &[(String, Touched)], attributes: &[String]) -> Vec<(String, Value)> {
        touched
            .iter()
            .map(|(table, touched)| {
                let key = touched.key(attributes).map_or(Value::Null, Value::Object);
                (table.clone(), key)
            })
            .collect()
    }

    #[test]
    fn every_write_names_its_items_keys() {
        let keys = ["PK".to_owned(), "SK".to_owned()];
        let key = json!({ "PK": { "S": "A" }, "SK": { "S": "1" } });
        let item = json!({ "PK": { "S": "A" }, "SK": { "S": "1" }, "n": { "N": "2" } });
        let put = touched("PutItem", &json!({ "TableName": "t", "Item": item }));
        assert_eq!(names(&put, &keys), [("t".to_owned(), key.clone())]);
        let update = touched("UpdateItem", &json!({ "TableName": "t", "Key": key }));
        assert_eq!(names(&update, &keys), [("t".to_owned(), key.clone())]);
        let batch = touched(
            "BatchWriteItem",
            &json!({ "RequestItems": { "u": [
                { "PutRequest": { "Item": item } },
                { "DeleteRequest": { "Key": key } },
            ] } }),
        );
        assert_eq!(names(&batch, &keys).len(), 2);
        let transaction = touched(
            "TransactWriteItems",
            &json!({ "TransactItems": [
                { "ConditionCheck": { "TableName": "t", "Key": key } },
                { "Put": { "TableName": "t", "Item": item } },
                { "Delete": { "TableName": "u", "Key": key } },
            ] }),
        );
        assert_eq!(
            names(&transaction, &keys),
            [("t".to_owned(), key.clone()), ("u".to_owned(), key)]
        );
        // A put without its sort key names no key.
        let partial = touched(
            "PutItem",
            &json!({ "TableName": "t", "Item": { "PK": { "S": "A" } } }),
        );
        assert_eq!(names(&partial, &keys), [("t".to_owned(), Value::Null)]);
        assert!(touched("GetItem", &json!({ "TableName": "t", "Key": {} })).is_empty());
    }

    #[test]
    fn only_eventually_consistent_reads_may_lag() {
        assert!(may_lag("Query", &json!({ "IndexName": "gsi1" })));
        assert!(may_lag("GetItem", &json!({})));
        assert!(!may_lag("GetItem", &json!({ "ConsistentRead": true })));
        assert!(!may_lag("Scan", &json!({ "ConsistentRead": true })));
        assert!(may_lag(
            "BatchGetItem",
            &json!({ "RequestItems": { "t": { "Keys": [] } } })
        ));
        assert!(!may_lag(
            "BatchGetItem",
            &json!({ "RequestItems": { "t": { "Keys": [] }, "u": { "Keys": [], "ConsistentRead": true } } })
        ));
        assert!(!may_lag("TransactGetItems", &json!({})));
        assert!(!may_lag("PutItem", &json!({})));
    }
}
