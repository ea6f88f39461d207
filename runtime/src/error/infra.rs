//! Why infrastructure code cannot be generated as asked.

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
    /// Replicas that cannot be declared.
    #[error("the table cannot have replicas: {reason}")]
    Replicas {
        /// Why.
        reason: String,
    },
    /// Provisioned capacity or auto scaling that cannot be declared.
    #[error("the table's capacity cannot be declared so: {reason}")]
    Capacity {
        /// Why.
        reason: String,
    },
    /// A tag AWS would refuse.
    #[error("tag {key:?} cannot be set: {rule}")]
    Tag {
        /// The tag's key.
        key: String,
        /// The rule it breaks.
        rule: &'static str,
    },
    /// An index has a key of several attributes, which the Terraform provider's
    /// `global_secondary_index` block (one `hash_key`, one `range_key`) cannot state.
    #[error("index `{index}` has a multi-attribute key, which the `global_secondary_index` block of `aws_dynamodb_table` cannot state (one `hash_key`, one `range_key`): declare this table with the CloudFormation resource, or add the index outside the block")]
    MultiAttributeKey {
        /// The index.
        index: &'static str,
    },
}
