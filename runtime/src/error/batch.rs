//! What a batch write did, and each operation it could not do, with enough to send it again.

use crate::item::Item;
use crate::key::KeyText;
use aws_sdk_dynamodb::error::BuildError;
use aws_sdk_dynamodb::types::{DeleteRequest, PutRequest, WriteRequest};
use std::fmt;

/// The kind of one operation of a batch write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WriteOperation {
    /// `PutRequest`: writes the whole item.
    Put,
    /// `DeleteRequest`: deletes the item with the key.
    Delete,
}

impl fmt::Display for WriteOperation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WriteOperation::Put => "put",
            WriteOperation::Delete => "delete",
        })
    }
}

/// One operation of a batch write, as reported when DynamoDB did not do it.
#[derive(Debug, Clone, PartialEq)]
pub struct UnprocessedWrite {
    /// Put or delete.
    pub operation: WriteOperation,
    /// The entity written or deleted.
    pub entity: &'static str,
    /// The item's primary key.
    pub key: KeyText,
    /// The whole item for a put, the key attributes for a delete: enough to send it again.
    pub item: Item,
}

impl UnprocessedWrite {
    pub(crate) fn to_request(&self) -> Result<WriteRequest, BuildError> {
        let item = Some(self.item.clone());
        Ok(match self.operation {
            WriteOperation::Put => WriteRequest::builder()
                .put_request(PutRequest::builder().set_item(item).build()?)
                .build(),
            WriteOperation::Delete => WriteRequest::builder()
                .delete_request(DeleteRequest::builder().set_key(item).build()?)
                .build(),
        })
    }
}

/// What a [`BatchWrite`](crate::op::batch::BatchWrite) did.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
#[must_use = "writes DynamoDB left unprocessed are reported here, not as an error"]
pub struct BatchWriteOutput {
    /// Operations DynamoDB confirmed.
    pub written: usize,
    /// How many `BatchWriteItem` requests were sent, retries included.
    pub requests: usize,
    /// Operations not done: still unprocessed when the retry policy gave up or, in
    /// [`Error::BatchWrite`](crate::Error::BatchWrite), also those whose request failed or was never sent.
    pub unprocessed: Vec<UnprocessedWrite>,
    /// With a [`rate`](crate::op::batch::BatchWrite::rate), the rate the write held at the end, per
    /// second in the rate's unit: its ceiling, or less if DynamoDB throttled it lately.
    pub rate: Option<f64>,
}

impl BatchWriteOutput {
    /// Whether every operation was written.
    pub fn is_complete(&self) -> bool {
        self.unprocessed.is_empty()
    }
}
