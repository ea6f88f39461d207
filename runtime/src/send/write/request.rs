//! A [`Write`]'s SDK request, built once: what [`Db::write`] sends and what `params()` prints.

use super::{Capacity, Change, Resend, Write, Written};
use crate::error::{Error, ServiceError};
use crate::item::Item;
use crate::key::KeyText;
use crate::retry::Next;
use crate::schema::Table;
use crate::trace::Operation;
use crate::Db;
use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::delete_item::builders::DeleteItemFluentBuilder;
use aws_sdk_dynamodb::operation::delete_item::{DeleteItemError, DeleteItemOutput};
use aws_sdk_dynamodb::operation::put_item::builders::PutItemFluentBuilder;
use aws_sdk_dynamodb::operation::put_item::{PutItemError, PutItemOutput};
use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder;
use aws_sdk_dynamodb::operation::update_item::{UpdateItemError, UpdateItemOutput};
use aws_sdk_dynamodb::types::{
    ConsumedCapacity, ReturnConsumedCapacity, ReturnValuesOnConditionCheckFailure,
};

/// The request of one write.
pub(super) enum Request {
    Put(PutItemFluentBuilder),
    Update(UpdateItemFluentBuilder),
    Delete(DeleteItemFluentBuilder),
}

/// What [`Request::send`] needs of each single-item operation of the SDK.
trait ItemRequest: Clone + Send + 'static {
    type Output;
    type Error: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static;

    /// Sends the request, on the client its [`Resend`] picked.
    fn send_attempt(
        self,
    ) -> impl std::future::Future<Output = Result<Self::Output, SdkError<Self::Error, HttpResponse>>>
           + Send;

    /// What an applied write's response says.
    fn response(output: Self::Output) -> Response;

    /// The item as it is, when the failure is the write's condition.
    fn condition_failed(failure: &Self::Error) -> Option<Option<Item>>;
}

/// What an applied write's response says.
struct Response {
    attributes: Option<Item>,
    consumed: Option<ConsumedCapacity>,
}

/// Implements [`ItemRequest`] for an SDK operation's builder.
macro_rules! item_request {
    ($Builder:ty, $Failure:ident, $Output:ty) => {
        impl ItemRequest for $Builder {
            type Output = $Output;
            type Error = $Failure;

            fn send_attempt(
                self,
            ) -> impl std::future::Future<Output = Result<$Output, SdkError<$Failure, HttpResponse>>>
                   + Send {
                <$Builder>::send(self)
            }

            fn response(output: $Output) -> Response {
                Response {
                    attributes: output.attributes,
                    consumed: output.consumed_capacity,
                }
            }

            fn condition_failed(failure: &$Failure) -> Option<Option<Item>> {
                match failure {
                    $Failure::ConditionalCheckFailedException(failed) => {
                        Some(failed.item().cloned())
                    }
                    _ => None,
                }
            }
        }
    };
}

item_request!(PutItemFluentBuilder, PutItemError, PutItemOutput);
item_request!(UpdateItemFluentBuilder, UpdateItemError, UpdateItemOutput);
item_request!(DeleteItemFluentBuilder, DeleteItemError, DeleteItemOutput);

impl Request {
    /// The request of `write` on `db`'s table.
    pub(super) fn of<T: Table>(db: &Db<T>, write: Write) -> Result<Request, Error> {
        let capacity = match write.capacity {
            Capacity::Always => Some(
                db.return_consumed_capacity()
                    .unwrap_or(ReturnConsumedCapacity::Total),
            ),
            Capacity::WhenTracked => db.return_consumed_capacity(),
        };
        let on_failure = write
            .condition
            .is_some()
            .then_some(ReturnValuesOnConditionCheckFailure::AllOld);
        write.check()?;
        let (names, values) = write.placeholders.into_maps();
        // Resent by the SDK under the `Db`'s policy, or by the loop in `sent`.
        let client = match write.resend {
            Resend::Safe => db.retrying_client(),
            Resend::Guarded | Resend::Never | Resend::Paced => db.unretried_client(),
        };
        // The three requests set the same fields; each SDK builder is its own type.
        macro_rules! common {
            ($builder:expr) => {
                $builder
                    .table_name(db.table_name())
                    .set_condition_expression(write.condition)
                    .set_expression_attribute_names(names)
                    .set_expression_attribute_values(values)
                    .set_return_values(write.returning)
                    .set_return_values_on_condition_check_failure(on_failure)
                    .set_return_consumed_capacity(capacity)
            };
        }
        Ok(match write.change {
            Change::Put(item) => Request::Put(common!(client.put_item().set_item(Some(item)))),
            Change::Update { key, expression } => Request::Update(common!(client
                .update_item()
                .set_key(Some(key))
                .update_expression(expression))),
            Change::Delete { key } => {
                Request::Delete(common!(client.delete_item().set_key(Some(key))))
            }
        })
    }

    /// The operation, for the span.
    pub(super) fn operation(&self) -> Operation {
        match self {
            Request::Put(_) => Operation::PutItem,
            Request::Update(_) => Operation::UpdateItem,
            Request::Delete(_) => Operation::DeleteItem,
        }
    }

    /// The request as `params()` prints it.
    pub(super) fn describe(&self) -> crate::wire::Request {
        use crate::wire::describe::request;
        match self {
            Request::Put(put) => request("PutItem", put.as_input()),
            Request::Update(update) => request("UpdateItem", update.as_input()),
            Request::Delete(delete) => request("DeleteItem", delete.as_input()),
        }
    }

    /// Sends the request as `resend` says, for `record` at `key` (in errors).
    pub(super) async fn send<T: Table>(
        self,
        db: &Db<T>,
        resend: Resend,
        record: &'static str,
        key: KeyText,
    ) -> Result<Written, Error> {
        match self {
            Request::Put(request) => sent(db, request, resend, record, key).await,
            Request::Update(request) => sent(db, request, resend, record, key).await,
            Request::Delete(request) => sent(db, request, resend, record, key).await,
        }
    }
}

/// Sends `request` under `db`'s retry policy: by the SDK's retries for [`Resend::Safe`];
/// otherwise once per attempt, the SDK's retries off, again while throttled (which applies
/// nothing; not for [`Resend::Paced`], whose caller counts each throttle), after a global
/// table's `ReplicatedWriteConflictException` (which applies nothing either) and, but for
/// [`Resend::Never`], after a lost response.
async fn sent<T: Table, R: ItemRequest>(
    db: &Db<T>,
    request: R,
    resend: Resend,
    record: &'static str,
    key: KeyText,
) -> Result<Written, Error>
where
    aws_sdk_dynamodb::Error: From<R::Error>,
{
    if resend == Resend::Safe {
        // Sent as it is, not cloned for a resend: the SDK resends it, as the policy says.
        let result = request.send_attempt().await.map(R::response);
        return written::<T, R>(db, result, false);
    }
    // Whether a resend followed a lost response: a failed condition may then be its own.
    let mut resent = false;
    let judge = |resent: &mut bool, result: Result<R::Output, _>, _| {
        let error = match result {
            Ok(output) => return Next::Done(Ok(Ok(R::response(output)))),
            Err(error) => error,
        };
        if crate::retry::lost_in_transit(&error) {
            if resend == Resend::Never {
                let cause = ServiceError::new(error);
                return Next::Done(Err(Error::Ambiguous {
                    entity: record,
                    key: key.clone(),
                    message: cause.to_string(),
                    cause: Some(cause),
                }));
            }
            // Sending it again is safe; out of attempts, the outcome is unknown.
            *resent = true;
            return Next::Again(Ok(Err(error)));
        }
        // Throttled (not for `Paced`, whose caller counts each throttle), or another Region's
        // write to the item was in flight: nothing was applied.
        if (resend != Resend::Paced && crate::retry::is_throttling(&error))
            || crate::retry::is_replicated_write_conflict(error.code())
        {
            return Next::Again(Ok(Err(error)));
        }
        Next::Done(Ok(Err(error)))
    };
    // The first attempt in place, where its future is made once (`RetryPolicy::drive_after`).
    let first = request.clone().send_attempt().await;
    let result = match judge(&mut resent, first, 1) {
        Next::Done(result) => result,
        again => {
            let policy = db.retry_policy();
            let send = |_: &mut bool| request.clone().send_attempt();
            policy.drive_after(again, &mut resent, send, judge).await
        }
    }?;
    written::<T, R>(db, result, resent)
}

/// What a response says of the write: applied (its capacity recorded), or its condition
/// failed (`resent`: after the library resent it), or an error.
fn written<T: Table, R: ItemRequest>(
    db: &Db<T>,
    result: Result<Response, SdkError<R::Error, HttpResponse>>,
    resent: bool,
) -> Result<Written, Error>
where
    aws_sdk_dynamodb::Error: From<R::Error>,
{
    match result {
        Ok(response) => {
            db.record(response.consumed.as_ref());
            Ok(Written::Applied {
                attributes: response.attributes.filter(|item| !item.is_empty()),
                units: response
                    .consumed
                    .and_then(|consumed| consumed.capacity_units),
            })
        }
        Err(error) => match error.as_service_error().and_then(R::condition_failed) {
            Some(current) => Ok(Written::ConditionFailed { current, resent }),
            None => Err(error.into()),
        },
    }
}
