//! `TransactWriteItems` and `TransactGetItems` of typed operations, with checks before
//! sending, typed cancellation reasons and bounded retries of transient cancellations.

mod get;

pub use crate::error::cancel::{CancellationCode, CancellationReason, TransactionCanceled};
pub use crate::error::transaction::TransactionError;
pub use crate::error::write_kind::WriteKind;
pub use crate::send::write::{
    TransactOp, TransactWrite, Transaction, MAX_CLIENT_REQUEST_TOKEN, MAX_TRANSACTION_BYTES,
    MAX_TRANSACTION_ITEMS, RESEND_WINDOW,
};
pub use get::{Slot, TransactGet, TransactGetOutput};

use crate::cost::Estimate;
use crate::error::Error;
use crate::expr::Condition;
use crate::schema::{Entity, Table};
use crate::{Db, Key};

impl<E: Entity> crate::send::write::sealed::Sealed for ConditionCheck<'_, E> {}
impl<E: Entity> TransactWrite for ConditionCheck<'_, E> {
    fn transact_op(&self) -> Result<TransactOp, Error> {
        let node = self
            .condition
            .node()
            .map_err(|error| Error::from(error.clone()))?;
        // An expired item is no item to the check, as to writes and reads.
        let table = <E::Table as Table>::SCHEMA;
        let expiry = crate::ttl::Expiry::hidden(table, || self.db.now());
        let node = crate::expr::as_read::user_as_read(node, expiry).into_node();
        let mut estimate = Estimate::default();
        estimate.write(1.0, "condition check");
        Ok(TransactOp::check(
            E::SCHEMA.name,
            self.db.table_name(),
            (self.key.to_attributes(), self.key.text()),
            node,
            estimate,
        ))
    }
}

/// A condition on one item that a transaction checks without writing it.
#[must_use = "an operation does nothing until it is part of a transaction"]
pub struct ConditionCheck<'db, E: Entity> {
    db: &'db Db<E::Table>,
    key: Key<E>,
    condition: Condition<E>,
}

impl<T: Table> Db<T> {
    /// A condition on one item, for a transaction.
    pub fn condition_check<E: Entity<Table = T>>(
        &self,
        key: Key<E>,
        condition: Condition<E>,
    ) -> ConditionCheck<'_, E> {
        ConditionCheck {
            db: self,
            key,
            condition,
        }
    }

    /// A `TransactWriteItems` of typed operations on this table's entities.
    pub fn transaction(&self) -> Transaction<'_, T> {
        Transaction::new(self)
    }
}
