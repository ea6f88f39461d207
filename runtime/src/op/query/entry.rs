//! What a lean index (`KEYS_ONLY` or `INCLUDE`) holds of an item: its primary key, and the
//! attributes the index projects, read as a [`Projection`].

use crate::item::{DecodeError, Item};
use crate::schema::Entity;
use crate::Key;
use std::fmt;

/// One item of entity `E` as a lean index holds it: the primary key, with which
/// [`Hydrate`](super::Hydrate) reads the whole item, and the projected attributes
/// as `T` (`()` for none).
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

/// Attributes of entity `E` read from an index, declared with
/// `#[derive(singletable::Projection)]` (or `()`, for none).
pub trait Projection<E: Entity>: Sized + Send + 'static {
    /// The attributes it reads (its `ProjectionExpression`, with the keys).
    const ATTRIBUTES: &'static [&'static str];

    /// Reads the attributes out of an index item.
    fn from_item(item: Item) -> Result<Self, DecodeError>;
}

/// A [`Projection`] that index `I` holds every attribute of: checked when it is derived, so a
/// projection of an attribute the index leaves out does not compile.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a projection of index `{I}` of `{E}`",
    label = "a projection is declared for one index",
    note = "derive it with `#[derive(singletable::Projection)]` and `#[dynamo(entity = {E}, index = {I})]`"
)]
pub trait ProjectionOf<E: Entity, I>: Projection<E> {}

impl<E: Entity> Projection<E> for () {
    const ATTRIBUTES: &'static [&'static str] = &[];

    fn from_item(_: Item) -> Result<Self, DecodeError> {
        Ok(())
    }
}

impl<E: Entity, I> ProjectionOf<E, I> for () {}
