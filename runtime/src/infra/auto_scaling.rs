//! Application Auto Scaling of a provisioned table and its global indexes: one scalable target
//! and one target-tracking policy per capacity (reads, writes) of the table and of each global
//! index. CloudFormation's resources are here; Terraform's blocks in `terraform.rs`, with
//! the rest of its HCL.

use crate::op::table::CreateTable;
use crate::schema::IndexKind;
use serde_json::{json, Map, Value};

/// One capacity that auto scaling moves.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ScalingTarget {
    /// The global index; the table's own capacity when `None`.
    pub(super) index: Option<&'static str>,
    /// Reads or writes.
    pub(super) reads: bool,
    pub(super) minimum: u64,
    pub(super) maximum: u64,
    /// In percent.
    pub(super) target: u8,
}

impl ScalingTarget {
    /// `dynamodb:table:ReadCapacityUnits`, `dynamodb:index:WriteCapacityUnits`, ...
    pub(super) fn dimension(&self) -> String {
        let scope = if self.index.is_some() {
            "index"
        } else {
            "table"
        };
        let units = if self.reads { "Read" } else { "Write" };
        format!("dynamodb:{scope}:{units}CapacityUnits")
    }

    pub(super) fn metric(&self) -> &'static str {
        if self.reads {
            "DynamoDBReadCapacityUtilization"
        } else {
            "DynamoDBWriteCapacityUtilization"
        }
    }

    /// `Read`, `GSI1Write`: what names this target among the table's, in letters and digits.
    pub(super) fn name(&self) -> String {
        let index: String = (self.index.unwrap_or_default().chars())
            .filter(char::is_ascii_alphanumeric)
            .collect();
        format!("{index}{}", if self.reads { "Read" } else { "Write" })
    }

    /// `/index/GSI1` after the table's resource id, or nothing.
    pub(super) fn index_path(&self) -> String {
        self.index
            .map(|index| format!("/index/{index}"))
            .unwrap_or_default()
    }
}

impl CreateTable {
    /// What auto scaling moves: nothing without [`auto_scaling`](Self::auto_scaling).
    pub(super) fn scaling_targets(&self) -> Vec<ScalingTarget> {
        let Some(provisioned) = self.protection.provisioned else {
            return Vec::new();
        };
        let Some(scaling) = provisioned.scaling else {
            return Vec::new();
        };
        let global = self
            .indexes
            .iter()
            .filter(|index| index.kind == IndexKind::Global);
        let scopes = std::iter::once(None).chain(global.map(|index| Some(index.name)));
        scopes
            .flat_map(|index| {
                [true, false].map(|reads| ScalingTarget {
                    index,
                    reads,
                    minimum: if reads {
                        provisioned.units.read
                    } else {
                        provisioned.units.write
                    },
                    maximum: if reads {
                        scaling.maximum.read
                    } else {
                        scaling.maximum.write
                    },
                    target: scaling.target_percent,
                })
            })
            .collect()
    }
}

/// The CloudFormation resources of `targets` for the table whose logical id is `table`: a
/// scalable target (`{table}{name}Scaling`) and its policy (`{table}{name}ScalingPolicy`) each.
pub(super) fn cloudformation_resources(
    targets: &[ScalingTarget],
    table: &str,
) -> Map<String, Value> {
    let mut resources = Map::new();
    for target in targets {
        let id = format!("{table}{}Scaling", target.name());
        let resource_id = format!("table/${{{table}}}{}", target.index_path());
        resources.insert(
            id.clone(),
            json!({
                "Type": "AWS::ApplicationAutoScaling::ScalableTarget",
                "Properties": {
                    "MaxCapacity": target.maximum,
                    "MinCapacity": target.minimum,
                    "ResourceId": { "Fn::Sub": resource_id },
                    "ScalableDimension": target.dimension(),
                    "ServiceNamespace": "dynamodb",
                },
            }),
        );
        let policy = format!("${{{table}}}-{}", target.name());
        resources.insert(
            format!("{id}Policy"),
            json!({
                "Type": "AWS::ApplicationAutoScaling::ScalingPolicy",
                "Properties": {
                    "PolicyName": { "Fn::Sub": policy },
                    "PolicyType": "TargetTrackingScaling",
                    "ScalingTargetId": { "Ref": id },
                    "TargetTrackingScalingPolicyConfiguration": {
                        "TargetValue": f64::from(target.target),
                        "PredefinedMetricSpecification": {
                            "PredefinedMetricType": target.metric(),
                        },
                    },
                },
            }),
        );
    }
    resources
}
