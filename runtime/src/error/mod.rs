//! Errors of singletable operations.

pub use crate::codec::{DecodeError, EncodeError, LimitError};
pub use crate::key::text::{show_values, values_shown};
use crate::key::text::{Redacted, Shown};
use crate::key::KeyText;
pub use update::UpdateError;

// The errors each operation raises, here below every module that raises them; each is also
// named from its operation's module (`op::transact::TransactionError`).
pub(crate) mod batch;
pub(crate) mod cancel;
pub(crate) mod cursor;
pub(crate) mod infra;
pub(crate) mod migration;
mod service;
pub(crate) mod stream;
#[cfg(test)]
mod texts;
pub(crate) mod transaction;
pub(crate) mod update;
pub(crate) mod workbench;
pub(crate) mod write_kind;

pub use service::{ServiceError, Throttling, ThrottlingLimit};

use crate::item::Item;
use crate::key::KeyError;
use aws_sdk_dynamodb::config::http::HttpResponse;

impl From<EncodeError> for Error {
    fn from(error: EncodeError) -> Self {
        match error {
            EncodeError::Key(error) => Error::Key(error),
            EncodeError::Limit(error) => Error::Limit(error),
            EncodeError::Serialize { entity, message } => Error::Encode { entity, message },
        }
    }
}

/// Everything a singletable operation can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The item does not exist.
    #[error("{entity} not found at {key}")]
    NotFound {
        /// The entity.
        entity: &'static str,
        /// The key asked for.
        key: KeyText,
    },
    /// A condition of the request did not hold; nothing was written.
    #[error("condition failed for {entity} at {key}")]
    ConditionFailed {
        /// The entity.
        entity: &'static str,
        /// The item's key.
        key: KeyText,
        /// The item as it is now, when the request asked for it.
        current: Option<Box<Item>>,
    },
    /// Optimistic locking: the item's version is not the one this write expected, because
    /// someone else wrote it first. Read it again and retry.
    #[error("version conflict for {entity} at {key}: expected version {expected}, found {found}")]
    VersionConflict {
        /// The entity.
        entity: &'static str,
        /// The item's key.
        key: KeyText,
        /// The version this write expected.
        expected: u64,
        /// The version found (0: no item).
        found: u64,
        /// The item as it is now, when there is one.
        current: Option<Box<Item>>,
    },
    /// A pagination cursor that does not belong to the query it was given to.
    #[error(transparent)]
    Cursor(#[from] cursor::CursorError),
    /// The request may or may not have been applied: its response was lost (a timeout, a
    /// dropped connection, a 5xx), and resending it could apply it twice (an unversioned
    /// `ADD`, increment or append). Writes whose own condition makes a resend safe are resent
    /// by the library and never end here: a versioned update with `expect_version`, one
    /// guarded by [`Update::advance`](crate::op::update::Update::advance), puts and deletes,
    /// and the writes that keep unique values (conditioned on the item as read).
    ///
    /// What to do: read the item with a consistent read and look for the change (a version,
    /// a sequence number, a value only this write sets), then send it again only if it is not
    /// there. Better, give the update what makes it safe to resend: `expect_version` on a
    /// `#[dynamo(version)]` field, or `advance` on a sequence the change carries.
    #[error("{entity} at {key}: the outcome is unknown ({message}); read the item to see whether the change was applied")]
    Ambiguous {
        /// The entity.
        entity: &'static str,
        /// The item's key.
        key: KeyText,
        /// What failed.
        message: String,
        /// The SDK's error of the last attempt, where one left the outcome unknown.
        #[source]
        cause: Option<ServiceError>,
    },
    /// The write was applied, but the item it returns could not be read back: an update of a
    /// unique value or of an expiry is a transaction with its sentinels, which returns no
    /// item, so the item is read right after it, and that read failed after every resend.
    ///
    /// What to do: nothing needs sending again; read the item when you need it.
    #[error("{entity} at {key}: the write was applied, but reading the item back failed ({source}); read it again to see it")]
    Unread {
        /// The entity.
        entity: &'static str,
        /// The item's key.
        key: KeyText,
        /// Why the read failed.
        #[source]
        source: Box<Error>,
    },
    /// The item's version is the largest its version field holds, so no write can count
    /// another; nothing was written.
    #[error("{entity} at {key} is at version {version}, the largest its version field holds, so it cannot be written again: widen the field's type (`u64` counts 18446744073709551615 writes)")]
    VersionOverflow {
        /// The entity.
        entity: &'static str,
        /// The item's key.
        key: KeyText,
        /// The version it is at.
        version: u64,
    },
    /// A transaction's outcome is unknown: its last attempt's response was lost (or an
    /// earlier one's was, and the last was refused for throttling). Resending it with the same
    /// `token` ([`Transaction::client_request_token`](crate::op::transact::Transaction::client_request_token))
    /// within 10 minutes of the first attempt is safe: DynamoDB applies it at most once, and
    /// answers a resend of an applied transaction with success.
    #[error("the transaction's outcome is unknown after {attempts} attempt(s) ({message}); resend it with `.client_request_token(\"{token}\")` within 10 minutes of the first attempt, and DynamoDB applies it at most once")]
    AmbiguousTransaction {
        /// The client request token every attempt carried.
        token: String,
        /// Attempts made.
        attempts: u32,
        /// What the last attempt failed with.
        message: String,
        /// The SDK's error of the last attempt, where it had one.
        #[source]
        cause: Option<ServiceError>,
    },
    /// A key could not be rendered.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// An item could not be read as its entity.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// An entity could not be written as an item.
    #[error("{entity} could not be written as a DynamoDB item: {}", Redacted(.message))]
    Encode {
        /// The entity.
        entity: &'static str,
        /// What serde_dynamo reported.
        message: String,
    },
    /// A transaction refused before sending.
    #[error(transparent)]
    Transaction(#[from] transaction::TransactionError),
    /// A transaction DynamoDB cancelled, with each operation's reason.
    #[error(transparent)]
    TransactionCanceled(Box<cancel::TransactionCanceled>),
    /// An update that would leave an index stale.
    #[error(transparent)]
    Update(#[from] UpdateError),
    /// A query's filter reads an attribute a lean index does not project: the index's items
    /// lack it, so the filter would drop every one of them.
    #[error(
        "the filter reads `{attribute}`, which index {index} does not hold (it projects \
         {projection}), so it would drop every item: filter on an attribute the index \
         projects, or hydrate and filter the items"
    )]
    NotProjected {
        /// The index.
        index: &'static str,
        /// The attribute the filter reads.
        attribute: String,
        /// What the index projects.
        projection: String,
    },
    /// The request would break a DynamoDB limit.
    #[error(transparent)]
    Limit(#[from] LimitError),
    /// A write rate that cannot be held.
    #[error(transparent)]
    Rate(#[from] crate::rate::RateError),
    /// A request could not be built (a required field was missing).
    #[error("request could not be built: {0}")]
    Build(#[from] aws_sdk_dynamodb::error::BuildError),
    /// Waiting for a table or index to become active failed or timed out.
    #[error("waiting for table {table:?}: {message}")]
    Wait {
        /// The table.
        table: String,
        /// What went wrong.
        message: String,
    },
    /// Any other error from DynamoDB or the SDK: DynamoDB's answer, or the lack of one
    /// (a timeout, a failed connection), typed.
    #[error("DynamoDB: {0}")]
    Service(#[source] ServiceError),
    /// One batch write has two operations on the same item, which DynamoDB rejects (and whose
    /// order retries could not keep); nothing was sent.
    #[error("batch write has a {first} and then a {second} of the item at {key}; DynamoDB rejects two operations on one item in a batch")]
    DuplicateWrite {
        /// The item's key.
        key: KeyText,
        /// The first operation on it.
        first: batch::WriteOperation,
        /// The second operation on it.
        second: batch::WriteOperation,
    },
    /// A request of a batch write failed part-way; `partial` tells what was written and holds
    /// every write not known to be written (safe to resend: puts and deletes are idempotent).
    #[error("batch write stopped after writing {} items ({} not written): {source}", partial.written, partial.unprocessed.len())]
    BatchWrite {
        /// What the batch did before the failure.
        partial: Box<batch::BatchWriteOutput>,
        /// The failure.
        #[source]
        source: Box<Error>,
    },
    /// A builder argument outside the range DynamoDB accepts; nothing was sent.
    #[error("{parameter} must be between {min} and {max}, not {value}")]
    OutOfRange {
        /// The request parameter (`TotalSegments`, `Limit`).
        parameter: &'static str,
        /// The value given.
        value: u64,
        /// The smallest value allowed.
        min: u64,
        /// The largest value allowed.
        max: u64,
    },
    /// A schema migration, backfill or coverage step could not proceed.
    #[error(transparent)]
    Migration(#[from] migration::MigrationError),
    /// A unique value (`#[dynamo(unique)]`) is another item's: nothing was written.
    #[error("{entity}: {field} {} is taken{}", Shown(.value), owner_key.as_ref().map(|key| format!(" by the item at {key}")).unwrap_or_default())]
    Unique {
        /// The entity.
        entity: &'static str,
        /// The unique field (or the fields, joined by `+`).
        field: &'static str,
        /// The value, as its sentinel key holds it.
        value: String,
        /// The key of the item that holds it.
        owner_key: Option<KeyText>,
    },
    /// A stream record could not be read or decoded (boxed: it carries the record's key).
    #[error(transparent)]
    Stream(Box<stream::StreamError>),
    /// A guarded append could not keep its partition's pointer: another item holds the
    /// pointer's key (`<Entity>#LATEST`), which an entity's sort key template can render.
    /// Nothing was written.
    #[error("the append pointer of `{entity}` is kept at {key}, where an item of `{holder}` is stored; nothing was written. Give that item another key, or `{entity}`'s sort key template a constant part its pointer's key cannot match")]
    AppendPointerTaken {
        /// The entity appended to.
        entity: &'static str,
        /// The pointer's key.
        key: KeyText,
        /// The entity attribute of the item there.
        holder: String,
    },
}

impl Error {
    /// The variant's name in snake case (`condition_failed`), as tracing spans record the
    /// outcome: stable text that quotes no value.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::NotFound { .. } => "not_found",
            Error::ConditionFailed { .. } => "condition_failed",
            Error::VersionConflict { .. } => "version_conflict",
            Error::Cursor { .. } => "cursor",
            Error::Ambiguous { .. } => "ambiguous",
            Error::Unread { .. } => "unread",
            Error::VersionOverflow { .. } => "version_overflow",
            Error::AmbiguousTransaction { .. } => "ambiguous_transaction",
            Error::Key { .. } => "key",
            Error::Decode { .. } => "decode",
            Error::Encode { .. } => "encode",
            Error::Transaction { .. } => "transaction",
            Error::TransactionCanceled { .. } => "transaction_canceled",
            Error::Update { .. } => "update",
            Error::NotProjected { .. } => "not_projected",
            Error::Limit { .. } => "limit",
            Error::Rate { .. } => "rate",
            Error::Build { .. } => "build",
            Error::Wait { .. } => "wait",
            Error::Service { .. } => "service",
            Error::DuplicateWrite { .. } => "duplicate_write",
            Error::BatchWrite { .. } => "batch_write",
            Error::OutOfRange { .. } => "out_of_range",
            Error::Migration { .. } => "migration",
            Error::Stream { .. } => "stream",
            Error::Unique { .. } => "unique",
            Error::AppendPointerTaken { .. } => "append_pointer_taken",
        }
    }

    /// The stream error, if this is one.
    pub fn as_stream_error(&self) -> Option<&stream::StreamError> {
        match self {
            Error::Stream(error) => Some(error),
            _ => None,
        }
    }

    /// Whether DynamoDB throttled the request after every retry: a request refused with
    /// `ProvisionedThroughputExceededException`, `ThrottlingException` or
    /// `RequestLimitExceeded`, or a transaction cancelled for throughput alone (every reason
    /// `ThrottlingError` or `ProvisionedThroughputExceeded`), as a write with unique values
    /// is. Nothing was applied, and sending it again later may succeed. A stream reader's
    /// read refused for throughput is one too
    /// ([`StreamError::is_throttling`](crate::stream::StreamError::is_throttling)).
    pub fn is_throttling(&self) -> bool {
        match self {
            Error::Service(error) => error.is_throttling(),
            Error::TransactionCanceled(canceled) => canceled.is_throttling(),
            Error::Stream(error) => error.is_throttling(),
            _ => false,
        }
    }

    /// Whether sending the same request again is safe and may succeed. DynamoDB refused it
    /// before applying it (throttling, a limit on requests in flight, a transaction cancelled
    /// for a conflict or for throughput alone, a global table's write conflict with another
    /// Region, `ReplicatedWriteConflictException`), or it got no answer and sending it twice is
    /// safe: for a write that is not (an unguarded `add`, a transaction), the library returns
    /// [`Error::Ambiguous`] or [`Error::AmbiguousTransaction`] instead, which are not
    /// retryable as they are (see [`is_outcome_unknown`](Self::is_outcome_unknown)). The
    /// library has resent it under its retry policy already; back off before sending again.
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Service(error) => {
                error.is_throttling()
                    || error.is_limit_exceeded()
                    || error.outcome_unknown()
                    || crate::retry::is_replicated_write_conflict(error.code())
                    || matches!(
                        error.code(),
                        Some("TransactionConflictException" | "TransactionInProgressException")
                    )
            }
            Error::TransactionCanceled(canceled) => canceled.is_transient(),
            Error::Stream(error) => error.is_retryable(),
            // What the batch left unprocessed is safe to send again, if its cause passes.
            Error::BatchWrite { source, .. } => source.is_retryable(),
            _ => false,
        }
    }

    /// Whether a request got no answer in time (the SDK's attempt or operation timeout), by
    /// itself or as the cause of an outcome left unknown.
    pub fn is_timeout(&self) -> bool {
        match self {
            Error::Service(error) => error.is_timeout(),
            Error::Ambiguous {
                cause: Some(cause), ..
            }
            | Error::AmbiguousTransaction {
                cause: Some(cause), ..
            } => cause.is_timeout(),
            Error::Unread { source, .. } | Error::BatchWrite { source, .. } => source.is_timeout(),
            _ => false,
        }
    }

    /// Whether a write may have been applied without the caller learning it:
    /// [`Error::Ambiguous`] (read the item to see), [`Error::AmbiguousTransaction`] (resend
    /// it with its token), or a request that got no answer after every attempt (a timeout, a
    /// failed connection, a server error), which for a read changed nothing and for a write
    /// the library resends only when sending it twice is safe.
    pub fn is_outcome_unknown(&self) -> bool {
        match self {
            Error::Ambiguous { .. } | Error::AmbiguousTransaction { .. } => true,
            Error::Service(error) => error.outcome_unknown(),
            Error::BatchWrite { source, .. } => source.is_outcome_unknown(),
            _ => false,
        }
    }

    /// What DynamoDB says it throttled, one entry per reason it gave: the limit (a hot key, the
    /// provisioned capacity, an on-demand maximum or the account's quota) and the table or
    /// index. Empty when the error is no throttling, or DynamoDB gave no reason.
    pub fn throttling(&self) -> Vec<Throttling> {
        match self {
            Error::Service(error) => error.throttling(),
            Error::BatchWrite { source, .. } | Error::Unread { source, .. } => source.throttling(),
            _ => Vec::new(),
        }
    }

    /// The SDK's error, where DynamoDB or the SDK failed the request ([`Error::Service`]).
    pub fn as_service_error(&self) -> Option<&ServiceError> {
        match self {
            Error::Service(error) => Some(error),
            _ => None,
        }
    }

    /// Whether this is [`Error::NotFound`].
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound { .. })
    }

    /// Whether this is [`Error::VersionConflict`].
    pub fn is_version_conflict(&self) -> bool {
        matches!(self, Error::VersionConflict { .. })
    }

    /// Whether this is [`Error::ConditionFailed`].
    pub fn is_condition_failed(&self) -> bool {
        matches!(self, Error::ConditionFailed { .. })
    }

    /// The current item a failed condition returned, decoded as `E`.
    pub fn current_item<E: crate::Entity>(&self) -> Option<Result<E, DecodeError>> {
        match self {
            Error::ConditionFailed {
                current: Some(item),
                ..
            }
            | Error::VersionConflict {
                current: Some(item),
                ..
            } => Some(crate::item::decode::<E>((**item).clone())),
            _ => None,
        }
    }
}

/// DynamoDB's error code and message, such as `ValidationException: Two document paths
/// overlap ...`; the SDK's own text of an unmodelled error names only the code.
impl<E> From<aws_sdk_dynamodb::error::SdkError<E, HttpResponse>> for Error
where
    aws_sdk_dynamodb::Error: From<E>,
{
    fn from(error: aws_sdk_dynamodb::error::SdkError<E, HttpResponse>) -> Self {
        Error::Service(ServiceError::new(error))
    }
}

impl<T> crate::trace::Outcome for Result<T, Error> {
    fn error_kind(&self) -> Option<&'static str> {
        self.as_ref().err().map(Error::kind)
    }

    fn error_message(&self) -> Option<String> {
        self.as_ref().err().map(ToString::to_string)
    }
}

/// Turns [`Error::NotFound`] into `Ok(None)`, like diesel's `OptionalExtension`.
pub trait OptionalExt<T> {
    /// `Ok(Some(value))`, `Ok(None)` for not found, or the other error.
    fn optional(self) -> Result<Option<T>, Error>;
}

impl<T> OptionalExt<T> for Result<T, Error> {
    fn optional(self) -> Result<Option<T>, Error> {
        match self {
            Ok(value) => Ok(Some(value)),
            Err(Error::NotFound { .. }) => Ok(None),
            Err(error) => Err(error),
        }
    }
}

impl From<stream::StreamError> for Error {
    fn from(error: stream::StreamError) -> Self {
        Error::Stream(Box::new(error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrong_entity(found: Option<&str>) -> String {
        DecodeError::WrongEntity {
            key: KeyText {
                partition: ("PK", "TASK#1".to_owned()),
                sort: Some(("SK", "TASK".to_owned())),
            },
            attribute: "_type",
            expected: "Order",
            found: found.map(str::to_owned),
        }
        .to_string()
    }

    #[test]
    fn a_wrong_entity_reads_as_a_sentence() {
        assert_eq!(
            wrong_entity(Some("Task")),
            "the item at PK = ‹hidden›, SK = ‹hidden› belongs to `Task`, not to `Order` (by its \
             `_type` attribute)"
        );
        assert_eq!(
            wrong_entity(None),
            "the item at PK = ‹hidden›, SK = ‹hidden› names no entity in a `_type` string \
             attribute, so it cannot be read as `Order`"
        );
    }
}
