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
