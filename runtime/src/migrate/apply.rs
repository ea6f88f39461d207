//! Applying a [`Plan`]: `UpdateTable` one global index at a time, polling `DescribeTable`
//! until each is active (the SDK has no waiter for index status).

use super::plan::{IndexChange, LiveTable, Plan, PlanAction, TableMigration};
use crate::error::migration::MigrationError;
use crate::error::Error;
use crate::schema::Table;
use crate::send::TableChange;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, CreateGlobalSecondaryIndexAction, DeleteGlobalSecondaryIndexAction,
    GlobalSecondaryIndexUpdate, ProvisionedThroughput, ScalarAttributeType,
};
use std::time::{Duration, Instant};

/// How [`TableMigration::send`] behaves, as its builder methods set it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ApplyOptions {
    /// Delete global indexes the declaration no longer has.
    pub(crate) delete_unused: bool,
    /// How long to wait for each index change to finish.
    pub(crate) timeout: Duration,
    /// How often to poll `DescribeTable` while waiting.
    pub(crate) poll_interval: Duration,
    /// Change a table that a CloudFormation stack manages.
    pub(crate) force: bool,
}

impl Default for ApplyOptions {
    /// Keep unused indexes; wait up to 30 minutes per index, polling every 5 seconds (building
    /// an index over a large table takes minutes to hours).
    fn default() -> Self {
        ApplyOptions {
            delete_unused: false,
            timeout: Duration::from_secs(30 * 60),
            poll_interval: Duration::from_secs(5),
            force: false,
        }
    }
}

/// A step of [`TableMigration::send`], for progress output.
#[derive(Debug, Clone, Copy)]
pub enum ApplyEvent<'a> {
    /// The plan about to be applied.
    Planned(&'a Plan),
    /// A change is being requested.
    Started(&'a PlanAction),
    /// A poll while waiting for a change to finish.
    Waiting {
        /// The index (or the table, while it is not `ACTIVE`).
        resource: &'a str,
        /// Its status (`CREATING`, `UPDATING`, `DELETING`, `NOT_VISIBLE` before
        /// `DescribeTable` shows a new index).
        status: &'a str,
        /// Whether DynamoDB is still copying existing items into the index.
        backfilling: bool,
        /// Items in the index so far, when reported.
        item_count: Option<i64>,
        /// Time spent waiting on this change.
        elapsed: Duration,
    },
    /// A change is done (the index is active, or gone).
    Finished {
        /// The change.
        action: &'a PlanAction,
        /// How long it took.
        elapsed: Duration,
    },
}

/// What [`TableMigration::send`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The plan it carried out (every action in it is done).
    pub plan: Plan,
    /// How long it took.
    pub elapsed: Duration,
}

/// What a wait is for.
enum Until<'a> {
    /// The table is `ACTIVE` (DynamoDB takes one index change at a time).
    TableActive,
    /// The index is `ACTIVE` and done backfilling.
    IndexActive(&'a str),
    /// The index no longer shows.
    IndexGone(&'a str),
}

/// The tag CloudFormation sets on every resource of a stack.
const STACK_TAG: &str = "aws:cloudformation:stack-name";

impl<T: Table> TableMigration<'_, T> {
    /// Plans, then makes every change: creates the table if missing, adds each missing global
    /// index with its own `UpdateTable` and waits until it is active, waits for indexes still
    /// building, and deletes undeclared indexes only when `delete_unused` is set.
    ///
    /// Refuses to start ([`MigrationError::Blocked`]) when the plan has blockers, and
    /// ([`MigrationError::StackManaged`]) when a CloudFormation stack manages the table
    /// (its `aws:cloudformation:stack-name` tag), unless [`force`](Self::force)d. Safe to run
    /// again after a timeout or a crash: the next plan waits for what is still building.
    pub async fn send(mut self) -> Result<Applied, Error> {
        let started = Instant::now();
        let plan = self.plan().await?;
        if plan.is_blocked() {
            return Err(MigrationError::Blocked {
                table: plan.table.clone(),
                problems: plan.blockers.iter().map(ToString::to_string).collect(),
            }
            .into());
        }
        let creates =
            (plan.actions.iter()).any(|action| matches!(action, PlanAction::CreateTable { .. }));
        let changes_table = plan.actions.iter().any(PlanAction::changes_table);
        if changes_table && !creates && !self.options.force {
            self.refuse_a_stack_managed_table().await?;
        }
        self.emit(&ApplyEvent::Planned(&plan));
        for action in &plan.actions {
            let action_started = Instant::now();
            self.emit(&ApplyEvent::Started(action));
            match action {
                PlanAction::CreateTable { .. } => {
                    self.db.admin().ensure_table().await?;
                }
                PlanAction::CreateIndex(change) => {
                    self.wait(Until::TableActive).await?;
                    self.create_index(change).await?;
                    self.wait(Until::IndexActive(change.index.name)).await?;
                }
                PlanAction::AwaitIndex { index, .. } => {
                    self.wait(Until::IndexActive(index)).await?;
                }
                PlanAction::DeleteIndex { index } => {
                    self.wait(Until::TableActive).await?;
                    let delete = DeleteGlobalSecondaryIndexAction::builder()
                        .index_name(index)
                        .build()?;
                    let update = TableChange::Index {
                        definitions: None,
                        update: Box::new(
                            GlobalSecondaryIndexUpdate::builder().delete(delete).build(),
                        ),
                    };
                    self.change(update, |live| {
                        live.global_index(index)
                            .is_none_or(|index| index.status.as_deref() == Some("DELETING"))
                    })
                    .await?;
                    self.wait(Until::IndexGone(index)).await?;
                }
                PlanAction::EnableTtl { attribute } => {
                    self.db.enable_ttl(attribute).await?;
                }
                PlanAction::EnableStream { view } => {
                    self.wait(Until::TableActive).await?;
                    let update =
                        TableChange::Stream(crate::op::table::stream_specification(*view)?);
                    self.change(update, |live| live.stream.as_deref() == Some(view.as_str()))
                        .await?;
                    self.wait(Until::TableActive).await?;
                }
                PlanAction::RecordKeys { entity, .. } => self.record_keys(entity).await?,
            }
            self.emit(&ApplyEvent::Finished {
                action,
                elapsed: action_started.elapsed(),
            });
        }
        Ok(Applied {
            plan,
            elapsed: started.elapsed(),
        })
    }

    /// Records the keys of the given entity named `entity`; refuses, as a blocked plan, when
    /// another apply recorded other keys for its version since the plan read them.
    async fn record_keys(&self, entity: &str) -> Result<(), Error> {
        let Some(&schema) = self.entities.iter().find(|schema| schema.name == entity) else {
            return Ok(());
        };
        let Some(blocker) = super::plan::record_keys(self.db, schema).await? else {
            return Ok(());
        };
        Err(MigrationError::Blocked {
            table: self.db.table_name().to_owned(),
            problems: vec![blocker.to_string()],
        }
        .into())
    }

    fn emit(&mut self, event: &ApplyEvent<'_>) {
        if let Some(progress) = &mut self.progress {
            progress(event);
        }
    }

    /// [`MigrationError::StackManaged`] when the table carries CloudFormation's stack tag.
    async fn refuse_a_stack_managed_table(&self) -> Result<(), Error> {
        let described = self.db.describe_table().await?;
        let Some(arn) = described.table().and_then(|table| table.table_arn()) else {
            return Ok(());
        };
        let tags = self.db.table_tags(arn).await?;
        match tags.into_iter().find(|(key, _)| key == STACK_TAG) {
            Some((_, stack)) => Err(MigrationError::StackManaged {
                table: self.db.table_name().to_owned(),
                stack,
            }
            .into()),
            None => Ok(()),
        }
    }

    async fn describe(&self) -> Result<LiveTable, Error> {
        LiveTable::of_db(self.db).await?.ok_or_else(|| {
            MigrationError::TableMissing {
                table: self.db.table_name().to_owned(),
            }
            .into()
        })
    }

    /// One `UpdateTable` that adds one index (DynamoDB allows one index creation per call).
    async fn create_index(&self, change: &IndexChange) -> Result<(), Error> {
        let live = self.describe().await?;
        let index = change.index;
        let mut action = CreateGlobalSecondaryIndexAction::builder()
            .index_name(index.name)
            .set_key_schema(Some(crate::op::table::key_schema(
                &crate::op::table::index_keys(index),
            )?))
            .projection(crate::op::table::projection(index));
        if let Some((read, write)) = live.provisioned {
            // A provisioned table's indexes need their own capacity: the table's is the only
            // figure known to fit its traffic.
            action = action.provisioned_throughput(
                ProvisionedThroughput::builder()
                    .read_capacity_units(read.max(1))
                    .write_capacity_units(write.max(1))
                    .build()?,
            );
        }
        // Every existing definition plus the new keys: DynamoDB needs only the new ones, but
        // some engines (moto) replace the whole list with what the request carries.
        let mut definitions: Vec<(String, ScalarAttributeType)> = live
            .attributes
            .iter()
            .map(|(name, kind)| (name.clone(), ScalarAttributeType::from(kind.as_str())))
            .collect();
        for key in index.key_attributes() {
            let (attribute, kind) = (key.name, key.kind);
            if !definitions.iter().any(|(name, _)| name == attribute) {
                definitions.push((attribute.to_owned(), ScalarAttributeType::from(kind.code())));
            }
        }
        let definitions = definitions
            .into_iter()
            .map(|(name, kind)| {
                AttributeDefinition::builder()
                    .attribute_name(name)
                    .attribute_type(kind)
                    .build()
            })
            .collect::<Result<Vec<_>, _>>()?;
        let update = TableChange::Index {
            definitions: Some(definitions),
            update: Box::new(
                GlobalSecondaryIndexUpdate::builder()
                    .create(action.build()?)
                    .build(),
            ),
        };
        self.change(update, |live| {
            live.global_index(index.name)
                .is_some_and(|index| index.status.as_deref() != Some("DELETING"))
        })
        .await
    }

    /// Sends `update`, again while throttled or lost, until it is answered or the table's
    /// description shows it `made` (see [`RetryPolicy::changing`](crate::RetryPolicy)).
    async fn change(
        &self,
        update: TableChange,
        made: impl Fn(&LiveTable) -> bool,
    ) -> Result<(), Error> {
        self.db
            .change_table(update, || async { Ok(made(&self.describe().await?)) })
            .await
    }

    /// Polls `DescribeTable` until `until` holds, reporting each poll; fails after the
    /// timeout.
    async fn wait(&mut self, until: Until<'_>) -> Result<(), Error> {
        let started = Instant::now();
        loop {
            let live = self.describe().await?;
            let pending: Option<(String, String, bool, Option<i64>)> = match until {
                Until::TableActive => (live.status != "ACTIVE")
                    .then(|| (live.name.clone(), live.status.clone(), false, None)),
                Until::IndexActive(name) => match live.global_index(name) {
                    // A new index can take a moment to show in the description.
                    None => Some((name.to_owned(), "NOT_VISIBLE".to_owned(), false, None)),
                    Some(index) if index.status.as_deref() == Some("DELETING") => {
                        return Err(Error::Wait {
                            table: live.name,
                            message: format!("index {name} is being deleted"),
                        });
                    }
                    Some(index) if index.is_active() && live.status == "ACTIVE" => None,
                    Some(index) => Some((
                        name.to_owned(),
                        index.status.clone().unwrap_or_else(|| "UNKNOWN".to_owned()),
                        index.backfilling,
                        index.item_count,
                    )),
                },
                Until::IndexGone(name) => live.global_index(name).map(|index| {
                    (
                        name.to_owned(),
                        index.status.clone().unwrap_or_else(|| "UNKNOWN".to_owned()),
                        false,
                        index.item_count,
                    )
                }),
            };
            let Some((resource, status, backfilling, item_count)) = pending else {
                return Ok(());
            };
            let elapsed = started.elapsed();
            self.emit(&ApplyEvent::Waiting {
                resource: &resource,
                status: &status,
                backfilling,
                item_count,
                elapsed,
            });
            if elapsed >= self.options.timeout {
                return Err(Error::Wait {
                    table: live.name,
                    message: format!(
                        "{resource} is still {status}{} after {}s; DynamoDB keeps building it: \
                         apply again to keep waiting",
                        if backfilling { " (backfilling)" } else { "" },
                        elapsed.as_secs()
                    ),
                });
            }
            tokio::time::sleep(self.options.poll_interval).await;
        }
    }
}
