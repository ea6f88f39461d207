//! A transaction as the library builds it: its operations (the user's, and the writes unique
//! values and appends add), the checks DynamoDB would refuse it for, the request, and its
//! cancellation reasons mapped back onto the operations.

use super::Transacted;
use super::{TransactOp, TransactWrite};
use crate::cost::{Estimate, Explain};
use crate::error::cancel::{CancellationCode, CancellationReason, TransactionCanceled};
use crate::error::transaction::TransactionError;
use crate::error::Error;
use crate::item::{item_size, value_size, LimitError};
use crate::retry::RetryPolicy;
use crate::schema::Table;
use crate::wire::Request;
use crate::Db;
use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};
use std::collections::HashMap;

/// DynamoDB's limit on operations in one transaction.
pub const MAX_TRANSACTION_ITEMS: usize = 100;
/// DynamoDB's limit on the aggregate size of one transaction: 4 MB.
pub const MAX_TRANSACTION_BYTES: usize = 4 * 1024 * 1024;
/// DynamoDB's limit on the length of a `ClientRequestToken`.
pub const MAX_CLIENT_REQUEST_TOKEN: usize = 36;

/// A `TransactWriteItems`; see [`Db::transaction`].
#[must_use = "a transaction does nothing until it is sent"]
pub struct Transaction<'db, T> {
    db: &'db Db<T>,
    pub(crate) ops: Vec<TransactOp>,
    /// The first operation that could not be prepared, with its position.
    pub(crate) error: Option<(usize, Error)>,
    retry: RetryPolicy,
    token: Option<String>,
}

impl<'db, T: Table> Transaction<'db, T> {
    /// An empty transaction on `db`'s table, under its retry policy.
    pub(crate) fn new(db: &'db Db<T>) -> Self {
        Transaction {
            db,
            ops: Vec::new(),
            error: None,
            retry: db.retry_policy(),
            token: None,
        }
    }

    /// Adds an operation ([`Put`](crate::op::put::Put), [`Update`](crate::op::update::Update), [`Delete`](crate::op::delete::Delete) or [`ConditionCheck`](crate::op::transact::ConditionCheck)).
    pub fn with(self, operation: impl TransactWrite) -> Self {
        self.with_ref(&operation)
    }

    /// Adds an operation by reference (its op is prepared at once).
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

    /// Adds an operation prepared elsewhere in the crate.
    pub(crate) fn push(mut self, op: TransactOp) -> Self {
        self.ops.push(op);
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
        if let Some(token) = &self.token {
            let length = token.chars().count();
            if !(1..=MAX_CLIENT_REQUEST_TOKEN).contains(&length) {
                return Err(LimitError::ClientRequestToken {
                    length,
                    max: MAX_CLIENT_REQUEST_TOKEN,
                }
                .into());
            }
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
        Ok(self
            .db
            .transaction_params(self.items()?, self.token.clone()))
    }

    /// The items as DynamoDB takes them, within its 4 MB for a transaction.
    fn items(&self) -> Result<Vec<TransactWriteItem>, Error> {
        let items: Vec<TransactWriteItem> = self
            .ops
            .iter()
            .map(TransactOp::sdk)
            .collect::<Result<_, _>>()?;
        let size: usize = items.iter().map(transact_item_size).sum();
        if size > MAX_TRANSACTION_BYTES {
            return Err(LimitError::TransactionSize {
                count: items.len(),
                size,
                max: MAX_TRANSACTION_BYTES,
            }
            .into());
        }
        Ok(items)
    }

    /// Sends the transaction, retrying transient failures under the retry policy with the
    /// same client request token. The policy is the only retry layer: the SDK's own retries
    /// are off for this request, and no attempt starts, or goes on, past [`RESEND_WINDOW`](super::RESEND_WINDOW)
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
        let items = self.items()?;
        let token = self.token.clone().unwrap_or_else(new_token);
        // With their values: only a `Db` that records values puts them in its span.
        let keys: Vec<String> = crate::key::text::with_values_shown(true, || {
            self.ops.iter().map(|op| op.key_text.to_string()).collect()
        });
        let entity = self.ops.first().map_or("", |op| op.entity);
        let ops = &self.ops;
        let transient = |sdk: &[aws_sdk_dynamodb::types::CancellationReason]| {
            TransactionCanceled {
                reasons: reasons(ops, sdk),
                attempts: 0,
            }
            .is_transient()
        };
        let sent = self
            .db
            .write_transaction(
                items,
                token,
                &self.retry,
                (entity, keys.join("; ")),
                transient,
            )
            .await?;
        match sent {
            Transacted::Applied => Ok(()),
            Transacted::Canceled {
                reasons: sdk,
                attempts,
            } => Err(Error::TransactionCanceled(Box::new(TransactionCanceled {
                reasons: reasons(&self.ops, &sdk),
                attempts,
            }))),
        }
    }
}

/// The size of one write of a transaction, as the library counts it towards DynamoDB's 4 MB:
/// the item a put writes, or the key another operation names, and every expression value.
fn transact_item_size(item: &TransactWriteItem) -> usize {
    let values = |values: Option<&HashMap<String, AttributeValue>>| -> usize {
        values.map_or(0, |values| values.values().map(value_size).sum())
    };
    if let Some(put) = &item.put {
        item_size(&put.item) + values(put.expression_attribute_values.as_ref())
    } else if let Some(update) = &item.update {
        item_size(&update.key) + values(update.expression_attribute_values.as_ref())
    } else if let Some(delete) = &item.delete {
        item_size(&delete.key) + values(delete.expression_attribute_values.as_ref())
    } else if let Some(check) = &item.condition_check {
        item_size(&check.key) + values(check.expression_attribute_values.as_ref())
    } else {
        0
    }
}

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
