//! `TransactWriteItems` and `TransactGetItems` of typed operations, with checks before
//! sending, typed cancellation reasons and bounded retries of transient cancellations.

use super::delete::Delete;
use super::put::Put;
use super::update::Update;
use crate::cost::{Estimate, Explain};
use crate::error::{Error, KeyText};
use crate::expr::state::UpdateComplete;
use crate::expr::{Condition, Placeholders};
use crate::item::Item;
use crate::retry::RetryPolicy;
use crate::schema::{Entity, Table};
use crate::wire::{self, Body, Request};
use crate::{Db, Key};
use aws_sdk_dynamodb::types::{
    ConditionCheck as SdkConditionCheck, Delete as SdkDelete, Get as SdkGet, Put as SdkPut,
    ReturnValuesOnConditionCheckFailure, TransactGetItem, TransactWriteItem, Update as SdkUpdate,
};
use futures::FutureExt;
use serde_json::{json, Value};
use std::fmt;
use std::marker::PhantomData;

/// DynamoDB's limit on operations in one transaction.
pub const MAX_TRANSACTION_ITEMS: usize = 100;

/// Which kind of write an operation of a transaction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// A put.
    Put,
    /// An update.
    Update,
    /// A delete.
    Delete,
    /// A condition check (writes nothing).
    ConditionCheck,
}

impl WriteKind {
    fn name(self) -> &'static str {
        match self {
            WriteKind::Put => "Put",
            WriteKind::Update => "Update",
            WriteKind::Delete => "Delete",
            WriteKind::ConditionCheck => "ConditionCheck",
        }
    }
}

impl fmt::Display for WriteKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One prepared write of a transaction (opaque: built by the typed operations).
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct TransactOp {
    pub(crate) kind: WriteKind,
    pub(crate) entity: &'static str,
    pub(crate) table_name: String,
    pub(crate) key: Item,
    pub(crate) key_text: KeyText,
    pub(crate) item: Option<Item>,
    pub(crate) update: Option<String>,
    pub(crate) condition: Option<String>,
    pub(crate) placeholders: Placeholders,
    /// What the operation costs outside a transaction.
    pub(crate) estimate: Estimate,
}

impl TransactOp {
    fn json(&self) -> Value {
        let conditional = self.condition.is_some();
        let body = Body::default()
            .field("TableName", json!(self.table_name))
            .field(
                "Key",
                (self.kind != WriteKind::Put).then(|| wire::item(&self.key)),
            )
            .field("Item", self.item.as_ref().map(wire::item))
            .field(
                "UpdateExpression",
                self.update.as_ref().map(|text| json!(text)),
            )
            .field(
                "ConditionExpression",
                self.condition.as_ref().map(|text| json!(text)),
            )
            .field("ExpressionAttributeNames", self.placeholders.names_json())
            .field("ExpressionAttributeValues", self.placeholders.values_json())
            .field(
                "ReturnValuesOnConditionCheckFailure",
                conditional.then(|| json!("ALL_OLD")),
            )
            .request(self.kind.name());
        json!({ self.kind.name(): body.body })
    }

    fn sdk(&self) -> Result<TransactWriteItem, Error> {
        let on_failure = self
            .condition
            .is_some()
            .then_some(ReturnValuesOnConditionCheckFailure::AllOld);
        let names = self.placeholders.names();
        let values = self.placeholders.values();
        let item = TransactWriteItem::builder();
        // Every kind takes the same table, condition and placeholders.
        macro_rules! with_condition {
            ($builder:expr) => {
                $builder
                    .table_name(&self.table_name)
                    .set_condition_expression(self.condition.clone())
                    .set_expression_attribute_names(names)
                    .set_expression_attribute_values(values)
                    .set_return_values_on_condition_check_failure(on_failure)
                    .build()?
            };
        }
        let key = Some(self.key.clone());
        Ok(match self.kind {
            WriteKind::Put => item.put(with_condition!(
                SdkPut::builder().set_item(self.item.clone())
            )),
            WriteKind::Update => item.update(with_condition!(SdkUpdate::builder()
                .set_key(key)
                .set_update_expression(self.update.clone()))),
            WriteKind::Delete => item.delete(with_condition!(SdkDelete::builder().set_key(key))),
            WriteKind::ConditionCheck => {
                item.condition_check(with_condition!(SdkConditionCheck::builder().set_key(key)))
            }
        }
        .build())
    }
}

/// Operations a transaction can take: [`Put`], [`Update`], [`Delete`] and [`ConditionCheck`].
pub trait TransactWrite: sealed::Sealed {
    #[doc(hidden)]
    fn transact_op(&self) -> Result<TransactOp, Error>;
}

mod sealed {
    pub trait Sealed {}
}

impl<E: Entity> sealed::Sealed for Put<'_, E> {}
impl<E: Entity> TransactWrite for Put<'_, E> {
    fn transact_op(&self) -> Result<TransactOp, Error> {
        self.transact_op()
    }
}

impl<E: Entity, S: UpdateComplete> sealed::Sealed for Update<'_, E, S> {}
impl<E: Entity, S: UpdateComplete> TransactWrite for Update<'_, E, S> {
    fn transact_op(&self) -> Result<TransactOp, Error> {
        self.transact_op()
    }
}

impl<E: Entity> sealed::Sealed for Delete<'_, E> {}
impl<E: Entity> TransactWrite for Delete<'_, E> {
    fn transact_op(&self) -> Result<TransactOp, Error> {
        self.transact_op()
    }
}

impl<E: Entity> sealed::Sealed for ConditionCheck<'_, E> {}
impl<E: Entity> TransactWrite for ConditionCheck<'_, E> {
    fn transact_op(&self) -> Result<TransactOp, Error> {
        let mut placeholders = Placeholders::default();
        let node = self
            .condition
            .node()
            .map_err(|error| Error::from(error.clone()))?;
        let condition = node.to_expression(&mut placeholders);
        crate::expr::check_expression("ConditionExpression", &condition)?;
        Ok(TransactOp {
            kind: WriteKind::ConditionCheck,
            entity: E::SCHEMA.name,
            table_name: self.db.table_name().to_owned(),
            key: self.key.to_attributes(),
            key_text: self.key.text(),
            item: None,
            update: None,
            condition: Some(condition),
            placeholders,
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

/// Why a transaction was refused before sending.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransactionError {
    /// A transaction needs at least one operation.
    #[error("a transaction needs at least one operation")]
    Empty,
    /// More than DynamoDB's 100 operations.
    #[error("a transaction holds at most {max} operations; this one has {count}")]
    TooMany {
        /// Operations given.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// An operation could not be prepared (its key, item or expression was invalid).
    #[error("operation {position} of the transaction is invalid: {message}")]
    Operation {
        /// Its position.
        position: usize,
        /// What was wrong.
        message: String,
    },
    /// Two operations on one item, which DynamoDB rejects.
    #[error("operations {first} ({first_kind}) and {second} ({second_kind}) of this transaction both touch {key}; DynamoDB allows one operation per item in a transaction")]
    SameItem {
        /// Position of the first.
        first: usize,
        /// Its kind.
        first_kind: WriteKind,
        /// Position of the second.
        second: usize,
        /// Its kind.
        second_kind: WriteKind,
        /// The item.
        key: KeyText,
    },
}

/// Why DynamoDB cancelled one operation of a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
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
        matches!(
            self,
            CancellationCode::TransactionConflict
                | CancellationCode::ProvisionedThroughputExceeded
                | CancellationCode::ThrottlingError
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

    /// Whether every failure is transient (worth sending again).
    pub fn is_transient(&self) -> bool {
        let mut failures = self.failures().peekable();
        failures.peek().is_some() && failures.all(|reason| reason.code.is_transient())
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
    /// Adds an operation ([`Put`], [`Update`], [`Delete`] or [`ConditionCheck`]).
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
            if let Some(first) = self.ops[..second]
                .iter()
                .position(|earlier| earlier.table_name == op.table_name && earlier.key == op.key)
            {
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

    /// The request this transaction sends (without its generated token).
    pub fn params(&self) -> Result<Request, Error> {
        self.check()?;
        Ok(Body::default()
            .field(
                "TransactItems",
                Value::Array(self.ops.iter().map(TransactOp::json).collect()),
            )
            .field(
                "ClientRequestToken",
                self.token.as_ref().map(|token| json!(token)),
            )
            .request("TransactWriteItems"))
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
    pub async fn send(mut self) -> Result<(), Error> {
        if let Some((_, error)) = self.error.take() {
            return Err(error);
        }
        self.check_ops()?;
        let items = self
            .ops
            .iter()
            .map(TransactOp::sdk)
            .collect::<Result<Vec<_>, _>>()?;
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
                .db
                .client()
                .transact_write_items()
                .set_transact_items(Some(items.clone()))
                .client_request_token(&token)
                .set_return_consumed_capacity(self.db.return_consumed_capacity())
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
                Some(service) if service.is_provisioned_throughput_exceeded_exception() || service.is_request_limit_exceeded() || service.is_throttling_exception() => {
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

/// A random idempotency token (DynamoDB accepts 1 to 36 characters).
fn new_token() -> String {
    format!("st-{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..))
}

impl<T: Table> Db<T> {
    /// A `TransactGetItems`: [`TransactGet::get`] hands out a typed slot per key; the output
    /// fills them, all read at one point in time.
    pub fn transact_get(&self) -> TransactGet<'_, T> {
        TransactGet {
            db: self,
            keys: Vec::new(),
        }
    }
}

/// A `TransactGetItems`; see [`Db::transact_get`].
#[must_use = "a transaction does nothing until it is sent"]
pub struct TransactGet<'db, T> {
    db: &'db Db<T>,
    keys: Vec<(Item, KeyText, &'static str)>,
}

/// A typed position in a [`TransactGet`]'s output.
#[derive(Debug)]
pub struct Slot<E> {
    position: usize,
    entity: PhantomData<fn() -> E>,
}

/// What a [`TransactGet`] read.
#[derive(Debug)]
pub struct TransactGetOutput {
    items: Vec<Option<Item>>,
}

impl TransactGetOutput {
    /// The item of `slot` (`None` if it does not exist).
    pub fn take<E: Entity>(&mut self, slot: &Slot<E>) -> Result<Option<E>, Error> {
        match self.items.get_mut(slot.position).and_then(Option::take) {
            Some(item) => Ok(Some(crate::item::decode(item)?)),
            None => Ok(None),
        }
    }
}

impl<T: Table> TransactGet<'_, T> {
    /// Reads `key`; the returned slot picks its item out of the output.
    pub fn get<E: Entity<Table = T>>(&mut self, key: Key<E>) -> Slot<E> {
        self.keys
            .push((key.to_attributes(), key.text(), E::SCHEMA.name));
        Slot {
            position: self.keys.len() - 1,
            entity: PhantomData,
        }
    }

    /// The request this sends.
    pub fn params(&self) -> Request {
        let items = self
            .keys
            .iter()
            .map(|(key, _, _)| json!({ "Get": { "TableName": self.db.table_name(), "Key": wire::item(key) } }))
            .collect();
        Body::default()
            .field("TransactItems", Value::Array(items))
            .request("TransactGetItems")
    }

    /// Reads every item at one point in time.
    pub async fn send(self) -> Result<TransactGetOutput, Error> {
        if self.keys.is_empty() {
            return Err(TransactionError::Empty.into());
        }
        if self.keys.len() > MAX_TRANSACTION_ITEMS {
            return Err(TransactionError::TooMany {
                count: self.keys.len(),
                max: MAX_TRANSACTION_ITEMS,
            }
            .into());
        }
        let mut request = self.db.client().transact_get_items();
        for (key, _, _) in &self.keys {
            let get = SdkGet::builder()
                .table_name(self.db.table_name())
                .set_key(Some(key.clone()))
                .build()?;
            request = request.transact_items(TransactGetItem::builder().get(get).build());
        }
        let output = request
            .set_return_consumed_capacity(self.db.return_consumed_capacity())
            .send()
            .boxed()
            .await?;
        self.db.record(output.consumed_capacity());
        let mut items: Vec<Option<Item>> = output
            .responses
            .unwrap_or_default()
            .into_iter()
            .map(|response| response.item)
            .collect();
        items.resize(self.keys.len(), None);
        Ok(TransactGetOutput { items })
    }
}
