//! `GetItem`.

use super::read_options::ReadOptions;
use crate::error::Error;
use crate::schema::Entity;
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
            read: ReadOptions::new(T::SCHEMA, || self.now()),
        }
    }
}

/// A `GetItem` of one entity; see [`Db::get`].
#[must_use = "an operation does nothing until it is sent"]
pub struct Get<'db, E: Entity> {
    db: &'db Db<E::Table>,
    key: Key<E>,
    read: ReadOptions,
}

impl<'db, E: Entity> Get<'db, E> {
    super::read_options::read_option_setters!();

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
        let kind = if self.read.consistent {
            "strongly consistent"
        } else {
            "eventually consistent"
        };
        estimate.read(
            read_units(ASSUMED_ITEM_BYTES, self.read.consistent),
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
            .get_item_request(self.key.to_attributes(), self.read.consistent)
    }

    /// Sends the request: the item, or [`Error::NotFound`].
    // Always inlined, with the request built out of line, as `send::mechanics` explains.
    #[inline(always)]
    pub fn send(self) -> impl Future<Output = Result<E, Error>> + 'db {
        let request = self.request();
        let db = self.db;
        let key = db.traced_key(|| self.key.text().to_string());
        db.send_get_item(request, E::SCHEMA.name, key, move |output| {
            match output.item {
                Some(item) if !self.read.expiry.has_expired(&item) => {
                    Ok(crate::item::decode(item)?)
                }
                _ => Err(Error::NotFound {
                    entity: E::SCHEMA.name,
                    key: self.key.text(),
                }),
            }
        })
    }
}
