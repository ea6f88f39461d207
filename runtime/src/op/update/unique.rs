//! An update that changes a unique value: sent in one transaction with the sentinel writes it
//! needs (the old value released if still this item's, the new one claimed), after a
//! consistent read of the item, and conditioned on the item being as read.

use super::request::Parts;
use crate::error::update::UpdateError;
use crate::error::Error;
use crate::expr::update::{Action, SetValue};
use crate::item::Item;
use crate::op::transact::{CancellationReason, TransactOp};
use crate::schema::{Entity, UniqueSchema};
use crate::unique::{Attempt, SentinelWrite};
use crate::Db;
use aws_sdk_dynamodb::types::ReturnValue;

/// The unique value an action changes, if any: the first whose attributes include the
/// action's top-level attribute.
fn changed_value<E: Entity>(action: &Action) -> Option<&'static UniqueSchema> {
    let attribute = action.path().root();
    E::SCHEMA
        .unique
        .iter()
        .find(|unique| unique.attributes.contains(&attribute))
}

// On the update's parts, not the typestate builder: what is sent no longer needs the state.
impl<'db, E: Entity> Parts<'db, E> {
    /// Why this update rewrites its item's sentinels, if it does, as the error a hand-built
    /// transaction (which cannot hold them) gets: it changes a unique value, or the expiry
    /// every sentinel of the item carries (none for an entity without unique values).
    pub(super) fn rewrites_sentinels(&self) -> Option<UpdateError> {
        if E::SCHEMA.unique.is_empty() {
            return None;
        }
        if let Some(unique) = self.actions.iter().find_map(changed_value::<E>) {
            return Some(UpdateError::UniqueInTransaction {
                entity: E::SCHEMA.name,
                field: unique.name,
            });
        }
        let ttl = E::SCHEMA.managed.ttl?;
        self.actions
            .iter()
            .any(|action| action.path().root() == ttl.attribute)
            .then_some(UpdateError::ExpiryInTransaction {
                entity: E::SCHEMA.name,
                field: ttl.attribute,
            })
    }

    /// The item as this update leaves it, for its sentinels: `stored` (or the bare key) with
    /// the update's sets and removes of top-level attributes applied. A unique value changed
    /// any other way has no known new value, so its sentinel cannot be claimed.
    fn new_item(&self, stored: Option<&Item>) -> Result<Item, Error> {
        let mut item = stored.cloned().unwrap_or_else(|| self.key.to_attributes());
        for action in &self.actions {
            let path = action.path();
            let unique = changed_value::<E>(action);
            match (action, path.top_level()) {
                (Action::Set(_, SetValue::Value(value)), Some(attribute)) => {
                    item.insert(attribute.to_owned(), value.clone());
                }
                (Action::Set(_, SetValue::IfNotExists(value)), Some(attribute)) => {
                    item.entry(attribute.to_owned())
                        .or_insert_with(|| value.clone());
                }
                (Action::Remove(_), Some(attribute)) => {
                    item.remove(attribute);
                }
                _ => {
                    if let Some(unique) = unique {
                        return Err(UpdateError::RelativeUniqueValue {
                            entity: E::SCHEMA.name,
                            field: unique.name,
                            action: action.to_string(),
                        }
                        .into());
                    }
                }
            }
        }
        Ok(item)
    }

    /// Sends the update with its sentinels; returns the item as it was before (`old`) or as
    /// a consistent read finds it right after the transaction (a transaction returns no
    /// item).
    pub(super) async fn send_with_sentinels(self, old: bool) -> Result<E, Error> {
        match self.written(old).await? {
            Some(item) => Ok(crate::item::decode(item)?),
            None => Err(Error::NotFound {
                entity: E::SCHEMA.name,
                key: self.key.text(),
            }),
        }
    }

    /// [`Self::send_with_sentinels`], returning only the attributes the update changed, as
    /// they were (`old`) or are now.
    pub(super) async fn send_with_sentinels_returning_updated(
        self,
        old: bool,
    ) -> Result<Item, Error> {
        let item = self.written(old).await?.unwrap_or_default();
        Ok(item
            .into_iter()
            .filter(|(name, _)| {
                self.actions
                    .iter()
                    .any(|action| action.path().root() == name)
            })
            .collect())
    }

    /// Sends the transaction; the item as read before it (`old`), or read again after it.
    /// The write is applied by then, so the read is resent while throttled or lost, and a
    /// read that still fails is [`Error::Unread`], not the failure of a write.
    async fn written(&self, old: bool) -> Result<Option<Item>, Error> {
        let stored = crate::unique::write_with_sentinels::<E>(self).await?;
        if old {
            return Ok(stored);
        }
        let read = self
            .db
            .raw_get(E::SCHEMA.name, self.key.to_attributes(), true);
        read.await.map_err(|error| Error::Unread {
            entity: E::SCHEMA.name,
            key: self.key.text(),
            source: Box::new(error),
        })
    }

    /// The transaction this update is when the item is as `stored` says.
    pub(super) fn with_sentinels(
        &self,
        stored: Option<&Item>,
    ) -> Result<crate::op::transact::Transaction<'db, E::Table>, Error> {
        crate::unique::transaction::<E>(self.db, self.attempt(stored)?, stored, &[])
    }

    /// The update's own write in a transaction, with `condition` joined to its own.
    pub(super) fn transact_op_as_read(&self, stored: Option<&Item>) -> Result<TransactOp, Error> {
        let mut prepared = self.prepare_as_read(stored)?;
        let estimate = std::mem::take(&mut prepared.estimate);
        Ok(TransactOp::of(
            crate::op::transact::WriteKind::Update,
            E::SCHEMA.name,
            self.db.table_name(),
            (self.key.to_attributes(), self.key.text()),
            self.write(prepared, ReturnValue::AllNew),
            estimate,
        ))
    }
}

impl<'db, E: Entity> SentinelWrite<'db, E> for Parts<'db, E> {
    fn db(&self) -> &'db Db<E::Table> {
        self.db
    }

    fn key(&self) -> Result<Item, Error> {
        Ok(self.key.to_attributes())
    }

    fn attempt(&self, stored: Option<&Item>) -> Result<Attempt, Error> {
        // With no item, the update's own condition (the item exists) cancels the transaction
        // (sent only as `params` shows it: `send` stops at `absent`).
        let new = self.new_item(stored)?;
        Ok(Attempt {
            op: self.transact_op_as_read(stored)?,
            new: Some(new),
        })
    }

    fn failed(&self, reason: &CancellationReason, now: Option<&Item>) -> Error {
        crate::op::condition_failure(
            E::SCHEMA.name,
            reason.key.clone(),
            now,
            super::response::expectations::<E>(self.expected_version, self.expiry),
        )
    }

    fn absent(&self) -> Option<Error> {
        let expectations = super::response::expectations::<E>(self.expected_version, self.expiry);
        let key = self.key.text();
        Some(crate::op::condition_failure(
            E::SCHEMA.name,
            key,
            None,
            expectations,
        ))
    }
}
