//! `TransactWriteItems`: writes sent together, all or none, with one client request token
//! across their attempts.

use super::Write;
use crate::error::{Error, ServiceError};
use crate::expr::condition::Node;
use crate::expr::Placeholders;
use crate::item::Item;
use crate::retry::{Next, RetryPolicy};
use crate::schema::Table;
use crate::Db;
use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::BuildError;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::transact_write_items::builders::TransactWriteItemsFluentBuilder;
use aws_sdk_dynamodb::operation::transact_write_items::{
    TransactWriteItemsError, TransactWriteItemsOutput,
};
use aws_sdk_dynamodb::types::{
    CancellationReason, ConditionCheck, ReturnValuesOnConditionCheckFailure, TransactWriteItem,
};
use futures::FutureExt;

/// How long after its first attempt a transaction may still be resent, or waited for: well
/// inside the 10 minutes for which DynamoDB remembers a client request token, so that a resend
/// is never applied as a new transaction.
pub const RESEND_WINDOW: std::time::Duration = std::time::Duration::from_secs(120);

/// What one attempt of a transaction heard: DynamoDB's answer, or nothing within the window.
type Answer = Result<
    Result<TransactWriteItemsOutput, SdkError<TransactWriteItemsError, HttpResponse>>,
    tokio::time::error::Elapsed,
>;

/// A condition on one item that a transaction checks without writing it.
#[derive(Debug, Clone)]
pub(crate) struct Check {
    key: Item,
    condition: String,
    placeholders: Placeholders,
}

impl Check {
    /// A check of `condition` on the item at `key`.
    pub(crate) fn new(key: Item, condition: Node) -> Self {
        let mut placeholders = Placeholders::default();
        let condition = condition.into_expression(&mut placeholders);
        Check {
            key,
            condition,
            placeholders,
        }
    }
}

/// One of a transaction's items.
#[derive(Debug, Clone)]
pub(crate) enum TransactItem {
    Write(Write),
    Check(Check),
}

impl TransactItem {
    /// The item as DynamoDB takes it, for table `table_name`.
    pub(crate) fn sdk(&self, table_name: &str) -> Result<TransactWriteItem, Error> {
        match self {
            TransactItem::Write(write) => write.transact_item(table_name),
            TransactItem::Check(check) => {
                crate::expr::check_expression("ConditionExpression", &check.condition)?;
                let (names, values) = check.placeholders.clone().into_maps();
                let check = ConditionCheck::builder()
                    .table_name(table_name)
                    .set_key(Some(check.key.clone()))
                    .condition_expression(check.condition.clone())
                    .set_expression_attribute_names(names)
                    .set_expression_attribute_values(values)
                    .return_values_on_condition_check_failure(
                        ReturnValuesOnConditionCheckFailure::AllOld,
                    )
                    .build()
                    .map_err(|error: BuildError| Error::from(error))?;
                Ok(TransactWriteItem::builder().condition_check(check).build())
            }
        }
    }

    /// The item a put writes.
    pub(crate) fn item(&self) -> Option<&Item> {
        match self {
            TransactItem::Write(write) => write.item(),
            TransactItem::Check(_) => None,
        }
    }
}

/// What a sent transaction did, when DynamoDB answered.
#[derive(Debug)]
pub(crate) enum Transacted {
    /// It was applied.
    Applied,
    /// DynamoDB cancelled it on the last attempt made, for these reasons (one per item, in
    /// order), after `attempts` attempts.
    Canceled {
        reasons: Vec<CancellationReason>,
        attempts: u32,
    },
}

impl<T: Table> Db<T> {
    /// The request of a transaction of `items` (as [`TransactItem::sdk`] makes them).
    fn transaction_request(
        &self,
        items: Vec<TransactWriteItem>,
        token: Option<String>,
    ) -> TransactWriteItemsFluentBuilder {
        // Resent by `transaction_attempts`, under the retry policy.
        self.unretried_client()
            .transact_write_items()
            .set_transact_items(Some(items))
            .set_client_request_token(token)
            .set_return_consumed_capacity(self.return_consumed_capacity())
    }

    /// The request [`Db::write_transaction`] sends (with `token` as given).
    pub(crate) fn transaction_params(
        &self,
        items: Vec<TransactWriteItem>,
        token: Option<String>,
    ) -> crate::wire::Request {
        crate::wire::describe::request(
            "TransactWriteItems",
            self.transaction_request(items, token).as_input(),
        )
    }

    /// Sends a transaction of `items` in its span (`entity` and `keys` for it), retrying
    /// transient failures under `retry` with one client request token: conflicts and
    /// throttling among the cancellations `transient` names, throttling of the request, a
    /// transaction still in progress, and lost responses. The policy is the only retry layer:
    /// the SDK's own retries are off for this request, and no attempt starts, or goes on,
    /// past [`RESEND_WINDOW`] after the first.
    ///
    /// # Errors
    ///
    /// [`Error::AmbiguousTransaction`], with the token, when the last attempt's outcome is
    /// unknown (its response was lost, or an earlier attempt's was and the last one was
    /// throttled); the SDK's error otherwise.
    pub(crate) async fn write_transaction(
        &self,
        items: Vec<TransactWriteItem>,
        token: String,
        retry: &RetryPolicy,
        (entity, keys): (&str, String),
        transient: impl Fn(&[CancellationReason]) -> bool,
    ) -> Result<Transacted, Error> {
        let span = crate::trace::span(
            crate::trace::Operation::TransactWriteItems,
            self.table_name(),
            entity,
            || self.traced_key(|| keys),
            None,
        );
        self.traced(
            span,
            self.transaction_attempts(items, token, retry, transient),
        )
        .await
    }

    /// [`Db::write_transaction`] inside its span.
    async fn transaction_attempts(
        &self,
        items: Vec<TransactWriteItem>,
        token: String,
        retry: &RetryPolicy,
        transient: impl Fn(&[CancellationReason]) -> bool,
    ) -> Result<Transacted, Error> {
        let deadline = tokio::time::Instant::now() + RESEND_WINDOW;
        let send = |_: &mut bool| {
            let request = self.transaction_request(items.clone(), Some(token.clone()));
            tokio::time::timeout_at(deadline, request.send().boxed())
        };
        // `maybe_applied`: whether an earlier attempt may have been applied (its outcome was
        // never learnt).
        let judge = |maybe_applied: &mut bool, answer: Answer, attempt: u32| {
            let ambiguous =
                |message: String, cause: Option<ServiceError>| Error::AmbiguousTransaction {
                    token: token.clone(),
                    attempts: attempt,
                    message,
                    cause,
                };
            let outcome_unknown = |error| {
                let cause = ServiceError::new(error);
                ambiguous(cause.to_string(), Some(cause))
            };
            // No attempt starts, or goes on, past the window.
            let again_or = |result| match tokio::time::Instant::now() + retry.ceiling(attempt) {
                next if next < deadline => Next::Again(result),
                _ => Next::Done(result),
            };
            let error = match answer {
                Ok(Ok(output)) => {
                    self.record(output.consumed_capacity());
                    return Next::Done(Ok(Transacted::Applied));
                }
                Ok(Err(error)) => error,
                Err(_elapsed) => {
                    let waited = RESEND_WINDOW.as_secs();
                    let message = format!("no answer within {waited}s of the first attempt");
                    return Next::Done(Err(ambiguous(message, None)));
                }
            };
            match error.as_service_error() {
                Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) => {
                    let reasons = cancelled.cancellation_reasons();
                    let canceled = Ok(Transacted::Canceled {
                        reasons: reasons.to_vec(),
                        attempts: attempt,
                    });
                    match transient(reasons) {
                        true => again_or(canceled),
                        false => Next::Done(canceled),
                    }
                }
                // An earlier attempt with this token is still being applied.
                Some(service) if service.is_transaction_in_progress_exception() => {
                    *maybe_applied = true;
                    again_or(Err(outcome_unknown(error)))
                }
                Some(service) if crate::retry::is_throttling(service) => {
                    again_or(Err(match maybe_applied {
                        true => outcome_unknown(error),
                        false => Error::from(error),
                    }))
                }
                // The request may or may not have been applied; the token makes resending it
                // safe (DynamoDB applies a token's transaction at most once).
                _ if crate::retry::lost_in_transit(&error) => {
                    *maybe_applied = true;
                    again_or(Err(outcome_unknown(error)))
                }
                _ => Next::Done(Err(error.into())),
            }
        };
        retry.drive(&mut false, send, judge).await
    }
}
