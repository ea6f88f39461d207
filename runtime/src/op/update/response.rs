//! Reading an update's response: the item returned, or what a failed condition means.

use crate::error::Error;
use crate::op::{condition_failure, Expectations};
use crate::schema::Entity;
use crate::{Db, Key};
use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use futures::FutureExt;

/// What an update's condition requires: an existing item, unexpired by `expiry`, at
/// `expected_version` if given, whose version can still be counted up.
pub(super) fn expectations<E: Entity>(
    expected_version: Option<u64>,
    expiry: crate::ttl::Expiry,
) -> Expectations {
    let managed = E::SCHEMA.managed;
    Expectations {
        requires_existing: true,
        version: managed.version.zip(expected_version),
        version_max: managed
            .version
            .map(|attribute| (attribute, managed.version_max)),
        expiry,
    }
}

/// What a sent update keeps to read its response.
pub(super) struct Sent<'db, E: Entity> {
    pub(super) db: &'db Db<E::Table>,
    pub(super) key: Key<E>,
    pub(super) expected_version: Option<u64>,
    pub(super) expiry: crate::ttl::Expiry,
}

impl<E: Entity> Sent<'_, E> {
    /// The item an update returned, decoded.
    pub(super) fn decode(&self, item: crate::Item) -> Result<E, Error> {
        if item.is_empty() {
            // The condition guarantees the item existed; an engine that returns nothing
            // leaves nothing to decode.
            return Err(Error::NotFound {
                entity: E::SCHEMA.name,
                key: self.key.text(),
            });
        }
        Ok(crate::item::decode(item)?)
    }

    /// The attributes a response returned, or what its error means for this update.
    pub(super) fn returned(&self, result: UpdateResult) -> Result<crate::Item, Error> {
        match result {
            Ok(output) => {
                self.db.record(output.consumed_capacity());
                Ok(output.attributes.unwrap_or_default())
            }
            Err(error) => match error.as_service_error() {
                Some(UpdateItemError::ConditionalCheckFailedException(failure)) => {
                    Err(condition_failure(
                        E::SCHEMA.name,
                        self.key.text(),
                        failure.item(),
                        expectations::<E>(self.expected_version, self.expiry),
                    ))
                }
                _ => Err(error.into()),
            },
        }
    }

    /// Sends a non-repeatable update with the SDK's retries off: throttling (nothing
    /// applied) is retried here, and a lost response is reported as `Error::Ambiguous` for
    /// the caller to resolve by reading the item.
    pub(super) async fn send_once_per_attempt(
        &self,
        request: UpdateItemFluentBuilder,
    ) -> Result<UpdateResult, Error> {
        let policy = crate::RetryPolicy::default();
        let mut attempt = 1;
        loop {
            let once = aws_sdk_dynamodb::config::Builder::new()
                .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::disabled());
            let result = request
                .clone()
                .customize()
                .config_override(once)
                .send()
                .boxed()
                .await;
            match &result {
                Err(error) if crate::retry::lost_in_transit(error) => {
                    return Err(Error::Ambiguous {
                        entity: E::SCHEMA.name,
                        key: self.key.text(),
                        message: error.to_string(),
                    })
                }
                Err(error) if attempt < policy.attempts() && crate::retry::is_throttling(error) => {
                    policy.sleep_before(attempt).await;
                    attempt += 1;
                }
                _ => return Ok(result),
            }
        }
    }
}

pub(super) type UpdateResult = Result<
    aws_sdk_dynamodb::operation::update_item::UpdateItemOutput,
    aws_sdk_dynamodb::error::SdkError<
        UpdateItemError,
        aws_sdk_dynamodb::config::http::HttpResponse,
    >,
>;
