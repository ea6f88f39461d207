//! The least-privilege IAM policy of a table's operations, from its declaration.

use super::TableArn;
use crate::schema::{Table, TableSchema};
use serde::Serialize;
use std::fmt;

/// The actions of reads: `TransactGetItems` is authorized as `GetItem` of each item.
const READ: &[&str] = &[
    "dynamodb:GetItem",
    "dynamodb:BatchGetItem",
    "dynamodb:Query",
    "dynamodb:Scan",
];

/// The actions of writes: `TransactWriteItems` is authorized as the `PutItem`, `UpdateItem`,
/// `DeleteItem` and `ConditionCheckItem` of each action in it. The library's own records
/// (unique values, append pointers, migration markers, sweep leases, stream checkpoints) are
/// items of the same table, written with the same actions.
const WRITE: &[&str] = &[
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:BatchWriteItem",
];

/// Reads of a secondary index, authorized against the index's ARN.
const INDEX_READ: &[&str] = &["dynamodb:Query", "dynamodb:Scan"];

/// A stream reader finds the stream with `DescribeTable`, then reads it; `ListStreams` is what
/// a Lambda event source mapping adds. IAM authorizes `ListStreams` only on `*` (it takes no
/// resource-level permission), so it is a statement of its own.
const STREAM_TABLE: &[&str] = &["dynamodb:DescribeTable"];
const STREAM: &[&str] = &[
    "dynamodb:DescribeStream",
    "dynamodb:GetShardIterator",
    "dynamodb:GetRecords",
];
const LIST_STREAMS: &[&str] = &["dynamodb:ListStreams"];

/// `ensure_table`, `table_migration` (plan and apply, which reads the table's tags to refuse
/// one a CloudFormation stack manages, and its point-in-time recovery to compare it), sweeps
/// and coverage (which read the table's description first): the table's administration and
/// migrations, for a deployment or migration role rather than the service's, beside the data
/// statement (plan reads, and apply writes, the record of each entity's keys in the table).
const ADMINISTRATION: &[&str] = &[
    "dynamodb:CreateTable",
    "dynamodb:DescribeTable",
    "dynamodb:UpdateTable",
    "dynamodb:DescribeTimeToLive",
    "dynamodb:UpdateTimeToLive",
    "dynamodb:ListTagsOfResource",
    "dynamodb:DescribeContinuousBackups",
];

/// The IAM policy document that a table's operations need, and no more: one statement for
/// the data on the table, one for reads of its indexes (by name), and, when asked for, one
/// for its stream and one for its administration, so that the service's role can be given
/// the data statements only.
///
/// Examples: the `singletable::infra` module.
#[derive(Debug, Clone)]
pub struct IamPolicy {
    arn: TableArn,
    schema: &'static TableSchema,
    writes: bool,
    streams: bool,
    administration: bool,
}

/// One `Allow` statement of an [`IamPolicy`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Statement {
    sid: &'static str,
    effect: &'static str,
    action: Vec<&'static str>,
    resource: Vec<String>,
}

impl Statement {
    fn allow(sid: &'static str, actions: &[&'static str], resource: Vec<String>) -> Self {
        Statement {
            sid,
            effect: "Allow",
            action: actions.to_vec(),
            resource,
        }
    }

    /// The statement's id (`SingletableData`, `SingletableIndexes`, `SingletableStream`,
    /// `SingletableAdministration`).
    pub fn sid(&self) -> &str {
        self.sid
    }

    /// The actions it allows, as `dynamodb:PutItem`.
    pub fn actions(&self) -> &[&'static str] {
        &self.action
    }

    /// The ARNs it allows them on.
    pub fn resources(&self) -> &[String] {
        &self.resource
    }
}

/// The document as IAM reads it.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Document {
    version: &'static str,
    statement: Vec<Statement>,
}

impl IamPolicy {
    /// Reads and writes of table `T`'s items and reads of its indexes, at `arn` (whose table
    /// name is the one the service's [`Db`](crate::Db) uses, as
    /// [`Db::with_table_name`](crate::Db::with_table_name) sets it per environment).
    pub fn for_table<T: Table>(arn: TableArn) -> Self {
        IamPolicy {
            arn,
            schema: T::SCHEMA,
            writes: true,
            streams: false,
            administration: false,
        }
    }

    /// Reads only: get, batch get, query and scan (`get_and_backfill` and sweeps write, and
    /// need the default).
    pub fn read_only(mut self) -> Self {
        self.writes = false;
        self
    }

    /// Adds reading the table's stream (the stream reader, or a Lambda function consuming
    /// it), when the table declares one.
    pub fn with_streams(mut self) -> Self {
        self.streams = true;
        self
    }

    /// Adds the table's administration as a statement of its own: creating it, planning and
    /// applying migrations, turning on time to live, and the description of the table that
    /// sweeps and coverage read.
    pub fn with_administration(mut self) -> Self {
        self.administration = true;
        self
    }

    /// The policy's statements, in the order of the document.
    pub fn statements(&self) -> Vec<Statement> {
        let table = self.arn.to_string();
        let data = if self.writes {
            [READ, WRITE].concat()
        } else {
            READ.to_vec()
        };
        let mut statements = vec![Statement::allow(
            "SingletableData",
            &data,
            vec![table.clone()],
        )];
        if !self.schema.indexes.is_empty() {
            let indexes = self.schema.indexes.iter();
            statements.push(Statement::allow(
                "SingletableIndexes",
                INDEX_READ,
                indexes.map(|index| self.arn.index(index.name)).collect(),
            ));
        }
        if self.streams && self.schema.stream.is_some() {
            statements.push(Statement::allow(
                "SingletableStreamTable",
                STREAM_TABLE,
                vec![table.clone()],
            ));
            statements.push(Statement::allow(
                "SingletableStream",
                STREAM,
                vec![self.arn.streams()],
            ));
            statements.push(Statement::allow(
                "SingletableListStreams",
                LIST_STREAMS,
                vec!["*".to_owned()],
            ));
        }
        if self.administration {
            statements.push(Statement::allow(
                "SingletableAdministration",
                ADMINISTRATION,
                vec![table],
            ));
        }
        statements
    }

    fn document(&self) -> Document {
        Document {
            version: "2012-10-17",
            statement: self.statements(),
        }
    }
}

impl Serialize for IamPolicy {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.document().serialize(serializer)
    }
}

/// The document as pretty-printed JSON, ready for `aws iam put-role-policy`.
impl fmt::Display for IamPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let json = serde_json::to_string_pretty(&self.document()).map_err(|_| fmt::Error)?;
        f.write_str(&json)
    }
}
