//! `GetItem`.

use super::SetSome;
use crate::error::Error;
use crate::schema::Entity;
use crate::trace::Operation;
use crate::ttl::Expiry;
use crate::wire::{describe, Request};
use crate::{Db, Key};
use aws_sdk_dynamodb::operation::get_item::builders::GetItemFluentBuilder;
use std::future::Future;

impl<T: crate::Table> Db<T> {
    /// Reads one item by key.
    pub fn get<E: Entity<Table = T>>(&self, key: Key<E>) -> Get<'_, E> {
        Get {
            db: self,
            key,
            consistent: false,
            expiry: Expiry::hidden(T::SCHEMA, || self.now()),
        }
    }
}

/// A `GetItem` of one entity; see [`Db::get`].
#[must_use = "an operation does nothing until it is sent"]
pub struct Get<'db, E: Entity> {
    db: &'db Db<E::Table>,
    key: Key<E>,
    consistent: bool,
    /// Whether an item whose TTL has passed reads as not found.
    expiry: Expiry,
}

impl<'db, E: Entity> Get<'db, E> {
    /// Asks for a strongly consistent read (twice the read cost).
    pub fn consistent(mut self) -> Self {
        self.consistent = true;
        self
    }

    /// Returns the item even if its time to live has passed. By default an expired item reads
    /// as [`Error::NotFound`]: DynamoDB deletes expired items only eventually, typically
    /// within two days, and a read in between would see an item that is gone.
    pub fn include_expired(mut self) -> Self
    where
        E::Table: crate::schema::ExpiringTable,
    {
        self.expiry.attribute = None;
        self
    }

    /// An expired item reads as [`Error::NotFound`]: the default, written out.
    pub fn hide_expired(mut self) -> Self
    where
        E::Table: crate::schema::ExpiringTable,
    {
        self.expiry = Expiry::hidden(<E::Table as crate::Table>::SCHEMA, || self.db.now());
        self
    }

    /// The request this operation sends.
    ///
    /// # Errors
    ///
    /// None today (a key is checked when it is built); a `Result` like every other
    /// operation's `params()`.
    pub fn params(&self) -> Result<Request, Error> {
        Ok(describe::request("GetItem", self.request().as_input()))
    }

    /// The request and its estimated capacity (see [`crate::cost`]).
    ///
    /// # Errors
    ///
    /// As [`params`](Self::params).
    pub fn explain(&self) -> Result<crate::cost::Explain, Error> {
        use crate::cost::{read_units, ASSUMED_ITEM_BYTES};
        let mut estimate = crate::cost::Estimate::default();
        let kind = if self.consistent {
            "strongly consistent"
        } else {
            "eventually consistent"
        };
        estimate.read(
            read_units(ASSUMED_ITEM_BYTES, self.consistent),
            format!("{kind} read (assuming at most {ASSUMED_ITEM_BYTES} bytes)"),
        );
        Ok(crate::cost::Explain {
            request: self.params()?,
            estimate,
        })
    }

    /// The request.
    #[inline(never)]
    fn request(&self) -> GetItemFluentBuilder {
        self.db
            .client()
            .get_item()
            .table_name(self.db.table_name())
            .set_key(Some(self.key.to_attributes()))
            .set_some(
                self.consistent.then_some(true),
                GetItemFluentBuilder::consistent_read,
            )
            .set_some(
                self.db.return_consumed_capacity(),
                GetItemFluentBuilder::return_consumed_capacity,
            )
    }

    /// Sends the request: the item, or [`Error::NotFound`].
    // Always inlined, with the request built out of line, as `super::sent` explains.
    #[inline(always)]
    pub fn send(self) -> impl Future<Output = Result<E, Error>> + 'db {
        let request = self.request();
        let db = self.db;
        let span = crate::trace::span(
            Operation::GetItem,
            db.table_name(),
            E::SCHEMA.name,
            || db.traced_key(|| self.key.text().to_string()),
            None,
        );
        let sent = super::sent(Ok(request), GetItemFluentBuilder::send, move |output| {
            let output = output?;
            self.db.record(output.consumed_capacity());
            match output.item {
                Some(item) if !self.expiry.has_expired(&item) => Ok(crate::item::decode(item)?),
                _ => Err(Error::NotFound {
                    entity: E::SCHEMA.name,
                    key: self.key.text(),
                }),
            }
        });
        db.traced(span, sent)
    }
}
