//! The write executor of the library's own records (migration records, sweep plans and
//! leases, stream checkpoints, unique-value claims of a sweep, append pointers, backfills): one
//! request value, built from the expression AST and sent by one function that owns the span,
//! the capacity record and the mapping of a failed condition.
//!
//! Every write goes out asking DynamoDB for the capacity it consumed, which is added to the
//! [`Db`]'s tally when tracking is on ([`Db::track_capacity`]) and returned, so that paced
//! work (a sweep's rate) is charged its bookkeeping writes too.

use crate::error::Error;
use crate::expr::condition::Node;
use crate::expr::update::Action;
use crate::expr::Placeholders;
use crate::item::Item;
use crate::schema::Table;
use crate::trace::Operation;
use crate::Db;
use aws_sdk_dynamodb::operation::put_item::builders::PutItemFluentBuilder;
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{
    ConsumedCapacity, ReturnConsumedCapacity, ReturnValue, ReturnValuesOnConditionCheckFailure,
};

/// What a write does to its item.
#[derive(Debug, Clone)]
enum Change {
    /// `PutItem` of this item.
    Put(Item),
    /// `UpdateItem` of the item at this key, with this update expression.
    Update { key: Item, expression: String },
}

/// One write of a library record, as it is sent.
#[derive(Debug, Clone)]
pub(crate) struct Write {
    /// What the record is, for its span (a [`RecordKind`](crate::library::RecordKind)'s
    /// description, or the entity a backfill writes).
    record: &'static str,
    change: Change,
    condition: Option<String>,
    placeholders: Placeholders,
    returning: Option<ReturnValue>,
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
    /// Its condition failed: the item as it is (`None`: there is none).
    ConditionFailed(Option<Item>),
}

impl Write {
    /// A put of `item`.
    pub(crate) fn put(record: &'static str, item: Item) -> Self {
        Write {
            record,
            change: Change::Put(item),
            condition: None,
            placeholders: Placeholders::default(),
            returning: None,
        }
    }

    /// An update of the item at `key` with `actions`.
    pub(crate) fn update(record: &'static str, key: Item, actions: Vec<Action>) -> Self {
        let mut placeholders = Placeholders::default();
        let expression = crate::expr::update::render(actions, &mut placeholders);
        Write {
            record,
            change: Change::Update { key, expression },
            condition: None,
            placeholders,
            returning: None,
        }
    }

    /// An update already rendered (a backfill's, whose dry run prints it).
    pub(crate) fn rendered_update(
        record: &'static str,
        key: Item,
        expression: String,
        condition: String,
        placeholders: Placeholders,
    ) -> Self {
        Write {
            record,
            change: Change::Update { key, expression },
            condition: Some(condition),
            placeholders,
            returning: None,
        }
    }

    /// The write, only if `condition` holds.
    pub(crate) fn condition(mut self, condition: &Node) -> Self {
        self.condition = Some(condition.to_expression(&mut self.placeholders));
        self
    }

    /// The write, returning the item's attributes as `returning` says.
    pub(crate) fn returning(mut self, returning: ReturnValue) -> Self {
        self.returning = Some(returning);
        self
    }

    /// The key of the item written, for its span.
    fn key(&self) -> &Item {
        match &self.change {
            Change::Put(item) => item,
            Change::Update { key, .. } => key,
        }
    }
}

/// A write's SDK request, built once: what is sent, and what `params()` prints.
enum Request {
    Put(PutItemFluentBuilder),
    Update(UpdateItemFluentBuilder),
}

impl<T: Table> Db<T> {
    /// The request `write` is, as [`Db::write`] sends it.
    fn write_request(&self, write: Write) -> Request {
        // Always asked, so that paced work is charged what it spent.
        let capacity = self
            .return_consumed_capacity()
            .unwrap_or(ReturnConsumedCapacity::Total);
        let on_failure = write
            .condition
            .is_some()
            .then_some(ReturnValuesOnConditionCheckFailure::AllOld);
        let (names, values) = write.placeholders.into_maps();
        match write.change {
            Change::Put(item) => Request::Put(
                self.client()
                    .put_item()
                    .table_name(self.table_name())
                    .set_item(Some(item))
                    .set_condition_expression(write.condition)
                    .set_expression_attribute_names(names)
                    .set_expression_attribute_values(values)
                    .set_return_values(write.returning)
                    .set_return_values_on_condition_check_failure(on_failure)
                    .return_consumed_capacity(capacity),
            ),
            Change::Update { key, expression } => Request::Update(
                self.client()
                    .update_item()
                    .table_name(self.table_name())
                    .set_key(Some(key))
                    .update_expression(expression)
                    .set_condition_expression(write.condition)
                    .set_expression_attribute_names(names)
                    .set_expression_attribute_values(values)
                    .set_return_values(write.returning)
                    .set_return_values_on_condition_check_failure(on_failure)
                    .return_consumed_capacity(capacity),
            ),
        }
    }

    /// The request [`Db::write`] sends for `write`.
    pub(crate) fn write_params(&self, write: Write) -> crate::wire::Request {
        match self.write_request(write) {
            Request::Put(request) => crate::wire::describe::request("PutItem", request.as_input()),
            Request::Update(request) => {
                crate::wire::describe::request("UpdateItem", request.as_input())
            }
        }
    }

    /// Sends `write` in its span, records the capacity it consumed, and tells a failed
    /// condition (with the item as it is) from the errors that are errors.
    pub(crate) async fn write(&self, write: Write) -> Result<Written, Error> {
        let key = crate::item::key_text::<T>(write.key());
        let record = write.record;
        let request = self.write_request(write);
        let operation = match request {
            Request::Put(_) => Operation::PutItem,
            Request::Update(_) => Operation::UpdateItem,
        };
        let span = crate::trace::span(
            operation,
            self.table_name(),
            record,
            || Some(key.to_string()),
            None,
        );
        let sent = async {
            match request {
                Request::Put(request) => match request.send().await {
                    Ok(output) => Ok(self.applied(output.attributes, output.consumed_capacity)),
                    Err(error) => match error.as_service_error() {
                        Some(PutItemError::ConditionalCheckFailedException(failure)) => {
                            Ok(Written::ConditionFailed(failure.item().cloned()))
                        }
                        _ => Err(error.into()),
                    },
                },
                Request::Update(request) => match request.send().await {
                    Ok(output) => Ok(self.applied(output.attributes, output.consumed_capacity)),
                    Err(error) => match error.as_service_error() {
                        Some(UpdateItemError::ConditionalCheckFailedException(failure)) => {
                            Ok(Written::ConditionFailed(failure.item().cloned()))
                        }
                        _ => Err(error.into()),
                    },
                },
            }
        };
        self.traced(span, sent).await
    }

    /// An applied write's outcome, its capacity recorded.
    fn applied(&self, attributes: Option<Item>, consumed: Option<ConsumedCapacity>) -> Written {
        self.record(consumed.as_ref());
        Written::Applied {
            attributes: attributes.filter(|item| !item.is_empty()),
            units: consumed.and_then(|consumed| consumed.capacity_units),
        }
    }
}
