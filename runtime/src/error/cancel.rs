//! What DynamoDB says when it cancels a transaction, mapped onto the operations it holds.

use super::write_kind::WriteKind;
use crate::item::Item;
use crate::key::KeyText;
use crate::schema::Entity;
use std::fmt;

/// Why DynamoDB cancelled one operation of a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CancellationCode {
    /// This operation was fine; another one cancelled the transaction.
    None,
    /// Its condition did not hold.
    ConditionalCheckFailed,
    /// An item collection grew past 10 GB.
    ItemCollectionSizeLimitExceeded,
    /// Another transaction or write was working on the same item.
    TransactionConflict,
    /// Provisioned throughput was exceeded.
    ProvisionedThroughputExceeded,
    /// The request was throttled.
    ThrottlingError,
    /// The operation was invalid.
    ValidationError,
    /// A code this library does not know.
    Other(String),
}

impl CancellationCode {
    /// Reads DynamoDB's code.
    pub fn parse(code: &str) -> Self {
        match code {
            "None" => CancellationCode::None,
            "ConditionalCheckFailed" => CancellationCode::ConditionalCheckFailed,
            "ItemCollectionSizeLimitExceeded" => CancellationCode::ItemCollectionSizeLimitExceeded,
            "TransactionConflict" => CancellationCode::TransactionConflict,
            "ProvisionedThroughputExceeded" => CancellationCode::ProvisionedThroughputExceeded,
            "ThrottlingError" => CancellationCode::ThrottlingError,
            "ValidationError" => CancellationCode::ValidationError,
            other => CancellationCode::Other(other.to_owned()),
        }
    }

    /// Whether sending the same transaction again may succeed: conflicts and throttling are
    /// transient; a failed condition or an invalid operation is not.
    pub fn is_transient(&self) -> bool {
        self.is_throttling() || *self == CancellationCode::TransactionConflict
    }

    /// Whether DynamoDB refused this operation for throughput (`ThrottlingError` on an
    /// on-demand table, `ProvisionedThroughputExceeded` on a provisioned one).
    pub fn is_throttling(&self) -> bool {
        matches!(
            self,
            CancellationCode::ProvisionedThroughputExceeded | CancellationCode::ThrottlingError
        )
    }
}

/// One operation's part in a cancelled transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct CancellationReason {
    /// Position of the operation in the transaction.
    pub position: usize,
    /// What kind of operation it was.
    pub kind: WriteKind,
    /// Its entity.
    pub entity: &'static str,
    /// Its item's key.
    pub key: KeyText,
    /// Why it was cancelled.
    pub code: CancellationCode,
    /// DynamoDB's message, if any.
    pub message: Option<String>,
    /// The item as it is now, for a failed condition.
    pub item: Option<Item>,
}

impl CancellationReason {
    /// The current item decoded as `E`, when DynamoDB returned it.
    pub fn current<E: Entity>(&self) -> Option<Result<E, crate::DecodeError>> {
        self.item.clone().map(crate::item::decode)
    }
}

/// A transaction DynamoDB cancelled: nothing was written.
#[derive(Debug, Clone, PartialEq)]
pub struct TransactionCanceled {
    /// One reason per operation, in order.
    pub reasons: Vec<CancellationReason>,
    /// How many times it was sent.
    pub attempts: u32,
}

impl TransactionCanceled {
    /// The reasons other than `None`.
    pub fn failures(&self) -> impl Iterator<Item = &CancellationReason> {
        self.reasons
            .iter()
            .filter(|reason| reason.code != CancellationCode::None)
    }

    /// The reason of operation number `position` (in the order they were added) when its
    /// condition failed; the reason carries the item as it was, when DynamoDB returned it.
    pub fn failed_condition(&self, position: usize) -> Option<&CancellationReason> {
        self.reasons
            .get(position)
            .filter(|reason| reason.code == CancellationCode::ConditionalCheckFailed)
    }

    /// Whether every failure is transient (worth sending again).
    pub fn is_transient(&self) -> bool {
        self.all_failures(CancellationCode::is_transient)
    }

    /// Whether every failure is throttling: the transaction was refused for throughput alone.
    pub fn is_throttling(&self) -> bool {
        self.all_failures(CancellationCode::is_throttling)
    }

    /// Whether there is a failure, and every one is `kind`.
    fn all_failures(&self, kind: impl Fn(&CancellationCode) -> bool) -> bool {
        let mut failures = self.failures().peekable();
        failures.peek().is_some() && failures.all(|reason| kind(&reason.code))
    }
}

impl fmt::Display for TransactionCanceled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "transaction cancelled after {} attempt(s):",
            self.attempts
        )?;
        for reason in self.failures() {
            write!(
                f,
                " [{} {} {} at {}: {:?}]",
                reason.position, reason.kind, reason.entity, reason.key, reason.code
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for TransactionCanceled {}
