//! Why a stream record could not be read as a typed change. Each error carries the record's
//! sequence number and keys, so a consumer can log it, park it or stop; none is dropped.

use crate::item::DecodeError;
use crate::key::KeyText;

/// A stream record that is not a change of the expected entities.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// The record lacks something every record has (its keys, an image its view carries, a
    /// known event name).
    #[error("stream record {sequence_number}: {reason}")]
    Malformed {
        /// The record's sequence number (empty when it has none).
        sequence_number: String,
        /// What is missing or wrong.
        reason: String,
    },
    /// The record's keys or an image does not decode as the expected entities: an entity the
    /// consumer does not read, or an item that does not fit its entity.
    #[error("stream record {sequence_number} (key {key}): the {image} does not decode: {source}")]
    Decode {
        /// The record's sequence number.
        sequence_number: String,
        /// The item's key, as text.
        key: KeyText,
        /// `keys`, `new image` or `old image`.
        image: &'static str,
        /// Why (boxed: a decode error is large, and rare).
        #[source]
        source: Box<DecodeError>,
    },
    /// A DynamoDB Streams request failed.
    #[error("{operation} on stream {stream}: {message}")]
    Read {
        /// The Streams API operation.
        operation: &'static str,
        /// The stream ARN (or the table name, before the stream is known).
        stream: String,
        /// The service's error code, when it answered one (`LimitExceededException`).
        code: Option<String>,
        /// The error, with its causes.
        message: String,
    },
    /// The table has no stream enabled, so there is nothing to read.
    #[error("table {table} has no stream enabled; declare `stream = \"...\"` on it and apply its migration plan")]
    NoStream {
        /// The table.
        table: String,
    },
}

impl StreamError {
    /// Whether a Streams API read was refused for throughput, after the reader's resends:
    /// `LimitExceededException` (more reads of a shard than the API allows) or a throttle.
    /// Polling again later goes on where the reader stopped.
    pub fn is_throttling(&self) -> bool {
        match self {
            StreamError::Read {
                code: Some(code), ..
            } => {
                crate::retry::is_limit_exceeded(Some(code))
                    || crate::retry::is_throttling_code(Some(code))
            }
            _ => false,
        }
    }

    /// Whether polling again may succeed: the read was refused for throughput, or got no
    /// answer (a read changes nothing, so sending it again is safe).
    pub fn is_retryable(&self) -> bool {
        match self {
            StreamError::Read { code, .. } => {
                self.is_throttling()
                    || matches!(
                        code.as_deref(),
                        None | Some("InternalServerError" | "ServiceUnavailableException")
                    )
            }
            _ => false,
        }
    }

    /// The sequence number of the record this error is about, where there is one: what a
    /// Lambda function reports in `batch_item_failures`, so that Lambda retries from it.
    pub fn sequence_number(&self) -> Option<&str> {
        match self {
            StreamError::Malformed {
                sequence_number, ..
            }
            | StreamError::Decode {
                sequence_number, ..
            } if !sequence_number.is_empty() => Some(sequence_number),
            _ => None,
        }
    }
}
