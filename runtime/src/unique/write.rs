//! Writes of an entity with unique values: the item and its sentinels in one transaction,
//! conditioned on the item being as it was read.

use super::sentinel::{claimed, sentinel_ops};
use crate::error::cancel::{CancellationCode, CancellationReason, TransactionCanceled};
use crate::error::write_kind::WriteKind;
use crate::error::Error;
use crate::item::Item;
use crate::schema::Entity;
use crate::send::write::{TransactOp, Transaction};
use crate::Db;
use futures::FutureExt;
use std::future::Future;

/// How many times a write is tried when the item keeps changing between its read and its
/// transaction.
const ATTEMPTS: usize = 5;

/// What one attempt writes, given the item as stored.
pub(crate) struct Attempt {
    /// The item's own write, conditioned on the stored item being unchanged.
    pub(crate) op: TransactOp,
    /// The item as written (`None` for a delete).
    pub(crate) new: Option<Item>,
}

/// A write of one item of `E` (a put or a delete) that can be sent with its sentinels.
pub(crate) trait SentinelWrite<'db, E: Entity>: Send + Sync + 'db {
    /// Where it is sent.
    fn db(&self) -> &'db Db<E::Table>;
    /// The item's key.
    fn key(&self) -> Result<Item, Error>;
    /// The write, conditioned on the item being as `stored` says.
    fn attempt(&self, stored: Option<&Item>) -> Result<Attempt, Error>;
    /// What a failure of the write's own condition means, with the item unchanged (`now`).
    fn failed(&self, reason: &CancellationReason, now: Option<&Item>) -> Error;
    /// How the write fails where there is no item (or an expired one), unsent, whatever its
    /// values; `None` when it goes ahead there (a put creates the item).
    fn absent(&self) -> Option<Error> {
        None
    }
}

/// `plain(write, finish)` for an entity without unique values; otherwise the write with its
/// sentinels, finished with the item as it was read.
#[inline(always)]
pub(crate) fn plain_or_with_sentinels<'db, E, W, T, F, P>(
    write: W,
    finish: F,
    plain: impl FnOnce(W, F) -> P,
) -> impl Future<Output = Result<T, Error>> + 'db
where
    E: Entity,
    W: SentinelWrite<'db, E>,
    T: 'db,
    F: FnOnce(Option<Item>) -> Result<T, Error> + Send + 'db,
    P: Future<Output = Result<T, Error>> + 'db,
{
    if E::SCHEMA.unique.is_empty() {
        futures::future::Either::Left(plain(write, finish))
    } else {
        futures::future::Either::Right(
            async move { finish(write_with_sentinels::<E>(&write).await?) }.boxed(),
        )
    }
}

/// Reads the item, sends `write` together with the sentinel writes it needs, and tries again
/// if the item changed in between; returns the item as it was before. A failure of the item's
/// own condition with the item unchanged is `write.failed(..)`; a value another item holds is
/// [`Error::Unique`].
pub(crate) async fn write_with_sentinels<'db, E: Entity>(
    write: &impl SentinelWrite<'db, E>,
) -> Result<Option<Item>, Error> {
    let db = write.db();
    let key = write.key()?;
    // Strongly consistent: the transaction is conditioned on what it reads. An expired item
    // is absent to the write, as to reads, but the sentinels of its values are still
    // released (`read`), so that none is left pointing at an item without its value.
    let expiry = crate::ttl::Expiry::hidden(<E::Table as crate::Table>::SCHEMA, || db.now());
    let unexpired = |item: &Option<Item>| item.clone().filter(|item| !expiry.has_expired(item));
    let mut read = db.raw_get(E::SCHEMA.name, key.clone(), true).await?;
    let mut stored = unexpired(&read);
    let mut foreign = Vec::new();
    let mut attempts = 0;
    loop {
        attempts += 1;
        // An update where there is no item: its own failure, not a claim's (a value another
        // item holds is no reason when the item is what is missing).
        if let Some(error) = stored.is_none().then(|| write.absent()).flatten() {
            return Err(error);
        }
        let attempt = write.attempt(stored.as_ref())?;
        let transaction = transaction::<E>(db, attempt, read.as_ref(), &foreign)?;
        let cancelled = match transaction.send().await {
            Ok(()) => return Ok(stored),
            Err(Error::TransactionCanceled(cancelled)) => cancelled,
            Err(error) => return Err(error),
        };
        if let Some(error) = unique_failure::<E>(&cancelled) {
            return Err(error);
        }
        let give_up = attempts == ATTEMPTS;
        if let Some(key) = foreign_release(&cancelled).filter(|_| !give_up) {
            // Not this item's to release any more: leave it to its owner.
            foreign.push(key);
            continue;
        }
        let Some(reason) = item_failure(&cancelled) else {
            return Err(Error::TransactionCanceled(cancelled));
        };
        let now = db.raw_get(E::SCHEMA.name, key.clone(), true).await?;
        if now == read {
            return Err(write.failed(reason, unexpired(&now).as_ref()));
        }
        if give_up {
            return Err(Error::TransactionCanceled(cancelled));
        }
        // Changed since it was read: go again from what is there now.
        stored = unexpired(&now);
        read = now;
    }
}

/// The transaction of `attempt` and the sentinel writes it needs, with the item as `stored`
/// (releasing none of the `foreign` sentinels).
pub(crate) fn transaction<'db, E: Entity>(
    db: &'db Db<E::Table>,
    attempt: Attempt,
    stored: Option<&Item>,
    foreign: &[Item],
) -> Result<Transaction<'db, E::Table>, Error> {
    let sentinels = sentinel_ops::<E>(db, stored, attempt.new.as_ref(), foreign)?;
    Ok(sentinels
        .into_iter()
        .fold(Transaction::new(db).push(attempt.op), |transaction, op| {
            transaction.push(op)
        }))
}

/// The item's own write failed its condition (it is always the first operation).
fn item_failure(cancelled: &TransactionCanceled) -> Option<&CancellationReason> {
    cancelled.failed_condition(0)
}

/// [`Error::Unique`] when a sentinel claim of `E` failed: the value is another item's.
pub(crate) fn unique_failure<E: Entity>(cancelled: &TransactionCanceled) -> Option<Error> {
    cancelled.reasons.iter().find_map(|reason| {
        if reason.kind != WriteKind::Put
            || reason.entity != super::SENTINEL_ENTITY
            || reason.code != CancellationCode::ConditionalCheckFailed
        {
            return None;
        }
        let key: Item = sentinel_key_of(reason);
        let (field, value, owner_key) = claimed::<E>(&key, reason.item.as_ref())?;
        Some(Error::Unique {
            entity: E::SCHEMA.name,
            field,
            value,
            owner_key,
        })
    })
}

/// The key of a sentinel a release found to be another item's.
pub(crate) fn foreign_release(cancelled: &TransactionCanceled) -> Option<Item> {
    cancelled
        .reasons
        .iter()
        .find(|reason| {
            reason.kind == WriteKind::Delete
                && reason.entity == super::SENTINEL_ENTITY
                && reason.code == CancellationCode::ConditionalCheckFailed
        })
        .map(sentinel_key_of)
}

/// The sentinel's key attributes, from the reason's key text.
fn sentinel_key_of(reason: &CancellationReason) -> Item {
    crate::schema::primary_key::key_attributes(&reason.key)
}
