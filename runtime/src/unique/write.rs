//! Writes of an entity with unique values: the item and its sentinels in one transaction,
//! conditioned on the item being as it was read.

use super::sentinel::{claimed, sentinel_ops};
use crate::error::Error;
use crate::item::Item;
use crate::op::transact::{
    CancellationCode, CancellationReason, TransactOp, TransactionCanceled, WriteKind,
};
use crate::schema::Entity;
use crate::Db;

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

/// Reads the item at `key`, writes it as `attempt` says together with its sentinels, and tries
/// again if the item changed in between; returns the item as it was before. A failure of the
/// item's own condition with the item unchanged is `on_failure`'s error; a value another item
/// holds is [`Error::Unique`].
pub(crate) async fn write_with_sentinels<E: Entity>(
    db: &Db<E::Table>,
    key: &Item,
    attempt: impl Fn(Option<&Item>) -> Result<Attempt, Error>,
    on_failure: impl Fn(&CancellationReason, Option<&Item>) -> Error,
) -> Result<Option<Item>, Error> {
    let mut stored = read(db, key).await?;
    let mut foreign = Vec::new();
    let mut last = None;
    for _ in 0..ATTEMPTS {
        let attempt = attempt(stored.as_ref())?;
        let transaction = transaction::<E>(db, attempt, stored.as_ref(), &foreign)?;
        match transaction.send().await {
            Ok(()) => return Ok(stored),
            Err(Error::TransactionCanceled(cancelled)) => {
                if let Some(error) = unique_failure::<E>(&cancelled) {
                    return Err(error);
                }
                if let Some(key) = foreign_release(&cancelled) {
                    // Not this item's to release any more: leave it to its owner.
                    foreign.push(key);
                    last = Some(Error::TransactionCanceled(cancelled));
                    continue;
                }
                let Some(reason) = item_failure(&cancelled) else {
                    return Err(Error::TransactionCanceled(cancelled));
                };
                let now = read(db, key).await?;
                if now == stored {
                    return Err(on_failure(reason, now.as_ref()));
                }
                // Changed since it was read: go again from what is there now.
                stored = now;
                last = Some(Error::TransactionCanceled(cancelled));
            }
            Err(error) => return Err(error),
        }
    }
    Err(last.unwrap_or(Error::Wait {
        table: db.table_name().to_owned(),
        message: "the item kept changing".to_owned(),
    }))
}

/// The transaction of `attempt` and the sentinel writes it needs, with the item as `stored`
/// (releasing none of the `foreign` sentinels).
pub(crate) fn transaction<'db, E: Entity>(
    db: &'db Db<E::Table>,
    attempt: Attempt,
    stored: Option<&Item>,
    foreign: &[Item],
) -> Result<crate::op::transact::Transaction<'db, E::Table>, Error> {
    let sentinels = sentinel_ops::<E>(db.table_name(), stored, attempt.new.as_ref(), foreign)?;
    Ok(sentinels
        .into_iter()
        .fold(db.transaction().push(attempt.op), |transaction, op| {
            transaction.push(op)
        }))
}

/// The item as stored, read strongly consistently (the transaction is conditioned on it).
async fn read<T: crate::Table>(db: &Db<T>, key: &Item) -> Result<Option<Item>, Error> {
    Ok(db
        .client()
        .get_item()
        .table_name(db.table_name())
        .set_key(Some(key.clone()))
        .consistent_read(true)
        .send()
        .await?
        .item)
}

/// The item's own write failed its condition (it is always the first operation).
fn item_failure(cancelled: &TransactionCanceled) -> Option<&CancellationReason> {
    cancelled
        .reasons
        .first()
        .filter(|reason| reason.code == CancellationCode::ConditionalCheckFailed)
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
fn foreign_release(cancelled: &TransactionCanceled) -> Option<Item> {
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
    use aws_sdk_dynamodb::types::AttributeValue;
    let mut key = Item::from([(
        reason.key.partition.0.to_owned(),
        AttributeValue::S(reason.key.partition.1.clone()),
    )]);
    if let Some((name, value)) = &reason.key.sort {
        key.insert((*name).to_owned(), AttributeValue::S(value.clone()));
    }
    key
}
