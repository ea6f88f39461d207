//! `UpdateItem` with index maintenance: an update that changes an input of an index key also
//! rewrites (or, for a sparse index whose rule now fails, removes) that index's key attributes
//! in the same request, so the index never goes stale.

use super::{condition_failure, Expectations, SetSome};
use crate::cost::{write_units, ASSUMED_ITEM_BYTES};
use crate::error::{EncodeError, Error, UpdateError};
use crate::expr::condition::{user_node, walk_and_operand, Node};
use crate::expr::field::Nested;
use crate::expr::field::{
    into_value, to_value, Addable, Container, ListType, Optional, SetType, Updatable,
};
use crate::expr::state::{Changed, Given, Relative, Touch, UpdateComplete};
use crate::expr::update::{self, Action, SetValue};
use crate::expr::{AttrPath, Condition, Expression, Field, Name, Placeholders, Sink};
use crate::key::{KeyError, PartContext};
use crate::schema::{
    index_bit, same_name, AnyValue, Entity, EntityIndex, FieldIndexes, IndexKind, IndexRule, Table,
};
use crate::trace::Operation;
use crate::wire::{describe, Request};
use crate::{Db, Key};
use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue, ReturnValuesOnConditionCheckFailure};
use futures::future::Either;
use futures::FutureExt;
use serde::Serialize;
use std::any::Any;
use std::future::Future;
use std::marker::PhantomData;

impl<T: Table> Db<T> {
    /// Updates the existing item with this key; a missing item is [`Error::NotFound`] (an
    /// `UpdateItem` on a missing key would otherwise create a partial item).
    ///
    /// Changing a field that feeds an index key also rewrites that key; the update must then
    /// know every other input of that index (set it, or supply its current value with
    /// [`Update::given`]), or it does not compile.
    pub fn update<E: Entity<Table = T>>(&self, key: Key<E>) -> Update<'_, E> {
        Update {
            parts: Parts {
                db: self,
                key,
                actions: Vec::new(),
                known: Vec::new(),
                relative: Vec::new(),
                changed: 0,
                condition: None,
                expected_version: None,
                error: None,
            },
            state: PhantomData,
        }
    }
}

/// A field value the update knows: what it sets, or what the caller says is current.
struct Known {
    field: &'static str,
    value: AnyValue,
    /// For a current value ([`Update::given`]): the attribute and value the condition
    /// asserts.
    current: Option<(AttrPath, AttributeValue)>,
}

/// An `UpdateItem` of one entity; see [`Db::update`]. `S` tracks, at the type level, which
/// index inputs the update changes or knows.
#[must_use = "an operation does nothing until it is sent"]
pub struct Update<'db, E: Entity, S = <E as Entity>::UpdateState> {
    parts: Parts<'db, E>,
    state: PhantomData<fn() -> S>,
}

/// A field changed relative to its current value (by `ADD`, an increment, an append, ...).
struct RelativeChange {
    field: &'static str,
    /// The operation's name, for messages.
    operation: &'static str,
    /// The indexes the field is an input of ([`FieldIndexes`]).
    indexes: u64,
}

struct Parts<'db, E: Entity> {
    db: &'db Db<E::Table>,
    key: Key<E>,
    actions: Vec<Action>,
    /// Fields set to known values, and current values supplied by the caller.
    known: Vec<Known>,
    /// Fields changed relative to their current value.
    relative: Vec<RelativeChange>,
    /// The indexes whose inputs the update changes (given values are current, not changed),
    /// as [`FieldIndexes`] bits: each one's keys are rewritten.
    changed: u64,
    condition: Option<Condition<E>>,
    expected_version: Option<u64>,
    error: Option<EncodeError>,
}

struct Prepared {
    update: String,
    condition: String,
    placeholders: Placeholders,
    estimate: crate::cost::Estimate,
}

impl<'db, E: Entity, S> Update<'db, E, S> {
    /// Applies `change` and moves to the state of an operation `M` on field `F`.
    fn then<M, const F: usize>(
        mut self,
        change: impl FnOnce(&mut Parts<'db, E>),
    ) -> Update<'db, E, S::Out>
    where
        S: Touch<F, M>,
    {
        change(&mut self.parts);
        Update {
            parts: self.parts,
            state: PhantomData,
        }
    }

    /// `SET field = value`. Key fields cannot be set (a compile error that explains why).
    pub fn set<T, const F: usize>(
        self,
        field: Field<E, T, F>,
        value: T,
    ) -> Update<'db, E, <S as Touch<F, Changed>>::Out>
    where
        E: Updatable<F, T>,
        S: Touch<F, Changed>,
        T: Serialize + Send + Sync + 'static,
    {
        self.then::<Changed, F>(|parts| {
            let indexes = FieldIndexes::<E, F>::MASK;
            // A value an index key is made from is kept to recompute the key; any other
            // moves into the request.
            let encoded = if indexes == 0 {
                parts.encode_owned(value)
            } else {
                let encoded = parts.encode(&value);
                if encoded.is_some() {
                    parts.know(field.name(), indexes, value);
                }
                encoded
            };
            if let Some(encoded) = encoded {
                parts
                    .actions
                    .push(Action::Set(field.path(), SetValue::Value(encoded)));
            }
        })
    }

    /// `REMOVE field`, for optional fields only.
    pub fn remove<T, const F: usize>(
        self,
        field: Field<E, T, F>,
    ) -> Update<'db, E, <S as Touch<F, Changed>>::Out>
    where
        E: Updatable<F, T>,
        S: Touch<F, Changed>,
        T: Optional + Send + Sync + 'static,
    {
        self.then::<Changed, F>(|parts| {
            parts.actions.push(Action::Remove(field.path()));
            parts.know(field.name(), FieldIndexes::<E, F>::MASK, T::none());
        })
    }

    fn relative<T: Serialize, const F: usize>(
        self,
        field: Field<E, T, F>,
        value: &T,
        operation: &'static str,
        action: impl FnOnce(AttrPath, AttributeValue) -> Action,
    ) -> Update<'db, E, <S as Touch<F, Relative>>::Out>
    where
        S: Touch<F, Relative>,
    {
        self.then::<Relative, F>(|parts| {
            if let Some(encoded) = parts.encode(value) {
                parts.actions.push(action(field.path(), encoded));
                parts.change_relative(field.name(), operation, FieldIndexes::<E, F>::MASK);
            }
        })
    }

    /// `SET path = value` on a list element or map entry (`Ticket::TAGS.at(0)`,
    /// `Ticket::LABELS.key("team")`). Such values never feed an index key (index inputs are
    /// scalars), so the state only records the field as changed by an unknown amount.
    pub fn set_nested<Top, T, const F: usize>(
        self,
        path: Nested<E, Top, T, F>,
        value: T,
    ) -> Update<'db, E, <S as Touch<F, Relative>>::Out>
    where
        E: Updatable<F, Top>,
        S: Touch<F, Relative>,
        T: Serialize,
    {
        self.then::<Relative, F>(|parts| {
            if let Some(encoded) = parts.encode(&value) {
                parts
                    .actions
                    .push(Action::Set(path.path(), SetValue::Value(encoded)));
                parts.change_relative(path.name(), "set_nested", FieldIndexes::<E, F>::MASK);
            }
        })
    }

    /// `REMOVE path` of a list element or map entry.
    pub fn remove_nested<Top, T, const F: usize>(
        self,
        path: Nested<E, Top, T, F>,
    ) -> Update<'db, E, <S as Touch<F, Relative>>::Out>
    where
        E: Updatable<F, Top>,
        S: Touch<F, Relative>,
    {
        self.then::<Relative, F>(|parts| {
            parts.actions.push(Action::Remove(path.path()));
            parts.change_relative(path.name(), "remove_nested", FieldIndexes::<E, F>::MASK);
        })
    }

    /// `SET field = if_not_exists(field, value)`.
    pub fn set_if_not_exists<T, const F: usize>(
        self,
        field: Field<E, T, F>,
        value: T,
    ) -> Update<'db, E, <S as Touch<F, Relative>>::Out>
    where
        E: Updatable<F, T>,
        S: Touch<F, Relative>,
        T: Serialize,
    {
        self.relative(field, &value, "set_if_not_exists", |path, value| {
            Action::Set(path, SetValue::IfNotExists(value))
        })
    }

    /// `ADD field value`: adds to a number or inserts into a set.
    pub fn add<T, const F: usize>(
        self,
        field: Field<E, T, F>,
        value: T,
    ) -> Update<'db, E, <S as Touch<F, Relative>>::Out>
    where
        E: Updatable<F, T>,
        S: Touch<F, Relative>,
        T: Addable + Serialize,
    {
        self.relative(field, &value, "ADD", |path, value| {
            Action::Add(path, as_set(value))
        })
    }

    /// `SET field = field + by` (fails if the attribute is missing; see [`Update::add`]).
    pub fn increment<T, const F: usize>(
        self,
        field: Field<E, T, F>,
        by: T,
    ) -> Update<'db, E, <S as Touch<F, Relative>>::Out>
    where
        E: Updatable<F, T>,
        S: Touch<F, Relative>,
        T: Addable + Serialize,
    {
        self.relative(field, &by, "increment", |path, value| {
            Action::Set(path, SetValue::Plus(value))
        })
    }

    /// `SET field = field - by`.
    pub fn decrement<T, const F: usize>(
        self,
        field: Field<E, T, F>,
        by: T,
    ) -> Update<'db, E, <S as Touch<F, Relative>>::Out>
    where
        E: Updatable<F, T>,
        S: Touch<F, Relative>,
        T: Addable + Serialize,
    {
        self.relative(field, &by, "decrement", |path, value| {
            Action::Set(path, SetValue::Minus(value))
        })
    }

    /// `DELETE field elements`: removes elements from a set.
    pub fn delete_elements<T, const F: usize>(
        self,
        field: Field<E, T, F>,
        elements: T,
    ) -> Update<'db, E, <S as Touch<F, Relative>>::Out>
    where
        E: Updatable<F, T>,
        S: Touch<F, Relative>,
        T: SetType + Serialize,
    {
        self.relative(field, &elements, "DELETE", |path, value| {
            Action::Delete(path, as_set(value))
        })
    }

    /// `SET field = list_append(field, items)`.
    pub fn append<T, const F: usize>(
        self,
        field: Field<E, T, F>,
        items: T,
    ) -> Update<'db, E, <S as Touch<F, Relative>>::Out>
    where
        E: Updatable<F, T>,
        S: Touch<F, Relative>,
        T: ListType + Serialize,
    {
        self.relative(field, &items, "append", |path, value| {
            Action::Set(path, SetValue::Append(value))
        })
    }

    /// `SET field = list_append(items, field)`.
    pub fn prepend<T, const F: usize>(
        self,
        field: Field<E, T, F>,
        items: T,
    ) -> Update<'db, E, <S as Touch<F, Relative>>::Out>
    where
        E: Updatable<F, T>,
        S: Touch<F, Relative>,
        T: ListType + Container + Serialize,
    {
        self.relative(field, &items, "prepend", |path, value| {
            Action::Set(path, SetValue::Prepend(value))
        })
    }

    /// Supplies the current value of a field the update does not change but an index key
    /// needs. The request asserts it (`field = value`), so a caller with stale data gets
    /// [`Error::ConditionFailed`] instead of writing a wrong index key.
    pub fn given<T, const F: usize>(
        self,
        field: Field<E, T, F>,
        current: T,
    ) -> Update<'db, E, <S as Touch<F, Given>>::Out>
    where
        S: Touch<F, Given>,
        T: Serialize + Send + Sync + 'static,
    {
        self.then::<Given, F>(|parts| {
            if let Some(encoded) = parts.encode(&current) {
                parts.known.push(Known {
                    field: field.name(),
                    value: Box::new(current),
                    current: Some((field.path(), encoded)),
                });
            }
        })
    }

    /// Optimistic locking: updates only if the item is still at `version` (the version it
    /// was read at); otherwise [`Error::VersionConflict`]. Every update increments the version
    /// whether or not this is given.
    pub fn expect_version(mut self, version: u64) -> Self
    where
        E: crate::schema::Versioned,
    {
        self.parts.expected_version = Some(version);
        self
    }

    /// Updates only if `condition` also holds.
    pub fn condition(mut self, condition: Condition<E>) -> Self {
        Condition::and_to(&mut self.parts.condition, condition);
        self
    }
}

impl<'db, E: Entity, S> Update<'db, E, S> {
    /// The request this operation sends.
    pub fn params(&self) -> Result<Request, Error>
    where
        S: UpdateComplete,
    {
        self.parts.params()
    }

    pub(crate) fn transact_op(&self) -> Result<super::transact::TransactOp, Error>
    where
        S: UpdateComplete,
    {
        let parts = &self.parts;
        let mut prepared = parts.prepare()?;
        let estimate = std::mem::take(&mut prepared.estimate);
        let request = parts.builder(prepared, ReturnValue::AllNew);
        Ok(super::transact::TransactOp {
            kind: super::transact::WriteKind::Update,
            entity: E::SCHEMA.name,
            key: parts.key.to_attributes(),
            key_text: parts.key.text(),
            write: super::transact::write::update(request.as_input())?,
            estimate,
        })
    }

    /// The request and its estimated capacity (see [`crate::cost`]).
    pub fn explain(&self) -> Result<crate::cost::Explain, Error>
    where
        S: UpdateComplete,
    {
        Ok(crate::cost::Explain {
            request: self.parts.params()?,
            estimate: self.parts.prepare()?.estimate,
        })
    }

    /// Sends the request; returns the item as it is after the update (`ALL_NEW`).
    #[inline(always)]
    pub fn send(self) -> impl Future<Output = Result<E, Error>> + 'db
    where
        S: UpdateComplete,
    {
        self.parts.send(ReturnValue::AllNew, Sent::decode)
    }

    /// Sends the request; returns the item as it was before the update (`ALL_OLD`).
    #[inline(always)]
    pub fn send_returning_old(self) -> impl Future<Output = Result<E, Error>> + 'db
    where
        S: UpdateComplete,
    {
        self.parts.send(ReturnValue::AllOld, Sent::decode)
    }

    /// Sends the request; returns only the attributes it changed, as they are now
    /// (`UPDATED_NEW`), or were before (`old = true`, `UPDATED_OLD`): a partial item, so raw.
    #[inline(always)]
    pub fn send_returning_updated(
        self,
        old: bool,
    ) -> impl Future<Output = Result<crate::Item, Error>> + 'db
    where
        S: UpdateComplete,
    {
        let returning = if old {
            ReturnValue::UpdatedOld
        } else {
            ReturnValue::UpdatedNew
        };
        self.parts.send(returning, |_, item| Ok(item))
    }
}

impl<'db, E: Entity> Parts<'db, E> {
    /// Keeps the new value of `field` if an index key is made from it (`indexes` is not
    /// empty): it is needed again to recompute the key; other values are already encoded in
    /// the actions.
    fn know<T: Send + Sync + 'static>(&mut self, field: &'static str, indexes: u64, value: T) {
        if indexes != 0 {
            self.changed |= indexes;
            self.known.push(Known {
                field,
                value: Box::new(value),
                current: None,
            });
        }
    }

    /// Notes that `field` changes by `operation`, relative to its current value.
    fn change_relative(&mut self, field: &'static str, operation: &'static str, indexes: u64) {
        self.changed |= indexes;
        self.relative.push(RelativeChange {
            field,
            operation,
            indexes,
        });
    }

    /// Encodes a value the update keeps no copy of (see [`into_value`]).
    fn encode_owned<V: Serialize + 'static>(&mut self, value: V) -> Option<AttributeValue> {
        self.keep_error(into_value(value))
    }

    fn encode<V: Serialize + ?Sized>(&mut self, value: &V) -> Option<AttributeValue> {
        self.keep_error(to_value(value))
    }

    /// The value, or `None` with the first error kept for `send` to report.
    fn keep_error(
        &mut self,
        encoded: Result<AttributeValue, EncodeError>,
    ) -> Option<AttributeValue> {
        match encoded {
            Ok(value) => Some(value),
            Err(error) => {
                self.error.get_or_insert(error);
                None
            }
        }
    }

    fn prepare(&self) -> Result<Prepared, Error> {
        let inputs = Inputs {
            actions: self.actions.clone(),
            known: KnownValues::Copied(&self.known),
            condition: user_node(self.condition.as_ref()).map(Option::<&Node>::cloned),
        };
        self.prepare_inputs(inputs, true)
    }

    /// Prepares the request from `inputs`: the update's own, copied for `params` and
    /// `explain` (which can be called again), moved by `send`.
    fn prepare_inputs(&self, inputs: Inputs<'_>, explain: bool) -> Result<Prepared, Error> {
        if let Some(error) = &self.error {
            return Err(error.clone().into());
        }
        let Inputs {
            mut actions,
            known,
            condition,
        } = inputs;
        let schema = E::SCHEMA;
        let table = <E::Table as Table>::SCHEMA;
        if actions.is_empty() {
            return Err(UpdateError::Empty {
                entity: schema.name,
            }
            .into());
        }
        // The values an update writes can alone break the 400 KB item limit.
        let written: usize = actions.iter().map(action_size).sum();
        if written > crate::item::MAX_ITEM_BYTES {
            return Err(crate::LimitError::ItemSize {
                key: self.key.text(),
                size: written,
                max: crate::item::MAX_ITEM_BYTES,
            }
            .into());
        }
        let values = Values {
            known: known.as_slice(),
            key: &self.key,
        };
        let mut estimate = crate::cost::Estimate::default();
        if explain {
            estimate_table_write(&mut estimate);
        }
        for (position, index) in schema.indexes.iter().enumerate() {
            let bit = index_bit(position);
            if self.changed & bit == 0 {
                continue;
            }
            if let Some(change) = self
                .relative
                .iter()
                .find(|change| change.indexes & bit != 0)
            {
                return Err(UpdateError::RelativeIndexInput {
                    entity: schema.name,
                    field: change.field,
                    index: index.index.slot,
                    operation: change.operation,
                }
                .into());
            }
            let mut missing: Vec<&str> = Vec::new();
            for input in index.inputs() {
                if !values.has(input) && !missing.contains(&input) {
                    missing.push(input);
                }
            }
            if !missing.is_empty() {
                let changes = |name: &&str| {
                    known
                        .as_slice()
                        .iter()
                        .any(|known| same_name(known.field, name) && known.current.is_none())
                        || self
                            .relative
                            .iter()
                            .any(|change| same_name(change.field, name))
                };
                return Err(index_inputs_missing(schema.name, index, &missing, changes).into());
            }
            let removes = index_actions::<E>(index, table.partition_key, &values, &mut actions)?;
            if explain {
                estimate_index_write(&mut estimate, index.index.name, removes);
            }
        }
        let managed = schema.managed;
        if let Some(attribute) = managed.version {
            if let Some(expected) = self.expected_version.filter(|v| *v >= managed.version_max) {
                return Err(Error::VersionOverflow {
                    entity: schema.name,
                    key: self.key.text(),
                    version: expected,
                });
            }
            // From zero where another tool wrote the item without it, as a put counts it.
            actions.push(Action::Set(
                AttrPath::attribute(attribute),
                SetValue::CountUp(AttributeValue::N("1".to_owned())),
            ));
        }
        if let Some(timestamp) = managed.updated_at {
            actions.push(Action::Set(
                AttrPath::attribute(timestamp.attribute),
                SetValue::Value((timestamp.now)()?),
            ));
        }
        if let Some(action) = actions.iter().find(|action| operand_is_empty_set(action)) {
            return Err(UpdateError::EmptySet {
                entity: schema.name,
                action: action.to_string(),
            }
            .into());
        }
        // Checked on the whole list, the library's own actions included, before anything is sent.
        if let Some((first, second)) = update::overlapping(&actions) {
            return Err(UpdateError::OverlappingPaths {
                entity: schema.name,
                first: first.to_string(),
                second: second.to_string(),
            }
            .into());
        }
        let mut condition = UpdateCondition {
            partition_key: table.partition_key,
            version: managed.version.zip(self.expected_version),
            // Without an expected version, the condition itself keeps the count in range.
            version_max: managed
                .version
                .filter(|_| self.expected_version.is_none())
                .map(|attribute| (attribute, managed.version_max)),
            known,
            user: condition?,
        };
        let ([update, condition], placeholders) =
            crate::expr::shape::render([&mut update::Actions::new(actions), &mut condition]);
        crate::expr::check_expression("UpdateExpression", &update)?;
        crate::expr::check_expression("ConditionExpression", &condition)?;
        Ok(Prepared {
            update,
            condition,
            placeholders,
            estimate,
        })
    }

    /// The request `send` sends (`ALL_NEW`).
    fn params(&self) -> Result<Request, Error> {
        let request = self.builder(self.prepare()?, ReturnValue::AllNew);
        Ok(describe::request("UpdateItem", request.as_input()))
    }

    /// Sends the request, asking for `returning`, and `finish`es the attributes returned.
    ///
    /// Always inlined, with the request built out of line ([`Parts::request`]): the future
    /// holds the SDK's, several kilobytes, and made here it is made in place in the caller's
    /// future rather than returned from a call and copied there.
    #[inline(always)]
    fn send<T>(
        self,
        returning: ReturnValue,
        finish: impl FnOnce(&Sent<'db, E>, crate::Item) -> Result<T, Error> + Send + 'db,
    ) -> impl Future<Output = Result<T, Error>> + 'db
    where
        T: 'db,
    {
        let (request, sent, repeats) = self.request(returning);
        let db = sent.db;
        let span = crate::trace::span(
            Operation::UpdateItem,
            db.table_name(),
            E::SCHEMA.name,
            || Some(sent.key.text().to_string()),
            None,
        );
        // An update that adds, appends or removes by position applies twice if resent after
        // its response was lost. Without a version to condition on, the SDK must not resend
        // it blindly (boxed: the rare path does not grow every update's future).
        if repeats && sent.expected_version.is_none() {
            return db.traced(
                span,
                Either::Left(
                    async move {
                        let result = sent.send_once_per_attempt(request?).await?;
                        finish(&sent, sent.returned(result)?)
                    }
                    .boxed(),
                ),
            );
        }
        db.traced(
            span,
            Either::Right(super::sent(
                request,
                UpdateItemFluentBuilder::send,
                move |result| finish(&sent, sent.returned(result)?),
            )),
        )
    }

    /// The request for `returning`, what its response is read with, and whether resending
    /// it could apply it twice.
    #[inline(never)]
    fn request(
        mut self,
        returning: ReturnValue,
    ) -> (Result<UpdateItemFluentBuilder, Error>, Sent<'db, E>, bool) {
        let actions = std::mem::take(&mut self.actions);
        // Counting the version up repeats too, whatever the other actions do.
        let repeats = E::SCHEMA.managed.version.is_some() || actions.iter().any(Action::repeats);
        let mut known = std::mem::take(&mut self.known);
        let inputs = Inputs {
            actions,
            known: KnownValues::Moved(&mut known),
            condition: self.condition.take().map(Condition::into_node).transpose(),
        };
        let request = self
            .prepare_inputs(inputs, false)
            .map(|prepared| self.builder(prepared, returning));
        // Only this is kept while the request is out.
        let sent = Sent {
            db: self.db,
            key: self.key,
            expected_version: self.expected_version,
        };
        (request, sent, repeats)
    }

    fn builder(&self, prepared: Prepared, returning: ReturnValue) -> UpdateItemFluentBuilder {
        let (names, values) = prepared.placeholders.into_maps();
        self.db
            .client()
            .update_item()
            .table_name(self.db.table_name())
            .set_key(Some(self.key.to_attributes()))
            .update_expression(prepared.update)
            .condition_expression(prepared.condition)
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(values)
            .return_values(returning)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .set_some(
                self.db.return_consumed_capacity(),
                UpdateItemFluentBuilder::return_consumed_capacity,
            )
    }
}

/// What a sent update keeps to read its response.
struct Sent<'db, E: Entity> {
    db: &'db Db<E::Table>,
    key: Key<E>,
    expected_version: Option<u64>,
}

impl<E: Entity> Sent<'_, E> {
    /// The item an update returned, decoded.
    fn decode(&self, item: crate::Item) -> Result<E, Error> {
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
    fn returned(&self, result: UpdateResult) -> Result<crate::Item, Error> {
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
                        Expectations {
                            requires_existing: true,
                            version: E::SCHEMA.managed.version.zip(self.expected_version),
                            version_max: E::SCHEMA
                                .managed
                                .version
                                .map(|attribute| (attribute, E::SCHEMA.managed.version_max)),
                        },
                    ))
                }
                _ => Err(error.into()),
            },
        }
    }

    /// Sends a non-repeatable update with the SDK's retries off: throttling (nothing
    /// applied) is retried here, and a lost response is reported as `Error::Ambiguous` for
    /// the caller to resolve by reading the item.
    async fn send_once_per_attempt(
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
                Err(error)
                    if attempt < policy.attempts()
                        && error.as_service_error().is_some_and(|service| {
                            service.is_provisioned_throughput_exceeded_exception()
                                || service.is_request_limit_exceeded()
                                || service.is_throttling_exception()
                        }) =>
                {
                    policy.sleep_before(attempt).await;
                    attempt += 1;
                }
                _ => return Ok(result),
            }
        }
    }
}

type UpdateResult = Result<
    aws_sdk_dynamodb::operation::update_item::UpdateItemOutput,
    aws_sdk_dynamodb::error::SdkError<
        UpdateItemError,
        aws_sdk_dynamodb::config::http::HttpResponse,
    >,
>;

/// An update's condition: the item exists, is at the expected version, has the current values
/// the caller gave, and the caller's condition holds; joined with `AND`.
struct UpdateCondition<'a> {
    partition_key: &'static str,
    version: Option<(&'static str, u64)>,
    version_max: Option<(&'static str, u64)>,
    known: KnownValues<'a>,
    user: Option<Node>,
}

/// The table write of an update's estimate. The estimate's text costs more than the request
/// itself and only `explain()` asks for it, so it is written out of the request's way.
#[cold]
#[inline(never)]
fn estimate_table_write(estimate: &mut crate::cost::Estimate) {
    estimate.write(
        write_units(ASSUMED_ITEM_BYTES),
        format!("table write (assuming at most {ASSUMED_ITEM_BYTES} bytes)"),
    );
}

/// An index's writes in an update's estimate (see [`estimate_table_write`]).
#[cold]
#[inline(never)]
fn estimate_index_write(estimate: &mut crate::cost::Estimate, index: &str, removes: bool) {
    let units = write_units(ASSUMED_ITEM_BYTES);
    if removes {
        estimate.write(units, format!("{index} entry deleted"));
    } else {
        estimate.write(
            2.0 * units,
            format!("{index} entry moved (old deleted, new written)"),
        );
    }
}

/// ` AND path = value`: a current value the caller gave.
fn walk_given<S: Sink>(sink: &mut S, path: &AttrPath, value: impl FnOnce(&mut S)) {
    sink.text(" AND ");
    path.walk(sink);
    sink.text(" = ");
    value(sink);
}

/// What a request is made from: the update's actions, known values and condition.
struct Inputs<'a> {
    actions: Vec<Action>,
    known: KnownValues<'a>,
    condition: Result<Option<Node>, EncodeError>,
}

/// The known values, borrowed: the current values given are copied into the request, or, when
/// it is sent, moved.
enum KnownValues<'a> {
    Copied(&'a [Known]),
    Moved(&'a mut [Known]),
}

impl KnownValues<'_> {
    fn as_slice(&self) -> &[Known] {
        match self {
            KnownValues::Copied(known) => known,
            KnownValues::Moved(known) => known,
        }
    }
}

impl Expression for UpdateCondition<'_> {
    fn walk(&mut self, sink: &mut impl Sink) {
        sink.text("attribute_exists(");
        sink.name(Name::Known(self.partition_key));
        sink.text(")");
        match self.version {
            // Version 0 is an item written without the attribute.
            Some((attribute, 0)) => {
                sink.text(" AND attribute_not_exists(");
                sink.name(Name::Known(attribute));
                sink.text(")");
            }
            Some((attribute, expected)) => {
                sink.text(" AND ");
                sink.name(Name::Known(attribute));
                sink.text(" = ");
                sink.new_value(|| AttributeValue::N(expected.to_string()));
            }
            None => {}
        }
        if let Some((attribute, max)) = self.version_max {
            sink.text(" AND (attribute_not_exists(");
            sink.name(Name::Known(attribute));
            sink.text(") OR ");
            sink.name(Name::Known(attribute));
            sink.text(" < ");
            sink.new_value(|| AttributeValue::N(max.to_string()));
            sink.text(")");
        }
        match &mut self.known {
            KnownValues::Copied(known) => {
                for (path, value) in known.iter().filter_map(|known| known.current.as_ref()) {
                    walk_given(sink, path, |sink| sink.new_value(|| value.clone()));
                }
            }
            KnownValues::Moved(known) => {
                for (path, value) in known.iter_mut().filter_map(|known| known.current.as_mut()) {
                    walk_given(sink, path, |sink| sink.value(value));
                }
            }
        }
        if let Some(user) = &mut self.user {
            sink.text(" AND ");
            walk_and_operand(user, sink);
        }
    }
}

/// The bytes an action writes: its path's names and its value.
fn action_size(action: &Action) -> usize {
    let value = match action {
        Action::Set(_, SetValue::Value(value))
        | Action::Set(_, SetValue::IfNotExists(value))
        | Action::Set(_, SetValue::Plus(value))
        | Action::Set(_, SetValue::Minus(value))
        | Action::Set(_, SetValue::Append(value))
        | Action::Set(_, SetValue::Prepend(value))
        | Action::Set(_, SetValue::CountUp(value))
        | Action::Add(_, value)
        | Action::Delete(_, value) => crate::item::value_size(value),
        Action::Remove(_) => 0,
    };
    let path = match action {
        Action::Set(path, _)
        | Action::Add(path, _)
        | Action::Delete(path, _)
        | Action::Remove(path) => path,
    };
    value + path.root().len()
}

/// Whether DynamoDB would refuse the action's operand as an empty set: `ADD` or `DELETE` of no
/// elements (serde writes an empty Rust set as an empty list), or any value holding one.
fn operand_is_empty_set(action: &Action) -> bool {
    match action {
        Action::Add(_, AttributeValue::L(elements))
        | Action::Delete(_, AttributeValue::L(elements)) => elements.is_empty(),
        Action::Add(_, value) | Action::Delete(_, value) => crate::item::holds_empty_set(value),
        Action::Set(_, value) => match value {
            SetValue::Value(value)
            | SetValue::IfNotExists(value)
            | SetValue::Append(value)
            | SetValue::Prepend(value) => crate::item::holds_empty_set(value),
            SetValue::Plus(_) | SetValue::Minus(_) | SetValue::CountUp(_) => false,
        },
        Action::Remove(_) => false,
    }
}

/// serde writes Rust sets as lists; `ADD` and `DELETE` need DynamoDB sets (`SS`, `NS`, `BS`).
/// Numbers and anything else pass through unchanged.
fn as_set(value: AttributeValue) -> AttributeValue {
    let AttributeValue::L(elements) = value else {
        return value;
    };
    if let Some(strings) = all_of(&elements, AttributeValue::as_s) {
        return AttributeValue::Ss(strings);
    }
    if let Some(numbers) = all_of(&elements, AttributeValue::as_n) {
        return AttributeValue::Ns(numbers);
    }
    match all_of(&elements, AttributeValue::as_b) {
        Some(binaries) => AttributeValue::Bs(binaries),
        None => AttributeValue::L(elements),
    }
}

/// The elements as one type, if there are some and all are of it.
fn all_of<'a, T: Clone + 'a>(
    elements: &'a [AttributeValue],
    as_type: impl Fn(&'a AttributeValue) -> Result<&'a T, &'a AttributeValue>,
) -> Option<Vec<T>> {
    let all: Option<Vec<T>> = elements
        .iter()
        .map(|element| as_type(element).ok().cloned())
        .collect();
    all.filter(|all| !all.is_empty())
}

/// Every field value an update knows, by field name: those it sets or is given, and the
/// primary key's fields, as their text in the key (they are never supplied).
struct Values<'a, E> {
    known: &'a [Known],
    key: &'a Key<E>,
}

/// A field value an update knows.
enum Value<'a> {
    Typed(&'a dyn Any),
    /// A primary key field's text in `key`, written at `width`.
    KeyText {
        text: &'a str,
        width: Option<u8>,
        key: &'a str,
    },
}

impl<'a, E: Entity> Values<'a, E> {
    /// Whether the update knows field `name` (the key is read only when the value is).
    fn has(&self, name: &str) -> bool {
        self.known.iter().any(|known| same_name(known.field, name))
            || E::SCHEMA
                .primary_key_fields()
                .any(|field| same_name(field, name))
    }

    fn get(&self, name: &str) -> Result<Option<Value<'a>>, KeyError> {
        if let Some(known) = self.known.iter().find(|known| same_name(known.field, name)) {
            return Ok(Some(Value::Typed(&*known.value)));
        }
        let schema = E::SCHEMA;
        let templates = std::iter::once((schema.partition_key, self.key.partition()))
            .chain(schema.sort_key.zip(self.key.sort()));
        for (template, key) in templates {
            if let Some((text, width)) = template.field_text(key, name)? {
                return Ok(Some(Value::KeyText { text, width, key }));
            }
        }
        Ok(None)
    }

    /// Whether `rule` holds for the values known (key fields parsed back from their text).
    fn rule_holds(&self, rule: &IndexRule) -> Result<bool, KeyError> {
        // Key fields are known as text; a rule seldom reads one, so this seldom allocates.
        let mut parsed: Vec<(usize, AnyValue)> = Vec::new();
        for (position, name) in rule.inputs.iter().enumerate() {
            if let Some(Value::KeyText { text, width, key }) = self.get(name)? {
                parsed.push((position, parse_key_text::<E>(name, text, width, key)?));
            }
        }
        let argument = |position: usize| -> Option<&dyn Any> {
            if let Some((_, value)) = parsed.iter().find(|(input, _)| *input == position) {
                return Some(&**value);
            }
            // Reading a value failed above if it can fail: here it is known or missing.
            match self.get(rule.inputs.get(position)?) {
                Ok(Some(Value::Typed(value))) => Some(value),
                _ => None,
            }
        };
        Ok((rule.evaluate)(&argument).unwrap_or(false))
    }

    /// Writes field `name` into an index key: a known value rendered, or a primary key
    /// field's text as it is when the index writes it at the same width (a key part's text
    /// depends only on its value and width), else parsed and rendered again.
    fn render(&self, context: PartContext, out: &mut String) -> Result<(), KeyError> {
        let name = context.field;
        let value = match self.get(name)? {
            Some(Value::KeyText { text, width, .. }) if width == context.width => {
                out.push_str(text);
                return Ok(());
            }
            value => value,
        };
        match (
            value,
            E::SCHEMA.field(name).and_then(|field| field.key_part),
        ) {
            (Some(Value::Typed(value)), Some(fns)) => (fns.render)(value, context, out),
            (Some(Value::KeyText { text, width, key }), Some(fns)) => {
                let value = parse_key_text::<E>(name, text, width, key)?;
                (fns.render)(&*value, context, out)
            }
            _ => Err(KeyError::Unrepresentable {
                field: name,
                reason: "its value is not known to this update".to_owned(),
            }),
        }
    }
}

fn parse_key_text<E: Entity>(
    field: &'static str,
    text: &str,
    width: Option<u8>,
    key: &str,
) -> Result<AnyValue, KeyError> {
    let invalid = |expected| KeyError::InvalidPart {
        field,
        key: key.to_owned(),
        expected,
        text: text.to_owned(),
    };
    let fns = E::SCHEMA
        .field(field)
        .and_then(|field| field.key_part)
        .ok_or_else(|| invalid("a field that can be part of a key"))?;
    (fns.parse)(text, width).map_err(|error| invalid(error.expected))
}

/// An index's inputs, each once.
fn unique_inputs(index: &EntityIndex) -> impl Iterator<Item = &'static str> + '_ {
    index
        .inputs()
        .enumerate()
        .filter(|(position, input)| !index.inputs().take(*position).any(|seen| seen == *input))
        .map(|(_, input)| input)
}

#[cold]
fn index_inputs_missing(
    entity: &'static str,
    index: &EntityIndex,
    missing: &[&str],
    changes: impl Fn(&&str) -> bool,
) -> UpdateError {
    let quote = |names: &mut dyn Iterator<Item = &str>| {
        names
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let slot = index.index.slot;
    let mut templates = Vec::new();
    if let Some(template) = index.partition_key {
        templates.push(format!("{slot}pk = {:?}", template.source));
    }
    if let Some(template) = index.sort_key {
        templates.push(format!("{slot}sk = {:?}", template.source));
    }
    if let Some(rule) = index.rule {
        templates.push(format!("{slot}_when = {}", rule.source));
    }
    UpdateError::IndexInputsMissing {
        entity,
        index: slot,
        changed: quote(&mut unique_inputs(index).filter(|name| changes(name))),
        missing: quote(&mut missing.iter().copied()),
        templates: templates.join(", "),
    }
}

/// SETs the index's key attributes from the known values, or REMOVEs them when its rule
/// fails (then returns true), appending to `actions`.
fn index_actions<E: Entity>(
    index: &EntityIndex,
    table_partition_key: &'static str,
    values: &Values<'_, E>,
    actions: &mut Vec<Action>,
) -> Result<bool, Error> {
    // Same limits as the table's keys: 2048 bytes for a partition key, 1024 for a sort key.
    let partition = match index.index.kind {
        IndexKind::Global => Some(index.index.partition_key),
        // A local index shares the table's partition key, which never changes.
        IndexKind::Local => None,
    };
    let attributes = [
        (
            partition,
            index.partition_key,
            crate::item::MAX_PARTITION_KEY_BYTES,
            "partition",
        ),
        (
            index.index.sort_key,
            index.sort_key,
            crate::item::MAX_SORT_KEY_BYTES,
            "sort",
        ),
    ];
    let indexed = match &index.rule {
        Some(rule) => values.rule_holds(rule)?,
        None => true,
    };
    for (attribute, template, max, role) in attributes {
        let (Some(attribute), Some(template)) = (attribute, template) else {
            continue;
        };
        if same_name(attribute, table_partition_key) {
            continue;
        }
        let path = AttrPath::attribute(attribute);
        if !indexed {
            actions.push(Action::Remove(path));
            continue;
        }
        let rendered =
            template.render_with(usize::MAX, |_, context, out| values.render(context, out))?;
        if rendered.len() > max {
            return Err(KeyError::TooLong {
                size: rendered.len(),
                key: rendered,
                max,
                role,
            }
            .into());
        }
        actions.push(Action::Set(
            path,
            SetValue::Value(AttributeValue::S(rendered)),
        ));
    }
    Ok(!indexed)
}

#[cfg(test)]
mod tests {
    use super::as_set;
    use aws_sdk_dynamodb::primitives::Blob;
    use aws_sdk_dynamodb::types::AttributeValue;

    fn list(elements: Vec<AttributeValue>) -> AttributeValue {
        AttributeValue::L(elements)
    }

    #[test]
    fn lists_of_one_scalar_type_become_sets() {
        let s = |text: &str| AttributeValue::S(text.to_owned());
        let n = |text: &str| AttributeValue::N(text.to_owned());
        let b = |bytes: &[u8]| AttributeValue::B(Blob::new(bytes));
        assert_eq!(
            as_set(list(vec![s("a"), s("b")])),
            AttributeValue::Ss(vec!["a".into(), "b".into()])
        );
        assert_eq!(
            as_set(list(vec![n("1"), n("2")])),
            AttributeValue::Ns(vec!["1".into(), "2".into()])
        );
        assert_eq!(
            as_set(list(vec![b(b"x")])),
            AttributeValue::Bs(vec![Blob::new(b"x")])
        );
        // Mixed or empty lists, and anything else, pass through unchanged.
        assert_eq!(
            as_set(list(vec![s("a"), n("1")])),
            list(vec![s("a"), n("1")])
        );
        assert_eq!(as_set(list(Vec::new())), list(Vec::new()));
        assert_eq!(as_set(n("3")), n("3"));
    }
}
