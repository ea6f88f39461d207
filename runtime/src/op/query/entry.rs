//! An item read in part: its primary key, and the attributes of a [`Projection`] (what a
//! lean index, `KEYS_ONLY` or `INCLUDE`, holds of it, or what `select` reads of it).

use crate::item::{DecodeError, Item};
use crate::schema::Entity;
use crate::Key;
use std::fmt;

/// One item of entity `E` read in part: the primary key, with which
/// [`Hydrate`](super::Hydrate) reads the whole item, and the attributes selected as `T`
/// (`()` for none: what a lean index's query returns until it `select`s).
pub struct IndexEntry<E, T = ()> {
    /// The item's primary key in the table.
    pub key: Key<E>,
    /// The attributes the index projects, as the projection type chosen with
    /// [`Query::select`](super::Query::select).
    pub value: T,
}

impl<E: Entity, T: Clone> Clone for IndexEntry<E, T> {
    fn clone(&self) -> Self {
        IndexEntry {
            key: self.key.clone(),
            value: self.value.clone(),
        }
    }
}

impl<E: Entity, T: PartialEq> PartialEq for IndexEntry<E, T> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key && self.value == other.value
    }
}

impl<E: Entity, T: fmt::Debug> fmt::Debug for IndexEntry<E, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IndexEntry")
            .field("key", &self.key)
            .field("value", &self.value)
            .finish()
    }
}

/// Attributes of entity `E` read from the table or one of its indexes, declared with
/// `#[derive(singletable::Projection)]` (or `()`, for none); see
/// [`Query::select`](super::Query::select).
pub trait Projection<E: Entity>: Sized + Send + 'static {
    /// The attributes it reads (its `ProjectionExpression`, with the keys).
    const ATTRIBUTES: &'static [&'static str];

    /// Reads the attributes out of an index item.
    fn from_item(item: Item) -> Result<Self, DecodeError>;
}

#[doc(hidden)]
/// A [`Projection`] that index `I` holds every attribute of: checked when it is derived, so a
/// projection of an attribute the index leaves out does not compile.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a projection of index `{I}` of `{E}`",
    label = "a projection is declared for the table or for one index",
    note = "derive it with `#[derive(singletable::Projection)]` and `#[dynamo(entity = {E}, index = {I})]` (no `index` for the table)"
)]
pub trait ProjectionOf<E: Entity, I>: Projection<E> {}

impl<E: Entity> Projection<E> for () {
    const ATTRIBUTES: &'static [&'static str] = &[];

    fn from_item(_: Item) -> Result<Self, DecodeError> {
        Ok(())
    }
}

impl<E: Entity, I> ProjectionOf<E, I> for () {}

#[doc(hidden)]
/// What a query reads before its projection is chosen: entities, or a lean index's keys.
#[diagnostic::on_unimplemented(
    message = "this query already reads `{Self}`, so it cannot select a projection",
    label = "`select` chooses what a query of one entity reads",
    note = "call `.select::<P>()` right after `db.query(..)` and the key condition, before `.collection()` or another `.select()`"
)]
pub trait Unselected<E> {}
impl<E: Entity> Unselected<E> for E {}
impl<E: Entity> Unselected<E> for IndexEntry<E> {}
