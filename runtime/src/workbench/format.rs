//! NoSQL Workbench's data model format, version 3.0: what its "Export data model" writes and
//! "Import data model" reads, as AWS's published models (`schema_design/SchemaExamples` in
//! `aws-samples/aws-dynamodb-examples`) spell it. Fields the library neither writes nor reads
//! (`DataAccess`, the metadata's dates) pass through as they are.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A whole model: one or more tables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Model {
    pub model_name: String,
    pub model_metadata: Metadata,
    pub data_model: Vec<TableModel>,
}

/// Who made the model, and when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Metadata {
    #[serde(default)]
    pub author: String,
    #[serde(default)]
    pub date_created: String,
    #[serde(default)]
    pub date_last_modified: String,
    #[serde(default)]
    pub description: String,
    #[serde(rename = "AWSService")]
    pub aws_service: String,
    pub version: String,
}

/// One table: its keys, attributes, facets (one per entity), indexes and sample items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TableModel {
    pub table_name: String,
    pub key_attributes: KeyAttributes,
    #[serde(default)]
    pub non_key_attributes: Vec<AttributeDefinition>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub table_facets: Vec<Facet>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub global_secondary_indexes: Vec<SecondaryIndex>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub local_secondary_indexes: Vec<SecondaryIndex>,
    /// Sample items, each in DynamoDB's JSON (`{"PK": {"S": "ACC#1"}}`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub table_data: Vec<Value>,
    #[serde(default = "data_access", skip_serializing_if = "Value::is_null")]
    pub data_access: Value,
    #[serde(default = "on_demand")]
    pub billing_mode: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioned_capacity_settings: Option<Value>,
}

/// A key: a partition key attribute, and a sort key attribute if there is one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct KeyAttributes {
    pub partition_key: AttributeDefinition,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_key: Option<AttributeDefinition>,
}

/// An attribute's name and DynamoDB type (`S`, `N`, `B`, `BOOL`, `NULL`, `M`, `L`, `SS`,
/// `NS`, `BS`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct AttributeDefinition {
    pub attribute_name: String,
    pub attribute_type: String,
}

/// One entity's view of the table: its keys' aliases (what the Workbench shows as column
/// names) and its sample items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Facet {
    pub facet_name: String,
    pub key_attribute_alias: KeyAttributeAlias,
    #[serde(default)]
    pub table_data: Vec<Value>,
    #[serde(default)]
    pub non_key_attributes: Vec<String>,
    #[serde(default = "data_access", skip_serializing_if = "Value::is_null")]
    pub data_access: Value,
}

/// The names a facet shows for the table's keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct KeyAttributeAlias {
    pub partition_key_alias: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_key_alias: Option<String>,
}

/// A global or local secondary index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SecondaryIndex {
    pub index_name: String,
    pub key_attributes: KeyAttributes,
    pub projection: Projection,
}

/// Which attributes an index holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Projection {
    /// `ALL`, `KEYS_ONLY` or `INCLUDE`.
    pub projection_type: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub non_key_attributes: Vec<String>,
}

/// What the Workbench writes for a table or facet without access patterns.
pub(crate) fn data_access() -> Value {
    serde_json::json!({ "MySql": {} })
}

/// A model that states no billing mode is billed on demand.
fn on_demand() -> String {
    "PAY_PER_REQUEST".to_owned()
}
