//! The table as a CloudFormation `AWS::DynamoDB::Table` resource.

use crate::op::table::{index_keys, CreateTable};
use crate::schema::{IndexKind, IndexSchema};
use serde::Serialize;
use std::fmt;

/// A CloudFormation `AWS::DynamoDB::Table` resource: `Type` and `Properties`, as a template's
/// `Resources` entry holds it. Serialize it (it is [`Serialize`]) or print it (its
/// [`Display`](fmt::Display) is pretty JSON, which YAML templates take as well).
///
/// The properties are those of the `CreateTable` request the library sends, with time to
/// live as `TimeToLiveSpecification`; billing is on demand, as for that request.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CloudFormationTable {
    r#type: &'static str,
    properties: Properties,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
struct Properties {
    table_name: String,
    billing_mode: &'static str,
    attribute_definitions: Vec<AttributeDefinition>,
    key_schema: Vec<KeySchemaElement>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    global_secondary_indexes: Vec<Index>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    local_secondary_indexes: Vec<Index>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_specification: Option<StreamSpecification>,
    #[serde(skip_serializing_if = "Option::is_none")]
    time_to_live_specification: Option<TimeToLiveSpecification>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
struct AttributeDefinition {
    attribute_name: &'static str,
    attribute_type: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
struct KeySchemaElement {
    attribute_name: &'static str,
    key_type: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
struct Index {
    index_name: &'static str,
    key_schema: Vec<KeySchemaElement>,
    projection: Projection,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
struct Projection {
    projection_type: &'static str,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    non_key_attributes: &'static [&'static str],
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
struct StreamSpecification {
    stream_view_type: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
struct TimeToLiveSpecification {
    attribute_name: &'static str,
    enabled: bool,
}

fn key_schema(keys: &[(&'static str, bool)]) -> Vec<KeySchemaElement> {
    keys.iter()
        .map(|(name, partition)| KeySchemaElement {
            attribute_name: name,
            key_type: if *partition { "HASH" } else { "RANGE" },
        })
        .collect()
}

fn index(index: &IndexSchema) -> Index {
    Index {
        index_name: index.name,
        key_schema: key_schema(&index_keys(index)),
        projection: Projection {
            projection_type: index.projection.projection_type(),
            non_key_attributes: index.projection.non_key_attributes(),
        },
    }
}

impl CreateTable {
    /// This request as a CloudFormation `AWS::DynamoDB::Table` resource.
    pub fn cloudformation(&self) -> CloudFormationTable {
        let of_kind = |kind: IndexKind| {
            let indexes = self.indexes.iter().filter(move |index| index.kind == kind);
            indexes.map(|schema| index(schema)).collect()
        };
        CloudFormationTable {
            r#type: "AWS::DynamoDB::Table",
            properties: Properties {
                table_name: self.table_name.clone(),
                billing_mode: "PAY_PER_REQUEST",
                attribute_definitions: self
                    .attributes
                    .iter()
                    .map(|(name, kind)| AttributeDefinition {
                        attribute_name: name,
                        attribute_type: kind.code(),
                    })
                    .collect(),
                key_schema: key_schema(&self.table_keys()),
                global_secondary_indexes: of_kind(IndexKind::Global),
                local_secondary_indexes: of_kind(IndexKind::Local),
                stream_specification: self.stream.map(|view| StreamSpecification {
                    stream_view_type: view.as_str(),
                }),
                time_to_live_specification: self.ttl_attribute.map(|attribute_name| {
                    TimeToLiveSpecification {
                        attribute_name,
                        enabled: true,
                    }
                }),
            },
        }
    }
}

impl fmt::Display for CloudFormationTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let json = serde_json::to_string_pretty(self).map_err(|_| fmt::Error)?;
        f.write_str(&json)
    }
}
