//! `TransactWriteItems` and `TransactGetItems` of typed operations, with checks before
//! sending, typed cancellation reasons and bounded retries of transient cancellations.

pub(crate) mod cancel;
pub(crate) mod error;
mod get;
pub(crate) mod kind;
pub(crate) mod op;

pub use cancel::{CancellationCode, CancellationReason, TransactionCanceled};
pub use error::TransactionError;
pub use get::{Slot, TransactGet, TransactGetOutput};
pub use kind::WriteKind;
pub use op::{TransactOp, TransactWrite};

use crate::cost::{Estimate, Explain};
use crate::error::Error;
use crate::expr::Condition;
use crate::retry::RetryPolicy;
use crate::schema::{Entity, Table};
use crate::wire::Request;
use crate::write::Transacted;
use crate::{Db, Key};
use aws_sdk_dynamodb::types::TransactWriteItem;

pub use crate::write::RESEND_WINDOW;

/// DynamoDB's limit on operations in one transaction.
pub const MAX_TRANSACTION_ITEMS: usize = 100;

impl<E: Entity> op::sealed::Sealed for ConditionCheck<'_, E> {}
impl<E: Entity> TransactWrite for ConditionCheck<'_, E> {
    fn transact_op(&self) -> Result<TransactOp, Error> {
        let node = self
            .condition
            .node()
            .map_err(|error| Error::from(error.clone()))?;
        // An expired item is no item to the check, as to writes and reads.
        let table = <E::Table as Table>::SCHEMA;
        let expiry = crate::ttl::Expiry::hidden(table, || self.db.now());
        let node = crate::op::as_read::user_as_read(node, expiry).into_node();
        let mut estimate = Estimate::default();
        estimate.write(1.0, "condition check");
        Ok(TransactOp::check(
            E::SCHEMA.name,
            self.db.table_name(),
            (self.key.to_attributes(), self.key.text()),
            node,
            estimate,
        ))
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
            retry: self.retry_policy(),
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
        Ok(self
            .db
            .transaction_params(self.items()?, self.token.clone()))
    }

    /// The items as DynamoDB takes them.
    fn items(&self) -> Result<Vec<TransactWriteItem>, Error> {
        self.ops.iter().map(TransactOp::sdk).collect()
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
        let items = self.items()?;
        let token = self.token.clone().unwrap_or_else(new_token);
        let keys: Vec<String> = self.ops.iter().map(|op| op.key_text.to_string()).collect();
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
