//! `UpdateItem` with index maintenance: an update that changes an input of an index key also
//! rewrites (or, for a sparse index whose rule now fails, removes) that index's key attributes
//! in the same request, so the index never goes stale.

use crate::error::Error;
use crate::expr::field::Nested;
use crate::expr::field::{Addable, Container, GuardPath, IntoField, ListType, Optional, SetType};
use crate::expr::field_role::FieldIndexes;
use crate::expr::field_role::{FieldOf, NotUnique, OutsideKey, Unmanaged};
use crate::expr::state::{Changed, Given, Relative, Touch, UpdateComplete};
use crate::expr::update::{Action, SetValue};
use crate::expr::{AttrPath, Condition, Field};
use crate::schema::{Entity, Table};
use crate::wire::Request;
use crate::{Db, Key};
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};
use futures::future::{Either, FutureExt};
use serde::Serialize;
use std::future::Future;
use std::marker::PhantomData;

mod apply;
mod condition;
mod estimate;
mod index_keys;
mod known;
mod or_create;
mod request;
mod response;
mod unique;

pub use crate::error::update::UpdateError;
pub use or_create::OrCreate;

use crate::expr::sets::as_set;
use known::Known;
use request::Parts;
use response::Sent;

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
                guard: None,
                expiry: crate::ttl::Expiry::hidden(T::SCHEMA, || self.now()),
                error: None,
            },
            state: PhantomData,
        }
    }
}

/// An `UpdateItem` of one entity; see [`Db::update`]. `S` tracks, at the type level, which
/// index inputs the update changes or knows.
#[must_use = "an operation does nothing until it is sent"]
pub struct Update<'db, E: Entity, S = <E as Entity>::UpdateState> {
    parts: Parts<'db, E>,
    state: PhantomData<fn() -> S>,
}

impl<'db, E: Entity, S> Update<'db, E, S> {
    /// Applies `change` and moves to the state of an operation `M` on field `F`.
    fn then<M, F>(
        mut self,
        change: impl FnOnce(&mut Parts<'db, E>),
    ) -> Update<'db, E, <E as Touch<S, F, M>>::Out>
    where
        E: Touch<S, F, M>,
    {
        change(&mut self.parts);
        Update {
            parts: self.parts,
            state: PhantomData,
        }
    }

    /// `SET field = value`. Key fields cannot be set (a compile error that explains why).
    pub fn set<T, F>(
        self,
        field: Field<E, T, F>,
        value: impl IntoField<T>,
    ) -> Update<'db, E, <E as Touch<S, F, Changed>>::Out>
    where
        F: FieldOf<E> + OutsideKey<E> + Unmanaged<E>,
        E: Touch<S, F, Changed>,
        T: Serialize + Send + Sync + 'static,
    {
        let value: T = value.into_field();
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
            let Some(encoded) = encoded else {
                return;
            };
            // `None` is stored as no attribute: setting it removes the attribute.
            if matches!(encoded, AttributeValue::Null(_)) {
                parts.actions.push(Action::Remove(field.path()));
                return;
            }
            if !field.is_stored_otherwise() {
                parts
                    .actions
                    .push(Action::Set(field.path(), SetValue::Value(encoded)));
                return;
            }
            // A value stored as no attribute (a TTL of `None`) removes it.
            match field.store(encoded) {
                Ok(Some(value)) => parts
                    .actions
                    .push(Action::Set(field.path(), SetValue::Value(value))),
                Ok(None) => parts.actions.push(Action::Remove(field.path())),
                Err(error) => {
                    parts.keep_error(Err(error));
                }
            }
        })
    }

    /// `REMOVE field`, for optional fields only.
    pub fn remove<T, F>(
        self,
        field: Field<E, T, F>,
    ) -> Update<'db, E, <E as Touch<S, F, Changed>>::Out>
    where
        F: FieldOf<E> + OutsideKey<E> + Unmanaged<E>,
        E: Touch<S, F, Changed>,
        T: Optional + Send + Sync + 'static,
    {
        self.then::<Changed, F>(|parts| {
            parts.actions.push(Action::Remove(field.path()));
            parts.know(field.name(), FieldIndexes::<E, F>::MASK, T::none());
        })
    }

    fn relative<T: Serialize, F>(
        self,
        field: Field<E, T, F>,
        value: &T,
        operation: &'static str,
        action: impl FnOnce(AttrPath, AttributeValue) -> Action,
    ) -> Update<'db, E, <E as Touch<S, F, Relative>>::Out>
    where
        F: FieldOf<E> + OutsideKey<E> + Unmanaged<E>,
        E: Touch<S, F, Relative>,
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
    pub fn set_nested<Top, T, F>(
        self,
        path: Nested<E, Top, T, F>,
        value: T,
    ) -> Update<'db, E, <E as Touch<S, F, Relative>>::Out>
    where
        F: FieldOf<E> + OutsideKey<E> + Unmanaged<E>,
        E: Touch<S, F, Relative>,
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
    pub fn remove_nested<Top, T, F>(
        self,
        path: Nested<E, Top, T, F>,
    ) -> Update<'db, E, <E as Touch<S, F, Relative>>::Out>
    where
        F: FieldOf<E> + OutsideKey<E> + Unmanaged<E>,
        E: Touch<S, F, Relative>,
    {
        self.then::<Relative, F>(|parts| {
            parts.actions.push(Action::Remove(path.path()));
            parts.change_relative(path.name(), "remove_nested", FieldIndexes::<E, F>::MASK);
        })
    }

    /// `SET path = value` only where the path is absent or below `value`: a sequence guard,
    /// such as the position of the last stream record a count has applied
    /// (`OpenTickets::APPLIED.key(shard)`). A second application of the update fails its
    /// guard, so the update is safe to resend: a lost response is resent by the library
    /// instead of ending in [`Error::Ambiguous`], even with an `add` or `increment`.
    ///
    /// `value` names the update. Where the stored value is `value` already, the update with
    /// it is applied, once, and [`send`](Update::send) returns the item as it is, unchanged:
    /// a record delivered twice, or this update's own lost attempt, which a resend cannot tell
    /// apart, so `Ok` says "applied", not "applied by this call". (The other `send_returning_*`
    /// methods, which cannot know the item before a replay, fail with
    /// [`Error::ConditionFailed`], or [`Error::Ambiguous`] after a lost response.) Where the
    /// stored value is greater, the update is refused, [`Error::ConditionFailed`], and
    /// changes nothing. Values compare as
    /// DynamoDB compares them: numbers by value, strings by their UTF-8 bytes (pad numbers in
    /// text to one width).
    ///
    /// The path is a field (`Count::LAST_SEQUENCE`) or a map entry or list element inside one.
    pub fn advance<P, Top, T, F>(
        self,
        path: P,
        value: T,
    ) -> Update<'db, E, <E as Touch<S, F, Relative>>::Out>
    where
        P: GuardPath<E, Top, T, F>,
        F: FieldOf<E> + OutsideKey<E> + Unmanaged<E>,
        E: Touch<S, F, Relative>,
        T: Serialize,
    {
        use crate::expr::condition::{Comparison, Node, Operand};
        self.then::<Relative, F>(|parts| {
            let Some(encoded) = parts.encode(&value) else {
                return;
            };
            let Some(encoded) = parts.keep_error(path.stored(encoded)) else {
                return;
            };
            let (name, path) = (path.field_name(), path.guarded());
            let guard = Node::Or(
                Box::new(Node::NotExists(path.clone())),
                Box::new(Node::Compare(
                    Operand::Path(path.clone()),
                    Comparison::Lt,
                    Operand::Value(encoded.clone()),
                )),
            );
            Condition::and_to(&mut parts.condition, Condition::from_node(guard));
            parts
                .actions
                .push(Action::Set(path.clone(), SetValue::Value(encoded.clone())));
            parts.change_relative(name, "advance", FieldIndexes::<E, F>::MASK);
            parts.guard = Some((path, encoded));
        })
    }

    /// `SET field = if_not_exists(field, value)`.
    pub fn set_if_not_exists<T, F>(
        self,
        field: Field<E, T, F>,
        value: T,
    ) -> Update<'db, E, <E as Touch<S, F, Relative>>::Out>
    where
        F: FieldOf<E> + OutsideKey<E> + Unmanaged<E>,
        E: Touch<S, F, Relative>,
        T: Serialize,
    {
        self.relative(field, &value, "set_if_not_exists", |path, value| {
            Action::Set(path, SetValue::IfNotExists(value))
        })
    }

    /// `ADD field value`: adds to a number or inserts into a set.
    pub fn add<T, F>(
        self,
        field: Field<E, T, F>,
        value: T,
    ) -> Update<'db, E, <E as Touch<S, F, Relative>>::Out>
    where
        F: FieldOf<E> + OutsideKey<E> + Unmanaged<E> + NotUnique<E>,
        E: Touch<S, F, Relative>,
        T: Addable + Serialize,
    {
        self.relative(field, &value, "ADD", |path, value| {
            Action::Add(path, as_set(value))
        })
    }

    /// `SET field = field + by` (fails if the attribute is missing; see [`Update::add`]).
    pub fn increment<T, F>(
        self,
        field: Field<E, T, F>,
        by: T,
    ) -> Update<'db, E, <E as Touch<S, F, Relative>>::Out>
    where
        F: FieldOf<E> + OutsideKey<E> + Unmanaged<E> + NotUnique<E>,
        E: Touch<S, F, Relative>,
        T: Addable + Serialize,
    {
        self.relative(field, &by, "increment", |path, value| {
            Action::Set(path, SetValue::Plus(value))
        })
    }

    /// `SET field = field - by`.
    pub fn decrement<T, F>(
        self,
        field: Field<E, T, F>,
        by: T,
    ) -> Update<'db, E, <E as Touch<S, F, Relative>>::Out>
    where
        F: FieldOf<E> + OutsideKey<E> + Unmanaged<E> + NotUnique<E>,
        E: Touch<S, F, Relative>,
        T: Addable + Serialize,
    {
        self.relative(field, &by, "decrement", |path, value| {
            Action::Set(path, SetValue::Minus(value))
        })
    }

    /// `DELETE field elements`: removes elements from a set.
    pub fn delete_elements<T, F>(
        self,
        field: Field<E, T, F>,
        elements: T,
    ) -> Update<'db, E, <E as Touch<S, F, Relative>>::Out>
    where
        F: FieldOf<E> + OutsideKey<E> + Unmanaged<E>,
        E: Touch<S, F, Relative>,
        T: SetType + Serialize,
    {
        self.relative(field, &elements, "DELETE", |path, value| {
            Action::Delete(path, as_set(value))
        })
    }

    /// `SET field = list_append(field, items)`.
    pub fn append<T, F>(
        self,
        field: Field<E, T, F>,
        items: T,
    ) -> Update<'db, E, <E as Touch<S, F, Relative>>::Out>
    where
        F: FieldOf<E> + OutsideKey<E> + Unmanaged<E>,
        E: Touch<S, F, Relative>,
        T: ListType + Serialize,
    {
        self.relative(field, &items, "append", |path, value| {
            Action::Set(path, SetValue::Append(value))
        })
    }

    /// `SET field = list_append(items, field)`.
    pub fn prepend<T, F>(
        self,
        field: Field<E, T, F>,
        items: T,
    ) -> Update<'db, E, <E as Touch<S, F, Relative>>::Out>
    where
        F: FieldOf<E> + OutsideKey<E> + Unmanaged<E>,
        E: Touch<S, F, Relative>,
        T: ListType + Container + Serialize,
    {
        self.relative(field, &items, "prepend", |path, value| {
            Action::Set(path, SetValue::Prepend(value))
        })
    }

    /// Supplies the current value of a field the update does not change but an index key
    /// needs. The request asserts it (`field = value`), so a caller with stale data gets
    /// [`Error::ConditionFailed`] instead of writing a wrong index key.
    pub fn given<T, F>(
        self,
        field: Field<E, T, F>,
        current: impl IntoField<T>,
    ) -> Update<'db, E, <E as Touch<S, F, Given>>::Out>
    where
        F: FieldOf<E>,
        E: Touch<S, F, Given>,
        T: Serialize + Send + Sync + 'static,
    {
        let current: T = current.into_field();
        self.then::<Given, F>(|parts| {
            if let Some(encoded) = parts.encode(&current) {
                // `None` is stored as no attribute: what is asserted is that it is absent.
                let current_value = if encoded.is_null() {
                    let absent =
                        Condition::from_node(crate::expr::condition::Node::NotExists(field.path()));
                    Condition::and_to(&mut parts.condition, absent);
                    None
                } else {
                    Some((field.path(), encoded))
                };
                parts.known.push(Known {
                    field: field.name(),
                    value: std::sync::Arc::new(current),
                    current: current_value,
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
    /// The request this operation sends: for an update of a unique value, the transaction of
    /// the update and the new value's sentinel (the old value's release, which depends on the
    /// item as read, joins it when sent).
    pub fn params(&self) -> Result<Request, Error>
    where
        E: UpdateComplete<S>,
    {
        if self.parts.rewrites_sentinels().is_some() {
            return self.parts.with_sentinels(None)?.params();
        }
        self.parts.params()
    }

    pub(crate) fn transact_op(&self) -> Result<super::transact::TransactOp, Error>
    where
        E: UpdateComplete<S>,
    {
        self.parts.transact_op_as_read(None)
    }

    /// The request and its estimated capacity (see [`crate::cost`]).
    pub fn explain(&self) -> Result<crate::cost::Explain, Error>
    where
        E: UpdateComplete<S>,
    {
        if self.parts.rewrites_sentinels().is_some() {
            let mut explain = self.parts.with_sentinels(None)?.explain()?;
            // The release of the old value's sentinel, a delete in the transaction.
            explain
                .estimate
                .write(2.0, "release of the old value's sentinel (transactional)");
            return Ok(explain);
        }
        Ok(crate::cost::Explain {
            request: self.parts.params()?,
            estimate: self.parts.prepare()?.estimate,
        })
    }

    /// Sends the request; returns the item as it is after the update (`ALL_NEW`).
    ///
    /// An update of a unique value is a transaction of the update and the sentinel writes
    /// (see [`crate::unique`]), after a consistent read of the item; the item it returns is
    /// then read right after the transaction.
    #[inline(always)]
    pub fn send(self) -> impl Future<Output = Result<E, Error>> + 'db
    where
        E: UpdateComplete<S>,
    {
        if self.parts.rewrites_sentinels().is_some() {
            return Either::Left(self.parts.send_with_sentinels(false).boxed());
        }
        Either::Right(self.parts.send(ReturnValue::AllNew, Sent::decode))
    }

    /// Sends the request; returns the item as it was before the update (`ALL_OLD`).
    #[inline(always)]
    pub fn send_returning_old(self) -> impl Future<Output = Result<E, Error>> + 'db
    where
        E: UpdateComplete<S>,
    {
        if self.parts.rewrites_sentinels().is_some() {
            return Either::Left(self.parts.send_with_sentinels(true).boxed());
        }
        Either::Right(self.parts.send(ReturnValue::AllOld, Sent::decode))
    }

    /// Sends the request; returns only the attributes it changed, as they are now
    /// (`UPDATED_NEW`): a partial item, so raw.
    #[inline(always)]
    pub fn send_returning_updated_new(
        self,
    ) -> impl Future<Output = Result<crate::Item, Error>> + 'db
    where
        E: UpdateComplete<S>,
    {
        self.send_returning_updated(false)
    }

    /// Sends the request; returns only the attributes it changed, as they were before
    /// (`UPDATED_OLD`): a partial item, so raw.
    #[inline(always)]
    pub fn send_returning_updated_old(
        self,
    ) -> impl Future<Output = Result<crate::Item, Error>> + 'db
    where
        E: UpdateComplete<S>,
    {
        self.send_returning_updated(true)
    }

    /// The two above: `old` picks `UPDATED_OLD` over `UPDATED_NEW`.
    #[inline(always)]
    fn send_returning_updated(
        self,
        old: bool,
    ) -> impl Future<Output = Result<crate::Item, Error>> + 'db
    where
        E: UpdateComplete<S>,
    {
        if self.parts.rewrites_sentinels().is_some() {
            return Either::Left(
                self.parts
                    .send_with_sentinels_returning_updated(old)
                    .boxed(),
            );
        }
        let returning = if old {
            ReturnValue::UpdatedOld
        } else {
            ReturnValue::UpdatedNew
        };
        Either::Right(self.parts.send(returning, |_, item| Ok(item)))
    }
}

impl<E: Entity + UpdateComplete<S>, S> crate::send::write::sealed::Sealed for Update<'_, E, S> {}
// A hand-built transaction cannot hold the sentinel writes of a unique value's change:
// `InTransaction` makes that a compile error, and `rewrites_sentinels` is the check behind it.
impl<E, S> crate::op::transact::TransactWrite for Update<'_, E, S>
where
    E: Entity + UpdateComplete<S>,
    E::TransactionRule: crate::unique::InTransaction<E, S>,
{
    fn transact_op(&self) -> Result<crate::op::transact::TransactOp, Error> {
        if let Some(error) = self.parts.rewrites_sentinels() {
            return Err(error.into());
        }
        self.transact_op()
    }
}
