//! Why a transaction is refused before it is sent.

use super::write_kind::WriteKind;
use crate::key::KeyText;

/// Why a transaction was refused before sending.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TransactionError {
    /// A transaction needs at least one operation.
    #[error("a transaction needs at least one operation")]
    Empty,
    /// More than DynamoDB's 100 operations.
    #[error("a transaction holds at most {max} operations; this one has {count}")]
    TooMany {
        /// Operations given.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// An operation could not be prepared (its key, item or expression was invalid).
    #[error("operation {position} of the transaction is invalid: {message}")]
    Operation {
        /// Its position.
        position: usize,
        /// What was wrong.
        message: String,
    },
    /// Two operations on one item, which DynamoDB rejects.
    #[error("operations {first} ({first_kind}) and {second} ({second_kind}) of this transaction both touch {key}; DynamoDB allows one operation per item in a transaction")]
    SameItem {
        /// Position of the first.
        first: usize,
        /// Its kind.
        first_kind: WriteKind,
        /// Position of the second.
        second: usize,
        /// Its kind.
        second_kind: WriteKind,
        /// The item.
        key: KeyText,
    },
    /// A rekey whose new item has the old one's key: a change of other fields, which an update
    /// or a put makes (as one transaction, DynamoDB would refuse its two operations on one
    /// item).
    #[error("this rekey moves the item at {key} to the key it already has; a rekey changes key fields: to change other fields, use `db.update(..)` or `db.put(..)`")]
    RekeyKeepsKey {
        /// The item's key.
        key: KeyText,
    },
}
