//! Requests as DynamoDB's JSON wire format, for `params()`, logs and snapshot tests.

use aws_sdk_dynamodb::types::AttributeValue;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::fmt;

/// A request exactly as it will be sent: the operation and its JSON body (keys sorted, so the
/// text is deterministic).
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The DynamoDB operation, e.g. `"PutItem"`.
    pub operation: &'static str,
    /// The request body in DynamoDB's JSON format.
    pub body: Value,
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let body = serde_json::to_string_pretty(&self.body).map_err(|_| fmt::Error)?;
        write!(f, "{} {}", self.operation, body)
    }
}

/// One attribute value in DynamoDB JSON (`{"S": "x"}`).
pub fn value(attribute: &AttributeValue) -> Value {
    use aws_smithy_types::base64::encode;
    match attribute {
        AttributeValue::S(text) => json!({ "S": text }),
        AttributeValue::N(number) => json!({ "N": number }),
        AttributeValue::B(bytes) => json!({ "B": encode(bytes.as_ref()) }),
        AttributeValue::Bool(flag) => json!({ "BOOL": flag }),
        AttributeValue::Null(flag) => json!({ "NULL": flag }),
        AttributeValue::Ss(texts) => json!({ "SS": texts }),
        AttributeValue::Ns(numbers) => json!({ "NS": numbers }),
        AttributeValue::Bs(items) => {
            json!({ "BS": items.iter().map(|bytes| encode(bytes.as_ref())).collect::<Vec<_>>() })
        }
        AttributeValue::L(values) => json!({ "L": values.iter().map(value).collect::<Vec<_>>() }),
        AttributeValue::M(map) => json!({ "M": item(map) }),
        other => json!({ "UNKNOWN": format!("{other:?}") }),
    }
}

/// An item (or key) in DynamoDB JSON.
pub fn item(item: &HashMap<String, AttributeValue>) -> Value {
    Value::Object(
        item.iter()
            .map(|(name, attribute)| (name.clone(), value(attribute)))
            .collect::<Map<_, _>>(),
    )
}

/// Builds a request body, leaving out absent fields.
#[derive(Default)]
pub(crate) struct Body(Map<String, Value>);

impl Body {
    pub(crate) fn field(mut self, name: &str, value: impl Into<Option<Value>>) -> Self {
        if let Some(value) = value.into() {
            self.0.insert(name.to_owned(), value);
        }
        self
    }

    pub(crate) fn request(self, operation: &'static str) -> Request {
        Request {
            operation,
            body: Value::Object(self.0),
        }
    }
}
