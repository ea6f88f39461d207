//! What the infrastructure around a table needs, generated from its declaration: the
//! least-privilege IAM policy of the operations the library sends ([`IamPolicy`]), and the
//! table itself as infrastructure code, a CloudFormation `AWS::DynamoDB::Table` resource
//! ([`CloudFormationTable`]) and a Terraform `aws_dynamodb_table` block
//! ([`CreateTable::terraform`](crate::op::table::CreateTable::terraform)).
//!
//! Both come from the same [`CreateTable`](crate::op::table::CreateTable) value that
//! [`Admin::ensure_table`](crate::Admin::ensure_table) sends, so a table made by either has the
//! shape the library expects, and [`Admin::table_migration`](crate::Admin::table_migration)'s plan
//! of it is empty. The CLI prints them (`iam`, `infra`).

mod arn;
mod cloudformation;
mod iam;
mod terraform;

pub use arn::TableArn;
pub use cloudformation::CloudFormationTable;
pub use iam::{IamPolicy, Statement};

/// What cannot be generated as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InfraError {
    /// A part of an ARN is empty or holds characters ARNs do not allow.
    #[error("{part} {value:?} cannot be part of a DynamoDB table ARN: {rule}")]
    Arn {
        /// Which part (`region`, `account id`, `partition`, `table name`).
        part: &'static str,
        /// The value given.
        value: String,
        /// What the part must look like.
        rule: &'static str,
    },
    /// The Terraform resource name is not an identifier.
    #[error("{name:?} is not a Terraform resource name: use letters, digits, `_` and `-`, starting with a letter or `_`")]
    ResourceName {
        /// The name given.
        name: String,
    },
    /// An index has a key of several attributes, which the Terraform provider's
    /// `global_secondary_index` block (one `hash_key`, one `range_key`) cannot state.
    #[error("index `{index}` has a multi-attribute key, which the `global_secondary_index` block of `aws_dynamodb_table` cannot state (one `hash_key`, one `range_key`): declare this table with the CloudFormation resource, or add the index outside the block")]
    MultiAttributeKey {
        /// The index.
        index: &'static str,
    },
}
