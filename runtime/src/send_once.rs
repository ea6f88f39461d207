//! A request the library resends itself, sent with the SDK's own retries off: each attempt
//! the SDK makes is then one the library's [`RetryPolicy`](crate::RetryPolicy) counts, so a
//! piece of work never costs more attempts than the policy states (the SDK's default would
//! make three of each of the policy's). The overriding configuration is built again for each
//! request, so the write executor's requests, on every write's path, are made on the `Db`'s
//! client without retries instead (`Db::unretried_client`), made once.

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::error::SdkError;
use std::future::Future;

/// An SDK request (its fluent builder) sent as one attempt.
pub(crate) trait SendOnce: Sized {
    /// What the request returns.
    type Output;
    /// The operation's error.
    type Failure;

    /// Sends the request once, the SDK's retries off.
    fn send_once(
        self,
    ) -> impl Future<Output = Result<Self::Output, SdkError<Self::Failure, HttpResponse>>> + Send;
}

/// Implements [`SendOnce`] for operations of one SDK crate (`$sdk`: its config module).
macro_rules! send_once {
    ($sdk:ident: $($operation:ident :: $Builder:ident => $Output:ident, $Failure:ident;)*) => {
        $(
            impl SendOnce for $sdk::operation::$operation::builders::$Builder {
                type Output = $sdk::operation::$operation::$Output;
                type Failure = $sdk::operation::$operation::$Failure;

                fn send_once(
                    self,
                ) -> impl Future<Output = Result<Self::Output, SdkError<Self::Failure, HttpResponse>>>
                       + Send {
                    let once = $sdk::config::Builder::new().retry_config(RetryConfig::disabled());
                    self.customize().config_override(once).send()
                }
            }
        )*
    };
}

send_once! { aws_sdk_dynamodb:
    get_item::GetItemFluentBuilder => GetItemOutput, GetItemError;
    batch_get_item::BatchGetItemFluentBuilder => BatchGetItemOutput, BatchGetItemError;
    scan::ScanFluentBuilder => ScanOutput, ScanError;
    query::QueryFluentBuilder => QueryOutput, QueryError;
    describe_table::DescribeTableFluentBuilder => DescribeTableOutput, DescribeTableError;
    describe_time_to_live::DescribeTimeToLiveFluentBuilder => DescribeTimeToLiveOutput, DescribeTimeToLiveError;
    update_table::UpdateTableFluentBuilder => UpdateTableOutput, UpdateTableError;
    update_time_to_live::UpdateTimeToLiveFluentBuilder => UpdateTimeToLiveOutput, UpdateTimeToLiveError;
}

#[cfg(feature = "aws-sdk-dynamodbstreams")]
send_once! { aws_sdk_dynamodbstreams:
    describe_stream::DescribeStreamFluentBuilder => DescribeStreamOutput, DescribeStreamError;
    get_records::GetRecordsFluentBuilder => GetRecordsOutput, GetRecordsError;
    get_shard_iterator::GetShardIteratorFluentBuilder => GetShardIteratorOutput, GetShardIteratorError;
}
