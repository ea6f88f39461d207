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
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write;

/// `ExpressionAttributeNames`: placeholder to attribute name.
pub type Names = HashMap<String, String>;
/// `ExpressionAttributeValues`: placeholder to value.
pub type Values = HashMap<String, AttributeValue>;

/// Placeholders for the names and values of one request's expressions.
#[derive(Debug, Clone, PartialEq)]
pub struct Placeholders {
    /// Names the derive knows are borrowed: a request only allocates them once, for the SDK.
    names: Vec<Cow<'static, str>>,
    values: Vec<AttributeValue>,
}

impl Default for Placeholders {
    /// Room for a typical request's names and values, so they are allocated once.
    fn default() -> Self {
        Placeholders {
            names: Vec::with_capacity(8),
            values: Vec::with_capacity(8),
        }
    }
}

impl Placeholders {
    /// The placeholder for attribute `name`, reused if the name was seen before.
    pub fn name(&mut self, name: impl Into<Cow<'static, str>>) -> String {
        let mut out = String::new();
        self.push_known_name(&name.into(), &mut out);
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
        let index = self.index_of(name, || Cow::Owned(name.to_owned()));
        push_placeholder(out, "#n", index);
    }

    /// [`Placeholders::push_name`] for a name that may be borrowed for good.
    #[allow(clippy::ptr_arg)] // The `Cow` is what is kept: a borrowed one clones for free.
    pub(crate) fn push_known_name(&mut self, name: &Cow<'static, str>, out: &mut String) {
        let index = self.index_of(name, || name.clone());
        push_placeholder(out, "#n", index);
    }

    fn index_of(&mut self, name: &str, owned: impl FnOnce() -> Cow<'static, str>) -> usize {
        match self.names.iter().position(|known| known == name) {
            Some(index) => index,
            None => {
                self.names.push(owned());
                self.names.len() - 1
            }
        }
    }

    /// Writes a new placeholder for `value` into `out`.
    pub fn push_value(&mut self, value: AttributeValue, out: &mut String) {
        self.values.push(value);
        push_placeholder(out, ":v", self.values.len() - 1);
    }

    /// `ExpressionAttributeNames` and `ExpressionAttributeValues`, moved out (for sending).
    pub fn into_maps(self) -> (Option<Names>, Option<Values>) {
        let names = (!self.names.is_empty()).then(|| {
            self.names
                .into_iter()
                .enumerate()
                .map(|(index, name)| (placeholder("#n", index), name.into_owned()))
                .collect()
        });
        let values = (!self.values.is_empty()).then(|| {
            self.values
                .into_iter()
                .enumerate()
                .map(|(index, value)| (placeholder(":v", index), value))
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
                .map(|(index, name)| (placeholder("#n", index), name.to_string()))
                .collect()
        })
    }

    /// `ExpressionAttributeValues`, or `None` when empty.
    pub fn values(&self) -> Option<HashMap<String, AttributeValue>> {
        (!self.values.is_empty()).then(|| {
            self.values
                .iter()
                .enumerate()
                .map(|(index, value)| (placeholder(":v", index), value.clone()))
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

/// `#n12`, `:v3`: a prefix and an index, without the formatting machinery (requests are
/// built on every call).
fn push_placeholder(out: &mut String, prefix: &str, index: usize) {
    out.push_str(prefix);
    if index < 10 {
        out.push(char::from(b'0' + index as u8));
    } else {
        let _ = write!(out, "{index}");
    }
}

fn placeholder(prefix: &str, index: usize) -> String {
    let mut out = String::with_capacity(prefix.len() + 2);
    push_placeholder(&mut out, prefix, index);
    out
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
