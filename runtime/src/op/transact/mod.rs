//! `TransactWriteItems` and `TransactGetItems` of typed operations, with checks before
//! sending, typed cancellation reasons and bounded retries of transient cancellations.

pub(crate) mod cancel;
pub(crate) mod error;
mod get;
pub(crate) mod kind;
pub(crate) mod op;
pub(crate) mod write;

pub use cancel::{CancellationCode, CancellationReason, TransactionCanceled};
pub use error::TransactionError;
pub use get::{Slot, TransactGet, TransactGetOutput};
pub use kind::WriteKind;
pub use op::{TransactOp, TransactWrite};

use crate::cost::{Estimate, Explain};
use crate::error::Error;
use crate::expr::{Condition, Placeholders};
use crate::retry::RetryPolicy;
use crate::schema::{Entity, Table};
use crate::wire::{describe, Request};
use crate::{Db, Key};
use aws_sdk_dynamodb::operation::transact_write_items::builders::TransactWriteItemsFluentBuilder;
use aws_sdk_dynamodb::types::{
    ConditionCheck as SdkConditionCheck, ReturnValuesOnConditionCheckFailure, TransactWriteItem,
};
use futures::FutureExt;

/// DynamoDB's limit on operations in one transaction.
pub const MAX_TRANSACTION_ITEMS: usize = 100;

impl<E: Entity> op::sealed::Sealed for ConditionCheck<'_, E> {}
impl<E: Entity> TransactWrite for ConditionCheck<'_, E> {
    fn transact_op(&self) -> Result<TransactOp, Error> {
        let mut placeholders = Placeholders::default();
        let node = self
            .condition
            .node()
            .map_err(|error| Error::from(error.clone()))?;
        let condition = node.to_expression(&mut placeholders);
        crate::expr::check_expression("ConditionExpression", &condition)?;
        let key = self.key.to_attributes();
        let check = SdkConditionCheck::builder()
            .table_name(self.db.table_name())
            .set_key(Some(key.clone()))
            .condition_expression(condition)
            .set_expression_attribute_names(placeholders.names())
            .set_expression_attribute_values(placeholders.values())
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .build()?;
        Ok(TransactOp {
            kind: WriteKind::ConditionCheck,
            entity: E::SCHEMA.name,
            key,
            key_text: self.key.text(),
            write: TransactWriteItem::builder().condition_check(check).build(),
            estimate: {
                let mut estimate = Estimate::default();
                estimate.write(1.0, "condition check");
                estimate
            },
        })
    }
}

/// A condition on one item that a transaction checks without writing it.
#[must_use = "an operation does nothing until it is part of a transaction"]
pub struct ConditionCheck<'db, E: Entity> {
    db: &'db Db<E::Table>,
    key: Key<E>,
    condition: Condition<E>,
}

impl<T: Table> Db<T> {
    /// A condition on one item, for a transaction.
    pub fn condition_check<E: Entity<Table = T>>(
        &self,
        key: Key<E>,
        condition: Condition<E>,
    ) -> ConditionCheck<'_, E> {
        ConditionCheck {
            db: self,
            key,
            condition,
        }
    }

    /// A `TransactWriteItems` of typed operations on this table's entities.
    pub fn transaction(&self) -> Transaction<'_, T> {
        Transaction {
            db: self,
            ops: Vec::new(),
            error: None,
            retry: RetryPolicy::default(),
            token: None,
        }
    }
}

/// A `TransactWriteItems`; see [`Db::transaction`].
#[must_use = "a transaction does nothing until it is sent"]
pub struct Transaction<'db, T> {
    db: &'db Db<T>,
    ops: Vec<TransactOp>,
    /// The first operation that could not be prepared, with its position.
    error: Option<(usize, Error)>,
    retry: RetryPolicy,
    token: Option<String>,
}

impl<'db, T: Table> Transaction<'db, T> {
    /// Adds an operation ([`Put`](crate::op::put::Put), [`Update`](crate::op::update::Update), [`Delete`](crate::op::delete::Delete) or [`ConditionCheck`]).
    pub fn with(self, operation: impl TransactWrite) -> Self {
        self.with_ref(&operation)
    }

    /// Adds an operation prepared elsewhere in the crate.
    pub(crate) fn push(mut self, op: TransactOp) -> Self {
        self.ops.push(op);
        self
    }

    pub(crate) fn with_ref(mut self, operation: &impl TransactWrite) -> Self {
        match operation.transact_op() {
            Ok(op) => self.ops.push(op),
            Err(error) => {
                let position = self.ops.len();
                self.error.get_or_insert((position, error));
            }
        }
        self
    }

    /// How cancellations for conflicts and throttling are retried (never a failed condition).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// The `ClientRequestToken` that makes retries idempotent (generated when not given): a
    /// retry of a transaction DynamoDB already applied is acknowledged without applying it
    /// twice, for 10 minutes.
    pub fn client_request_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    fn check(&self) -> Result<(), Error> {
        if let Some((position, error)) = &self.error {
            return Err(TransactionError::Operation {
                position: *position,
                message: error.to_string(),
            }
            .into());
        }
        self.check_ops()
    }

    fn check_ops(&self) -> Result<(), Error> {
        if self.ops.is_empty() {
            return Err(TransactionError::Empty.into());
        }
        if self.ops.len() > MAX_TRANSACTION_ITEMS {
            return Err(TransactionError::TooMany {
                count: self.ops.len(),
                max: MAX_TRANSACTION_ITEMS,
            }
            .into());
        }
        for (second, op) in self.ops.iter().enumerate() {
            if let Some(first) = self.ops[..second].iter().position(|earlier| {
                earlier.table_name() == op.table_name() && earlier.key == op.key
            }) {
                return Err(TransactionError::SameItem {
                    first,
                    first_kind: self.ops[first].kind,
                    second,
                    second_kind: op.kind,
                    key: op.key_text.clone(),
                }
                .into());
            }
        }
        Ok(())
    }

    /// The request and its estimated cost: each operation's, twice.
    pub fn explain(&self) -> Result<Explain, Error> {
        let request = self.params()?;
        let mut estimate = Estimate::default();
        for op in &self.ops {
            estimate.add(op.estimate.clone());
        }
        Ok(Explain {
            request,
            estimate: estimate.transactional(),
        })
    }

    /// The request this transaction sends (without its generated token, when none was
    /// given).
    pub fn params(&self) -> Result<Request, Error> {
        self.check()?;
        let items = self.ops.iter().map(|op| op.write.clone()).collect();
        let request = self.request(items, self.token.clone());
        Ok(describe::request("TransactWriteItems", request.as_input()))
    }

    /// The request with `items` and `token`: what `send` sends and `params` prints.
    fn request(
        &self,
        items: Vec<TransactWriteItem>,
        token: Option<String>,
    ) -> TransactWriteItemsFluentBuilder {
        self.db
            .client()
            .transact_write_items()
            .set_transact_items(Some(items))
            .set_client_request_token(token)
            .set_return_consumed_capacity(self.db.return_consumed_capacity())
    }

    /// Sends the transaction, retrying transient failures under the retry policy with the
    /// same client request token. The policy is the only retry layer: the SDK's own retries
    /// are off for this request, and no attempt starts, or goes on, past [`RESEND_WINDOW`]
    /// after the first.
    ///
    /// # Errors
    ///
    /// [`Error::TransactionCanceled`] when DynamoDB refused it (a failed condition, or
    /// conflicts past the policy), and [`Error::AmbiguousTransaction`], with the token, when
    /// the last attempt's outcome is unknown (its response was lost, or an earlier attempt's
    /// was and the last one was throttled).
    pub async fn send(self) -> Result<(), Error> {
        let db = self.db;
        let span = crate::trace::span(
            crate::trace::Operation::TransactWriteItems,
            db.table_name(),
            self.ops.first().map_or("", |op| op.entity),
            || {
                let keys: Vec<String> = self.ops.iter().map(|op| op.key_text.to_string()).collect();
                Some(keys.join("; "))
            },
            None,
        );
        db.traced(span, self.send_attempts()).await
    }

    /// [`Transaction::send`] inside its span.
    async fn send_attempts(mut self) -> Result<(), Error> {
        if let Some((_, error)) = self.error.take() {
            return Err(error);
        }
        self.check_ops()?;
        let items: Vec<TransactWriteItem> = self.ops.iter().map(|op| op.write.clone()).collect();
        let token = self.token.clone().unwrap_or_else(new_token);
        let started = tokio::time::Instant::now();
        let deadline = started + RESEND_WINDOW;
        // Whether an earlier attempt may have been applied: its outcome was never learnt.
        let mut maybe_applied = false;
        let mut attempt = 1;
        loop {
            let once = aws_sdk_dynamodb::config::Builder::new()
                .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::disabled());
            let request = self
                .request(items.clone(), Some(token.clone()))
                .customize()
                .config_override(once)
                .send()
                .boxed();
            let ambiguous = |message: String| Error::AmbiguousTransaction {
                token: token.clone(),
                attempts: attempt,
                message,
            };
            let error = match tokio::time::timeout_at(deadline, request).await {
                Ok(Ok(output)) => {
                    self.db.record(output.consumed_capacity());
                    return Ok(());
                }
                Ok(Err(error)) => error,
                Err(_) => {
                    return Err(ambiguous(format!(
                        "no answer within {}s of the first attempt",
                        RESEND_WINDOW.as_secs()
                    )))
                }
            };
            let retry = attempt < self.retry.attempts()
                && tokio::time::Instant::now() + self.retry.ceiling(attempt) < deadline;
            match error.as_service_error() {
                Some(aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError::TransactionCanceledException(cancelled)) => {
                    let cancelled = TransactionCanceled {
                        reasons: reasons(&self.ops, cancelled.cancellation_reasons()),
                        attempts: attempt,
                    };
                    if !(retry && cancelled.is_transient()) {
                        return Err(Error::TransactionCanceled(Box::new(cancelled)));
                    }
                }
                // An earlier attempt with this token is still being applied.
                Some(service) if service.is_transaction_in_progress_exception() => {
                    maybe_applied = true;
                    if !retry {
                        return Err(ambiguous(Error::from(error).to_string()));
                    }
                }
                Some(service) if crate::retry::is_throttling(service) => {
                    if !retry {
                        let error = Error::from(error);
                        return Err(if maybe_applied { ambiguous(error.to_string()) } else { error });
                    }
                }
                // The request may or may not have been applied; the token makes resending it
                // safe (DynamoDB applies a token's transaction at most once).
                _ if crate::retry::lost_in_transit(&error) => {
                    maybe_applied = true;
                    if !retry {
                        return Err(ambiguous(Error::from(error).to_string()));
                    }
                }
                _ => return Err(error.into()),
            }
            self.retry.sleep_before(attempt).await;
            attempt += 1;
        }
    }
}

/// How long after its first attempt a transaction may still be resent, or waited for: well
/// inside the 10 minutes for which DynamoDB remembers a client request token, so that a resend
/// is never applied as a new transaction.
pub const RESEND_WINDOW: std::time::Duration = std::time::Duration::from_secs(120);

/// A random idempotency token (DynamoDB accepts 1 to 36 characters).
fn new_token() -> String {
    format!("st-{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..))
}

/// Maps DynamoDB's reasons onto the operations they belong to.
pub(crate) fn reasons(
    ops: &[TransactOp],
    sdk: &[aws_sdk_dynamodb::types::CancellationReason],
) -> Vec<CancellationReason> {
    ops.iter()
        .enumerate()
        .map(|(position, op)| {
            let reason = sdk.get(position);
            CancellationReason {
                position,
                kind: op.kind,
                entity: op.entity,
                key: op.key_text.clone(),
                code: reason
                    .and_then(|reason| reason.code())
                    .map(CancellationCode::parse)
                    .unwrap_or(CancellationCode::None),
                message: reason
                    .and_then(|reason| reason.message())
                    .map(str::to_owned),
                item: reason.and_then(|reason| reason.item()).cloned(),
            }
        })
        .collect()
}
