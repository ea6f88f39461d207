//! Why an entity could not become an item, or an item the entity; and the DynamoDB limits an
//! item or request can break.

use crate::key::text::{KeyText, Redacted};
use crate::key::KeyError;

/// `WrongEntity` as a sentence: what the item is, or that it says nothing.
fn wrong_entity_text(
    key: &KeyText,
    attribute: &str,
    expected: &str,
    found: Option<&str>,
) -> String {
    match found {
        Some(found) => format!(
            "the item at {key} belongs to `{found}`, not to `{expected}` (by its `{attribute}` attribute)"
        ),
        None => format!(
            "the item at {key} names no entity in a `{attribute}` string attribute, so it cannot be read as `{expected}`"
        ),
    }
}

/// An item read from the table that could not become the entity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The item belongs to another entity (or none).
    #[error("{}", wrong_entity_text(key, attribute, expected, found.as_deref()))]
    WrongEntity {
        /// The item's key.
        key: KeyText,
        /// The entity attribute name.
        attribute: &'static str,
        /// The entity expected.
        expected: &'static str,
        /// What the item says it is (`None` when the attribute is missing or not a string).
        found: Option<String>,
    },
    /// The item's stored key is not the key its fields render to: it was written by something
    /// else, and writing it back would create a second item rather than update this one.
    #[error(
        "{entity} at {key}: its fields render the key {rendered}, not the key it is stored under"
    )]
    KeyMismatch {
        /// The entity.
        entity: &'static str,
        /// The stored key.
        key: KeyText,
        /// The key its fields render.
        rendered: KeyText,
    },
    /// A key (of a stream record, which carries no entity attribute) does not fit the key
    /// templates of the entity, or of any entity of the collection, it was read as.
    #[error("the key {key} fits none of the key templates of {entity}")]
    KeyShape {
        /// The entity, or the collection's type.
        entity: &'static str,
        /// The key.
        key: KeyText,
    },
    /// A field the item lacks, which a key template renders, could not be read back from
    /// that key: its text is not what the field's type writes, or holds a separator of the
    /// template, so that the field's end is not known.
    #[error(
        "{entity} at {key}: `{field}` is not in the item, and `{attribute}` does not give it by the template `{template}`: {}", Redacted(.reason)
    )]
    FieldFromKey {
        /// The entity.
        entity: &'static str,
        /// The item's key.
        key: KeyText,
        /// The field.
        field: &'static str,
        /// The key attribute it was read from.
        attribute: &'static str,
        /// The template that renders it there.
        template: &'static str,
        /// Why the key does not give it.
        reason: String,
    },
    /// An attribute is missing or has the wrong type or value.
    #[error("{entity} at {key}: attribute `{attribute}`: {}", Redacted(.message))]
    Attribute {
        /// The entity.
        entity: &'static str,
        /// The item's key.
        key: KeyText,
        /// Path of the offending attribute (`status`, `tags[2]`, `.` for the item itself).
        attribute: String,
        /// What was wrong.
        message: String,
    },
}

/// A DynamoDB limit the request would break; checked before sending, because some engines
/// accept what DynamoDB rejects.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LimitError {
    /// An item above 400 KB.
    #[error("item at {key} is {size} bytes; DynamoDB items are at most 400 KB ({max} bytes)")]
    ItemSize {
        /// The item's key.
        key: KeyText,
        /// Its size as DynamoDB counts it.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// An expression above DynamoDB's 4 KB limit.
    #[error("{kind} is {size} bytes; DynamoDB allows at most {max} bytes per expression")]
    Expression {
        /// Which expression (`ConditionExpression`, ...).
        kind: &'static str,
        /// Its size.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// An `IN` with more operands than DynamoDB's 100.
    #[error("an IN comparison has {count} operands; DynamoDB allows at most {max}")]
    InOperands {
        /// Operands given.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// A unique value too long for the partition key of its sentinel
    /// (`_UNIQUE#<entity>#<field>#<value>`), which DynamoDB limits to 2048 bytes.
    #[error("`{entity}::{field}` is unique, and its value of {size} bytes is too long for the key of the item that claims it: a value of `{entity}::{field}` can be at most {max} bytes")]
    UniqueValueSize {
        /// The entity.
        entity: &'static str,
        /// The unique field (or fields, joined by `+`).
        field: &'static str,
        /// The value's size, as text.
        size: usize,
        /// The longest value that fits.
        max: usize,
    },
    /// A transaction above DynamoDB's 4 MB aggregate size (the items it puts, the keys of its
    /// other operations, and every expression value).
    #[error("this transaction's {count} operations are {size} bytes in all; DynamoDB allows a transaction at most 4 MB ({max} bytes)")]
    TransactionSize {
        /// Its operations.
        count: usize,
        /// Its size as the library counts it.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// A `ClientRequestToken` outside DynamoDB's 1 to 36 characters.
    #[error("a client request token is {length} characters; DynamoDB takes 1 to {max}")]
    ClientRequestToken {
        /// The token's length.
        length: usize,
        /// The limit.
        max: usize,
    },
    /// A value nested deeper than DynamoDB's 32 levels (the attribute itself is the first).
    #[error("`{attribute}` nests {depth} levels; DynamoDB allows at most {max}")]
    NestingDepth {
        /// The attribute, or the expression value (`:v0`), holding it.
        attribute: String,
        /// Its levels.
        depth: usize,
        /// The limit.
        max: usize,
    },
    /// Expression names and values above DynamoDB's 2 MB for one request.
    #[error("the expression attribute names and values of this request are {size} bytes; DynamoDB allows at most {max}")]
    Substitutions {
        /// Their size: the names' and values' lengths.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// A key attribute above its size limit.
    #[error("key attribute `{attribute}` is {size} bytes; DynamoDB allows at most {max}")]
    KeySize {
        /// The attribute.
        attribute: String,
        /// Its size.
        size: usize,
        /// 2048 for partition keys, 1024 for sort keys.
        max: usize,
    },
}

/// Why an entity could not become an item; kept by builders until `params` or `send`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// A key could not be rendered.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The item breaks a DynamoDB limit.
    #[error(transparent)]
    Limit(#[from] LimitError),
    /// serde_dynamo could not serialize the entity.
    #[error("{entity} could not be written as a DynamoDB item: {}", Redacted(.message))]
    Serialize {
        /// The entity.
        entity: &'static str,
        /// What serde_dynamo reported.
        message: String,
    },
}
