//! The ARN of a table, and of its indexes and streams, which IAM policies name.

use super::InfraError;
use std::fmt;

/// `arn:{partition}:dynamodb:{region}:{account}:table/{name}`.
///
/// ```
/// use singletable_runtime::infra::TableArn;
///
/// let arn = TableArn::new("eu-west-1", "123456789012", "app-prod")?;
/// assert_eq!(arn.to_string(), "arn:aws:dynamodb:eu-west-1:123456789012:table/app-prod");
/// assert_eq!(arn.index("GSI1"), "arn:aws:dynamodb:eu-west-1:123456789012:table/app-prod/index/GSI1");
/// assert!(TableArn::new("eu-west-1", "1234", "app").is_err());
/// # Ok::<(), singletable_runtime::infra::InfraError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableArn {
    partition: String,
    region: String,
    account_id: String,
    table_name: String,
}

impl TableArn {
    /// The ARN of table `table_name` in `region` of account `account_id`, in the `aws`
    /// partition.
    ///
    /// # Errors
    ///
    /// [`InfraError::Arn`] when the account id is not 12 digits, the region is not lower-case
    /// letters, digits and `-`, or the table name is not 3 to 255 of DynamoDB's name
    /// characters (letters, digits, `_`, `-`, `.`).
    pub fn new(
        region: impl Into<String>,
        account_id: impl Into<String>,
        table_name: impl Into<String>,
    ) -> Result<Self, InfraError> {
        let arn = TableArn {
            partition: "aws".to_owned(),
            region: region.into(),
            account_id: account_id.into(),
            table_name: table_name.into(),
        };
        check(
            "region",
            &arn.region,
            |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-',
            1..=64,
            "lower-case letters, digits and `-`, as in `eu-west-1`",
        )?;
        check(
            "account id",
            &arn.account_id,
            |c| c.is_ascii_digit(),
            12..=12,
            "12 digits",
        )?;
        check(
            "table name",
            &arn.table_name,
            |c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'),
            3..=255,
            "3 to 255 letters, digits, `_`, `-` and `.`",
        )?;
        Ok(arn)
    }

    /// The same table in another partition (`aws-cn`, `aws-us-gov`).
    ///
    /// # Errors
    ///
    /// [`InfraError::Arn`] when `partition` is not lower-case letters and `-`.
    pub fn in_partition(mut self, partition: impl Into<String>) -> Result<Self, InfraError> {
        self.partition = partition.into();
        check(
            "partition",
            &self.partition,
            |c| c.is_ascii_lowercase() || c == '-',
            1..=32,
            "lower-case letters and `-`, as in `aws-cn`",
        )?;
        Ok(self)
    }

    /// The table's name.
    pub fn table_name(&self) -> &str {
        &self.table_name
    }

    /// The ARN of the table's index `name`, which `Query` and `Scan` of the index authorize
    /// against.
    pub fn index(&self, name: &str) -> String {
        format!("{self}/index/{name}")
    }

    /// Every stream the table has had (`…/stream/*`): a stream's ARN ends with the time it
    /// was enabled, which the policy cannot know.
    pub fn streams(&self) -> String {
        format!("{self}/stream/*")
    }
}

impl fmt::Display for TableArn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "arn:{}:dynamodb:{}:{}:table/{}",
            self.partition, self.region, self.account_id, self.table_name
        )
    }
}

fn check(
    part: &'static str,
    value: &str,
    allowed: impl Fn(char) -> bool,
    length: std::ops::RangeInclusive<usize>,
    rule: &'static str,
) -> Result<(), InfraError> {
    if length.contains(&value.chars().count()) && value.chars().all(allowed) {
        Ok(())
    } else {
        Err(InfraError::Arn {
            part,
            value: value.to_owned(),
            rule,
        })
    }
}
