//! Table administration: `CreateTable`, `DescribeTable` with `DescribeTimeToLive`,
//! `UpdateTable` and `UpdateTimeToLive`, each in its span. The requests that change the table
//! are sent by `RetryPolicy::changing` (again while throttled or lost, until the table's
//! description shows the change made); the descriptions by `RetryPolicy::reading`.

use super::Db;
use crate::error::Error;
use crate::schema::Table;
use crate::trace::{table_span, traced, Operation};
use aws_sdk_dynamodb::client::Waiters;
use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::operation::create_table::builders::CreateTableInputBuilder;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, GlobalSecondaryIndexUpdate, PointInTimeRecoveryStatus,
    StreamSpecification, TableDescription, TimeToLiveDescription, TimeToLiveSpecification,
    TimeToLiveStatus,
};
use std::future::Future;
use std::time::Duration;

/// A change of the table `UpdateTable` makes.
pub(crate) enum TableChange {
    /// Adds or deletes a global secondary index, with the attribute definitions its keys need.
    Index {
        definitions: Option<Vec<AttributeDefinition>>,
        update: Box<GlobalSecondaryIndexUpdate>,
    },
    /// Turns the table's stream on.
    Stream(StreamSpecification),
}

/// Sends `input`, a `CreateTable`, through `client` in its span.
pub(crate) async fn create_table(
    client: &aws_sdk_dynamodb::Client,
    table_name: &str,
    input: CreateTableInputBuilder,
) -> Result<(), Error> {
    let span = table_span(Operation::CreateTable, table_name);
    let sent = async { Ok::<_, Error>(input.send_with(client).await?) };
    traced(span, false, sent).await?;
    Ok(())
}

/// A table's description and its time to live.
pub(crate) type Described = Option<(TableDescription, Option<TimeToLiveDescription>)>;

/// The description of table `table_name`, read through `client`, a client of the user's
/// without a `Db` (resent under the default policy, so its SDK retries are turned off).
pub(crate) async fn describe_with_ttl(
    client: &aws_sdk_dynamodb::Client,
    table_name: &str,
) -> Result<Described, Error> {
    let unretried = super::db::with_retries(client, RetryConfig::disabled());
    described(&unretried, table_name, crate::RetryPolicy::default()).await
}

/// The table's description and its time to live, read through `client` (without the SDK's
/// retries), each resent under `policy` in its span; `None` when there is no such table.
async fn described(
    client: &aws_sdk_dynamodb::Client,
    table_name: &str,
    policy: crate::RetryPolicy,
) -> Result<Described, Error> {
    let describe = client.describe_table().table_name(table_name);
    let span = table_span(Operation::DescribeTable, table_name);
    let described = traced(span, false, policy.reading(|| describe.clone().send())).await;
    match described {
        Ok(output) => {
            let Some(table) = output.table else {
                return Ok(None);
            };
            let ttl = client.describe_time_to_live().table_name(table_name);
            let span = table_span(Operation::DescribeTimeToLive, table_name);
            let ttl = traced(span, false, policy.reading(|| ttl.clone().send())).await?;
            Ok(Some((table, ttl.time_to_live_description)))
        }
        Err(error)
            if error
                .as_service_error()
                .is_some_and(|error| error.is_resource_not_found_exception()) =>
        {
            Ok(None)
        }
        Err(error) => Err(error.into()),
    }
}

impl<T: Table> Db<T> {
    /// The table's description and its time to live, read under `policy` (the `Db`'s, or its
    /// policy for long jobs) on its client without the SDK's retries (made once, with the
    /// `Db`).
    pub(crate) async fn describe_with_ttl(
        &self,
        policy: crate::RetryPolicy,
    ) -> Result<Described, Error> {
        described(self.unretried_client(), self.table_name(), policy).await
    }

    /// Waits until the table exists and is active, for at most five minutes.
    pub(crate) async fn wait_until_table_exists(&self) -> Result<(), Error> {
        // The SDK's waiter, on the user's client: it polls `DescribeTable` under its own rules.
        self.client()
            .wait_until_table_exists()
            .table_name(self.table_name())
            .wait(Duration::from_secs(300))
            .await
            .map_err(|error| Error::Wait {
                table: self.table_name().to_owned(),
                message: error.to_string(),
            })?;
        Ok(())
    }

    /// Sends `change` in its span, again while throttled or lost, until `made` (which reads
    /// the table's description) says it is made.
    pub(crate) async fn change_table<F>(
        &self,
        change: TableChange,
        made: impl Fn() -> F,
    ) -> Result<(), Error>
    where
        F: Future<Output = Result<bool, Error>>,
    {
        let update = self
            .unretried_client()
            .update_table()
            .table_name(self.table_name());
        let update = match change {
            TableChange::Index {
                definitions,
                update: index,
            } => update
                .set_attribute_definitions(definitions)
                .global_secondary_index_updates(*index),
            TableChange::Stream(specification) => update.stream_specification(specification),
        };
        let policy = self.retry_policy();
        let changing = policy.changing(|| update.clone().send(), made);
        let span = table_span(Operation::UpdateTable, self.table_name());
        self.traced(span, changing).await
    }

    /// The tags of the table with `arn` (`ListTagsOfResource`, page after page), each request
    /// sent again while throttled or lost.
    pub(crate) async fn table_tags(&self, arn: &str) -> Result<Vec<(String, String)>, Error> {
        let mut tags = Vec::new();
        let mut next = None;
        loop {
            let request = self
                .unretried_client()
                .list_tags_of_resource()
                .resource_arn(arn)
                .set_next_token(next.take());
            let page = self
                .reading_traced(Operation::ListTagsOfResource, &self.retry_policy(), || {
                    request.clone().send()
                })
                .await?;
            tags.extend(
                (page.tags.unwrap_or_default().into_iter()).map(|tag| (tag.key, tag.value)),
            );
            match page.next_token {
                Some(token) => next = Some(token),
                None => return Ok(tags),
            }
        }
    }

    /// Whether point-in-time recovery is on (`DescribeContinuousBackups`), sent again while
    /// throttled or lost; `None` where the endpoint does not know the operation (an engine
    /// without backups).
    pub(crate) async fn point_in_time_recovery(&self) -> Result<Option<bool>, Error> {
        let request = self
            .unretried_client()
            .describe_continuous_backups()
            .table_name(self.table_name());
        let answered = self
            .reading_traced(
                Operation::DescribeContinuousBackups,
                &self.retry_policy(),
                || request.clone().send(),
            )
            .await;
        match answered {
            Ok(output) => {
                let status = output
                    .continuous_backups_description()
                    .and_then(|backups| backups.point_in_time_recovery_description())
                    .and_then(|recovery| recovery.point_in_time_recovery_status());
                Ok(Some(status == Some(&PointInTimeRecoveryStatus::Enabled)))
            }
            Err(error) if error.code() == Some("UnknownOperationException") => Ok(None),
            Err(error) => Err(error.into()),
        }
    }

    /// `UpdateTimeToLive`: DynamoDB deletes items once the number of epoch seconds in
    /// `attribute` has passed. Sent again while throttled or lost, until answered or
    /// `DescribeTimeToLive` shows it on (a resend after it was applied is refused).
    pub(crate) async fn enable_ttl(&self, attribute: &str) -> Result<(), Error> {
        let specification = TimeToLiveSpecification::builder()
            .enabled(true)
            .attribute_name(attribute)
            .build()?;
        let update = self
            .unretried_client()
            .update_time_to_live()
            .table_name(self.table_name())
            .time_to_live_specification(specification);
        let describe = self
            .unretried_client()
            .describe_time_to_live()
            .table_name(self.table_name());
        let policy = self.retry_policy();
        let enabled = || async {
            let described = self
                .reading_traced(Operation::DescribeTimeToLive, &policy, || {
                    describe.clone().send()
                })
                .await?;
            let ttl = described.time_to_live_description();
            Ok::<_, Error>(ttl.is_some_and(|ttl| {
                ttl.attribute_name() == Some(attribute)
                    && matches!(
                        ttl.time_to_live_status(),
                        Some(TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling)
                    )
            }))
        };
        let span = table_span(Operation::UpdateTimeToLive, self.table_name());
        self.traced(span, policy.changing(|| update.clone().send(), enabled))
            .await
    }
}
