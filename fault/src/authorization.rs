//! What IAM authorizes a recorded request as, and whether a policy document allows it: the
//! check behind the generated policies' test, that every request the library sends is allowed.
//!
//! The rules are DynamoDB's: a batch is authorized as `BatchGetItem` or `BatchWriteItem` on
//! each table it names; a transaction as the `GetItem`, `PutItem`, `UpdateItem`,
//! `DeleteItem` or `ConditionCheckItem` of each of its actions; a `Query` or `Scan` of an index
//! against the index's ARN; stream reads against the stream's ARN.

use crate::RecordedRequest;
use serde_json::Value;

/// One action on one resource that a request needs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Authorization {
    /// `dynamodb:PutItem`.
    pub action: String,
    /// The ARN.
    pub resource: String,
}

impl RecordedRequest {
    /// What IAM checks for this request, with ARNs in `region` and `account` (the engine's
    /// own ARNs are read for their table name only). `stream_table` is the table whose stream
    /// a `GetRecords` reads: its shard iterator does not name it.
    pub fn authorizations(
        &self,
        region: &str,
        account: &str,
        stream_table: &str,
    ) -> Vec<Authorization> {
        let table_arn = |table: &str| format!("arn:aws:dynamodb:{region}:{account}:table/{table}");
        let needs = |action: &str, resource: String| Authorization {
            action: format!("dynamodb:{action}"),
            resource,
        };
        let text = |value: &Value, name: &str| {
            value
                .get(name)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let body = &self.body;
        match self.operation.as_str() {
            "BatchGetItem" | "BatchWriteItem" => body
                .get("RequestItems")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|tables| tables.keys())
                .map(|table| needs(&self.operation, table_arn(table)))
                .collect(),
            "TransactWriteItems" | "TransactGetItems" => body
                .get("TransactItems")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|item| item.as_object()?.iter().next())
                .map(|(kind, action)| {
                    let name = match kind.as_str() {
                        "Put" => "PutItem",
                        "Update" => "UpdateItem",
                        "Delete" => "DeleteItem",
                        "ConditionCheck" => "ConditionCheckItem",
                        _ => "GetItem",
                    };
                    needs(name, table_arn(&text(action, "TableName")))
                })
                .collect(),
            "Query" | "Scan" => {
                let table = table_arn(&text(body, "TableName"));
                let resource = match body.get("IndexName").and_then(Value::as_str) {
                    Some(index) => format!("{table}/index/{index}"),
                    None => table,
                };
                vec![needs(&self.operation, resource)]
            }
            "DescribeStream" | "GetShardIterator" => {
                let arn = text(body, "StreamArn");
                let stream = arn.split_once(":table/").map_or("", |(_, rest)| rest);
                vec![needs(
                    &self.operation,
                    format!("arn:aws:dynamodb:{region}:{account}:table/{stream}"),
                )]
            }
            "GetRecords" => vec![needs(
                "GetRecords",
                format!("{}/stream/unknown", table_arn(stream_table)),
            )],
            "ListStreams" => vec![needs("ListStreams", "*".to_owned())],
            // Tags name their table by ARN: the engine's, read for the table's name.
            "ListTagsOfResource" | "TagResource" | "UntagResource" => {
                let arn = text(body, "ResourceArn");
                let table = arn.split_once(":table/").map_or("", |(_, rest)| rest);
                vec![needs(&self.operation, table_arn(table))]
            }
            operation => vec![needs(operation, table_arn(&text(body, "TableName")))],
        }
    }
}

/// Whether the `Allow` statements of `policy` (an IAM policy document) allow `action` on
/// `resource`: an action or resource of a statement matches exactly or as a pattern with
/// `*` and `?`, as IAM matches them.
pub fn allows(policy: &Value, authorization: &Authorization) -> bool {
    let statements = policy.get("Statement").and_then(Value::as_array);
    statements.into_iter().flatten().any(|statement| {
        let listed = |name: &str, wanted: &str| match statement.get(name) {
            Some(Value::String(one)) => matches(one, wanted),
            Some(Value::Array(many)) => many
                .iter()
                .filter_map(Value::as_str)
                .any(|one| matches(one, wanted)),
            _ => false,
        };
        statement.get("Effect").and_then(Value::as_str) == Some("Allow")
            && listed("Action", &authorization.action)
            && listed("Resource", &authorization.resource)
    })
}

/// IAM's wildcard match: `*` any run of characters, `?` any one.
fn matches(pattern: &str, text: &str) -> bool {
    let (pattern, text): (Vec<char>, Vec<char>) =
        (pattern.chars().collect(), text.chars().collect());
    // The positions of `pattern` that can stand at each point of `text`.
    let mut states = vec![false; pattern.len() + 1];
    states[0] = true;
    for at in 0..pattern.len() {
        if pattern[at] == '*' && states[at] {
            states[at + 1] = true;
        }
    }
    for c in text {
        let mut next = vec![false; pattern.len() + 1];
        for at in 0..pattern.len() {
            if !states[at] {
                continue;
            }
            match pattern[at] {
                '*' => {
                    next[at] = true;
                    next[at + 1] = true;
                }
                '?' => next[at + 1] = true,
                p if p == c => next[at + 1] = true,
                _ => {}
            }
        }
        for at in 0..pattern.len() {
            if pattern[at] == '*' && next[at] {
                next[at + 1] = true;
            }
        }
        states = next;
    }
    states[pattern.len()]
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn wildcards_match_as_iam_matches_them() {
        assert!(matches("arn:t/x/stream/*", "arn:t/x/stream/2026-01-01"));
        assert!(matches("*", ""));
        assert!(matches("a*b*c", "abbbc"));
        assert!(matches("a?c", "abc"));
        assert!(!matches("arn:t/x", "arn:t/x/index/I"));
        assert!(!matches("a*d", "abc"));
        assert!(matches("dynamodb:Get*", "dynamodb:GetItem"));
    }
}
