//! The error responses DynamoDB sends, which the proxy answers with in place of the engine's.

use crate::http::{json_response, Message};
use crate::plan::FaultKind;
use serde_json::{json, Value};

/// A DynamoDB error response (HTTP 400) of type `name`.
pub(crate) fn dynamodb_error(name: &str, message: &str) -> Message {
    json_response(
        400,
        "Bad Request",
        &json!({
            "__type": format!("com.amazonaws.dynamodb.v20120810#{name}"),
            "Message": message,
        }),
    )
}

/// A DynamoDB error response for `kind`.
pub(crate) fn error_response(kind: FaultKind, request: &Message) -> Message {
    let (status, reason, error_type, message) = match kind {
        FaultKind::ProvisionedThroughputExceeded => (
            400,
            "Bad Request",
            "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
            "The level of configured provisioned throughput for the table was exceeded (injected)",
        ),
        FaultKind::Throttling => (
            400,
            "Bad Request",
            "com.amazon.coral.availability#ThrottlingException",
            "Rate of requests exceeds the allowed throughput (injected)",
        ),
        FaultKind::TransactionConflict => (
            400,
            "Bad Request",
            "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
            "Transaction cancelled, please refer cancellation reasons for specific reasons (injected)",
        ),
        FaultKind::LimitExceeded => (
            400,
            "Bad Request",
            "com.amazonaws.dynamodb.v20120810#LimitExceededException",
            "Too many requests for this shard (injected)",
        ),
        FaultKind::ReplicatedWriteConflict => (
            400,
            "Bad Request",
            "com.amazonaws.dynamodb.v20120810#ReplicatedWriteConflictException",
            "One or more items in this request are being modified by a request in another Region (injected)",
        ),
        FaultKind::ServiceUnavailable => (
            503,
            "Service Unavailable",
            "com.amazon.coral.availability#ServiceUnavailableException",
            "Service unavailable (injected)",
        ),
        // Timeouts, drops and unprocessed parts are not answered with an error; a 500 stands
        // in should one get here.
        FaultKind::InternalServerError
        | FaultKind::Timeout
        | FaultKind::ConnectionDropped
        | FaultKind::Unprocessed => (
            500,
            "Internal Server Error",
            "com.amazonaws.dynamodb.v20120810#InternalServerError",
            "Internal server error (injected)",
        ),
    };
    let mut body = json!({ "__type": error_type, "Message": message });
    if kind == FaultKind::TransactionConflict {
        // One reason per operation, as DynamoDB sends them: the conflict on the first.
        let operations = serde_json::from_slice::<Value>(&request.body)
            .ok()
            .and_then(|body| body.get("TransactItems")?.as_array().map(Vec::len))
            .unwrap_or(1)
            .max(1);
        let reasons: Vec<Value> = (0..operations)
            .map(|position| {
                if position == 0 {
                    json!({ "Code": "TransactionConflict", "Message": "Transaction is ongoing for the item (injected)" })
                } else {
                    json!({ "Code": "None" })
                }
            })
            .collect();
        body["CancellationReasons"] = Value::Array(reasons);
    }
    json_response(status, reason, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn a_conflict_names_one_reason_per_operation() -> TestResult {
        let request = Message {
            start: "POST / HTTP/1.1".into(),
            headers: Vec::new(),
            body: br#"{"TransactItems":[{},{},{}]}"#.to_vec(),
        };
        let response = error_response(FaultKind::TransactionConflict, &request);
        assert_eq!(response.status(), Some(400));
        let body: Value = serde_json::from_slice(&response.body)?;
        let codes: Vec<&str> = body["CancellationReasons"]
            .as_array()
            .ok_or("a list of reasons")?
            .iter()
            .map(|reason| reason["Code"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(codes, ["TransactionConflict", "None", "None"]);
        Ok(())
    }
}
