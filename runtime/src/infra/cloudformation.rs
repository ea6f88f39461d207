//! The table as a CloudFormation `AWS::DynamoDB::Table` resource.

use super::auto_scaling::{cloudformation_resources, ScalingTarget};
use crate::op::table::{index_keys, CreateTable};
use crate::schema::{IndexKind, IndexSchema};
use serde::Serialize;
use std::fmt;

/// A CloudFormation `AWS::DynamoDB::Table` resource: `Type` and `Properties`, as a template's
/// `Resources` entry holds it. Serialize it (it is [`Serialize`]) or print it (its
/// [`Display`](fmt::Display) is pretty JSON, which YAML templates take as well).
///
/// The properties are those of the `CreateTable` request the library sends, with time to
/// live as `TimeToLiveSpecification`; billing is on demand, as for that request. By default
/// the resource also protects its data: `DeletionPolicy` and `UpdateReplacePolicy` `Retain`,
/// `DeletionProtectionEnabled`, point-in-time recovery and KMS encryption (see
/// [`CreateTable::unprotected`], [`kms_key`](CreateTable::kms_key),
/// [`tag`](CreateTable::tag) and the capacity settings).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CloudFormationTable {
    r#type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    deletion_policy: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    update_replace_policy: Option<&'static str>,
    properties: Body,
    /// What auto scaling moves: resources of their own, beside the table's.
    #[serde(skip)]
    scaling: Vec<ScalingTarget>,
}

impl CloudFormationTable {
    /// The Application Auto Scaling resources of a table with
    /// [`CreateTable::auto_scaling`], for a template whose `Resources` hold the table under
    /// the logical id `table`: for the table and each global index, a scalable target
    /// (`{table}ReadScaling`, `{table}GSI1WriteScaling`, ...) and its target-tracking policy
    /// (`…ScalingPolicy`), keyed by logical id. Empty without auto scaling.
    pub fn auto_scaling_resources(
        &self,
        table: &str,
    ) -> serde_json::Map<String, serde_json::Value> {
        cloudformation_resources(&self.scaling, table)
    }
}

/// The properties of a table, or of a global table (with [`CreateTable::replicas`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
enum Body {
    Table(Box<Properties>),
    Global(Box<GlobalProperties>),
}

/// What a table and a global table state alike: the `CreateTable` request's shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
struct Shape {
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

/// `AWS::DynamoDB::GlobalTable`'s properties: the table's shape once, what each replica
/// keeps in `Replicas`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
struct GlobalProperties {
    #[serde(flatten)]
    shape: Shape,
    #[serde(rename = "SSESpecification")]
    sse_specification: GlobalEncryption,
    #[serde(skip_serializing_if = "Option::is_none")]
    write_on_demand_throughput_settings: Option<MaxWrites>,
    #[serde(skip_serializing_if = "Option::is_none")]
    warm_throughput: Option<WarmThroughput>,
    replicas: Vec<Replica>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
struct GlobalEncryption {
    #[serde(rename = "SSEEnabled")]
    enabled: bool,
    #[serde(rename = "SSEType")]
    kind: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
struct MaxWrites {
    max_write_request_units: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
struct MaxReads {
    max_read_request_units: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
struct ReplicaKey {
    #[serde(rename = "KMSMasterKeyId")]
    key: String,
}

/// One Region's replica: its Region (the stack's own as `{"Ref": "AWS::Region"}`) and what
/// protects its data.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
struct Replica {
    region: serde_json::Value,
    deletion_protection_enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    point_in_time_recovery_specification: Option<PointInTimeRecovery>,
    #[serde(rename = "SSESpecification", skip_serializing_if = "Option::is_none")]
    sse_specification: Option<ReplicaKey>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tags: Vec<Tag>,
    #[serde(skip_serializing_if = "Option::is_none")]
    read_on_demand_throughput_settings: Option<MaxReads>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_policy: Option<ResourcePolicy>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
struct Properties {
    #[serde(flatten)]
    shape: Shape,
    deletion_protection_enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    point_in_time_recovery_specification: Option<PointInTimeRecovery>,
    #[serde(rename = "SSESpecification")]
    sse_specification: Encryption,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tags: Vec<Tag>,
    #[serde(skip_serializing_if = "Option::is_none")]
    provisioned_throughput: Option<ProvisionedThroughput>,
    #[serde(skip_serializing_if = "Option::is_none")]
    on_demand_throughput: Option<OnDemandThroughput>,
    #[serde(skip_serializing_if = "Option::is_none")]
    warm_throughput: Option<WarmThroughput>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_policy: Option<ResourcePolicy>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
struct PointInTimeRecovery {
    point_in_time_recovery_enabled: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
struct Encryption {
    #[serde(rename = "SSEEnabled")]
    enabled: bool,
    #[serde(rename = "SSEType")]
    kind: &'static str,
    #[serde(rename = "KMSMasterKeyId", skip_serializing_if = "Option::is_none")]
    key: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
struct Tag {
    key: String,
    value: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
struct OnDemandThroughput {
    max_read_request_units: u64,
    max_write_request_units: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
struct WarmThroughput {
    read_units_per_second: u64,
    write_units_per_second: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
struct ResourcePolicy {
    policy_document: serde_json::Value,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    provisioned_throughput: Option<ProvisionedThroughput>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
struct ProvisionedThroughput {
    read_capacity_units: u64,
    write_capacity_units: u64,
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
        provisioned_throughput: None,
    }
}

impl CreateTable {
    /// This request as a CloudFormation `AWS::DynamoDB::Table` resource, or, with
    /// [`replicas`](Self::replicas), an `AWS::DynamoDB::GlobalTable`.
    pub fn cloudformation(&self) -> CloudFormationTable {
        let protection = &self.protection;
        let retain = protection.retain.then_some("Retain");
        let (r#type, properties) = if protection.replicas.is_empty() {
            let properties = self.table_properties();
            ("AWS::DynamoDB::Table", Body::Table(Box::new(properties)))
        } else {
            let properties = self.global_properties();
            (
                "AWS::DynamoDB::GlobalTable",
                Body::Global(Box::new(properties)),
            )
        };
        CloudFormationTable {
            r#type,
            deletion_policy: retain,
            update_replace_policy: retain,
            properties,
            scaling: self.scaling_targets(),
        }
    }

    fn attribute_definitions(&self) -> Vec<AttributeDefinition> {
        (self.attributes.iter())
            .map(|(name, kind)| AttributeDefinition {
                attribute_name: name,
                attribute_type: kind.code(),
            })
            .collect()
    }

    fn indexes_of(&self, kind: IndexKind) -> Vec<Index> {
        let indexes = self.indexes.iter().filter(move |index| index.kind == kind);
        let throughput = self
            .provisioned_throughput()
            .filter(|_| kind == IndexKind::Global);
        (indexes.map(|schema| index(schema)))
            .map(|index| Index {
                provisioned_throughput: throughput.clone(),
                ..index
            })
            .collect()
    }

    /// The table's provisioned capacity, which each global index gets too.
    fn provisioned_throughput(&self) -> Option<ProvisionedThroughput> {
        (self.protection.provisioned).map(|provisioned| ProvisionedThroughput {
            read_capacity_units: provisioned.units.read,
            write_capacity_units: provisioned.units.write,
        })
    }

    fn tags(&self) -> Vec<Tag> {
        (self.protection.tags.iter())
            .map(|(key, value)| Tag {
                key: key.clone(),
                value: value.clone(),
            })
            .collect()
    }

    fn time_to_live(&self) -> Option<TimeToLiveSpecification> {
        self.ttl_attribute
            .map(|attribute_name| TimeToLiveSpecification {
                attribute_name,
                enabled: true,
            })
    }

    fn point_in_time_recovery(&self) -> Option<PointInTimeRecovery> {
        self.protection
            .point_in_time_recovery
            .then_some(PointInTimeRecovery {
                point_in_time_recovery_enabled: true,
            })
    }

    fn attached_policy(&self) -> Option<ResourcePolicy> {
        (self.protection.resource_policy.clone())
            .map(|policy_document| ResourcePolicy { policy_document })
    }

    fn shape(&self) -> Shape {
        Shape {
            table_name: self.table_name.clone(),
            billing_mode: match self.protection.provisioned {
                Some(_) => "PROVISIONED",
                None => "PAY_PER_REQUEST",
            },
            attribute_definitions: self.attribute_definitions(),
            key_schema: key_schema(&self.table_keys()),
            global_secondary_indexes: self.indexes_of(IndexKind::Global),
            local_secondary_indexes: self.indexes_of(IndexKind::Local),
            stream_specification: self.stream.map(|view| StreamSpecification {
                stream_view_type: view.as_str(),
            }),
            time_to_live_specification: self.time_to_live(),
        }
    }

    fn table_properties(&self) -> Properties {
        let protection = &self.protection;
        Properties {
            shape: self.shape(),
            deletion_protection_enabled: protection.deletion_protection,
            point_in_time_recovery_specification: self.point_in_time_recovery(),
            sse_specification: Encryption {
                enabled: true,
                kind: "KMS",
                key: protection.kms_key.clone(),
            },
            tags: self.tags(),
            provisioned_throughput: self.provisioned_throughput(),
            on_demand_throughput: (protection.on_demand_maximum)
                .filter(|_| protection.provisioned.is_none())
                .map(|units| OnDemandThroughput {
                    max_read_request_units: units.read,
                    max_write_request_units: units.write,
                }),
            warm_throughput: protection.warm_throughput.map(|units| WarmThroughput {
                read_units_per_second: units.read,
                write_units_per_second: units.write,
            }),
            resource_policy: self.attached_policy(),
        }
    }

    fn global_properties(&self) -> GlobalProperties {
        let protection = &self.protection;
        let home = serde_json::json!({ "Ref": "AWS::Region" });
        let regions = std::iter::once(home).chain(
            (protection.replicas.iter()).map(|region| serde_json::Value::String(region.clone())),
        );
        let replicas = regions
            .map(|region| Replica {
                region,
                deletion_protection_enabled: protection.deletion_protection,
                point_in_time_recovery_specification: self.point_in_time_recovery(),
                sse_specification: (protection.kms_key.clone()).map(|key| ReplicaKey { key }),
                tags: self.tags(),
                read_on_demand_throughput_settings: (protection.on_demand_maximum).map(|units| {
                    MaxReads {
                        max_read_request_units: units.read,
                    }
                }),
                resource_policy: self.attached_policy(),
            })
            .collect();
        GlobalProperties {
            shape: self.shape(),
            sse_specification: GlobalEncryption {
                enabled: true,
                kind: "KMS",
            },
            write_on_demand_throughput_settings: (protection.on_demand_maximum).map(|units| {
                MaxWrites {
                    max_write_request_units: units.write,
                }
            }),
            warm_throughput: protection.warm_throughput.map(|units| WarmThroughput {
                read_units_per_second: units.read,
                write_units_per_second: units.write,
            }),
            replicas,
        }
    }
}

impl fmt::Display for CloudFormationTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let json = serde_json::to_string_pretty(self).map_err(|_| fmt::Error)?;
        f.write_str(&json)
    }
}
