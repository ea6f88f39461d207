//! Requests the replica sends on its own: to the engine, to read what writes left and to
//! describe and copy a table, and to the replica, to create that table and apply changes.

use serde_json::{json, Map, Value};

/// A request of the replica's own that did not get a 200 answer.
#[derive(Debug)]
pub(crate) struct Refused;

/// [`http::call`](crate::http::call), refused when it gets no 200 answer.
pub(crate) async fn call(
    upstream: &str,
    headers: &[(String, String)],
    operation: &str,
    body: &Value,
) -> Result<Value, Refused> {
    crate::http::call(upstream, headers, operation, body)
        .await
        .ok_or(Refused)
}

/// A table as the engine describes it, reduced to what the replica needs to hold its items
/// and answer its queries.
pub(crate) struct Shape {
    /// The table's key attributes (partition key, then sort key).
    pub(crate) keys: Vec<String>,
    /// The `CreateTable` request that makes the same table, on-demand.
    pub(crate) create: Value,
}

/// Reads `table`'s shape from `DescribeTable`'s answer.
pub(crate) fn shape(table: &Value) -> Option<Shape> {
    let name = table.get("TableName")?.clone();
    let key_schema = table.get("KeySchema")?.clone();
    let keys = key_schema
        .as_array()?
        .iter()
        .map(|element| Some(element.get("AttributeName")?.as_str()?.to_owned()))
        .collect::<Option<Vec<String>>>()?;
    let mut create = Map::new();
    create.insert("TableName".to_owned(), name);
    create.insert("KeySchema".to_owned(), key_schema);
    create.insert(
        "AttributeDefinitions".to_owned(),
        table.get("AttributeDefinitions")?.clone(),
    );
    create.insert("BillingMode".to_owned(), json!("PAY_PER_REQUEST"));
    for list in ["GlobalSecondaryIndexes", "LocalSecondaryIndexes"] {
        let Some(indexes) = table.get(list).and_then(Value::as_array) else {
            continue;
        };
        let indexes: Vec<Value> = indexes
            .iter()
            .filter_map(|index| {
                Some(json!({
                    "IndexName": index.get("IndexName")?,
                    "KeySchema": index.get("KeySchema")?,
                    "Projection": index.get("Projection")?,
                }))
            })
            .collect();
        if !indexes.is_empty() {
            create.insert(list.to_owned(), Value::Array(indexes));
        }
    }
    Some(Shape {
        keys,
        create: Value::Object(create),
    })
}

/// The items of `keys` in `table` as they are now (strongly consistent), in the order of
/// `keys`; `None` where there is none.
pub(crate) async fn read_now(
    engine: &str,
    headers: &[(String, String)],
    table: &str,
    key_attributes: &[String],
    keys: &[Map<String, Value>],
) -> Result<Vec<Option<Map<String, Value>>>, Refused> {
    let mut found: Vec<Map<String, Value>> = Vec::with_capacity(keys.len());
    // `BatchGetItem` refuses a key given twice.
    let mut distinct: Vec<&Map<String, Value>> = Vec::with_capacity(keys.len());
    for key in keys {
        if !distinct.contains(&key) {
            distinct.push(key);
        }
    }
    for chunk in distinct.chunks(100) {
        let mut wanted: Vec<Value> = chunk
            .iter()
            .map(|key| Value::Object((*key).clone()))
            .collect();
        // The engine may leave keys unprocessed; a handful of rounds, as a client would.
        for _ in 0..8 {
            if wanted.is_empty() {
                break;
            }
            let answer = call(
                engine,
                headers,
                "BatchGetItem",
                &json!({ "RequestItems": { table: { "Keys": wanted, "ConsistentRead": true } } }),
            )
            .await?;
            let items = answer
                .pointer(&format!("/Responses/{}", pointer_segment(table)))
                .and_then(Value::as_array);
            found.extend(
                items
                    .into_iter()
                    .flatten()
                    .filter_map(|item| item.as_object().cloned()),
            );
            wanted = answer
                .pointer(&format!("/UnprocessedKeys/{}/Keys", pointer_segment(table)))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
        }
        if !wanted.is_empty() {
            return Err(Refused);
        }
    }
    Ok(keys
        .iter()
        .map(|key| {
            found
                .iter()
                .find(|item| {
                    key_attributes
                        .iter()
                        .all(|name| item.get(name) == key.get(name))
                })
                .cloned()
        })
        .collect())
}

/// Makes `shape`'s table on the replica, with the engine's time to live, holding every item
/// the engine holds now.
pub(crate) async fn copy_table(
    engine: &str,
    replica: &str,
    headers: &[(String, String)],
    shape: &Shape,
) -> Result<(), Refused> {
    let name = shape
        .create
        .get("TableName")
        .cloned()
        .unwrap_or(Value::Null);
    let named = json!({ "TableName": name });
    // Gone already, or never made: either is fine.
    let _ = call(replica, headers, "DeleteTable", &named).await;
    call(replica, headers, "CreateTable", &shape.create).await?;
    if let Ok(ttl) = call(engine, headers, "DescribeTimeToLive", &named).await {
        let description = ttl.get("TimeToLiveDescription");
        let enabled = description
            .and_then(|d| d.get("TimeToLiveStatus"))
            .and_then(Value::as_str)
            .is_some_and(|status| matches!(status, "ENABLED" | "ENABLING"));
        if let Some(attribute) = description
            .and_then(|d| d.get("AttributeName"))
            .filter(|_| enabled)
        {
            let specification = json!({
                "TableName": name,
                "TimeToLiveSpecification": { "Enabled": true, "AttributeName": attribute },
            });
            call(replica, headers, "UpdateTimeToLive", &specification).await?;
        }
    }
    let mut start: Option<Value> = None;
    loop {
        let mut scan = json!({ "TableName": name, "ConsistentRead": true });
        if let (Some(start), Some(scan)) = (start.take(), scan.as_object_mut()) {
            scan.insert("ExclusiveStartKey".to_owned(), start);
        }
        let page = call(engine, headers, "Scan", &scan).await?;
        let items: Vec<Value> = page
            .get("Items")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for chunk in items.chunks(25) {
            let mut requests: Vec<Value> = chunk
                .iter()
                .map(|item| json!({ "PutRequest": { "Item": item } }))
                .collect();
            for _ in 0..8 {
                if requests.is_empty() {
                    break;
                }
                let table = name.as_str().unwrap_or_default();
                let answer = call(
                    replica,
                    headers,
                    "BatchWriteItem",
                    &json!({ "RequestItems": { table: requests } }),
                )
                .await?;
                requests = answer
                    .pointer(&format!("/UnprocessedItems/{}", pointer_segment(table)))
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
            }
            if !requests.is_empty() {
                return Err(Refused);
            }
        }
        match page.get("LastEvaluatedKey") {
            Some(next) => start = Some(next.clone()),
            None => return Ok(()),
        }
    }
}

/// A table name as one segment of a JSON pointer (`~` and `/` escaped).
fn pointer_segment(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_description_becomes_the_same_table_on_demand() {
        let described = json!({
            "TableName": "t",
            "KeySchema": [
                { "AttributeName": "PK", "KeyType": "HASH" },
                { "AttributeName": "SK", "KeyType": "RANGE" },
            ],
            "AttributeDefinitions": [
                { "AttributeName": "PK", "AttributeType": "S" },
                { "AttributeName": "SK", "AttributeType": "S" },
            ],
            "ProvisionedThroughput": { "ReadCapacityUnits": 5, "WriteCapacityUnits": 5 },
            "GlobalSecondaryIndexes": [{
                "IndexName": "gsi1",
                "KeySchema": [{ "AttributeName": "SK", "KeyType": "HASH" }],
                "Projection": { "ProjectionType": "KEYS_ONLY" },
                "IndexStatus": "ACTIVE",
                "ProvisionedThroughput": { "ReadCapacityUnits": 5, "WriteCapacityUnits": 5 },
            }],
            "ItemCount": 3,
        });
        let Some(shape) = shape(&described) else {
            panic!("no shape read from {described}");
        };
        assert_eq!(shape.keys, ["PK", "SK"]);
        assert_eq!(shape.create["BillingMode"], "PAY_PER_REQUEST");
        assert_eq!(
            shape.create["GlobalSecondaryIndexes"],
            json!([{
                "IndexName": "gsi1",
                "KeySchema": [{ "AttributeName": "SK", "KeyType": "HASH" }],
                "Projection": { "ProjectionType": "KEYS_ONLY" },
            }])
        );
        assert!(shape.create.get("ProvisionedThroughput").is_none());
        assert!(shape.create.get("LocalSecondaryIndexes").is_none());
        assert!(super::shape(&json!({ "TableName": "t" })).is_none());
    }

    #[test]
    fn table_names_are_escaped_in_pointers() {
        assert_eq!(pointer_segment("a/b~c"), "a~1b~0c");
    }
}
