//! One field of an entity as its keys know it: its names, how its key part renders and
//! parses, and how it is read back from a key. Here, not in `schema/`, because the overlap
//! check between templates reads what each field's type writes (`overlap.rs`).

use super::part::{FromKey, KeyPartFns};

#[doc(hidden)]
/// One field of an entity.
#[derive(Debug, Clone, Copy)]
pub struct FieldSchema {
    /// The Rust field name.
    pub name: &'static str,
    /// The attribute name (after serde's renames).
    pub attribute: &'static str,
    /// How to render and parse it, for fields used in key templates.
    pub key_part: Option<KeyPartFns>,
    /// Reads its key text as the attribute serde writes for it, for fields used in key
    /// templates and stored as serde writes them: an item that keeps the field only in its
    /// keys is read from them.
    pub from_key: Option<FromKey>,
}

impl PartialEq for FieldSchema {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.attribute == other.attribute
    }
}

impl Eq for FieldSchema {}
