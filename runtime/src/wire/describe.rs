//! SDK requests as DynamoDB's JSON, for `params()` and `explain()`.
//!
//! Each operation builds its request once, as the SDK's input; that value is sent as it is,
//! and described here, so the request printed cannot drift from the request sent (the
//! `params` integration test compares the two with the body the SDK put on the wire). The
//! legacy parameters (`Expected`, `AttributesToGet`, `KeyConditions`, ...) are never set by the
//! library and are not described.

use super::{item, Body, Request};
use aws_sdk_dynamodb::operation::batch_get_item::builders::BatchGetItemInputBuilder;
use aws_sdk_dynamodb::operation::batch_write_item::builders::BatchWriteItemInputBuilder;
use aws_sdk_dynamodb::operation::create_table::builders::CreateTableInputBuilder;
use aws_sdk_dynamodb::operation::delete_item::builders::DeleteItemInputBuilder;
use aws_sdk_dynamodb::operation::get_item::builders::GetItemInputBuilder;
use aws_sdk_dynamodb::operation::put_item::builders::PutItemInputBuilder;
use aws_sdk_dynamodb::operation::query::builders::QueryInputBuilder;
use aws_sdk_dynamodb::operation::scan::builders::ScanInputBuilder;
use aws_sdk_dynamodb::operation::transact_get_items::builders::TransactGetItemsInputBuilder;
use aws_sdk_dynamodb::operation::transact_write_items::builders::TransactWriteItemsInputBuilder;
use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemInputBuilder;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, GlobalSecondaryIndex, GlobalSecondaryIndexUpdate,
    KeySchemaElement, KeysAndAttributes, LocalSecondaryIndex, Projection, ProvisionedThroughput,
    Tag, TransactGetItem, TransactWriteItem, WriteRequest,
};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// A request (or part of one) as DynamoDB's JSON.
pub(crate) trait Describe {
    /// The JSON DynamoDB receives.
    fn describe(&self) -> Value;
}

/// The request an SDK input describes, named by its operation.
pub(crate) fn request(operation: &'static str, input: &impl Describe) -> Request {
    Request {
        operation,
        body: input.describe(),
    }
}

fn text(value: Option<&str>) -> Option<Value> {
    value.map(|text| json!(text))
}

fn code(value: Option<&impl AsRef<str>>) -> Option<Value> {
    value.map(|code| json!(code.as_ref()))
}

fn names(names: Option<&HashMap<String, String>>) -> Option<Value> {
    names.map(|names| json!(names))
}

fn attributes(values: Option<&HashMap<String, AttributeValue>>) -> Option<Value> {
    values.map(item)
}

fn number(value: Option<i32>) -> Option<Value> {
    value.map(|number| json!(number))
}

fn flag(value: Option<bool>) -> Option<Value> {
    value.map(|flag| json!(flag))
}

fn body(body: Body) -> Value {
    Value::Object(body.0)
}

/// The fields every single-item write's input has after its own: condition, placeholders and
/// what to return. A macro, since the three inputs share getters but no trait.
macro_rules! single_write_fields {
    ($($Input:ty),*) => {$(
        impl WriteFields for $Input {
            fn add_to(&self, body: Body) -> Body {
                body.field(
                    "ConditionExpression",
                    text(self.get_condition_expression().as_deref()),
                )
                .field(
                    "ExpressionAttributeNames",
                    names(self.get_expression_attribute_names().as_ref()),
                )
                .field(
                    "ExpressionAttributeValues",
                    attributes(self.get_expression_attribute_values().as_ref()),
                )
                .field("ReturnValues", code(self.get_return_values().as_ref()))
                .field(
                    "ReturnValuesOnConditionCheckFailure",
                    code(self.get_return_values_on_condition_check_failure().as_ref()),
                )
                .field(
                    "ReturnConsumedCapacity",
                    code(self.get_return_consumed_capacity().as_ref()),
                )
                .field(
                    "ReturnItemCollectionMetrics",
                    code(self.get_return_item_collection_metrics().as_ref()),
                )
            }
        }
    )*};
}

/// The shared fields of a single-item write's input.
trait WriteFields {
    fn add_to(&self, body: Body) -> Body;
}

single_write_fields!(
    PutItemInputBuilder,
    DeleteItemInputBuilder,
    UpdateItemInputBuilder
);

impl Body {
    fn write_fields(self, input: &impl WriteFields) -> Body {
        input.add_to(self)
    }
}

impl Describe for PutItemInputBuilder {
    fn describe(&self) -> Value {
        body(
            Body::default()
                .field("TableName", text(self.get_table_name().as_deref()))
                .field("Item", attributes(self.get_item().as_ref()))
                .write_fields(self),
        )
    }
}

impl Describe for DeleteItemInputBuilder {
    fn describe(&self) -> Value {
        body(
            Body::default()
                .field("TableName", text(self.get_table_name().as_deref()))
                .field("Key", attributes(self.get_key().as_ref()))
                .write_fields(self),
        )
    }
}

impl Describe for UpdateItemInputBuilder {
    fn describe(&self) -> Value {
        body(
            Body::default()
                .field("TableName", text(self.get_table_name().as_deref()))
                .field("Key", attributes(self.get_key().as_ref()))
                .field(
                    "UpdateExpression",
                    text(self.get_update_expression().as_deref()),
                )
                .write_fields(self),
        )
    }
}

impl Describe for GetItemInputBuilder {
    fn describe(&self) -> Value {
        body(
            Body::default()
                .field("TableName", text(self.get_table_name().as_deref()))
                .field("Key", attributes(self.get_key().as_ref()))
                .field("ConsistentRead", flag(*self.get_consistent_read()))
                .field(
                    "ProjectionExpression",
                    text(self.get_projection_expression().as_deref()),
                )
                .field(
                    "ExpressionAttributeNames",
                    names(self.get_expression_attribute_names().as_ref()),
                )
                .field(
                    "ReturnConsumedCapacity",
                    code(self.get_return_consumed_capacity().as_ref()),
                ),
        )
    }
}

/// The fields `Query` and `Scan` have in common, read from either input builder (their getters
/// share names, though no trait joins them).
macro_rules! read_fields {
    ($input:expr, $body:expr) => {
        $body
            .field("TableName", text($input.get_table_name().as_deref()))
            .field("IndexName", text($input.get_index_name().as_deref()))
            .field(
                "FilterExpression",
                text($input.get_filter_expression().as_deref()),
            )
            .field(
                "ProjectionExpression",
                text($input.get_projection_expression().as_deref()),
            )
            .field(
                "ExpressionAttributeNames",
                names($input.get_expression_attribute_names().as_ref()),
            )
            .field(
                "ExpressionAttributeValues",
                attributes($input.get_expression_attribute_values().as_ref()),
            )
            .field("Select", code($input.get_select().as_ref()))
            .field("Limit", number(*$input.get_limit()))
            .field("ConsistentRead", flag(*$input.get_consistent_read()))
            .field(
                "ExclusiveStartKey",
                attributes($input.get_exclusive_start_key().as_ref()),
            )
            .field(
                "ReturnConsumedCapacity",
                code($input.get_return_consumed_capacity().as_ref()),
            )
    };
}

impl Describe for QueryInputBuilder {
    fn describe(&self) -> Value {
        body(
            read_fields!(self, Body::default())
                .field(
                    "KeyConditionExpression",
                    text(self.get_key_condition_expression().as_deref()),
                )
                .field("ScanIndexForward", flag(*self.get_scan_index_forward())),
        )
    }
}

impl Describe for ScanInputBuilder {
    fn describe(&self) -> Value {
        body(
            read_fields!(self, Body::default())
                .field("Segment", number(*self.get_segment()))
                .field("TotalSegments", number(*self.get_total_segments())),
        )
    }
}

impl Describe for KeysAndAttributes {
    fn describe(&self) -> Value {
        body(
            Body::default()
                .field(
                    "Keys",
                    Value::Array(self.keys().iter().map(item).collect::<Vec<_>>()),
                )
                .field("ConsistentRead", flag(self.consistent_read()))
                .field("ProjectionExpression", text(self.projection_expression()))
                .field(
                    "ExpressionAttributeNames",
                    names(self.expression_attribute_names()),
                ),
        )
    }
}

impl Describe for BatchGetItemInputBuilder {
    fn describe(&self) -> Value {
        let tables = self.get_request_items().as_ref().map(|tables| {
            let tables: Map<String, Value> = tables
                .iter()
                .map(|(table, keys)| (table.clone(), keys.describe()))
                .collect();
            Value::Object(tables)
        });
        body(Body::default().field("RequestItems", tables).field(
            "ReturnConsumedCapacity",
            code(self.get_return_consumed_capacity().as_ref()),
        ))
    }
}

impl Describe for WriteRequest {
    fn describe(&self) -> Value {
        match (self.put_request(), self.delete_request()) {
            (Some(put), _) => json!({ "PutRequest": { "Item": item(put.item()) } }),
            (None, Some(delete)) => json!({ "DeleteRequest": { "Key": item(delete.key()) } }),
            (None, None) => json!({}),
        }
    }
}

impl Describe for BatchWriteItemInputBuilder {
    fn describe(&self) -> Value {
        let tables = self.get_request_items().as_ref().map(|tables| {
            let tables: Map<String, Value> = tables
                .iter()
                .map(|(table, writes)| {
                    let writes = writes.iter().map(Describe::describe).collect::<Vec<_>>();
                    (table.clone(), Value::Array(writes))
                })
                .collect();
            Value::Object(tables)
        });
        body(
            Body::default()
                .field("RequestItems", tables)
                .field(
                    "ReturnConsumedCapacity",
                    code(self.get_return_consumed_capacity().as_ref()),
                )
                .field(
                    "ReturnItemCollectionMetrics",
                    code(self.get_return_item_collection_metrics().as_ref()),
                ),
        )
    }
}

/// The parts every write of a transaction may have, after its own (`Key`, `Item`, ...).
fn conditional_write(
    own: Body,
    table: &str,
    condition: Option<&str>,
    attribute_names: Option<&HashMap<String, String>>,
    values: Option<&HashMap<String, AttributeValue>>,
    on_failure: Option<&impl AsRef<str>>,
) -> Value {
    body(
        own.field("TableName", json!(table))
            .field("ConditionExpression", text(condition))
            .field("ExpressionAttributeNames", names(attribute_names))
            .field("ExpressionAttributeValues", attributes(values))
            .field("ReturnValuesOnConditionCheckFailure", code(on_failure)),
    )
}

impl Describe for TransactWriteItem {
    fn describe(&self) -> Value {
        if let Some(put) = self.put() {
            let own = Body::default().field("Item", item(put.item()));
            let write = conditional_write(
                own,
                put.table_name(),
                put.condition_expression(),
                put.expression_attribute_names(),
                put.expression_attribute_values(),
                put.return_values_on_condition_check_failure(),
            );
            return json!({ "Put": write });
        }
        if let Some(update) = self.update() {
            let own = Body::default()
                .field("Key", item(update.key()))
                .field("UpdateExpression", json!(update.update_expression()));
            let write = conditional_write(
                own,
                update.table_name(),
                update.condition_expression(),
                update.expression_attribute_names(),
                update.expression_attribute_values(),
                update.return_values_on_condition_check_failure(),
            );
            return json!({ "Update": write });
        }
        if let Some(delete) = self.delete() {
            let own = Body::default().field("Key", item(delete.key()));
            let write = conditional_write(
                own,
                delete.table_name(),
                delete.condition_expression(),
                delete.expression_attribute_names(),
                delete.expression_attribute_values(),
                delete.return_values_on_condition_check_failure(),
            );
            return json!({ "Delete": write });
        }
        if let Some(check) = self.condition_check() {
            let own = Body::default().field("Key", item(check.key()));
            let write = conditional_write(
                own,
                check.table_name(),
                Some(check.condition_expression()),
                check.expression_attribute_names(),
                check.expression_attribute_values(),
                check.return_values_on_condition_check_failure(),
            );
            return json!({ "ConditionCheck": write });
        }
        json!({})
    }
}

impl Describe for TransactWriteItemsInputBuilder {
    fn describe(&self) -> Value {
        let items = self
            .get_transact_items()
            .as_ref()
            .map(|items| Value::Array(items.iter().map(Describe::describe).collect()));
        body(
            Body::default()
                .field("TransactItems", items)
                .field(
                    "ClientRequestToken",
                    text(self.get_client_request_token().as_deref()),
                )
                .field(
                    "ReturnConsumedCapacity",
                    code(self.get_return_consumed_capacity().as_ref()),
                )
                .field(
                    "ReturnItemCollectionMetrics",
                    code(self.get_return_item_collection_metrics().as_ref()),
                ),
        )
    }
}

impl Describe for TransactGetItem {
    fn describe(&self) -> Value {
        match self.get() {
            Some(get) => json!({ "Get": body(Body::default()
                .field("TableName", json!(get.table_name()))
                .field("Key", item(get.key()))
                .field("ProjectionExpression", text(get.projection_expression()))
                .field("ExpressionAttributeNames", names(get.expression_attribute_names()))) }),
            None => json!({}),
        }
    }
}

impl Describe for TransactGetItemsInputBuilder {
    fn describe(&self) -> Value {
        let items = self
            .get_transact_items()
            .as_ref()
            .map(|items| Value::Array(items.iter().map(Describe::describe).collect()));
        body(Body::default().field("TransactItems", items).field(
            "ReturnConsumedCapacity",
            code(self.get_return_consumed_capacity().as_ref()),
        ))
    }
}

fn key_schema(elements: &[KeySchemaElement]) -> Value {
    let elements = elements.iter().map(|element| {
        json!({ "AttributeName": element.attribute_name(), "KeyType": element.key_type().as_str() })
    });
    Value::Array(elements.collect())
}

fn projection(projection: Option<&Projection>) -> Option<Value> {
    projection.map(|projection| {
        body(
            Body::default()
                .field("ProjectionType", code(projection.projection_type()))
                .field(
                    "NonKeyAttributes",
                    (!projection.non_key_attributes().is_empty())
                        .then(|| json!(projection.non_key_attributes())),
                ),
        )
    })
}

fn throughput(throughput: Option<&ProvisionedThroughput>) -> Option<Value> {
    throughput.map(|throughput| {
        json!({
            "ReadCapacityUnits": throughput.read_capacity_units(),
            "WriteCapacityUnits": throughput.write_capacity_units(),
        })
    })
}

impl Describe for AttributeDefinition {
    fn describe(&self) -> Value {
        json!({ "AttributeName": self.attribute_name(), "AttributeType": self.attribute_type().as_str() })
    }
}

impl Describe for GlobalSecondaryIndex {
    fn describe(&self) -> Value {
        body(
            Body::default()
                .field("IndexName", json!(self.index_name()))
                .field("KeySchema", key_schema(self.key_schema()))
                .field("Projection", projection(self.projection()))
                .field(
                    "ProvisionedThroughput",
                    throughput(self.provisioned_throughput()),
                ),
        )
    }
}

/// An index created or deleted by `UpdateTable` (the library never updates an index's
/// throughput in place).
impl Describe for GlobalSecondaryIndexUpdate {
    fn describe(&self) -> Value {
        match (self.create(), self.delete()) {
            (Some(create), _) => json!({ "Create": body(
                Body::default()
                    .field("IndexName", json!(create.index_name()))
                    .field("KeySchema", key_schema(create.key_schema()))
                    .field("Projection", projection(create.projection()))
                    .field("ProvisionedThroughput", throughput(create.provisioned_throughput())),
            ) }),
            (None, Some(delete)) => json!({ "Delete": { "IndexName": delete.index_name() } }),
            (None, None) => json!({}),
        }
    }
}

impl Describe for LocalSecondaryIndex {
    fn describe(&self) -> Value {
        body(
            Body::default()
                .field("IndexName", json!(self.index_name()))
                .field("KeySchema", key_schema(self.key_schema()))
                .field("Projection", projection(self.projection())),
        )
    }
}

impl Describe for Tag {
    fn describe(&self) -> Value {
        json!({ "Key": self.key(), "Value": self.value() })
    }
}

/// A list of parts, if there is one.
fn list<T: Describe>(items: Option<&Vec<T>>) -> Option<Value> {
    items.map(|items| Value::Array(items.iter().map(Describe::describe).collect()))
}

/// The table as the library creates it: on-demand, with its indexes. Settings the library
/// never sets (streams, encryption, warm throughput, resource policies, global tables) are not
/// described.
impl Describe for CreateTableInputBuilder {
    fn describe(&self) -> Value {
        body(
            Body::default()
                .field("TableName", text(self.get_table_name().as_deref()))
                .field(
                    "AttributeDefinitions",
                    list(self.get_attribute_definitions().as_ref()),
                )
                .field(
                    "KeySchema",
                    self.get_key_schema().as_deref().map(key_schema),
                )
                .field("BillingMode", code(self.get_billing_mode().as_ref()))
                .field(
                    "ProvisionedThroughput",
                    throughput(self.get_provisioned_throughput().as_ref()),
                )
                .field(
                    "GlobalSecondaryIndexes",
                    list(self.get_global_secondary_indexes().as_ref()),
                )
                .field(
                    "LocalSecondaryIndexes",
                    list(self.get_local_secondary_indexes().as_ref()),
                )
                .field("TableClass", code(self.get_table_class().as_ref()))
                .field(
                    "DeletionProtectionEnabled",
                    flag(*self.get_deletion_protection_enabled()),
                )
                .field("Tags", list(self.get_tags().as_ref())),
        )
    }
}
