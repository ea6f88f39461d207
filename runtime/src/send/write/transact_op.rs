//! One prepared write of a transaction: what the typed operations, unique values and appends
//! each hand the transaction.

use crate::cost::Estimate;
use crate::error::write_kind::WriteKind;
use crate::error::Error;
use crate::expr::condition::Node;
use crate::item::Item;
use crate::key::KeyText;
use crate::send::write::{Check, TransactItem, Write};
use aws_sdk_dynamodb::types::TransactWriteItem;

/// One prepared write of a transaction (opaque: built by the typed operations).
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct TransactOp {
    pub(crate) kind: WriteKind,
    pub(crate) entity: &'static str,
    /// The table written (a transaction may span tables).
    pub(crate) table: String,
    /// The item's key attributes: DynamoDB allows one operation per item.
    pub(crate) key: Item,
    pub(crate) key_text: KeyText,
    /// The write as it is sent, the same value the operation sends alone.
    pub(crate) write: TransactItem,
    /// What the operation costs outside a transaction.
    pub(crate) estimate: Estimate,
}

impl TransactOp {
    /// The op of `write`, which writes `entity`'s item at `key` in `table`.
    pub(crate) fn of(
        kind: WriteKind,
        entity: &'static str,
        table: &str,
        (key, key_text): (Item, KeyText),
        write: Write,
        estimate: Estimate,
    ) -> Self {
        TransactOp {
            kind,
            entity,
            table: table.to_owned(),
            key,
            key_text,
            write: TransactItem::Write(write),
            estimate,
        }
    }

    /// The check of `condition` on `entity`'s item at `key` in `table`, which writes nothing.
    pub(crate) fn check(
        entity: &'static str,
        table: &str,
        (key, key_text): (Item, KeyText),
        condition: Node,
        estimate: Estimate,
    ) -> Self {
        TransactOp {
            kind: WriteKind::ConditionCheck,
            entity,
            table: table.to_owned(),
            write: TransactItem::Check(Check::new(key.clone(), condition)),
            key,
            key_text,
            estimate,
        }
    }

    /// The table the write goes to.
    pub(crate) fn table_name(&self) -> &str {
        &self.table
    }

    /// The write as DynamoDB takes it in a transaction.
    pub(crate) fn sdk(&self) -> Result<TransactWriteItem, Error> {
        self.write.sdk(&self.table)
    }
}

/// Operations a transaction can take: [`Put`](crate::op::put::Put), [`Update`](crate::op::update::Update), [`Delete`](crate::op::delete::Delete) and [`ConditionCheck`](crate::op::transact::ConditionCheck).
///
/// Code generic over the update's state that puts it in a transaction names this trait as its
/// bound, rather than the rules behind it (that the update keeps every index key and every
/// unique value's sentinel right), which are not API:
///
/// ```
/// use singletable_runtime::op::{transact::TransactWrite, update::Update};
/// use singletable_runtime::{Db, Entity, Error, Table};
///
/// /// Applies `change` at most once however often it is called with `token` (for 10 minutes).
/// async fn apply_once<'db, T: Table, E: Entity<Table = T>, S>(
///     db: &'db Db<T>,
///     change: Update<'db, E, S>,
///     token: &str,
/// ) -> Result<(), Error>
/// where
///     Update<'db, E, S>: TransactWrite,
/// {
///     db.transaction().with(change).client_request_token(token).send().await
/// }
/// ```
pub trait TransactWrite: sealed::Sealed {
    #[doc(hidden)]
    fn transact_op(&self) -> Result<TransactOp, Error>;
}

/// Keeps [`TransactWrite`] to the library's own operations.
pub(crate) mod sealed {
    #[doc(hidden)]
    pub trait Sealed {}
}
