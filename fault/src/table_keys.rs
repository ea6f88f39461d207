//! What the partition model knows of a table: its partition key attributes, learnt from the
//! engine with `DescribeTable`, and the tables a request names.

use crate::http::{call, Message};
use serde_json::{json, Value};
use std::collections::HashMap;

/// What the proxy learned of a table from `DescribeTable`.
#[derive(Debug, Clone)]
pub(crate) struct TableKeys {
    /// The table's partition key attribute.
    pub(crate) partition_key: String,
    /// The table's sort key attribute, if it has one.
    pub(crate) sort_key: Option<String>,
    /// Each global secondary index's partition key attribute.
    pub(crate) indexes: HashMap<String, String>,
    /// Each global secondary index's sort key attribute, for those that have one.
    pub(crate) index_sort_keys: HashMap<String, String>,
    /// Billed per request: a throttled transaction item's code is then `ThrottlingError`.
    pub(crate) on_demand: bool,
}

impl TableKeys {
    pub(crate) fn attribute(&self, index: Option<&str>) -> Option<&str> {
        match index {
            Some(index) => self.indexes.get(index).map(String::as_str),
            None => Some(&self.partition_key),
        }
    }
}

/// A table the engine could not describe (it does not exist, say).
pub(crate) struct Undescribed;

/// Asks the engine for a table's key schema, with the client's headers.
pub(crate) async fn describe(
    upstream: &str,
    template: &Message,
    name: &str,
) -> Result<TableKeys, Undescribed> {
    let named = json!({ "TableName": name });
    let answer = call(upstream, &template.headers, "DescribeTable", &named)
        .await
        .ok_or(Undescribed)?;
    let table = answer.get("Table").ok_or(Undescribed)?;
    let partition_key = table
        .get("KeySchema")
        .and_then(|schema| key_attribute(schema, "HASH"))
        .ok_or(Undescribed)?;
    let sort_key = table
        .get("KeySchema")
        .and_then(|schema| key_attribute(schema, "RANGE"));
    let global_indexes = table
        .get("GlobalSecondaryIndexes")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let index_keys = |kind: &str| -> HashMap<String, String> {
        global_indexes
            .iter()
            .filter_map(|index| {
                let name = index.get("IndexName")?.as_str()?.to_owned();
                Some((name, key_attribute(index.get("KeySchema")?, kind)?))
            })
            .collect()
    };
    let indexes = index_keys("HASH");
    let index_sort_keys = index_keys("RANGE");
    let on_demand = table
        .pointer("/BillingModeSummary/BillingMode")
        .and_then(Value::as_str)
        == Some("PAY_PER_REQUEST");
    Ok(TableKeys {
        partition_key,
        sort_key,
        indexes,
        index_sort_keys,
        on_demand,
    })
}

/// The attribute of a `KeySchema` of key type `kind` (`HASH` or `RANGE`).
fn key_attribute(schema: &Value, kind: &str) -> Option<String> {
    schema
        .as_array()?
        .iter()
        .find(|element| element.get("KeyType").and_then(Value::as_str) == Some(kind))?
        .get("AttributeName")?
        .as_str()
        .map(str::to_owned)
}

/// The tables a request names.
pub(crate) fn table_names(operation: &str, body: &Value) -> Vec<String> {
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

/// The unit tests' table: key `PK` + `SK`, one index `GSI1` keyed `GSI1PK` + `GSI1SK`.
#[cfg(test)]
pub(crate) fn test_keys() -> TableKeys {
    TableKeys {
        partition_key: "PK".to_owned(),
        sort_key: Some("SK".to_owned()),
        indexes: HashMap::from([("GSI1".to_owned(), "GSI1PK".to_owned())]),
        index_sort_keys: HashMap::from([("GSI1".to_owned(), "GSI1SK".to_owned())]),
        on_demand: true,
    }
}
