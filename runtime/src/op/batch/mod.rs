//! `BatchGetItem` and `BatchWriteItem`: many items in as few requests as DynamoDB allows,
//! with what DynamoDB leaves unprocessed resent under a [`RetryPolicy`] and, if it is still
//! unprocessed when the policy gives up, returned to the caller rather than dropped.

mod get;
mod pace;
mod stream;
mod unprocessed;

pub use crate::error::batch::{BatchWriteOutput, UnprocessedWrite, WriteOperation};
pub use get::{BatchGet, BatchGetOutput};
#[doc(hidden)]
pub use get::{BatchTarget, MemberOf};
pub use stream::PutStream;
pub(crate) use unprocessed::read_records;
use unprocessed::{drive, Pending, Response};

use crate::error::Error;
use crate::item;
use crate::key::KeyText;
use crate::rate::{Limiter, Rate};
use crate::retry::RetryPolicy;
use crate::schema::{Entity, Table, Unversioned};
use crate::unique::NoUniqueValues;
use crate::wire::{describe, Request};
use crate::{Db, Key};
use aws_sdk_dynamodb::operation::batch_write_item::builders::BatchWriteItemFluentBuilder;
use aws_sdk_dynamodb::types::WriteRequest;
use futures::StreamExt;
use std::collections::HashMap;

/// DynamoDB's limit on the keys of one `BatchGetItem`.
pub const MAX_GET_KEYS: usize = 100;
/// DynamoDB's limit on the operations of one `BatchWriteItem`. Checked here because some
/// engines (moto) accept more.
pub const MAX_WRITES: usize = 25;

impl<T: Table> Db<T> {
    /// Writes and deletes many items, of any entities of this table, in `BatchWriteItem`
    /// requests of at most [`MAX_WRITES`] operations.
    ///
    /// A batch write is not a transaction: each operation succeeds or fails on its own, none
    /// can have a condition, and [`BatchWriteOutput::unprocessed`] lists those DynamoDB did
    /// not do.
    pub fn batch_write(&self) -> BatchWrite<'_, T> {
        BatchWrite {
            db: self,
            writes: Vec::new(),
            error: None,
            retry: self.retry_policy(),
            concurrency: 1,
            rate: None,
        }
    }
}

/// A `BatchWriteItem` of puts and deletes of any entities of table `T`; see
/// [`Db::batch_write`].
#[must_use = "an operation does nothing until it is sent"]
pub struct BatchWrite<'db, T: Table> {
    db: &'db Db<T>,
    writes: Vec<UnprocessedWrite>,
    /// The first entity that could not be encoded, reported by `params` and `send`.
    error: Option<crate::item::EncodeError>,
    retry: RetryPolicy,
    /// Requests in flight at once.
    concurrency: usize,
    rate: Option<Rate>,
}

impl<T: Table> BatchWrite<'_, T> {
    /// Adds a put of `entity`, replacing any item with its key.
    ///
    /// An `updated_at` field is set to now, and a `created_at` field written as the entity has
    /// it (a batch cannot keep the stored one, as [`Db::put`] does). An entity with a version
    /// field does not compile here: checking its version needs a condition, which
    /// `BatchWriteItem` cannot carry.
    pub fn put<E: Entity<Table = T> + NoUniqueValues + Unversioned>(mut self, entity: &E) -> Self {
        let managed = E::SCHEMA.managed;
        let encoded = item::encode(entity).and_then(|mut encoded| {
            if let Some(timestamp) = managed.updated_at {
                let now = (timestamp.at)(self.db.now())?;
                encoded.insert(timestamp.attribute.to_owned(), now);
            }
            Ok(encoded)
        });
        match encoded {
            Ok(encoded) => self.writes.push(UnprocessedWrite {
                operation: WriteOperation::Put,
                entity: E::SCHEMA.name,
                key: item::key_text::<T>(&encoded),
                item: encoded,
            }),
            Err(error) => {
                self.error.get_or_insert(error);
            }
        }
        self
    }

    /// Adds a put of each entity.
    pub fn put_all<'e, E: Entity<Table = T> + NoUniqueValues + Unversioned>(
        self,
        entities: impl IntoIterator<Item = &'e E>,
    ) -> Self {
        entities
            .into_iter()
            .fold(self, |batch, entity| batch.put(entity))
    }

    /// Adds a delete of the item with `key` (nothing happens if there is none).
    pub fn delete<E: Entity<Table = T> + NoUniqueValues>(mut self, key: Key<E>) -> Self {
        let attributes = key.to_attributes();
        self.writes.push(UnprocessedWrite {
            operation: WriteOperation::Delete,
            entity: E::SCHEMA.name,
            key: item::key_text::<T>(&attributes),
            item: attributes,
        });
        self
    }

    /// Adds a delete of each key.
    pub fn delete_all<E: Entity<Table = T> + NoUniqueValues>(
        self,
        keys: impl IntoIterator<Item = Key<E>>,
    ) -> Self {
        keys.into_iter().fold(self, |batch, key| batch.delete(key))
    }

    /// Writes no faster than `rate`, across the requests in flight. The rate adapts: it halves
    /// when DynamoDB leaves writes unprocessed or throttles a request (which is then resent
    /// under the retry policy, as unprocessed writes are), and climbs back while it does not.
    /// Each request asks DynamoDB for the capacity it consumed, to charge the budget.
    pub fn rate(mut self, rate: Rate) -> Self {
        self.rate = Some(rate);
        self
    }

    /// How to resend unprocessed writes; [`RetryPolicy::default`] unless set.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Keeps up to `requests` `BatchWriteItem` requests in flight at once (default 1: one
    /// chunk after another), each with its own retries of what DynamoDB leaves unprocessed.
    /// Raise it to load at the table's speed rather than one round trip's; `0` counts as 1.
    pub fn concurrency(mut self, requests: usize) -> Self {
        self.concurrency = requests.max(1);
        self
    }

    /// The number of operations added.
    pub fn len(&self) -> usize {
        self.writes.len()
    }

    /// Whether no operation was added.
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// Fails on an entity that could not be encoded or on two operations on one item.
    fn check(&self) -> Result<(), Error> {
        if let Some(error) = &self.error {
            return Err(error.clone().into());
        }
        let mut seen: HashMap<(&str, Option<&str>), WriteOperation> = HashMap::new();
        for write in &self.writes {
            let id = (
                write.key.partition.1.as_str(),
                write.key.sort.as_ref().map(|(_, sort)| sort.as_str()),
            );
            if let Some(first) = seen.insert(id, write.operation) {
                return Err(Error::DuplicateWrite {
                    key: write.key.clone(),
                    first,
                    second: write.operation,
                });
            }
        }
        Ok(())
    }

    /// The first request of each chunk of at most [`MAX_WRITES`] operations, in the order
    /// they were added (retries resend the unprocessed subset of a chunk); none for an empty
    /// batch.
    pub fn params(&self) -> Result<Vec<Request>, Error> {
        self.check()?;
        self.writes
            .chunks(MAX_WRITES)
            .map(|chunk| {
                let writes = chunk
                    .iter()
                    .map(UnprocessedWrite::to_request)
                    .collect::<Result<Vec<_>, _>>()?;
                let request = self.request_of(writes, self.rate.is_some());
                Ok(describe::request("BatchWriteItem", request.as_input()))
            })
            .collect()
    }

    /// The request for `writes`: what is sent, and what `params` prints. A paced write asks
    /// for at least the total capacity consumed, which its limiter is charged.
    fn request_of(&self, writes: Vec<WriteRequest>, paced: bool) -> BatchWriteItemFluentBuilder {
        self.db.batch_write_request(writes, paced)
    }

    /// Sends the requests, a chunk at a time or [`concurrency`](Self::concurrency) at once,
    /// resending unprocessed operations under the retry policy. Operations still unprocessed
    /// after that are in [`BatchWriteOutput::unprocessed`]. If a request fails, no chunk is
    /// started after it, and the error is [`Error::BatchWrite`], which tells what was written
    /// and what was not.
    pub async fn send(self) -> Result<BatchWriteOutput, Error> {
        self.check()?;
        let limiter = match self.rate {
            Some(rate) => Some(self.db.limiter(rate).await?),
            None => None,
        };
        self.send_paced(limiter.as_ref()).await
    }

    /// [`BatchWrite::send`], at the pace of `limiter` (shared with other writes, as a
    /// [`PutStream`]'s chunks share one).
    pub(crate) async fn send_paced(
        self,
        limiter: Option<&Limiter>,
    ) -> Result<BatchWriteOutput, Error> {
        self.check()?;
        let failed = std::sync::atomic::AtomicBool::new(false);
        let this = &self;
        let slices: Vec<&[UnprocessedWrite]> = self.writes.chunks(MAX_WRITES).collect();
        // Mapped from indices, not from the slices themselves: a closure taking a reference,
        // kept across an await, makes the future not `Send` (rustc's "FnOnce is not general
        // enough"), and a batch write must be able to run in `tokio::spawn`.
        let chunks = (0..slices.len()).map(|index| {
            let failed = &failed;
            let chunk = slices.get(index).copied().unwrap_or_default();
            async move {
                if failed.load(std::sync::atomic::Ordering::SeqCst) {
                    return Ok(Err(chunk));
                }
                let pending = chunk
                    .iter()
                    .map(|write| {
                        Ok(Pending {
                            key: write.key.clone(),
                            request: write.to_request()?,
                            meta: write,
                        })
                    })
                    .collect::<Result<Vec<_>, Error>>()?;
                let driven =
                    drive(pending, &this.retry, |writes| this.request(writes, limiter)).await;
                if driven.error.is_some() {
                    failed.store(true, std::sync::atomic::Ordering::SeqCst);
                }
                Ok::<_, Error>(Ok(driven))
            }
        });
        let mut sent = futures::stream::iter(chunks).buffer_unordered(self.concurrency);
        let mut output = BatchWriteOutput::default();
        let mut first_error = None;
        let mut not_sent = Vec::new();
        while let Some(chunk) = sent.next().await {
            match chunk? {
                Ok(driven) => {
                    output.written += driven.done;
                    output.requests += driven.requests;
                    output.unprocessed.extend(driven.left.into_iter().cloned());
                    if let Some(error) = driven.error {
                        first_error.get_or_insert(error);
                    }
                }
                Err(chunk) => not_sent.extend(chunk.iter().cloned()),
            }
        }
        output.rate = limiter.map(Limiter::held);
        match first_error {
            None => Ok(output),
            Some(error) => {
                output.unprocessed.extend(not_sent);
                Err(Error::BatchWrite {
                    partial: Box::new(output),
                    source: Box::new(error),
                })
            }
        }
    }

    async fn request(
        &self,
        writes: Vec<WriteRequest>,
        limiter: Option<&Limiter>,
    ) -> Result<Response<WriteRequest>, Error> {
        let Some(limiter) = limiter else {
            return self
                .request_once(writes, false)
                .await
                .map(|(response, _)| response);
        };
        let reserved = pace::reservation::<T>(limiter.unit(), &writes);
        limiter.acquire(reserved).await;
        let count = writes.len();
        // Kept to resend if the whole request is throttled, which returns none of them.
        let sent: Vec<(KeyText, WriteRequest)> = writes
            .iter()
            .filter_map(|write| Some((write_key::<T>(write)?, write.clone())))
            .collect();
        match self.request_once(writes, true).await {
            Ok((response, consumed)) => {
                let done = count.saturating_sub(response.unprocessed.len());
                limiter.settle(
                    reserved,
                    pace::cost(limiter.unit(), reserved, count, done, consumed),
                );
                if !response.unprocessed.is_empty() {
                    limiter.throttled();
                }
                Ok(response)
            }
            // Throttled whole: nothing was written, so every write is unprocessed, and is
            // resent under the retry policy like writes DynamoDB leaves unprocessed.
            Err(error) if error.is_throttling() => {
                limiter.settle(reserved, 0.0);
                limiter.throttled();
                Ok(Response {
                    items: Vec::new(),
                    unprocessed: sent,
                })
            }
            Err(error) => Err(error),
        }
    }

    /// Sends `writes` once: what DynamoDB left unprocessed, and the capacity it reported.
    async fn request_once(
        &self,
        writes: Vec<WriteRequest>,
        paced: bool,
    ) -> Result<(Response<WriteRequest>, Option<f64>), Error> {
        let table = self.db.table_name();
        let output = self
            .db
            .send_batch_write(self.request_of(writes, paced))
            .await?;
        let consumed = output
            .consumed_capacity
            .as_ref()
            .and_then(|reported| reported.iter().map(|entry| entry.capacity_units).sum());
        let unprocessed = output
            .unprocessed_items
            .and_then(|mut unprocessed| unprocessed.remove(table))
            .unwrap_or_default()
            .into_iter()
            .filter_map(|write| Some((write_key::<T>(&write)?, write)))
            .collect();
        let response = Response {
            items: Vec::new(),
            unprocessed,
        };
        Ok((response, consumed))
    }
}

/// The key of the item a write request writes or deletes.
fn write_key<T: Table>(write: &WriteRequest) -> Option<KeyText> {
    let key = write
        .put_request
        .as_ref()
        .map(|put| &put.item)
        .or_else(|| write.delete_request.as_ref().map(|delete| &delete.key))?;
    Some(item::key_text::<T>(key))
}

#[cfg(test)]
mod tests {
    use super::{drive, Pending, Response};
    use crate::error::Error;
    use crate::key::KeyText;
    use crate::retry::RetryPolicy;
    use std::future::ready;
    use std::time::Duration;

    fn key(n: usize) -> KeyText {
        KeyText {
            partition: ("PK", format!("K#{n}")),
            sort: None,
        }
    }

    fn pending(count: usize) -> Vec<Pending<usize, usize>> {
        (0..count)
            .map(|n| Pending {
                key: key(n),
                request: n,
                meta: n,
            })
            .collect()
    }

    fn no_delay(max_attempts: u32) -> RetryPolicy {
        RetryPolicy {
            max_attempts,
            base_delay: Duration::ZERO,
            max_delay: Duration::ZERO,
        }
    }

    #[test]
    fn unprocessed_requests_are_resent_until_done() {
        let mut sent: Vec<Vec<usize>> = Vec::new();
        let driven = futures::executor::block_on(drive(pending(5), &no_delay(8), |requests| {
            sent.push(requests.clone());
            // First answer leaves 1 and 3, the second leaves 3, the third does it.
            let left: Vec<usize> = match sent.len() {
                1 => vec![1, 3],
                2 => vec![3],
                _ => vec![],
            };
            ready(Ok::<_, Error>(Response {
                items: Vec::new(),
                unprocessed: left.into_iter().map(|n| (key(n), n)).collect(),
            }))
        }));
        assert_eq!(sent, vec![vec![0, 1, 2, 3, 4], vec![1, 3], vec![3]]);
        assert_eq!(driven.done, 5);
        assert_eq!(driven.requests, 3);
        assert!(driven.left.is_empty());
        assert!(driven.error.is_none());
    }

    #[test]
    fn attempts_are_bounded_and_the_rest_is_returned() {
        let mut calls = 0;
        let driven = futures::executor::block_on(drive(pending(4), &no_delay(3), |requests| {
            calls += 1;
            // Always leaves the last two.
            let left = requests
                .into_iter()
                .filter(|n| *n >= 2)
                .map(|n| (key(n), n))
                .collect();
            ready(Ok::<_, Error>(Response {
                items: Vec::new(),
                unprocessed: left,
            }))
        }));
        assert_eq!(calls, 3);
        assert_eq!(driven.requests, 3);
        assert_eq!(driven.done, 2);
        assert_eq!(driven.left, vec![2, 3]);
    }

    #[test]
    fn a_failed_request_keeps_what_was_not_done() {
        let mut calls = 0;
        let driven = futures::executor::block_on(drive(pending(3), &no_delay(8), |_| {
            calls += 1;
            ready(if calls == 1 {
                Ok(Response {
                    items: Vec::new(),
                    unprocessed: vec![(key(2), 2)],
                })
            } else {
                Err(Error::Wait {
                    table: "t".into(),
                    message: "boom".into(),
                })
            })
        }));
        assert_eq!(driven.done, 2);
        assert_eq!(driven.requests, 2);
        assert_eq!(driven.left.len(), 1);
        assert!(driven.error.is_some());
    }

    #[test]
    fn nothing_to_send_sends_nothing() {
        let driven = futures::executor::block_on(drive(pending(0), &no_delay(8), |_| {
            ready(Err::<Response<usize>, _>(Error::Wait {
                table: "t".into(),
                message: "must not be called".into(),
            }))
        }));
        assert_eq!(driven.requests, 0);
        assert!(driven.error.is_none());
    }

    #[tokio::test]
    async fn retries_sleep_between_attempts() {
        let policy = RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(2),
        };
        let driven = drive(pending(1), &policy, |_| {
            ready(Ok::<_, Error>(Response {
                items: Vec::new(),
                unprocessed: vec![(key(0), 0)],
            }))
        })
        .await;
        assert_eq!(driven.requests, 3);
        assert_eq!(driven.left.len(), 1);
    }
}
