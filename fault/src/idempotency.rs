//! DynamoDB's idempotency tokens, as the proxy emulates them for an engine that ignores them:
//! what it remembers of a client request token, and for how long.

use crate::http::Message;
use serde_json::Value;
use std::time::{Duration, Instant};

/// How long DynamoDB remembers a client request token.
pub(crate) const TOKEN_WINDOW: Duration = Duration::from_secs(600);

/// What DynamoDB knows of a client request token.
#[derive(Debug)]
pub(crate) enum Token {
    /// A transaction with it is being applied: a resend meanwhile (the SDK's, after its
    /// attempt timed out) is refused with `TransactionInProgressException`.
    InFlight,
    /// It was applied: a resend with the same parameters gets the same response.
    Applied {
        params: Value,
        response: Message,
        at: Instant,
    },
}

/// The token of a `TransactWriteItems` body and the rest of its parameters.
pub(crate) fn transaction_token(body: &[u8]) -> Option<(String, Value)> {
    let mut params: Value = serde_json::from_slice(body).ok()?;
    let token = params
        .as_object_mut()?
        .remove("ClientRequestToken")?
        .as_str()?
        .to_owned();
    Some((token, params))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn the_token_is_taken_out_of_the_compared_parameters() -> TestResult {
        let body = br#"{"TransactItems":[{"Put":{}}],"ClientRequestToken":"st-1"}"#;
        let (token, params) = transaction_token(body).ok_or("a token")?;
        assert_eq!(token, "st-1");
        assert_eq!(params, json!({"TransactItems":[{"Put":{}}]}));
        assert!(transaction_token(b"{}").is_none());
        assert!(transaction_token(b"not json").is_none());
        Ok(())
    }
}
