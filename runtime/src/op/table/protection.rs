//! What the table's infrastructure code does to keep its data, and the settings a production
//! table takes besides its shape. By default the generated CloudFormation and Terraform keep
//! the table when the stack or resource goes (`DeletionPolicy`/`UpdateReplacePolicy: Retain`,
//! `prevent_destroy`), protect it from deletion, turn on point-in-time recovery and encrypt it
//! with a KMS key (AWS's managed key, or the customer-managed key given).
//!
//! These settings are the infrastructure code's: the `CreateTable` request that
//! [`Admin::ensure_table`](crate::Admin::ensure_table) sends for development and tests stays
//! without them, so a test's table can be deleted.

use super::CreateTable;
use crate::error::infra::InfraError;

/// Read and write units, per second or as a ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Units {
    pub(crate) read: u64,
    pub(crate) write: u64,
}

/// Provisioned capacity, for the table and for each global index alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Provisioned {
    /// Units a second: the capacity, and the least auto scaling goes down to.
    pub(crate) units: Units,
    pub(crate) scaling: Option<Scaling>,
}

/// Target tracking by Application Auto Scaling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Scaling {
    /// The most units a second it goes up to.
    pub(crate) maximum: Units,
    /// The consumed share of the capacity it keeps near, in percent.
    pub(crate) target_percent: u8,
}

/// AWS's bounds on a target-tracking policy's target utilization for DynamoDB, in percent.
const TARGET_PERCENT: std::ops::RangeInclusive<u8> = 20..=90;

/// The settings of the table's infrastructure code beyond its shape.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Protection {
    /// Kept when the stack or the resource goes, or is replaced.
    pub(crate) retain: bool,
    pub(crate) deletion_protection: bool,
    pub(crate) point_in_time_recovery: bool,
    /// A customer-managed KMS key (ARN, id or alias); AWS's managed key when `None`.
    pub(crate) kms_key: Option<String>,
    pub(crate) tags: Vec<(String, String)>,
    /// On-demand maximum throughput: request units per second.
    pub(crate) on_demand_maximum: Option<Units>,
    /// Warm throughput: units per second the table is ready for.
    pub(crate) warm_throughput: Option<Units>,
    /// A resource-based policy document.
    pub(crate) resource_policy: Option<serde_json::Value>,
    /// Regions the table is replicated to, besides its own: a global table.
    pub(crate) replicas: Vec<String>,
    /// Provisioned capacity instead of on-demand billing.
    pub(crate) provisioned: Option<Provisioned>,
}

impl Default for Protection {
    fn default() -> Self {
        Protection {
            retain: true,
            deletion_protection: true,
            point_in_time_recovery: true,
            kms_key: None,
            tags: Vec::new(),
            on_demand_maximum: None,
            warm_throughput: None,
            resource_policy: None,
            replicas: Vec::new(),
            provisioned: None,
        }
    }
}

/// AWS's limits on tags: 50 on a resource, keys of 1 to 128 characters, values of at most 256,
/// and no key starting with `aws:`, which AWS keeps for itself.
const MAX_TAGS: usize = 50;
const MAX_TAG_KEY: usize = 128;
const MAX_TAG_VALUE: usize = 256;

impl CreateTable {
    /// Tags the table in its infrastructure code (CloudFormation `Tags`, Terraform `tags`).
    ///
    /// # Errors
    ///
    /// [`InfraError::Tag`] for a key that is empty, longer than 128 characters or starts with
    /// `aws:`, a value longer than 256 characters, or a 51st tag.
    pub fn tag(
        mut self,
        key: impl Into<String>,
        value: impl Into<String>,
    ) -> Result<Self, InfraError> {
        let (key, value) = (key.into(), value.into());
        let rule = if self.protection.tags.len() >= MAX_TAGS {
            Some("a resource takes at most 50 tags")
        } else if key.is_empty() || key.chars().count() > MAX_TAG_KEY {
            Some("a tag key has 1 to 128 characters")
        } else if key.starts_with("aws:") {
            Some("keys starting with `aws:` are AWS's own")
        } else if value.chars().count() > MAX_TAG_VALUE {
            Some("a tag value has at most 256 characters")
        } else {
            None
        };
        if let Some(rule) = rule {
            return Err(InfraError::Tag { key, rule });
        }
        self.protection
            .tags
            .retain(|(existing, _)| *existing != key);
        self.protection.tags.push((key, value));
        Ok(self)
    }

    /// Encrypts the table with a customer-managed KMS key (its ARN, id or alias) instead of
    /// AWS's managed key for DynamoDB.
    pub fn kms_key(mut self, key: impl Into<String>) -> Self {
        self.protection.kms_key = Some(key.into());
        self
    }

    /// Caps the on-demand table's throughput at `read_units` and `write_units` request units
    /// per second (its indexes keep theirs uncapped): a bound on what a runaway client costs.
    /// A [provisioned](Self::provisioned) table's capacity is its cap: there, this is left
    /// out.
    pub fn on_demand_maximum(mut self, read_units: u64, write_units: u64) -> Self {
        self.protection.on_demand_maximum = Some(Units {
            read: read_units,
            write: write_units,
        });
        self
    }

    /// Pre-warms the table for `read_units` and `write_units` per second, for a launch or a
    /// migration that starts at full speed.
    pub fn warm_throughput(mut self, read_units: u64, write_units: u64) -> Self {
        self.protection.warm_throughput = Some(Units {
            read: read_units,
            write: write_units,
        });
        self
    }

    /// Attaches a resource-based policy (an IAM policy document) to the table.
    pub fn resource_policy(mut self, policy: serde_json::Value) -> Self {
        self.protection.resource_policy = Some(policy);
        self
    }

    /// Declares the table a global table replicated to `regions` besides its own (with
    /// multi-Region eventual consistency, see docs/production.md, "Global tables"): a
    /// CloudFormation `AWS::DynamoDB::GlobalTable` whose first replica is the stack's Region,
    /// and Terraform `replica` blocks. Each replica has the table's protection, tags and
    /// key (give a key alias, or a multi-Region key, that each Region knows).
    ///
    /// # Errors
    ///
    /// [`InfraError::Replicas`] when the table does not declare a stream of new and old
    /// images (`stream = "new_and_old_images"`), which replication needs, or a Region is
    /// not a Region's name.
    pub fn replicas<R: Into<String>>(
        mut self,
        regions: impl IntoIterator<Item = R>,
    ) -> Result<Self, InfraError> {
        if self.protection.provisioned.is_some() {
            return Err(InfraError::Replicas {
                reason: "the global table generated here is billed on demand; declare the \
                         table without `provisioned` capacity"
                    .to_owned(),
            });
        }
        if self.stream != Some(crate::schema::StreamViewType::NewAndOldImages) {
            return Err(InfraError::Replicas {
                reason: "a global table replicates through a stream of new and old images: \
                         declare `stream = \"new_and_old_images\"` on the table"
                    .to_owned(),
            });
        }
        for region in regions {
            let region = region.into();
            let name = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
            if region.is_empty() || !region.chars().all(name) {
                return Err(InfraError::Replicas {
                    reason: format!("{region:?} is not a Region's name (such as `eu-west-2`)"),
                });
            }
            if !self.protection.replicas.contains(&region) {
                self.protection.replicas.push(region);
            }
        }
        Ok(self)
    }

    /// Bills the table by provisioned capacity instead of on demand: `read_units` and
    /// `write_units` a second for the table, and the same for each global index (DynamoDB
    /// provisions each apart). Add [`auto_scaling`](Self::auto_scaling) to let the capacity
    /// follow the load; without it, a burst above it is throttled.
    ///
    /// # Errors
    ///
    /// [`InfraError::Capacity`] for no units, and for a global table
    /// ([`replicas`](Self::replicas)), which is generated on demand.
    pub fn provisioned(mut self, read_units: u64, write_units: u64) -> Result<Self, InfraError> {
        let refused = |reason: &str| InfraError::Capacity {
            reason: reason.to_owned(),
        };
        if read_units == 0 || write_units == 0 {
            return Err(refused(
                "provisioned capacity is at least 1 read and 1 write unit",
            ));
        }
        if !self.protection.replicas.is_empty() {
            return Err(refused(
                "the global table generated here is billed on demand; drop `replicas` or the \
                 provisioned capacity",
            ));
        }
        self.protection.provisioned = Some(Provisioned {
            units: Units {
                read: read_units,
                write: write_units,
            },
            scaling: None,
        });
        Ok(self)
    }

    /// Lets Application Auto Scaling move the capacity of the table and of each global index
    /// between what [`provisioned`](Self::provisioned) set and `max_read_units` and
    /// `max_write_units` a second, keeping the consumed capacity near
    /// `target_utilization_percent` of it: target tracking of
    /// `DynamoDBReadCapacityUtilization` and `DynamoDBWriteCapacityUtilization`. CloudFormation
    /// takes the scaling targets and policies beside the table
    /// ([`CloudFormationTable::auto_scaling_resources`](crate::infra::CloudFormationTable::auto_scaling_resources));
    /// Terraform's follow the table's block.
    ///
    /// # Errors
    ///
    /// [`InfraError::Capacity`] without provisioned capacity, for a maximum below it, or a
    /// target outside the 20 to 90 percent AWS allows.
    pub fn auto_scaling(
        mut self,
        max_read_units: u64,
        max_write_units: u64,
        target_utilization_percent: u8,
    ) -> Result<Self, InfraError> {
        let refused = |reason: String| InfraError::Capacity { reason };
        let Some(provisioned) = &mut self.protection.provisioned else {
            return Err(refused(
                "auto scaling moves provisioned capacity: declare it with `provisioned` first"
                    .to_owned(),
            ));
        };
        if max_read_units < provisioned.units.read || max_write_units < provisioned.units.write {
            return Err(refused(format!(
                "the most auto scaling may provision ({max_read_units} read, {max_write_units} \
                 write units) is below the provisioned capacity ({} read, {} write)",
                provisioned.units.read, provisioned.units.write
            )));
        }
        if !TARGET_PERCENT.contains(&target_utilization_percent) {
            return Err(refused(format!(
                "a target utilization of {target_utilization_percent}% is outside the 20% to \
                 90% AWS allows"
            )));
        }
        provisioned.scaling = Some(Scaling {
            maximum: Units {
                read: max_read_units,
                write: max_write_units,
            },
            target_percent: target_utilization_percent,
        });
        Ok(self)
    }

    /// The billing a NoSQL Workbench model states: its `BillingMode`, and for provisioned
    /// capacity its `ProvisionedCapacitySettings` (the capacity, and auto scaling from it).
    pub(crate) fn workbench_billing(&self) -> (String, Option<serde_json::Value>) {
        let Some(provisioned) = self.protection.provisioned else {
            return ("PAY_PER_REQUEST".to_owned(), None);
        };
        let units = provisioned.units;
        let mut settings = serde_json::json!({
            "ProvisionedThroughput": {
                "ReadCapacityUnits": units.read,
                "WriteCapacityUnits": units.write,
            }
        });
        if let Some(scaling) = provisioned.scaling {
            let scaled = |least: u64, most: u64| {
                serde_json::json!({
                    "ScalableTargetRequest": {
                        "MinCapacity": least,
                        "MaxCapacity": most,
                        "ServiceRole": "AWSServiceRoleForApplicationAutoScaling_DynamoDBTable",
                    },
                    "ScalingPolicyConfiguration": { "TargetValue": scaling.target_percent },
                })
            };
            settings["AutoScalingRead"] = scaled(units.read, scaling.maximum.read);
            settings["AutoScalingWrite"] = scaled(units.write, scaling.maximum.write);
        }
        ("PROVISIONED".to_owned(), Some(settings))
    }

    /// A scratch table's infrastructure code: deleted with its stack or resource, without
    /// deletion protection or point-in-time recovery (still encrypted). Never for data that
    /// matters.
    pub fn unprotected(mut self) -> Self {
        self.protection.retain = false;
        self.protection.deletion_protection = false;
        self.protection.point_in_time_recovery = false;
        self
    }
}
