//! A request that DynamoDB refused, or that got no answer: the SDK's error, kept whole and
//! typed, with what a caller asks of it (was it throttled, and by which limit; did it time
//! out; may it have been applied).

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use std::fmt;

/// The SDK's error of a DynamoDB request, as the SDK returned it: DynamoDB's answer (its
/// typed exception, [`service_error`](Self::service_error)) or the lack of one (a timeout, a
/// connection that failed). It is the [`source`](std::error::Error::source) of
/// [`Error::Service`](crate::Error::Service).
#[derive(Debug)]
pub struct ServiceError {
    // Boxed: the SDK's error holds the raw response, and `Error` carries this inline.
    error: Box<SdkError<aws_sdk_dynamodb::Error, HttpResponse>>,
}

impl ServiceError {
    /// The SDK's error of one operation, its exception widened to the service's.
    pub(crate) fn new<E>(error: SdkError<E, HttpResponse>) -> Self
    where
        aws_sdk_dynamodb::Error: From<E>,
    {
        ServiceError {
            error: Box::new(error.map_service_error(aws_sdk_dynamodb::Error::from)),
        }
    }

    /// The SDK's error, whole.
    pub fn as_sdk_error(&self) -> &SdkError<aws_sdk_dynamodb::Error, HttpResponse> {
        &self.error
    }

    /// The SDK's error, whole, by value.
    pub fn into_sdk_error(self) -> SdkError<aws_sdk_dynamodb::Error, HttpResponse> {
        *self.error
    }

    /// DynamoDB's exception, when DynamoDB answered (`ConditionalCheckFailedException`, ...).
    pub fn service_error(&self) -> Option<&aws_sdk_dynamodb::Error> {
        self.error.as_service_error()
    }

    /// DynamoDB's error code (`ProvisionedThroughputExceededException`, ...), when it answered.
    pub fn code(&self) -> Option<&str> {
        self.error.code()
    }

    /// DynamoDB's message, when it answered.
    pub fn message(&self) -> Option<&str> {
        self.error.message()
    }

    /// Whether the request got no answer in time: the SDK's attempt or operation timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(*self.error, SdkError::TimeoutError(_))
    }

    /// Whether DynamoDB refused the request for throughput (nothing was applied).
    pub fn is_throttling(&self) -> bool {
        crate::retry::is_throttling(&*self.error)
    }

    /// Whether the request may have been applied without the client learning it: it timed
    /// out, its connection failed, or DynamoDB answered with a server error (HTTP 5xx).
    pub fn outcome_unknown(&self) -> bool {
        crate::retry::lost_in_transit(&*self.error)
    }

    /// Whether DynamoDB refused the request for a limit on requests in flight
    /// (`LimitExceededException`): nothing was done, and it may go through later.
    pub(crate) fn is_limit_exceeded(&self) -> bool {
        crate::retry::is_limit_exceeded(self.code())
    }

    /// What DynamoDB says it throttled, one entry per reason it gave (none where it gave none,
    /// or the request was not throttled).
    pub fn throttling(&self) -> Vec<Throttling> {
        use aws_sdk_dynamodb::Error as E;
        let reasons = match self.service_error() {
            Some(E::ProvisionedThroughputExceededException(error)) => error.throttling_reasons(),
            Some(E::ThrottlingException(error)) => error.throttling_reasons(),
            Some(E::RequestLimitExceeded(error)) => error.throttling_reasons(),
            _ => &[],
        };
        reasons.iter().map(Throttling::from_reason).collect()
    }
}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.code(), self.message()) {
            (Some(code), Some(message)) => write!(f, "{code}: {message}"),
            (Some(code), None) => f.write_str(code),
            // No answer: the SDK's own text of its error and its causes, which `Display` of
            // an `SdkError` alone leaves out ("dispatch failure").
            _ => write!(
                f,
                "{}",
                aws_sdk_dynamodb::error::DisplayErrorContext(&*self.error)
            ),
        }
    }
}

impl std::error::Error for ServiceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.error)
    }
}

/// One reason DynamoDB gave for throttling a request: which limit of which table or index
/// the request exceeded ([`ThrottlingReason`](aws_sdk_dynamodb::types::ThrottlingReason)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Throttling {
    reason: String,
    resource: Option<String>,
}

/// The limit a throttled request exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ThrottlingLimit {
    /// A partition key value's share of the table's or index's throughput (about 3,000 read
    /// and 1,000 write units a second): a hot key. More capacity does not help; spread the
    /// key's traffic.
    KeyRange,
    /// The provisioned read or write capacity of the table or index.
    Provisioned,
    /// The account's per-table throughput quota in the Region, for an on-demand table.
    Account,
    /// The maximum on-demand throughput configured for the table or index.
    MaxOnDemand,
    /// A reason this library does not know.
    Other,
}

impl Throttling {
    fn from_reason(reason: &aws_sdk_dynamodb::types::ThrottlingReason) -> Self {
        Throttling {
            reason: reason.reason().unwrap_or_default().to_owned(),
            resource: reason.resource().map(str::to_owned),
        }
    }

    /// DynamoDB's reason as it gave it: the resource type, the operation type and the limit
    /// (`TableWriteKeyRangeThroughputExceeded`, `IndexReadProvisionedThroughputExceeded`, ...).
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The ARN of the table or index that was throttled.
    pub fn resource(&self) -> Option<&str> {
        self.resource.as_deref()
    }

    /// Which limit the request exceeded.
    pub fn limit(&self) -> ThrottlingLimit {
        let limit = self
            .reason
            .trim_start_matches("Table")
            .trim_start_matches("Index")
            .trim_start_matches("Read")
            .trim_start_matches("Write");
        match limit {
            "KeyRangeThroughputExceeded" => ThrottlingLimit::KeyRange,
            "ProvisionedThroughputExceeded" => ThrottlingLimit::Provisioned,
            "AccountLimitExceeded" => ThrottlingLimit::Account,
            "MaxOnDemandThroughputExceeded" => ThrottlingLimit::MaxOnDemand,
            _ => ThrottlingLimit::Other,
        }
    }

    /// Whether a global secondary index, not the table, was throttled (a write is throttled
    /// when an index it updates is).
    pub fn on_index(&self) -> bool {
        self.reason.starts_with("Index")
    }

    /// Whether writes, not reads, were throttled.
    pub fn on_writes(&self) -> bool {
        let operation = self
            .reason
            .trim_start_matches("Table")
            .trim_start_matches("Index");
        operation.starts_with("Write")
    }
}

impl fmt::Display for Throttling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)?;
        if let Some(resource) = &self.resource {
            write!(f, " ({resource})")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_dynamodb::types::ThrottlingReason;

    fn throttling(reason: &str) -> Throttling {
        Throttling::from_reason(&ThrottlingReason::builder().reason(reason).build())
    }

    #[test]
    fn a_reason_reads_as_its_resource_operation_and_limit() {
        let hot = throttling("TableWriteKeyRangeThroughputExceeded");
        assert_eq!(
            (hot.limit(), hot.on_index(), hot.on_writes()),
            (ThrottlingLimit::KeyRange, false, true)
        );
        let index = throttling("IndexReadProvisionedThroughputExceeded");
        assert_eq!(
            (index.limit(), index.on_index(), index.on_writes()),
            (ThrottlingLimit::Provisioned, true, false)
        );
        assert_eq!(
            throttling("IndexWriteAccountLimitExceeded").limit(),
            ThrottlingLimit::Account
        );
        assert_eq!(
            throttling("TableReadMaxOnDemandThroughputExceeded").limit(),
            ThrottlingLimit::MaxOnDemand
        );
        assert_eq!(throttling("Something").limit(), ThrottlingLimit::Other);
    }
}
