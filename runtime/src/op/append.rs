//! Seed 002: insert a history item only if its sort value is newer than every one already
//! accepted for its partition.
//!
//! A single conditional put cannot see the other items of its partition, so each partition
//! keeps a latest-pointer item (same partition key, sort key `<Entity>#LATEST`). An append is
//! one transaction of two operations:
//!
//! 1. update the pointer: `attribute_not_exists(latest) OR latest < :value`, set `latest`;
//! 2. put the history item: `attribute_not_exists(PK)`.
//!
//! Both commit or neither does. The comparison is strict, so an equal value is stale. Values
//! compare as DynamoDB compares the attribute: numbers numerically, strings by their UTF-8
//! bytes (RFC 3339 UTC timestamps of fixed precision sort correctly). Units and clocks are
//! the writer's responsibility: every writer must use the same ones.

use super::put::Put;
use super::transact::{CancellationCode, TransactOp, WriteKind};
use crate::error::{EncodeError, Error, KeyText};
use crate::expr::condition::{Comparison, Node, Operand};
use crate::expr::update::{self, Action, SetValue};
use crate::expr::{AttrPath, Field, Placeholders};
use crate::item::Item;
use crate::op::query::{primary, PartitionKey};
use crate::retry::RetryPolicy;
use crate::schema::{Entity, HasSortKey, Table};
use crate::wire::Request;
use crate::Db;
use aws_sdk_dynamodb::types::AttributeValue;
use futures::FutureExt;
use futures::StreamExt;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::marker::PhantomData;

/// The pointer's attribute holding the latest accepted value.
pub const LATEST_ATTRIBUTE: &str = "latest";
/// The pointer's attribute holding the latest accepted item's sort key.
pub const LATEST_KEY_ATTRIBUTE: &str = "latest_key";

/// The outcome of a guarded append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Appended<T> {
    /// The item was stored and is now the partition's latest.
    Accepted,
    /// The partition already accepted a value at least as new; nothing was written. Never
    /// retried: retrying cannot make an old value newer.
    Stale {
        /// The partition's latest value.
        latest: T,
    },
    /// The pointer is older (or missing) but an item with this exact key already exists
    /// (written before the pointer existed; see [`Db::init_latest`]). Nothing was written.
    Duplicate,
}

impl<T: Table + HasSortKey> Db<T> {
    /// Appends `item` only if its `field` is newer than every value accepted so far in its
    /// partition; transaction conflicts and throttling are retried, a stale value never is.
    pub fn append<'db, E, V, const F: usize>(
        &'db self,
        item: &E,
        field: Field<E, V, F>,
    ) -> Append<'db, E, V>
    where
        E: Entity<Table = T>,
        V: Serialize + DeserializeOwned,
    {
        let value =
            match serde_dynamo::to_item::<_, Item>(item) {
                Ok(attributes) => attributes.get(field.attribute()).cloned().ok_or_else(|| {
                    EncodeError::Serialize {
                        entity: E::SCHEMA.name,
                        message: format!("`{}` has no value to compare", field.name()),
                    }
                }),
                Err(error) => Err(EncodeError::Serialize {
                    entity: E::SCHEMA.name,
                    message: error.to_string(),
                }),
            };
        Append {
            db: self,
            put: self.put(item).only_if_absent(),
            partition: item.primary_key().map(|key| key.partition().to_owned()),
            value,
            retry: RetryPolicy::default(),
            types: PhantomData,
        }
    }

    /// Creates or raises the pointer of one partition from its existing history (the
    /// migration for partitions written before appends were guarded). Safe while writers
    /// run: the pointer only ever moves forward. Returns the pointer's value, if the
    /// partition has history.
    pub async fn init_latest<E, V, const F: usize>(
        &self,
        partition: PartitionKey<E, primary>,
        field: Field<E, V, F>,
    ) -> Result<Option<V>, Error>
    where
        E: Entity<Table = T>,
        V: Serialize + DeserializeOwned + Send + Sync + 'static,
    {
        let partition_value = match partition.value() {
            Ok(AttributeValue::S(value)) => value.clone(),
            Ok(other) => {
                return Err(Error::Encode {
                    entity: E::SCHEMA.name,
                    message: format!("the partition key {other:?} is not a string"),
                })
            }
            Err(error) => return Err(error.clone().into()),
        };
        // Newest first; the history's constant sort key prefix keeps the pointer out.
        let newest = self.query(partition).descending().limit(25).items();
        futures::pin_mut!(newest);
        let Some(newest) = newest.next().await.transpose()? else {
            return Ok(None);
        };
        let attributes: Item = serde_dynamo::to_item(&newest).map_err(|error| Error::Encode {
            entity: E::SCHEMA.name,
            message: error.to_string(),
        })?;
        let Some(value) = attributes.get(field.attribute()).cloned() else {
            return Ok(None);
        };
        let key = newest.primary_key()?;
        let pointer = pointer_op::<E>(
            self.table_name(),
            &partition_value,
            value.clone(),
            key.sort().unwrap_or_default(),
        );
        let mut request = self
            .client()
            .update_item()
            .table_name(self.table_name())
            .set_key(Some(pointer.key))
            .set_update_expression(pointer.update)
            .set_condition_expression(pointer.condition)
            .set_expression_attribute_names(pointer.placeholders.names())
            .set_expression_attribute_values(pointer.placeholders.values());
        request = request.return_values(aws_sdk_dynamodb::types::ReturnValue::AllNew);
        let latest = match request.send().boxed().await {
            Ok(output) => output
                .attributes
                .and_then(|item| item.get(LATEST_ATTRIBUTE).cloned()),
            // Someone already moved the pointer past this history: it is initialised.
            Err(error)
                if error
                    .as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Some(value)
            }
            Err(error) => return Err(error.into()),
        };
        latest
            .map(|value| decode_value::<E, V>(&partition_value, value))
            .transpose()
    }
}

/// A guarded append; see [`Db::append`].
#[must_use = "an operation does nothing until it is sent"]
pub struct Append<'db, E: Entity, V> {
    db: &'db Db<E::Table>,
    put: Put<'db, E>,
    partition: Result<String, crate::KeyError>,
    value: Result<AttributeValue, EncodeError>,
    retry: RetryPolicy,
    types: PhantomData<fn() -> V>,
}

/// The pointer's key: the partition and `<Entity>#LATEST`.
fn pointer_key<E: Entity>(partition: &str) -> Item {
    let table = <E::Table as Table>::SCHEMA;
    let mut key = Item::new();
    key.insert(
        table.partition_key.to_owned(),
        AttributeValue::S(partition.to_owned()),
    );
    if let Some(sort) = table.sort_key {
        key.insert(
            sort.to_owned(),
            AttributeValue::S(format!("{}#LATEST", E::SCHEMA.name)),
        );
    }
    key
}

/// The pointer update: move `latest` forward to `value`, never back.
fn pointer_op<E: Entity>(
    table_name: &str,
    partition: &str,
    value: AttributeValue,
    sort_key: &str,
) -> TransactOp {
    let table = <E::Table as Table>::SCHEMA;
    let key = pointer_key::<E>(partition);
    let latest = || AttrPath::attribute(LATEST_ATTRIBUTE);
    let mut placeholders = Placeholders::default();
    let actions = [
        Action::Set(latest(), SetValue::Value(value.clone())),
        Action::Set(
            AttrPath::attribute(LATEST_KEY_ATTRIBUTE),
            SetValue::Value(AttributeValue::S(sort_key.to_owned())),
        ),
        Action::Set(
            AttrPath::attribute(table.entity_attribute),
            SetValue::Value(AttributeValue::S(format!("{}#latest", E::SCHEMA.name))),
        ),
    ];
    let update = update::render(actions.into(), &mut placeholders);
    let condition = Node::Or(
        Box::new(Node::NotExists(latest())),
        Box::new(Node::Compare(
            Operand::Path(latest()),
            Comparison::Lt,
            Operand::Value(value),
        )),
    )
    .to_expression(&mut placeholders);
    TransactOp {
        kind: WriteKind::Update,
        entity: E::SCHEMA.name,
        table_name: table_name.to_owned(),
        key_text: KeyText {
            partition: (table.partition_key, partition.to_owned()),
            sort: table
                .sort_key
                .map(|name| (name, format!("{}#LATEST", E::SCHEMA.name))),
        },
        key,
        item: None,
        update: Some(update),
        condition: Some(condition),
        placeholders,
        estimate: {
            let mut estimate = crate::cost::Estimate::default();
            estimate.write(1.0, "latest pointer update");
            estimate
        },
    }
}

/// Reads the pointer's `latest` as the field's type; a pointer some other writer left in
/// another type is a decode error naming the pointer.
fn decode_value<E: Entity, V: DeserializeOwned>(
    partition: &str,
    value: AttributeValue,
) -> Result<V, Error> {
    serde_dynamo::from_attribute_value(value).map_err(|error| {
        Error::Decode(crate::DecodeError::Attribute {
            entity: E::SCHEMA.name,
            key: crate::item::key_text::<E::Table>(&pointer_key::<E>(partition)),
            attribute: LATEST_ATTRIBUTE.to_owned(),
            message: error.to_string(),
        })
    })
}

impl<E: Entity, V: DeserializeOwned> Append<'_, E, V> {
    /// How transaction conflicts and throttling are retried.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    fn ops(&self) -> Result<[TransactOp; 2], Error> {
        let partition = self.partition.clone()?;
        let value = self.value.clone()?;
        let history = self.put.transact_op()?;
        let table = <E::Table as Table>::SCHEMA;
        let sort_key = table
            .sort_key
            .and_then(|name| history.key.get(name))
            .and_then(|value| value.as_s().ok())
            .cloned()
            .unwrap_or_default();
        Ok([
            pointer_op::<E>(self.db.table_name(), &partition, value, &sort_key),
            history,
        ])
    }

    /// The `TransactWriteItems` request this sends.
    pub fn params(&self) -> Result<Request, Error> {
        let [pointer, history] = self.ops()?;
        self.db.transaction().push(pointer).push(history).params()
    }

    /// The request and its estimated capacity (see [`crate::cost`]).
    pub fn explain(&self) -> Result<crate::cost::Explain, Error> {
        let [pointer, history] = self.ops()?;
        self.db.transaction().push(pointer).push(history).explain()
    }

    /// Sends the transaction.
    pub async fn send(self) -> Result<Appended<V>, Error> {
        let [pointer, history] = self.ops()?;
        let result = self
            .db
            .transaction()
            .push(pointer)
            .push(history)
            .retry(self.retry)
            .send()
            .boxed()
            .await;
        let cancelled = match result {
            Ok(()) => return Ok(Appended::Accepted),
            Err(Error::TransactionCanceled(cancelled)) => cancelled,
            Err(error) => return Err(error),
        };
        let failed = |position: usize| {
            cancelled
                .reasons
                .get(position)
                .filter(|reason| reason.code == CancellationCode::ConditionalCheckFailed)
        };
        if let Some(pointer) = failed(0) {
            let latest = pointer
                .item
                .as_ref()
                .and_then(|item| item.get(LATEST_ATTRIBUTE))
                .cloned()
                .ok_or_else(|| Error::TransactionCanceled(cancelled.clone()))?;
            return Ok(Appended::Stale {
                latest: decode_value::<E, V>(pointer.key.partition.1.as_str(), latest)?,
            });
        }
        if failed(1).is_some() {
            return Ok(Appended::Duplicate);
        }
        Err(Error::TransactionCanceled(cancelled))
    }
}
