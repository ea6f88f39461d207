//! `TransactGetItems`: several items of a table read at one point in time, each into its
//! typed slot.

use super::{TransactionError, MAX_TRANSACTION_ITEMS};
use crate::error::Error;
use crate::item::Item;
use crate::key::KeyText;
use crate::schema::{Entity, Table};
use crate::ttl::Expiry;
use crate::wire::describe;
use crate::wire::Request;
use crate::{Db, Key};
use aws_sdk_dynamodb::operation::transact_get_items::builders::TransactGetItemsFluentBuilder;
use std::marker::PhantomData;

impl<T: Table> Db<T> {
    /// A `TransactGetItems`: [`TransactGet::get`] hands out a typed slot per key; the output
    /// fills them, all read at one point in time.
    pub fn transact_get(&self) -> TransactGet<'_, T> {
        TransactGet {
            db: self,
            keys: Vec::new(),
        }
    }
}

/// A `TransactGetItems`; see [`Db::transact_get`].
#[must_use = "a transaction does nothing until it is sent"]
pub struct TransactGet<'db, T> {
    db: &'db Db<T>,
    keys: Vec<(Item, KeyText, &'static str)>,
}

/// A typed position in a [`TransactGet`]'s output.
#[derive(Debug)]
pub struct Slot<E> {
    position: usize,
    entity: PhantomData<fn() -> E>,
}

/// What a [`TransactGet`] read.
#[derive(Debug)]
pub struct TransactGetOutput {
    items: Vec<Option<Item>>,
    /// Items whose TTL has passed read as absent.
    expiry: Expiry,
}

impl TransactGetOutput {
    /// The item of `slot` (`None` if it does not exist, or if its time to live has passed:
    /// DynamoDB deletes expired items only eventually).
    pub fn take<E: Entity>(&mut self, slot: &Slot<E>) -> Result<Option<E>, Error> {
        match self.items.get_mut(slot.position).and_then(Option::take) {
            Some(item) if !self.expiry.has_expired(&item) => Ok(Some(crate::item::decode(item)?)),
            _ => Ok(None),
        }
    }

    /// The item of `slot` even if its time to live has passed.
    pub fn take_including_expired<E: Entity>(&mut self, slot: &Slot<E>) -> Result<Option<E>, Error>
    where
        E::Table: crate::schema::ExpiringTable,
    {
        match self.items.get_mut(slot.position).and_then(Option::take) {
            Some(item) => Ok(Some(crate::item::decode(item)?)),
            None => Ok(None),
        }
    }
}

impl<T: Table> TransactGet<'_, T> {
    /// Reads `key`; the returned slot picks its item out of the output.
    pub fn get<E: Entity<Table = T>>(&mut self, key: Key<E>) -> Slot<E> {
        self.keys
            .push((key.to_attributes(), key.text(), E::SCHEMA.name));
        Slot {
            position: self.keys.len() - 1,
            entity: PhantomData,
        }
    }

    /// The request this sends.
    pub fn params(&self) -> Result<Request, Error> {
        Ok(describe::request(
            "TransactGetItems",
            self.request()?.as_input(),
        ))
    }

    /// The request, checked: what `send` sends and `params` prints.
    fn request(&self) -> Result<TransactGetItemsFluentBuilder, Error> {
        if self.keys.is_empty() {
            return Err(TransactionError::Empty.into());
        }
        if self.keys.len() > MAX_TRANSACTION_ITEMS {
            return Err(TransactionError::TooMany {
                count: self.keys.len(),
                max: MAX_TRANSACTION_ITEMS,
            }
            .into());
        }
        let keys = self.keys.iter().map(|(key, _, _)| key.clone());
        Ok(self.db.transact_get_request(keys)?)
    }

    /// Reads every item at one point in time.
    pub async fn send(self) -> Result<TransactGetOutput, Error> {
        let output = self.db.send_transact_get(self.request()?).await?;
        let mut items: Vec<Option<Item>> = output
            .responses
            .unwrap_or_default()
            .into_iter()
            .map(|response| response.item)
            .collect();
        items.resize(self.keys.len(), None);
        Ok(TransactGetOutput {
            items,
            expiry: Expiry::hidden(T::SCHEMA, || self.db.now()),
        })
    }
}
