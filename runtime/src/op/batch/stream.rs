//! Bulk loads from a stream: items are read only as fast as `BatchWriteItem` requests go, so
//! a stream of any length loads in bounded memory.

use super::{BatchWriteOutput, MAX_WRITES};
use crate::error::Error;
use crate::rate::{Limiter, Rate};
use crate::retry::RetryPolicy;
use crate::schema::{Entity, Table, Unversioned};
use crate::unique::NoUniqueValues;
use crate::Db;
use futures::{Stream, StreamExt};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};

impl<T: Table> Db<T> {
    /// Puts every item `items` yields with `BatchWriteItem`, in chunks of [`MAX_WRITES`], up to
    /// [`PutStream::concurrency`] requests at once. The stream is read only as chunks are
    /// sent, so at most `concurrency` chunks of items are held at once, whatever its length.
    pub fn put_stream<E, S>(&self, items: S) -> PutStream<'_, E, S>
    where
        E: Entity<Table = T> + NoUniqueValues + Unversioned,
        S: Stream<Item = E>,
    {
        PutStream {
            db: self,
            items,
            concurrency: 1,
            retry: self.retry_policy(),
            rate: None,
            entity: PhantomData,
        }
    }
}

/// A bulk load of a stream of items; see [`Db::put_stream`].
#[must_use = "a load does nothing until it is sent"]
pub struct PutStream<'db, E: Entity, S> {
    db: &'db Db<E::Table>,
    items: S,
    concurrency: usize,
    retry: RetryPolicy,
    rate: Option<Rate>,
    entity: PhantomData<fn() -> E>,
}

impl<E: Entity + NoUniqueValues + Unversioned, S: Stream<Item = E>> PutStream<'_, E, S> {
    /// Keeps up to `requests` requests in flight (default 1); `0` counts as 1.
    pub fn concurrency(mut self, requests: usize) -> Self {
        self.concurrency = requests.max(1);
        self
    }

    /// Writes no faster than `rate`, across the requests in flight, adapting to throttling as
    /// [`BatchWrite::rate`](super::BatchWrite::rate) does; one limiter paces the whole load.
    pub fn rate(mut self, rate: Rate) -> Self {
        self.rate = Some(rate);
        self
    }

    /// How to resend writes DynamoDB leaves unprocessed; [`RetryPolicy::default`] unless set.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Loads the stream. If a request fails, no more of the stream is read, the requests in
    /// flight finish, and the error is [`Error::BatchWrite`], whose output counts what was
    /// written and lists what was read but not written.
    pub async fn send(self) -> Result<BatchWriteOutput, Error> {
        let (db, retry) = (self.db, self.retry);
        let limiter = match self.rate {
            Some(rate) => Some(db.limiter(rate).await?),
            None => None,
        };
        let limiter = limiter.as_ref();
        let failed = AtomicBool::new(false);
        let chunks = self
            .items
            .chunks(MAX_WRITES)
            .take_while(|_| std::future::ready(!failed.load(Ordering::SeqCst)))
            .map(|chunk| async move {
                let batch = db.batch_write().put_all(&chunk).retry(retry);
                batch.send_paced(limiter).await
            })
            .buffer_unordered(self.concurrency);
        futures::pin_mut!(chunks);
        let mut output = BatchWriteOutput::default();
        let mut first_error = None;
        while let Some(sent) = chunks.next().await {
            let (done, error) = match sent {
                Ok(done) => (done, None),
                Err(Error::BatchWrite { partial, source }) => (*partial, Some(*source)),
                Err(error) => (BatchWriteOutput::default(), Some(error)),
            };
            output.written += done.written;
            output.requests += done.requests;
            output.unprocessed.extend(done.unprocessed);
            if let Some(error) = error {
                failed.store(true, Ordering::SeqCst);
                first_error.get_or_insert(error);
            }
        }
        output.rate = limiter.map(Limiter::held);
        match first_error {
            None => Ok(output),
            Some(source) => Err(Error::BatchWrite {
                partial: Box::new(output),
                source: Box::new(source),
            }),
        }
    }
}
