//! The batches: `BatchGetItem` and `BatchWriteItem`, built here for the batch operations and
//! the library's jobs. Both go out on the client without the SDK's retries: the one batch
//! loop (`op/batch/unprocessed.rs`) resends a whole request refused or unanswered within the
//! attempts it resends unprocessed parts with. Each request is sent here once, in its span, with
//! its capacity recorded.

use super::Db;
use crate::error::Error;
use crate::item::Item;
use crate::trace::Operation;
use aws_sdk_dynamodb::error::BuildError;
use aws_sdk_dynamodb::operation::batch_get_item::builders::BatchGetItemFluentBuilder;
use aws_sdk_dynamodb::operation::batch_get_item::BatchGetItemOutput;
use aws_sdk_dynamodb::operation::batch_write_item::builders::BatchWriteItemFluentBuilder;
use aws_sdk_dynamodb::operation::batch_write_item::BatchWriteItemOutput;
use aws_sdk_dynamodb::types::{KeysAndAttributes, ReturnConsumedCapacity, WriteRequest};
use futures::FutureExt;

impl<T: crate::schema::Table> Db<T> {
    /// The `BatchGetItem` of the items at `keys` (at most 100), with its consumed capacity
    /// asked for when `capacity` and the `Db` tracks it.
    pub(crate) fn batch_get_request(
        &self,
        keys: Vec<Item>,
        consistent: bool,
        capacity: bool,
    ) -> Result<BatchGetItemFluentBuilder, BuildError> {
        let request = KeysAndAttributes::builder()
            .set_keys(Some(keys))
            .set_consistent_read(consistent.then_some(true))
            .build()?;
        Ok(self
            .unretried_client()
            .batch_get_item()
            .request_items(self.table_name(), request)
            .set_return_consumed_capacity(
                capacity.then(|| self.return_consumed_capacity()).flatten(),
            ))
    }

    /// The `BatchWriteItem` of `writes` (at most 25). A paced write asks for at least the
    /// total capacity consumed, which its limiter is charged.
    pub(crate) fn batch_write_request(
        &self,
        writes: Vec<WriteRequest>,
        paced: bool,
    ) -> BatchWriteItemFluentBuilder {
        let capacity = self
            .return_consumed_capacity()
            .or(paced.then_some(ReturnConsumedCapacity::Total));
        self.unretried_client()
            .batch_write_item()
            .request_items(self.table_name(), writes)
            .set_return_consumed_capacity(capacity)
    }

    /// Sends `request` (from [`batch_get_request`](Self::batch_get_request)) once, in its
    /// span (`reader` names whose items it reads), and records its capacity.
    pub(crate) async fn send_batch_get(
        &self,
        request: BatchGetItemFluentBuilder,
        reader: &'static str,
    ) -> Result<BatchGetItemOutput, Error> {
        let span = crate::trace::span(
            Operation::BatchGetItem,
            self.table_name(),
            reader,
            || None,
            None,
        );
        self.send_traced(span, request.send().boxed(), |output| {
            output.consumed_capacity()
        })
        .await
    }

    /// Sends `request` (from [`batch_write_request`](Self::batch_write_request)) once, in its
    /// span, and records its capacity.
    pub(crate) async fn send_batch_write(
        &self,
        request: BatchWriteItemFluentBuilder,
    ) -> Result<BatchWriteItemOutput, Error> {
        let span = crate::trace::span(
            Operation::BatchWriteItem,
            self.table_name(),
            "",
            || None,
            None,
        );
        self.send_traced(span, request.send().boxed(), |output| {
            output.consumed_capacity()
        })
        .await
    }
}
