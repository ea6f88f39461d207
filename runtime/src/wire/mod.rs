//! Requests as DynamoDB's JSON wire format, for `params()`, logs and snapshot tests; and items
//! in the same JSON as serde fields, for checkpoints and cursors.

pub(crate) mod describe;

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

/// Why wire JSON could not be read as attribute values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a DynamoDB JSON value: {0}")]
pub struct ParseError(String);

/// Reads one attribute value from DynamoDB JSON (the inverse of [`value`]).
pub fn parse_value(json: &Value) -> Result<AttributeValue, ParseError> {
    use aws_smithy_types::base64::decode;
    let invalid = || ParseError(json.to_string());
    let object = json
        .as_object()
        .filter(|object| object.len() == 1)
        .ok_or_else(invalid)?;
    let (kind, inner) = object.iter().next().ok_or_else(invalid)?;
    let text = || inner.as_str().map(str::to_owned).ok_or_else(invalid);
    let texts = || -> Result<Vec<String>, ParseError> {
        inner
            .as_array()
            .ok_or_else(invalid)?
            .iter()
            .map(|value| value.as_str().map(str::to_owned).ok_or_else(invalid))
            .collect()
    };
    let bytes = |text: &str| {
        decode(text)
            .map(aws_smithy_types::Blob::new)
            .map_err(|_| invalid())
    };
    Ok(match kind.as_str() {
        "S" => AttributeValue::S(text()?),
        "N" => AttributeValue::N(text()?),
        "B" => AttributeValue::B(bytes(&text()?)?),
        "BOOL" => AttributeValue::Bool(inner.as_bool().ok_or_else(invalid)?),
        "NULL" => AttributeValue::Null(inner.as_bool().ok_or_else(invalid)?),
        "SS" => AttributeValue::Ss(texts()?),
        "NS" => AttributeValue::Ns(texts()?),
        "BS" => AttributeValue::Bs(
            texts()?
                .iter()
                .map(|text| bytes(text))
                .collect::<Result<_, _>>()?,
        ),
        "L" => AttributeValue::L(
            inner
                .as_array()
                .ok_or_else(invalid)?
                .iter()
                .map(parse_value)
                .collect::<Result<_, _>>()?,
        ),
        "M" => AttributeValue::M(parse_item(inner)?),
        _ => return Err(invalid()),
    })
}

/// Reads an item from DynamoDB JSON (the inverse of [`item`]).
pub fn parse_item(json: &Value) -> Result<HashMap<String, AttributeValue>, ParseError> {
    json.as_object()
        .ok_or_else(|| ParseError(json.to_string()))?
        .iter()
        .map(|(name, value)| Ok((name.clone(), parse_value(value)?)))
        .collect()
}

/// An item as a serde field, in DynamoDB JSON (`#[serde(with = "wire::as_item")]`): the
/// SDK's `AttributeValue` has no serde of its own, and this is the form requests print.
pub(crate) mod as_item {
    use super::{item, parse_item};
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::Value;
    use std::collections::HashMap;

    type Item = HashMap<String, aws_sdk_dynamodb::types::AttributeValue>;

    pub(crate) fn serialize<S: Serializer>(value: &Item, serializer: S) -> Result<S::Ok, S::Error> {
        item(value).serialize(serializer)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Item, D::Error> {
        parse_item(&Value::deserialize(deserializer)?).map_err(D::Error::custom)
    }

    /// The same for an optional item: `null` is `None` (give the field `#[serde(default)]`
    /// for a missing one to be `None` too).
    pub(crate) mod option {
        use super::{parse_item, Item, Value};
        use serde::de::Error as _;
        use serde::{Deserialize, Deserializer, Serializer};

        pub(crate) fn serialize<S: Serializer>(
            value: &Option<Item>,
            serializer: S,
        ) -> Result<S::Ok, S::Error> {
            match value {
                Some(value) => super::serialize(value, serializer),
                None => serializer.serialize_none(),
            }
        }

        pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
            deserializer: D,
        ) -> Result<Option<Item>, D::Error> {
            match Value::deserialize(deserializer)? {
                Value::Null => Ok(None),
                value => parse_item(&value).map(Some).map_err(D::Error::custom),
            }
        }
    }
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
}
