//! The Streams API: `DescribeStream`, `GetShardIterator` and `GetRecords`, each in its span
//! (service "DynamoDB Streams") and resent by the reader's policy while throttled or lost.

use super::Db;
use crate::retry::{ReadError, RetryPolicy};
use crate::schema::Table;
use crate::trace::Operation;
use aws_sdk_dynamodbstreams::operation::describe_stream::{
    DescribeStreamError, DescribeStreamOutput,
};
use aws_sdk_dynamodbstreams::operation::get_records::{GetRecordsError, GetRecordsOutput};
use aws_sdk_dynamodbstreams::operation::get_shard_iterator::{
    GetShardIteratorError, GetShardIteratorOutput,
};
use aws_sdk_dynamodbstreams::types::ShardIteratorType;

/// A Streams API client without the SDK's retries: a stream reader resends its reads itself,
/// under its policy, so that every attempt is one the policy counts.
#[derive(Debug, Clone)]
pub(crate) struct StreamsClient(aws_sdk_dynamodbstreams::Client);

impl StreamsClient {
    /// `client`, with its retries off, and its attempts counted into the spans of its
    /// requests (the interceptor every `Db`'s client has: one trait for both SDKs).
    pub(crate) fn new(client: &aws_sdk_dynamodbstreams::Client) -> Self {
        StreamsClient(aws_sdk_dynamodbstreams::Client::from_conf(
            client
                .config()
                .to_builder()
                .retry_config(aws_sdk_dynamodbstreams::config::retry::RetryConfig::disabled())
                .interceptor(crate::trace::AttemptCounter)
                .build(),
        ))
    }

    /// `DescribeStream` of the stream at `stream_arn`, its shards from after `start`.
    pub(crate) async fn describe_stream<T: Table>(
        &self,
        db: &Db<T>,
        policy: &RetryPolicy,
        stream_arn: &str,
        start: Option<String>,
    ) -> Result<DescribeStreamOutput, ReadError<DescribeStreamError>> {
        let describe = self
            .0
            .describe_stream()
            .stream_arn(stream_arn)
            .set_exclusive_start_shard_id(start);
        db.reading_traced(Operation::DescribeStream, policy, || {
            describe.clone().send()
        })
        .await
    }

    /// `GetShardIterator` of shard `shard_id`: after the record numbered `after`, or at the
    /// shard's oldest record.
    pub(crate) async fn get_shard_iterator<T: Table>(
        &self,
        db: &Db<T>,
        policy: &RetryPolicy,
        (stream_arn, shard_id): (&str, &str),
        after: Option<&str>,
    ) -> Result<GetShardIteratorOutput, ReadError<GetShardIteratorError>> {
        let request = self
            .0
            .get_shard_iterator()
            .stream_arn(stream_arn)
            .shard_id(shard_id);
        let request = match after {
            Some(sequence) => request
                .shard_iterator_type(ShardIteratorType::AfterSequenceNumber)
                .sequence_number(sequence),
            None => request.shard_iterator_type(ShardIteratorType::TrimHorizon),
        };
        db.reading_traced(Operation::GetShardIterator, policy, || {
            request.clone().send()
        })
        .await
    }

    /// `GetRecords`: at most `limit` records from `iterator`.
    pub(crate) async fn get_records<T: Table>(
        &self,
        db: &Db<T>,
        policy: &RetryPolicy,
        iterator: String,
        limit: i32,
    ) -> Result<GetRecordsOutput, ReadError<GetRecordsError>> {
        let get = self.0.get_records().shard_iterator(iterator).limit(limit);
        db.reading_traced(Operation::GetRecords, policy, || get.clone().send())
            .await
    }
}
