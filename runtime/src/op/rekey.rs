//! Moving an item to a new key: the only way to change a field of the primary key.
//!
//! One transaction deletes the old item (it must exist, and any user condition must hold) and
//! puts the new one (its key must be free), so the item is never lost or duplicated, whichever
//! way it fails.

use super::delete::Delete;
use super::put::Put;
use super::transact::{CancellationCode, TransactionCanceled};
use super::{condition_failure, Expectations};
use crate::error::Error;
use crate::expr::condition::{Comparison, Node, Operand};
use crate::expr::{AttrPath, Condition};
use crate::retry::RetryPolicy;
use crate::schema::{Entity, Table};
use crate::wire::Request;
use crate::{Db, Key};
use aws_sdk_dynamodb::types::AttributeValue;
use futures::FutureExt;

impl<T: Table> Db<T> {
    /// Moves the item at `from` to the key of `to` (its new contents), atomically.
    ///
    /// Fails with [`Error::NotFound`] if there is no item at `from`,
    /// [`Error::ConditionFailed`] (with the occupant) if `to`'s key is taken, and
    /// [`Error::VersionConflict`] if the entity is versioned and `from` moved on.
    pub fn rekey<'db, E: Entity<Table = T>>(&'db self, from: Key<E>, to: &E) -> Rekey<'db, E> {
        let mut delete = self.delete(from).only_if_exists();
        let put = self.put(to).only_if_absent();
        // A versioned entity carries the version it was read at; the old item must still
        // be at that version.
        let version = E::SCHEMA.managed.version.and_then(|attribute| {
            let item = crate::item::encode(to).ok()?;
            Some((attribute, crate::managed::version_of(item.get(attribute))))
        });
        if let Some((attribute, version)) = version.filter(|(_, version)| *version > 0) {
            delete = delete.condition(Condition::from_node(Node::Compare(
                Operand::Path(AttrPath::attribute(attribute)),
                Comparison::Eq,
                Operand::Value(AttributeValue::N(version.to_string())),
            )));
        }
        Rekey {
            db: self,
            delete,
            put,
            version,
            retry: RetryPolicy::default(),
        }
    }
}

/// A move of one item to a new key; see [`Db::rekey`].
#[must_use = "an operation does nothing until it is sent"]
pub struct Rekey<'db, E: Entity> {
    db: &'db Db<E::Table>,
    delete: Delete<'db, E>,
    put: Put<'db, E>,
    /// The version attribute and the version `to` was read at.
    version: Option<(&'static str, u64)>,
    retry: RetryPolicy,
}

impl<E: Entity> Rekey<'_, E> {
    /// Moves only if `condition` holds for the old item.
    pub fn condition(mut self, condition: Condition<E>) -> Self {
        self.delete = self.delete.condition(condition);
        self
    }

    /// How conflicts and throttling are retried.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// The `TransactWriteItems` request this sends.
    pub fn params(&self) -> Result<Request, Error> {
        self.db
            .transaction()
            .with_ref(&self.delete)
            .with_ref(&self.put)
            .params()
    }

    /// The request and its estimated capacity (see [`crate::cost`]).
    pub fn explain(&self) -> Result<crate::cost::Explain, Error> {
        self.db
            .transaction()
            .with_ref(&self.delete)
            .with_ref(&self.put)
            .explain()
    }

    /// Sends the transaction.
    pub async fn send(self) -> Result<(), Error> {
        let result = self
            .db
            .transaction()
            .with(self.delete)
            .with(self.put)
            .retry(self.retry)
            .send()
            .boxed()
            .await;
        match result {
            Err(Error::TransactionCanceled(cancelled)) => {
                Err(explain::<E>(*cancelled, self.version))
            }
            other => other,
        }
    }
}

/// Turns the cancellation of a rekey into what it means for the item.
fn explain<E: Entity>(
    cancelled: TransactionCanceled,
    version: Option<(&'static str, u64)>,
) -> Error {
    let failed = |position: usize| {
        cancelled
            .reasons
            .get(position)
            .filter(|reason| reason.code == CancellationCode::ConditionalCheckFailed)
    };
    if let Some(old) = failed(0) {
        let expectations = Expectations {
            requires_existing: true,
            version: version.filter(|(_, version)| *version > 0),
        };
        return condition_failure(
            E::SCHEMA.name,
            old.key.clone(),
            old.item.as_ref(),
            expectations,
        );
    }
    if let Some(new) = failed(1) {
        return Error::ConditionFailed {
            entity: E::SCHEMA.name,
            key: new.key.clone(),
            current: new.item.clone().map(Box::new),
        };
    }
    Error::TransactionCanceled(Box::new(cancelled))
}
