//! `BatchGetItem`: many items by key, of one entity or of the entities of a
//! [`Collection`], in as few requests as DynamoDB allows.

use super::unprocessed::{answer, drive, Pending, Response};
use super::MAX_GET_KEYS;
use crate::error::Error;
use crate::item::{self, DecodeError, Item};
use crate::key::CollectionKey;
use crate::op::query::{Collection, Decode};
use crate::op::read_options::ReadOptions;
use crate::retry::RetryPolicy;
use crate::schema::{Entity, Table};
use crate::wire::{describe, Request};
use crate::{Db, Key};
use aws_sdk_dynamodb::operation::batch_get_item::builders::BatchGetItemFluentBuilder;
use std::collections::HashSet;

#[doc(hidden)]
/// What a batch read returns each item as: an entity (its keys are [`Key`]s), or a
/// collection's variant (its keys are [`CollectionKey`]s, of any of its entities).
pub trait BatchTarget: Decode + Send + 'static {
    /// The table the items live in.
    type Table: Table;
    /// A key to read.
    type Key: Clone + std::fmt::Debug + Send + Sync + 'static;

    /// The key's attributes, as `BatchGetItem` takes them.
    fn attributes(key: &Self::Key) -> Item;
}

impl<E: Entity> BatchTarget for E {
    type Table = E::Table;
    type Key = Key<E>;

    fn attributes(key: &Key<E>) -> Item {
        key.to_attributes()
    }
}

#[doc(hidden)]
/// An entity of collection `C`: what [`BatchGet::key`] takes a key of.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an entity of collection `{C}`",
    label = "a key of `{Self}`, which `{C}` has no variant for",
    note = "a collection's batch read returns each item as one of its variants: add a variant of `{Self}` to `{C}`, or read it with `db.batch_get(..)`"
)]
pub trait MemberOf<C> {}

impl<T: Table> Db<T> {
    /// Reads many items of one entity by key, in `BatchGetItem` requests of at most
    /// [`MAX_GET_KEYS`] keys.
    ///
    /// A key given more than once is read once: DynamoDB rejects a request that repeats a
    /// key, and reading an item twice would return it twice.
    pub fn batch_get<E: Entity<Table = T>>(
        &self,
        keys: impl IntoIterator<Item = Key<E>>,
    ) -> BatchGet<'_, E> {
        BatchGet {
            db: self,
            keys: keys.into_iter().collect(),
            read: ReadOptions::new(T::SCHEMA, || self.now()),
            retry: self.retry_policy(),
        }
    }

    /// Reads many items of the entities of collection `C` by key, each returned as its
    /// variant: add keys with [`key`](BatchGet::key) (of any entity `C` has a variant for)
    /// and [`keys`](BatchGet::keys). Chunked, resent and filtered as
    /// [`batch_get`](Self::batch_get) is.
    ///
    /// The `Collection` derive's documentation (in `singletable`) shows one.
    pub fn batch_get_collection<C>(&self) -> BatchGet<'_, C>
    where
        C: Collection<Table = T> + BatchTarget<Table = T, Key = CollectionKey>,
    {
        BatchGet {
            db: self,
            keys: Vec::new(),
            read: ReadOptions::new(T::SCHEMA, || self.now()),
            retry: self.retry_policy(),
        }
    }
}

/// A `BatchGetItem` of many items, of one entity or of a collection's entities; see
/// [`Db::batch_get`] and [`Db::batch_get_collection`].
#[must_use = "an operation does nothing until it is sent"]
pub struct BatchGet<'db, R: BatchTarget> {
    db: &'db Db<R::Table>,
    keys: Vec<R::Key>,
    read: ReadOptions,
    retry: RetryPolicy,
}

/// What a [`BatchGet`] read.
#[derive(Debug)]
#[non_exhaustive]
#[must_use = "keys DynamoDB left unprocessed are reported here, not as an error"]
pub struct BatchGetOutput<R: BatchTarget> {
    /// The items found, in no particular order (DynamoDB answers in its own order). A key
    /// with no item is simply absent.
    pub items: Vec<R>,
    /// Items that exist but could not be read as `R` (another entity's item under this key,
    /// or a malformed one); the rest of the batch is unaffected.
    pub errors: Vec<DecodeError>,
    /// Keys DynamoDB still had not processed when the retry policy gave up; read them later.
    pub unprocessed: Vec<R::Key>,
    /// How many `BatchGetItem` requests were sent, retries included.
    pub requests: usize,
}

impl<R: BatchTarget> BatchGetOutput<R> {
    /// Whether every key was processed and every item found decoded.
    pub fn is_complete(&self) -> bool {
        self.errors.is_empty() && self.unprocessed.is_empty()
    }
}

impl<'db, C> BatchGet<'db, C>
where
    C: Collection + BatchTarget<Key = CollectionKey>,
{
    /// Adds the key of an item of entity `E`, one of the collection's variants (another
    /// entity does not compile).
    pub fn key<E>(mut self, key: Key<E>) -> Self
    where
        E: Entity<Table = <C as BatchTarget>::Table> + MemberOf<C>,
    {
        self.keys.push(CollectionKey {
            entity: E::SCHEMA.name,
            key: key.text(),
        });
        self
    }

    /// Adds keys of any of the collection's entities: those an earlier read left
    /// unprocessed, say.
    pub fn keys(mut self, keys: impl IntoIterator<Item = CollectionKey>) -> Self {
        self.keys.extend(keys);
        self
    }
}

impl<R: BatchTarget> BatchGet<'_, R> {
    crate::op::read_options::read_option_setters!(table = R::Table;);

    /// How to resend unprocessed keys; [`RetryPolicy::default`] unless set.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Each key once, with its attributes, in the order given: DynamoDB rejects a request
    /// that repeats a key, and reading an item twice would return it twice.
    fn distinct_keys(&self) -> Vec<(Item, &R::Key)> {
        let mut seen = HashSet::new();
        self.keys
            .iter()
            .map(|key| (R::attributes(key), key))
            .filter(|(attributes, _)| {
                let text = item::key_text::<R::Table>(attributes);
                seen.insert((text.partition.1, text.sort.map(|(_, sort)| sort)))
            })
            .collect()
    }

    /// The first request of each chunk of at most [`MAX_GET_KEYS`] keys (retries resend the
    /// unprocessed subset of a chunk); none for no keys.
    pub fn params(&self) -> Result<Vec<Request>, Error> {
        self.distinct_keys()
            .chunks(MAX_GET_KEYS)
            .map(|chunk| {
                let keys = chunk
                    .iter()
                    .map(|(attributes, _)| attributes.clone())
                    .collect();
                let request = self.request_of(keys)?;
                Ok(describe::request("BatchGetItem", request.as_input()))
            })
            .collect()
    }

    /// The request for `keys`: what is sent, and what `params` prints.
    fn request_of(&self, keys: Vec<Item>) -> Result<BatchGetItemFluentBuilder, Error> {
        Ok(self
            .db
            .batch_get_request(keys, self.read.consistent, true)?)
    }

    /// Sends the requests, one chunk after another. A failed request fails the whole read
    /// (reads have no effect, so it can simply be repeated). Expired items are left out,
    /// as every read leaves them out unless asked.
    pub async fn send(self) -> Result<BatchGetOutput<R>, Error> {
        let mut output = BatchGetOutput {
            items: Vec::new(),
            errors: Vec::new(),
            unprocessed: Vec::new(),
            requests: 0,
        };
        let mut keys = self.distinct_keys().into_iter();
        loop {
            let pending: Vec<_> = (keys.by_ref().take(MAX_GET_KEYS))
                .map(|(attributes, key)| Pending {
                    key: item::key_text::<R::Table>(&attributes),
                    request: attributes,
                    meta: key.clone(),
                })
                .collect();
            if pending.is_empty() {
                break;
            }
            let driven = drive(pending, &self.retry, |keys| self.request(keys)).await;
            output.requests += driven.requests;
            if let Some(error) = driven.error {
                return Err(error);
            }
            let live = driven
                .items
                .into_iter()
                .filter(|found| !self.read.expiry.has_expired(found));
            for found in live {
                match R::decode(found) {
                    Ok(read) => output.items.push(read),
                    Err(error) => output.errors.push(error),
                }
            }
            output.unprocessed.extend(driven.left);
        }
        Ok(output)
    }

    async fn request(&self, keys: Vec<Item>) -> Result<Response<Item>, Error> {
        let request = self.request_of(keys)?;
        let output = self.db.send_batch_get(request, R::NAME).await?;
        Ok(answer::<R::Table>(output, self.db.table_name()))
    }
}
