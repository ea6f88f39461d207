//! Why a key could not be rendered or parsed.

use crate::const_text::ConstText;
use crate::key::text::{Redacted, Shown};
use std::fmt;

/// Why a key could not be rendered or parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The value contains text that follows the field in the template, so the key could not be
    /// split back into its fields.
    #[error("value {} of `{field}` contains {separator:?}, which separates it from the rest of the key in template {template:?}; such a key could not be read back", Shown(.value))]
    Ambiguous {
        /// The field.
        field: &'static str,
        /// The offending value.
        value: String,
        /// The constant text after the field.
        separator: &'static str,
        /// The template.
        template: &'static str,
    },
    /// A string key part contains a character the template uses to separate key parts, with
    /// which one key could be read as another (another value's, or another entity's).
    #[error("value {} of `{field}` contains {separator:?}, which separates the parts of keys in template {template:?}; a string key part cannot contain it, or the key could be another item's", Shown(.value))]
    Separator {
        /// The field.
        field: &'static str,
        /// The offending value.
        value: String,
        /// The separator character found in it.
        separator: char,
        /// The template.
        template: &'static str,
    },
    /// Two entities of one table have templates that can render the same primary key (an item
    /// of one could replace an item of the other) or the same key of one index; found at
    /// compile time for the entities of a `Collection`, otherwise the first time the second
    /// renders a key.
    #[error("{0}")]
    Overlap(Box<Overlap>),
    /// An integer needs more digits than the template's width, which would break sort order.
    #[error("value {} of `{field}` needs more than {width} digits (template {template:?}); widen the field, e.g. `{{{field}:{needed}}}`", Shown(.value))]
    TooWide {
        /// The field.
        field: &'static str,
        /// The value as text.
        value: String,
        /// The template's width.
        width: u8,
        /// Digits the value needs.
        needed: usize,
        /// The template.
        template: &'static str,
    },
    /// A value that cannot be written in a sortable form (a year outside 0000-9999, say).
    #[error("value of `{field}` cannot be part of a key: {}", Redacted(.reason))]
    Unrepresentable {
        /// The field.
        field: &'static str,
        /// Why.
        reason: String,
    },
    /// The rendered key is empty, which DynamoDB rejects for key attributes.
    #[error(
        "template {template:?} rendered an empty key; DynamoDB key attributes cannot be empty"
    )]
    Empty {
        /// The template.
        template: &'static str,
    },
    /// An index key attribute would be an empty string or binary, which DynamoDB refuses.
    #[error(
        "`{attribute}` keys index {index} and is empty; DynamoDB refuses an empty key attribute \
         (leave the attribute out to keep the item off the index)"
    )]
    EmptyIndexKey {
        /// The attribute.
        attribute: &'static str,
        /// The index it keys.
        index: &'static str,
    },
    /// A rendered key is longer than DynamoDB allows for its attribute.
    #[error("key {} is {size} bytes; DynamoDB allows at most {max} bytes for a {role} key", Shown(.key))]
    TooLong {
        /// The rendered key.
        key: String,
        /// Its size.
        size: usize,
        /// The limit.
        max: usize,
        /// `partition` or `sort`.
        role: &'static str,
    },
    /// A stored key does not have the template's shape.
    #[error("key {} does not match template {template:?}: {}", Shown(.key), Redacted(.reason))]
    Mismatch {
        /// The stored key.
        key: String,
        /// The template.
        template: &'static str,
        /// What did not match.
        reason: String,
    },
    /// A field of the entity is stored as an attribute the library writes into its items: a
    /// key attribute of the table or of an index, the entity or schema version attribute, or
    /// the table's TTL attribute (for a field that is not `#[dynamo(ttl)]`). The library's
    /// value would replace the field's, or the field's would key or expire the item. Found the
    /// first time the entity renders a key, as overlaps are.
    #[error("`{entity}::{field}` is stored as `{attribute}`, {role} of table `{table}`, which the library writes into the entity's items: rename the field for serde (`#[serde(rename = \"..\")]`){hint}")]
    ReservedAttribute {
        /// The entity.
        entity: &'static str,
        /// The field.
        field: &'static str,
        /// The attribute serde stores it as.
        attribute: &'static str,
        /// What the attribute is to the library (`the partition key attribute`).
        role: String,
        /// The table.
        table: &'static str,
        /// What else may be meant (for the TTL attribute: the expiry, marked).
        hint: &'static str,
    },
    /// A template of the entity writes an index key into an attribute the library writes for
    /// another end: a table key attribute, or the entity, schema version or TTL attribute (an
    /// index may key on one, to list items by entity, say). The template's value would replace
    /// the library's, so that the item would lose its key or no longer read as its entity.
    /// Found the first time the entity renders a key, as overlaps are.
    #[error("{}", index_key_over_library_attribute_text(entity, index, key, attribute, role, table, *own_template))]
    IndexKeyOverLibraryAttribute {
        /// The entity.
        entity: &'static str,
        /// The index's slot (`gsi1`).
        index: &'static str,
        /// Which of its keys: `pk` or `sk`.
        key: &'static str,
        /// The attribute the index keys on.
        attribute: &'static str,
        /// What the attribute is to the library (`the partition key attribute`).
        role: &'static str,
        /// The table.
        table: &'static str,
        /// For a table key attribute, the entity's own template for it: the template that
        /// makes the table's key serve the index.
        own_template: Option<&'static str>,
    },
    /// The text of one field could not be read as the field's type.
    #[error("`{field}` in key {key:?} is not a valid {expected}: {text:?}")]
    InvalidPart {
        /// The field.
        field: &'static str,
        /// The stored key.
        key: String,
        /// What the field's type expects.
        expected: &'static str,
        /// The text found.
        text: String,
    },
}

/// Error a [`KeyPart`](super::KeyPart) reports while parsing its own text; the template adds the context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartError {
    /// What was expected, e.g. `"10-digit unsigned integer"`.
    pub expected: &'static str,
}

/// Which key of two entities can be the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverlappingKey {
    /// The table's primary key: one item could replace the other.
    Primary,
    /// The key of this secondary index (its DynamoDB name): a key condition meant for one
    /// entity's items also selects the other's.
    Index(&'static str),
    /// Not a key but the entity attribute: both are written under one name (and one schema
    /// version), so reads cannot tell their items apart.
    EntityName,
}

/// One entity's templates on the key that overlaps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntityKeys {
    /// The entity's name.
    pub entity: &'static str,
    /// The index slot the partition template is set with (`gsi1` for `gsi1pk = ".."`), or
    /// `""` for the primary key's `pk` (which a local index shares).
    pub partition_slot: &'static str,
    /// The partition key template, as written.
    pub partition: &'static str,
    /// The slot the sort template is set with (`""` for `sk`).
    pub sort_slot: &'static str,
    /// The sort key template, if the key has one.
    pub sort: Option<&'static str>,
}

/// Two entities of one table whose templates can render the same key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overlap {
    /// The table's type.
    pub table: &'static str,
    /// The key they can share.
    pub key: OverlappingKey,
    /// The entity that failed the check.
    pub entity: EntityKeys,
    /// The entity it could collide with.
    pub other: EntityKeys,
}

impl Overlap {
    /// The message, built at compile time for a `Collection` and at run time for `Display`.
    pub(crate) const fn message(&self) -> ConstText {
        let text = ConstText::new()
            .push("`")
            .push(self.entity.entity)
            .push("` (");
        let text = keys(text, &self.entity).push(") and `");
        let text = keys(text.push(self.other.entity).push("` ("), &self.other)
            .push(") share table `")
            .push(self.table)
            .push("`");
        let text = match self.key {
            OverlappingKey::Primary => text.push(
                ", and their primary key templates can render the same key, so an item of one could replace an item of the other",
            ),
            OverlappingKey::Index(name) => text.push(", and their `").push(name).push(
                "` key templates can render the same index key, so a key condition meant for one also selects the other's items",
            ),
            OverlappingKey::EntityName => {
                return text.push(
                    " under one name, the value of the entity attribute that tells items apart, so each one's scans, queries and collections would take the other's items as its own: give one of them another `name = \"..\"` (the name is the struct's unless given)",
                )
            }
        };
        text.push(": give them different constant text where the keys meet, e.g. `\"DOC#{doc}\"` and `\"CMT#{doc}#{comment}\"`")
    }
}

const fn keys(text: ConstText, keys: &EntityKeys) -> ConstText {
    let text = text
        .push(keys.partition_slot)
        .push("pk = \"")
        .push(keys.partition)
        .push("\"");
    match keys.sort {
        Some(template) => text
            .push(", ")
            .push(keys.sort_slot)
            .push("sk = \"")
            .push(template)
            .push("\""),
        None => text,
    }
}

impl fmt::Display for Overlap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message().as_str())
    }
}

impl std::error::Error for Overlap {}

/// The message of [`KeyError::IndexKeyOverLibraryAttribute`]: for a table key attribute,
/// what makes the table's key serve the index.
fn index_key_over_library_attribute_text(
    entity: &str,
    index: &str,
    key: &str,
    attribute: &str,
    role: &str,
    table: &str,
    own_template: Option<&str>,
) -> String {
    let over =
        format!("`{entity}` writes `{index}{key}` into `{attribute}`, {role} of table `{table}`");
    match own_template {
        Some(own) => format!(
            "{over}: an index keyed on the table's key reads the item's own key, so give `{index}{key}` the entity's template for `{attribute}` (`{index}{key} = {own:?}`), with no `{index}_when` rule, which would leave the item's key out"
        ),
        None => format!(
            "{over}, so the template would write over what the library writes there: remove `{index}{key}`, and the index holds the library's value, or key the index on an attribute of its own"
        ),
    }
}
