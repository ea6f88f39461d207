//! An item's primary key as text, for messages and errors.

use serde::Serialize;
use std::fmt;

/// The primary key of an item, as text, for messages; serialized as that text too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(into = "String")]
pub struct KeyText {
    /// Partition key attribute and value.
    pub partition: (&'static str, String),
    /// Sort key attribute and value.
    pub sort: Option<(&'static str, String)>,
}

impl fmt::Display for KeyText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {:?}", self.partition.0, self.partition.1)?;
        if let Some((name, value)) = &self.sort {
            write!(f, ", {name} = {value:?}")?;
        }
        Ok(())
    }
}

impl From<KeyText> for String {
    fn from(key: KeyText) -> String {
        key.to_string()
    }
}
