//! The write executor: every write the library makes, the user's puts, updates, deletes and
//! transactions and the library's own records (migration records, sweep plans and leases,
//! stream checkpoints, unique sentinels, append pointers, backfills), is one [`Write`] value,
//! built from the expression AST and sent here. This module alone turns a write into an SDK
//! request; it owns the span, the capacity record, how a lost response is resent, and the
//! reading of a failed condition. `params()` prints the request [`Db::write`] sends, and a
//! transaction sends each write in its transaction form ([`Write::transact_item`]), so the
//! request printed, sent alone and sent in a transaction cannot differ.
//!
//! Batch writes are the other path ([`crate::op::batch`]): `BatchWriteItem` takes no
//! conditions and no return values, and its unprocessed items are its own retry loop.

mod request;
mod transact;
mod transact_op;
mod transaction;

pub use transact::{
    Transaction, MAX_CLIENT_REQUEST_TOKEN, MAX_TRANSACTION_BYTES, MAX_TRANSACTION_ITEMS,
};
pub(crate) use transact_op::sealed;
pub use transact_op::{TransactOp, TransactWrite};
pub use transaction::RESEND_WINDOW;
pub(crate) use transaction::{Check, TransactItem, Transacted};

use crate::error::Error;
use crate::expr::condition::Node;
use crate::expr::update::Action;
use crate::expr::Placeholders;
use crate::item::Item;
use crate::key::KeyText;
use crate::schema::{Table, TableSchema};
use crate::trace::Outcome;
use crate::Db;
use aws_sdk_dynamodb::types::{
    Delete, Put, ReturnValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};
use request::Request;

/// What a write does to its item.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    /// `PutItem` of this item.
    Put(Item),
    /// `UpdateItem` of the item at this key, with this update expression.
    Update { key: Item, expression: String },
    /// `DeleteItem` of the item at this key.
    Delete { key: Item },
}

/// How a write whose response was lost (a timeout, a dropped connection, a 5xx) is resent, and
/// who waits out throttling. Every resend is under the [`Db`]'s retry policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resend {
    /// By the SDK's retries, set to the policy's attempts and delays: applying it twice leaves
    /// what applying it once does (a put of the same item, a set of the same values), or its
    /// condition fails the second time and the caller tells its own effect from the failure.
    Safe,
    /// By the library, with the SDK's retries off: the write carries a guard that fails a
    /// second application, so a resend is safe, and a failed condition after one is reported
    /// as such ([`Written::ConditionFailed`]'s `resent`).
    Guarded,
    /// Never: a second application would apply it twice (an `ADD`, an append), so a lost
    /// response is [`Error::Ambiguous`]. Throttling, which applies nothing, is still retried.
    Never,
    /// As [`Resend::Guarded`] for a lost response, but throttling goes back to the caller at
    /// once, unretried: a write whose caller paces itself (a sweep's), which must see each
    /// throttle to count it against its key and, with a [`Limiter`](crate::rate::Limiter),
    /// slow down, rather than after the retries.
    Paced,
}

/// Which writes ask DynamoDB for the capacity they consumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Capacity {
    /// Always, so that paced work (a sweep's rate) is charged its bookkeeping writes.
    Always,
    /// Only when the [`Db`] tracks it ([`Db::track_capacity`]).
    WhenTracked,
}

/// One write, as it is sent.
#[derive(Debug, Clone)]
pub(crate) struct Write {
    /// What is written, for its span and errors: the entity, or a
    /// [`RecordKind`](crate::library::RecordKind)'s description.
    record: &'static str,
    change: Change,
    condition: Option<String>,
    placeholders: Placeholders,
    returning: Option<ReturnValue>,
    resend: Resend,
    capacity: Capacity,
}

/// What a sent write did.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Written {
    /// It was applied: the attributes it returned (when asked) and the capacity DynamoDB
    /// reported (`None` from an engine that reports none).
    Applied {
        attributes: Option<Item>,
        units: Option<f64>,
    },
    /// Its condition failed: the item as it is (`None`: there is none), and whether the
    /// library had resent the write after a lost response ([`Resend::Guarded`]).
    ConditionFailed { current: Option<Item>, resent: bool },
}

impl Write {
    /// A write of `change` with an already rendered condition (of `placeholders`, which the
    /// change's expression shares).
    pub(crate) fn rendered(
        record: &'static str,
        change: Change,
        condition: Option<String>,
        placeholders: Placeholders,
    ) -> Self {
        Write {
            record,
            change,
            condition,
            placeholders,
            returning: None,
            resend: Resend::Safe,
            capacity: Capacity::Always,
        }
    }

    /// A put of `item`.
    pub(crate) fn put(record: &'static str, item: Item) -> Self {
        Self::rendered(record, Change::Put(item), None, Placeholders::default())
    }

    /// An update of the item at `key` with `actions`.
    pub(crate) fn update(record: &'static str, key: Item, actions: Vec<Action>) -> Self {
        let mut placeholders = Placeholders::default();
        let expression = crate::expr::update::render(actions, &mut placeholders);
        Self::rendered(
            record,
            Change::Update { key, expression },
            None,
            placeholders,
        )
    }

    /// A delete of the item at `key`.
    pub(crate) fn delete(record: &'static str, key: Item) -> Self {
        Self::rendered(
            record,
            Change::Delete { key },
            None,
            Placeholders::default(),
        )
    }

    /// The write, only if `condition` holds (and any condition it had).
    pub(crate) fn condition(mut self, condition: &Node) -> Self {
        let rendered = condition.to_expression(&mut self.placeholders);
        self.condition = Some(match self.condition.take() {
            Some(earlier) => format!("({earlier}) AND ({rendered})"),
            None => rendered,
        });
        self
    }

    /// The write, returning the item's attributes as `returning` says.
    pub(crate) fn returning(mut self, returning: Option<ReturnValue>) -> Self {
        self.returning = returning;
        self
    }

    /// The write, resent after a lost response as `resend` says.
    pub(crate) fn resend(mut self, resend: Resend) -> Self {
        self.resend = resend;
        self
    }

    /// The write, asking for its capacity only when the [`Db`] tracks it: the user's own
    /// writes, which pay for no bookkeeping.
    pub(crate) fn capacity_when_tracked(mut self) -> Self {
        self.capacity = Capacity::WhenTracked;
        self
    }

    /// The item a put writes.
    pub(crate) fn item(&self) -> Option<&Item> {
        match &self.change {
            Change::Put(item) => Some(item),
            _ => None,
        }
    }

    /// The key attributes of the item written.
    pub(crate) fn key(&self, table: &TableSchema) -> Item {
        match &self.change {
            Change::Put(item) => item
                .iter()
                .filter(|(name, _)| {
                    *name == table.partition_key || Some(name.as_str()) == table.sort_key
                })
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect(),
            Change::Update { key, .. } | Change::Delete { key } => key.clone(),
        }
    }

    /// The key of the item written, as errors and spans show it.
    pub(crate) fn key_text<T: Table>(&self) -> KeyText {
        match &self.change {
            Change::Put(item) => crate::item::key_text::<T>(item),
            Change::Update { key, .. } | Change::Delete { key } => crate::item::key_text::<T>(key),
        }
    }

    /// Checks the write's expressions against DynamoDB's limits, before anything is sent.
    fn check(&self) -> Result<(), crate::LimitError> {
        if let Some(condition) = &self.condition {
            crate::expr::check_expression("ConditionExpression", condition)?;
        }
        if let Change::Update { expression, .. } = &self.change {
            crate::expr::check_expression("UpdateExpression", expression)?;
        }
        self.placeholders.check()
    }

    /// The write as one of a transaction's, to table `table_name`: the request sent alone,
    /// less what a transaction does not take (return values, capacity, which the transaction
    /// asks for as a whole).
    pub(crate) fn transact_item(&self, table_name: &str) -> Result<TransactWriteItem, Error> {
        self.check()?;
        let (names, values) = self.placeholders.clone().into_maps();
        let on_failure = self
            .condition
            .is_some()
            .then_some(ReturnValuesOnConditionCheckFailure::AllOld);
        // The three writes set the same fields; each SDK builder is its own type.
        macro_rules! common {
            ($builder:expr) => {
                $builder
                    .table_name(table_name)
                    .set_condition_expression(self.condition.clone())
                    .set_expression_attribute_names(names)
                    .set_expression_attribute_values(values)
                    .set_return_values_on_condition_check_failure(on_failure)
                    .build()
                    .map_err(Error::from)?
            };
        }
        let item = TransactWriteItem::builder();
        Ok(match &self.change {
            Change::Put(put) => item.put(common!(Put::builder().set_item(Some(put.clone())))),
            Change::Update { key, expression } => item.update(common!(Update::builder()
                .set_key(Some(key.clone()))
                .update_expression(expression))),
            Change::Delete { key } => {
                item.delete(common!(Delete::builder().set_key(Some(key.clone()))))
            }
        }
        .build())
    }
}

impl<T: Table> Db<T> {
    /// The request [`Db::write`] sends for `write`.
    pub(crate) fn write_params(&self, write: Write) -> Result<crate::wire::Request, Error> {
        Ok(Request::of(self, write)?.describe())
    }

    /// Sends `write` in its span, resending it after a lost response as its [`Resend`] says,
    /// records the capacity it consumed, and tells a failed condition (with the item as it
    /// is) from the errors that are errors.
    pub(crate) async fn write(&self, write: Write) -> Result<Written, Error> {
        let key = write.key_text::<T>();
        let record = write.record;
        let resend = write.resend;
        let request = Request::of(self, write)?;
        let span = crate::trace::span(
            request.operation(),
            self.table_name(),
            record,
            || self.traced_key(|| key.to_string()),
            None,
        );
        // Boxed once here: the request's future (the SDK's, several kilobytes, inside the
        // resend loop) is then made on the heap, and the layers above it (the span, the
        // operation's own future, the caller's) move a pointer instead of copying it at each
        // (bench `operations`, groups `put` and `status_update`; see `op::mechanics`).
        let send = Box::pin(request.send(self, resend, record, key));
        let outcome = async { WriteOutcome(send.await) };
        self.traced(span, outcome).await.0
    }
}

/// A sent write's result as its span records it: a failed condition is the request's
/// outcome, whether or not the caller expected it.
struct WriteOutcome(Result<Written, Error>);

impl Outcome for WriteOutcome {
    fn error_kind(&self) -> Option<&'static str> {
        match &self.0 {
            Ok(Written::ConditionFailed { .. }) => Some("condition_failed"),
            result => result.error_kind(),
        }
    }

    fn error_message(&self) -> Option<String> {
        match &self.0 {
            Ok(Written::ConditionFailed { .. }) => Some("the write's condition failed".to_owned()),
            result => result.error_message(),
        }
    }
}
