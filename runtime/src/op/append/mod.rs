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
//! Both commit or neither does. The comparison is strict, so an equal value is stale. The
//! pointer keeps the value in the form [`AppendOrder`] gives it, whose DynamoDB order is the
//! value's own: a field type without one does not compile. Units and clocks are the writer's
//! responsibility: every writer must use the same ones.

mod order;

pub use order::AppendOrder;

use super::put::Put;
use super::transact::{TransactOp, WriteKind};
use crate::error::Error;
use crate::expr::condition::{Comparison, Node, Operand};
use crate::expr::field_role::FieldOf;
use crate::expr::update::{Action, SetValue};
use crate::expr::{AttrPath, Field};
use crate::item::{EncodeError, Item};
use crate::key::KeyText;
use crate::library::APPEND_POINTER;
use crate::op::query::{primary, PartitionKey};
use crate::retry::RetryPolicy;
use crate::schema::{Entity, HasSortKey, Table};
use crate::send::write::{Write, Written};
use crate::wire::Request;
use crate::Admin;
use crate::Db;
use aws_sdk_dynamodb::types::AttributeValue;
use futures::FutureExt;
use futures::StreamExt;
use serde::de::DeserializeOwned;
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
    /// (written before the pointer existed; see
    /// [`Admin::init_latest`](crate::Admin::init_latest)). Nothing was written.
    Duplicate,
}

impl<T: Table + HasSortKey> Db<T> {
    /// Appends `item` only if its `field` is newer than every value accepted so far in its
    /// partition; transaction conflicts and throttling are retried, a stale value never is.
    /// An entity with unique values does not compile here: the append's transaction would
    /// write the item without the sentinels of its values.
    ///
    /// The partition's pointer is kept at sort key `<Entity>#LATEST`. Where an entity's item
    /// holds that key (a sort key template such as `"Release#{label}"` with the label
    /// `LATEST`), the append fails with [`Error::AppendPointerTaken`], writing nothing: the
    /// pointer update holds only on the pointer or on no item.
    pub fn append<'db, E, V, F>(&'db self, item: &E, field: Field<E, V, F>) -> Append<'db, E, V>
    where
        E: Entity<Table = T> + crate::unique::NoUniqueValues,
        F: FieldOf<E>,
        V: AppendOrder + DeserializeOwned,
    {
        let value = field_value(item, field).map(|value| value.to_latest());
        Append {
            db: self,
            put: self.put(item).only_if_absent(),
            partition: item.primary_key().map(|key| key.partition().to_owned()),
            value,
            retry: self.retry_policy(),
            types: PhantomData,
        }
    }

    /// The partition's append pointer: the greatest value of `field` accepted so far by
    /// [`Db::append`] (or set by [`Admin::init_latest`](crate::Admin::init_latest)), read
    /// consistently and left as it is. `None` before the first guarded append.
    pub async fn latest<E, V, F>(
        &self,
        partition: PartitionKey<E, primary>,
        field: Field<E, V, F>,
    ) -> Result<Option<V>, Error>
    where
        E: Entity<Table = T>,
        V: AppendOrder,
    {
        let _ = field;
        self.read_latest::<E, V>(&partition_text(&partition)?).await
    }

    /// The pointer's value, read consistently, if there is a pointer.
    async fn read_latest<E: Entity<Table = T>, V: AppendOrder>(
        &self,
        partition: &str,
    ) -> Result<Option<V>, Error> {
        let key = pointer_key::<E>(partition);
        let traced = self.traced_key(|| crate::item::key_text::<T>(&key).to_string());
        let request = self.get_item_request(key, true);
        let output = self
            .send_get_item(request, APPEND_POINTER.description, traced, Ok)
            .boxed()
            .await?;
        output
            .item()
            .and_then(|item| item.get(LATEST_ATTRIBUTE))
            .map(|latest| decode_latest::<E, V>(partition, latest))
            .transpose()
    }
}

impl<'db, T: Table + HasSortKey> Admin<'db, T> {
    /// Creates or raises the pointer of one partition from its existing history (the
    /// migration for partitions written before appends were guarded): the greatest value of
    /// `field` in the partition, read consistently. Safe while writers run: the pointer only
    /// ever moves forward. Returns the pointer's value after the call (which may be a newer
    /// value another writer put there), if the partition has history or a pointer.
    pub async fn init_latest<E, V, F>(
        &self,
        partition: PartitionKey<E, primary>,
        field: Field<E, V, F>,
    ) -> Result<Option<V>, Error>
    where
        E: Entity<Table = T>,
        F: FieldOf<E>,
        V: AppendOrder + DeserializeOwned + Send + Sync + 'static,
    {
        let partition_value = partition_text(&partition)?;
        // The whole history: the greatest value need not be the last by sort key. The
        // history's constant sort key prefix keeps the pointer out.
        let history = self.db.query(partition).consistent().items();
        futures::pin_mut!(history);
        let mut greatest: Option<(V, String)> = None;
        while let Some(item) = history.next().await.transpose()? {
            let value = field_value(&item, field)?;
            if greatest.as_ref().is_none_or(|(best, _)| value > *best) {
                let key = item.primary_key()?;
                greatest = Some((value, key.sort().unwrap_or_default().to_owned()));
            }
        }
        let Some((value, sort_key)) = greatest else {
            return self.db.read_latest::<E, V>(&partition_value).await;
        };
        let (key, actions, condition) =
            pointer_change::<E>(&partition_value, value.to_latest(), &sort_key);
        // The same update as in an append's transaction, sent alone.
        let write = Write::update(APPEND_POINTER.description, key, actions).condition(&condition);
        match self.db.write(write).await? {
            Written::Applied { .. } => Ok(Some(value)),
            // The pointer is already at or past this history: its own value is the answer.
            Written::ConditionFailed { current, .. } => {
                if let Some(taken) = current.as_ref().and_then(taken::<E>) {
                    return Err(taken);
                }
                match current.as_ref().and_then(|item| item.get(LATEST_ATTRIBUTE)) {
                    Some(latest) => decode_latest::<E, V>(&partition_value, latest).map(Some),
                    None => self.db.read_latest::<E, V>(&partition_value).await,
                }
            }
        }
    }
}

/// The partition key's text (appends guard partitions of string keys).
fn partition_text<E: Entity>(partition: &PartitionKey<E, primary>) -> Result<String, Error> {
    match partition.value()? {
        AttributeValue::S(value) => Ok(value.clone()),
        other => Err(Error::Encode {
            entity: E::SCHEMA.name,
            message: format!("the partition key {other:?} is not a string"),
        }),
    }
}

/// The value of `field` in `item`, as its Rust type.
fn field_value<E: Entity, V: DeserializeOwned, F: FieldOf<E>>(
    item: &E,
    field: Field<E, V, F>,
) -> Result<V, EncodeError> {
    let encode_error = |message: String| EncodeError::Serialize {
        entity: E::SCHEMA.name,
        message,
    };
    let mut attributes: Item =
        serde_dynamo::to_item(item).map_err(|error| encode_error(error.to_string()))?;
    let value = attributes
        .remove(field.attribute())
        .ok_or_else(|| encode_error(format!("`{}` has no value to compare", field.name())))?;
    serde_dynamo::from_attribute_value(value).map_err(|error| encode_error(error.to_string()))
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

/// The pointer's sort key, `<entity>#LATEST`.
fn pointer_sort<E: Entity>() -> String {
    APPEND_POINTER.sort_key(E::SCHEMA.name)
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
        key.insert(sort.to_owned(), AttributeValue::S(pointer_sort::<E>()));
    }
    key
}

/// The pointer update of an append's transaction.
fn pointer_op<E: Entity>(
    table_name: &str,
    partition: &str,
    value: AttributeValue,
    sort_key: &str,
) -> TransactOp {
    let table = <E::Table as Table>::SCHEMA;
    let (key, actions, condition) = pointer_change::<E>(partition, value, sort_key);
    let key_text = KeyText {
        partition: (table.partition_key, partition.to_owned()),
        sort: table.sort_key.map(|name| (name, pointer_sort::<E>())),
    };
    let mut estimate = crate::cost::Estimate::default();
    estimate.write(1.0, "latest pointer update");
    TransactOp::of(
        WriteKind::Update,
        E::SCHEMA.name,
        table_name,
        (key.clone(), key_text),
        Write::update(APPEND_POINTER.description, key, actions).condition(&condition),
        estimate,
    )
}

/// The pointer update's key, actions and condition: move `latest` forward to `value`, never
/// back, and only on the pointer or on no item: an entity's item that holds the pointer's key
/// (a sort key template that renders `<Entity>#LATEST`) is never rewritten into a pointer.
fn pointer_change<E: Entity>(
    partition: &str,
    value: AttributeValue,
    sort_key: &str,
) -> (Item, Vec<Action>, Node) {
    let table = <E::Table as Table>::SCHEMA;
    let latest = || AttrPath::attribute(LATEST_ATTRIBUTE);
    let actions = vec![
        Action::Set(latest(), SetValue::Value(value.clone())),
        Action::Set(
            AttrPath::attribute(LATEST_KEY_ATTRIBUTE),
            SetValue::Value(AttributeValue::S(sort_key.to_owned())),
        ),
        Action::Set(
            AttrPath::attribute(table.entity_attribute),
            SetValue::Value(APPEND_POINTER.entity_attribute(E::SCHEMA.name)),
        ),
    ];
    let entity = || AttrPath::attribute(table.entity_attribute);
    let newer = Node::Or(
        Box::new(Node::NotExists(latest())),
        Box::new(Node::Compare(
            Operand::Path(latest()),
            Comparison::Lt,
            Operand::Value(value),
        )),
    );
    let pointer_or_none = Node::Or(
        Box::new(Node::NotExists(entity())),
        Box::new(Node::Compare(
            Operand::Path(entity()),
            Comparison::Eq,
            Operand::Value(APPEND_POINTER.entity_attribute(E::SCHEMA.name)),
        )),
    );
    let condition = Node::And(Box::new(newer), Box::new(pointer_or_none));
    (pointer_key::<E>(partition), actions, condition)
}

/// [`Error::AppendPointerTaken`] when `item`, found at the pointer's key, is another
/// entity's item. An item without the entity attribute is taken for a pointer, as the
/// pointer update's condition takes it (a pointer written by another tool).
fn taken<E: Entity>(item: &Item) -> Option<Error> {
    let entity_attribute = <E::Table as Table>::SCHEMA.entity_attribute;
    let holder = item.get(entity_attribute)?.as_s().ok()?;
    (*holder != APPEND_POINTER.entity_value(E::SCHEMA.name)).then(|| Error::AppendPointerTaken {
        entity: E::SCHEMA.name,
        key: crate::item::key_text::<E::Table>(item),
        holder: holder.clone(),
    })
}

/// Reads the pointer's `latest` as the field's type; a pointer some other writer left in
/// another form is a decode error naming the pointer.
fn decode_latest<E: Entity, V: AppendOrder>(
    partition: &str,
    value: &AttributeValue,
) -> Result<V, Error> {
    V::from_latest(value).ok_or_else(|| {
        Error::Decode(crate::DecodeError::Attribute {
            entity: E::SCHEMA.name,
            key: crate::item::key_text::<E::Table>(&pointer_key::<E>(partition)),
            attribute: LATEST_ATTRIBUTE.to_owned(),
            message: format!(
                "{value:?} is not the pointer's form of a `{}`",
                std::any::type_name::<V>()
            ),
        })
    })
}

impl<E: Entity, V: AppendOrder> Append<'_, E, V> {
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
        if let Some(pointer) = cancelled.failed_condition(0) {
            let Some(item) = pointer.item.as_ref() else {
                return Err(Error::TransactionCanceled(cancelled));
            };
            if let Some(taken) = taken::<E>(item) {
                return Err(taken);
            }
            let latest = item
                .get(LATEST_ATTRIBUTE)
                .ok_or_else(|| Error::TransactionCanceled(cancelled.clone()))?;
            return Ok(Appended::Stale {
                latest: decode_latest::<E, V>(pointer.key.partition.1.as_str(), latest)?,
            });
        }
        if cancelled.failed_condition(1).is_some() {
            return Ok(Appended::Duplicate);
        }
        Err(Error::TransactionCanceled(cancelled))
    }
}
