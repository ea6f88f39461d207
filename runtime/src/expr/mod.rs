//! Expression building: every attribute name and value goes through a placeholder.
//!
//! Names become `#n0`, `#n1`, … and values `:v0`, `:v1`, … in the order they are first used,
//! so the same request always renders to the same text and nothing a user supplies is ever
//! spliced into expression text.

pub mod condition;
pub mod field;
pub mod path;
pub mod state;
pub mod update;

pub use condition::{AttributeType, Comparison, Condition};
pub use field::Field;
pub use path::AttrPath;

use aws_sdk_dynamodb::types::AttributeValue;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write;

/// `ExpressionAttributeNames`: placeholder to attribute name.
pub type Names = HashMap<String, String>;
/// `ExpressionAttributeValues`: placeholder to value.
pub type Values = HashMap<String, AttributeValue>;

/// Placeholders for the names and values of one request's expressions.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Placeholders {
    names: Vec<String>,
    values: Vec<AttributeValue>,
}

impl Placeholders {
    /// The placeholder for attribute `name`, reused if the name was seen before.
    pub fn name(&mut self, name: &str) -> String {
        let mut out = String::new();
        self.push_name(name, &mut out);
        out
    }

    /// A new placeholder for `value`.
    pub fn value(&mut self, value: AttributeValue) -> String {
        let mut out = String::new();
        self.push_value(value, &mut out);
        out
    }

    /// Writes the placeholder for attribute `name` into `out` (expression text is built in
    /// one buffer, without a string per placeholder).
    pub fn push_name(&mut self, name: &str, out: &mut String) {
        let index = match self.names.iter().position(|known| known == name) {
            Some(index) => index,
            None => {
                self.names.push(name.to_owned());
                self.names.len() - 1
            }
        };
        let _ = write!(out, "#n{index}");
    }

    /// Writes a new placeholder for `value` into `out`.
    pub fn push_value(&mut self, value: AttributeValue, out: &mut String) {
        self.values.push(value);
        let _ = write!(out, ":v{}", self.values.len() - 1);
    }

    /// `ExpressionAttributeNames` and `ExpressionAttributeValues`, moved out (for sending).
    pub fn into_maps(self) -> (Option<Names>, Option<Values>) {
        let names = (!self.names.is_empty()).then(|| {
            self.names
                .into_iter()
                .enumerate()
                .map(|(index, name)| (format!("#n{index}"), name))
                .collect()
        });
        let values = (!self.values.is_empty()).then(|| {
            self.values
                .into_iter()
                .enumerate()
                .map(|(index, value)| (format!(":v{index}"), value))
                .collect()
        });
        (names, values)
    }

    /// Whether no placeholder was used.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.values.is_empty()
    }

    /// `ExpressionAttributeNames`, or `None` when empty (DynamoDB rejects an empty map).
    pub fn names(&self) -> Option<HashMap<String, String>> {
        (!self.names.is_empty()).then(|| {
            self.names
                .iter()
                .enumerate()
                .map(|(index, name)| (format!("#n{index}"), name.clone()))
                .collect()
        })
    }

    /// `ExpressionAttributeValues`, or `None` when empty.
    pub fn values(&self) -> Option<HashMap<String, AttributeValue>> {
        (!self.values.is_empty()).then(|| {
            self.values
                .iter()
                .enumerate()
                .map(|(index, value)| (format!(":v{index}"), value.clone()))
                .collect()
        })
    }

    /// The names as wire JSON, if any.
    pub(crate) fn names_json(&self) -> Option<Value> {
        self.names().map(|names| serde_json::json!(names))
    }

    /// The values as wire JSON, if any.
    pub(crate) fn values_json(&self) -> Option<Value> {
        self.values().map(|values| crate::wire::item(&values))
    }
}

/// DynamoDB's limit on the size of one expression.
pub const MAX_EXPRESSION_BYTES: usize = 4096;

/// Fails when an expression is above DynamoDB's 4 KB limit (some engines accept it).
pub(crate) fn check_expression(kind: &'static str, text: &str) -> Result<(), crate::LimitError> {
    if text.len() > MAX_EXPRESSION_BYTES {
        return Err(crate::LimitError::Expression {
            kind,
            size: text.len(),
            max: MAX_EXPRESSION_BYTES,
        });
    }
    Ok(())
}
