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
mod auto_scaling;
mod cloudformation;
mod iam;
mod terraform;

pub use crate::error::infra::InfraError;
pub use arn::TableArn;
pub use cloudformation::CloudFormationTable;
pub use iam::{IamPolicy, Statement};
