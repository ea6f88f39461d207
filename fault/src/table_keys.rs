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
    /// Each global secondary index's partition key attribute.
    pub(crate) indexes: HashMap<String, String>,
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
