//! One prepared write of a transaction, and the operations that can be one.

use super::kind::WriteKind;
use crate::cost::Estimate;
use crate::error::Error;
use crate::item::{Item, KeyText};
use aws_sdk_dynamodb::types::TransactWriteItem;

/// One prepared write of a transaction (opaque: built by the typed operations).
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct TransactOp {
    pub(crate) kind: WriteKind,
    pub(crate) entity: &'static str,
    /// The item's key attributes: DynamoDB allows one operation per item.
    pub(crate) key: Item,
    pub(crate) key_text: KeyText,
    /// The write as it is sent, made from the same request the operation sends alone.
    pub(crate) write: TransactWriteItem,
    /// What the operation costs outside a transaction.
    pub(crate) estimate: Estimate,
}

impl TransactOp {
    /// The table the write goes to.
    pub(crate) fn table_name(&self) -> &str {
        let write = &self.write;
        write
            .put()
            .map(|put| put.table_name())
            .or_else(|| write.update().map(|update| update.table_name()))
            .or_else(|| write.delete().map(|delete| delete.table_name()))
            .or_else(|| write.condition_check().map(|check| check.table_name()))
            .unwrap_or_default()
    }
}

/// Operations a transaction can take: [`Put`](crate::op::put::Put), [`Update`](crate::op::update::Update), [`Delete`](crate::op::delete::Delete) and [`ConditionCheck`](super::ConditionCheck).
pub trait TransactWrite: sealed::Sealed {
    #[doc(hidden)]
    fn transact_op(&self) -> Result<TransactOp, Error>;
}

/// Keeps [`TransactWrite`] to the library's own operations.
pub(crate) mod sealed {
    pub trait Sealed {}
}
