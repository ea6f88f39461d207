//! Moving an item to a new key: the only way to change a field of the primary key.
//!
//! One transaction deletes the old item (it must exist, and any user condition must hold) and
//! puts the new one (its key must be free), so the item is never lost or duplicated, whichever
//! way it fails.

use super::delete::Delete;
use super::put::Put;
use super::transact::{TransactionCanceled, TransactionError};
use super::{condition_failure, Expectations};
use crate::error::Error;
use crate::expr::Condition;
use crate::item::EncodeError;
use crate::item::Item;
use crate::retry::RetryPolicy;
use crate::schema::{Entity, Table};
use crate::wire::Request;
use crate::Db;
use futures::FutureExt;

impl<T: Table> Db<T> {
    /// Moves the item read as `from` to the key of `to` (its new contents), atomically.
    ///
    /// The move happens only if the stored item is still `from`, so it never overwrites a
    /// change it did not see: for a versioned entity, still at `from`'s version; with an
    /// `updated_at` field, still at `from`'s time; otherwise, with every field as `from` has
    /// it (a field the stored item lacks, which `from` has at its default, counts as the
    /// same). `to` keeps `from`'s `created_at` (a move is not a creation) unless it changes it.
    ///
    /// One `TransactWriteItems`. For an entity with unique values and a time to live, a
    /// strongly consistent `GetItem` of `to`'s key comes first: an expired item there is
    /// replaced, and its values released with it, as a put over it releases them.
    ///
    /// Fails with [`Error::NotFound`] if there is no item at `from`'s key, with
    /// [`Error::VersionConflict`] or [`Error::ConditionFailed`], carrying the current item,
    /// if it changed since `from` was read (read it again, apply your change to it, and move
    /// that), and with [`Error::ConditionFailed`] (with the occupant) if `to`'s key is taken.
    /// A `to` with `from`'s key is refused before sending
    /// ([`TransactionError::RekeyKeepsKey`]): other fields change with an update or a put.
    pub fn rekey<'db, E: Entity<Table = T>>(&'db self, from: &E, to: &E) -> Rekey<'db, E> {
        let read = crate::item::encode(from);
        let delete = from
            .primary_key()
            .map_err(EncodeError::from)
            .and_then(|key| {
                let unchanged = crate::expr::as_read::unchanged_since_decoded::<E>(
                    read.as_ref().map_err(Clone::clone)?,
                );
                Ok(self
                    .delete(key)
                    .only_if_exists()
                    .condition(Condition::from_node(unchanged)))
            });
        let version = E::SCHEMA.managed.version.map(|attribute| {
            let read = read.as_ref().ok().and_then(|item| item.get(attribute));
            (attribute, crate::managed::version_of(read))
        });
        Rekey {
            db: self,
            read: read.clone(),
            delete,
            put: self.put(to).only_if_absent().moving(),
            version,
            retry: self.retry_policy(),
        }
    }
}

/// A move of one item to a new key; see [`Db::rekey`].
#[must_use = "an operation does nothing until it is sent"]
pub struct Rekey<'db, E: Entity> {
    db: &'db Db<E::Table>,
    /// The item as read (`from`), whose unique values move to `to`.
    read: Result<Item, EncodeError>,
    /// The delete of the item read, or why it cannot be built.
    delete: Result<Delete<'db, E>, EncodeError>,
    put: Put<'db, E>,
    /// The version attribute and the version `from` was read at.
    version: Option<(&'static str, u64)>,
    retry: RetryPolicy,
}

impl<E: Entity> Rekey<'_, E> {
    /// Moves only if `condition` also holds for the old item.
    pub fn condition(mut self, condition: Condition<E>) -> Self {
        self.delete = self.delete.map(|delete| delete.condition(condition));
        self
    }

    /// The expiry the move's delete judges the old item by.
    fn expiry(&self) -> crate::ttl::Expiry {
        self.delete
            .as_ref()
            .map_or_else(|_| crate::ttl::Expiry::default(), Delete::expiry)
    }

    fn delete(&self) -> Result<&Delete<'_, E>, Error> {
        self.delete.as_ref().map_err(|error| error.clone().into())
    }

    /// How conflicts and throttling are retried.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// The `TransactWriteItems` request this sends. Where `to`'s key holds an expired item
    /// (of an entity with unique values), [`send`](Self::send) finds it first and adds the
    /// releases of its values.
    pub fn params(&self) -> Result<Request, Error> {
        self.transaction(None, &[])?.params()
    }

    /// The request and its estimated capacity (see [`crate::cost`]).
    pub fn explain(&self) -> Result<crate::cost::Explain, Error> {
        self.transaction(None, &[])?.explain()
    }

    /// The transaction: the delete, the put, and, for an entity with unique values, the
    /// writes that move them with the item (claimed for the new key, free or the old key's;
    /// released where the new item no longer has them, and where `replaced`, an expired item
    /// at the new key, had them), but for the `foreign` sentinels, found to be another item's.
    fn transaction(
        &self,
        replaced: Option<&Item>,
        foreign: &[Item],
    ) -> Result<crate::op::transact::Transaction<'_, E::Table>, Error> {
        let mut sentinels = Vec::new();
        if let (Ok(old), Some(new)) = (&self.read, self.put.encoded()) {
            if !E::SCHEMA.unique.is_empty() {
                sentinels =
                    crate::unique::sentinel_ops::<E>(self.db, Some(old), Some(&new), foreign)?;
                if let Some(replaced) = replaced {
                    let moving = [old, &new];
                    let releases = crate::unique::replaced_releases::<E>;
                    sentinels.extend(releases(self.db, replaced, moving, foreign)?);
                }
            }
        }
        let (delete, put) = (self.delete()?.transact_op()?, self.put.transact_op()?);
        if delete.key == put.key {
            return Err(TransactionError::RekeyKeepsKey { key: put.key_text }.into());
        }
        let transaction = self.db.transaction().push(delete).push(put);
        Ok(sentinels
            .into_iter()
            .fold(transaction, |transaction, op| transaction.push(op)))
    }

    /// The expired item at `to`'s key that the move replaces, whose values it releases as a
    /// put over it would: read only for an entity with unique values that can expire (a live
    /// item there fails the move).
    async fn replaced(&self) -> Result<Option<Item>, Error> {
        let Some(new) = self.put.encoded() else {
            return Ok(None);
        };
        if E::SCHEMA.unique.is_empty() || E::SCHEMA.managed.ttl.is_none() {
            return Ok(None);
        }
        let key = crate::unique::key_of::<E>(&new);
        let stored = self.db.raw_get(E::SCHEMA.name, key, true).await?;
        Ok(stored.filter(|item| self.expiry().has_expired(item)))
    }

    /// Sends the transaction.
    pub async fn send(self) -> Result<(), Error> {
        let replaced = self.replaced().await?;
        let mut foreign = Vec::new();
        loop {
            let transaction = self.transaction(replaced.as_ref(), &foreign)?;
            let result = transaction.retry(self.retry).send().boxed().await;
            let cancelled = match result {
                Err(Error::TransactionCanceled(cancelled)) => cancelled,
                other => return other,
            };
            if let Some(error) = crate::unique::unique_failure::<E>(&cancelled) {
                return Err(error);
            }
            // A value released here that another item has claimed since (one the replaced
            // item held after it expired): not this move's to release; go again without it.
            let moved =
                cancelled.failed_condition(0).is_none() && cancelled.failed_condition(1).is_none();
            match crate::unique::foreign_release(&cancelled) {
                Some(key) if moved && !foreign.contains(&key) => foreign.push(key),
                _ => return Err(explain::<E>(*cancelled, self.version, self.expiry())),
            }
        }
    }
}

/// Turns the cancellation of a rekey into what it means for the item.
fn explain<E: Entity>(
    cancelled: TransactionCanceled,
    version: Option<(&'static str, u64)>,
    expiry: crate::ttl::Expiry,
) -> Error {
    if let Some(old) = cancelled.failed_condition(0) {
        let expectations = Expectations {
            requires_existing: true,
            version: version.filter(|(_, version)| *version > 0),
            version_max: None,
            expiry,
        };
        return condition_failure(
            E::SCHEMA.name,
            old.key.clone(),
            old.item.as_ref(),
            expectations,
        );
    }
    if let Some(new) = cancelled.failed_condition(1) {
        return Error::ConditionFailed {
            entity: E::SCHEMA.name,
            key: new.key.clone(),
            current: new.item.clone().map(Box::new),
        };
    }
    Error::TransactionCanceled(Box::new(cancelled))
}
