//! An item read in part: its primary key, and the attributes of a [`Projection`] (what a
//! lean index, `KEYS_ONLY` or `INCLUDE`, holds of it, or what `select` reads of it).

use crate::const_text::{edit_distance, str_eq, suggestion_limit, ConstText};
use crate::item::{DecodeError, Item};
use crate::schema::{Entity, EntitySchema, TableSchema};
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
/// Why a projection's field reads an attribute that no item of entity `E` carries, with the
/// attribute it may have meant: the message the `Projection` derive panics with in a constant
/// of the user's crate, so that the compile error is at that field. `None` for an attribute
/// the items carry: a field's, a key attribute of the table or of an index, one the table
/// lists in an index's projection, or one the library writes (the entity, its schema
/// version, the expiry).
/// The derive passes the schemas as paths (`<Ticket as Entity>::SCHEMA`), not as a type
/// parameter, so that a projection of a type that is no entity is one error, with no note
/// pointing into this crate.
pub const fn unknown_attribute(
    entity: &EntitySchema,
    table: &TableSchema,
    attribute: &str,
) -> Option<ConstText> {
    if is_field_attribute(entity, attribute) || is_table_attribute(table, attribute) {
        return None;
    }
    let text = ConstText::new()
        .push("`")
        .push(attribute)
        .push("` is not an attribute of `")
        .push(entity.name)
        .push("`");
    let fields = entity.fields;
    let mut closest = None;
    let mut closest_distance = suggestion_limit(attribute) + 1;
    let mut position = 0;
    while position < fields.len() {
        let distance = edit_distance(attribute, fields[position].attribute);
        if distance < closest_distance {
            (closest, closest_distance) = (Some(fields[position].attribute), distance);
        }
        position += 1;
    }
    if let Some(meant) = closest {
        return Some(text.push("; did you mean `").push(meant).push("`?"));
    }
    let mut text = text.push(", whose fields are stored as ");
    position = 0;
    while position < fields.len() {
        if position > 0 {
            text = text.push(if position + 1 == fields.len() {
                " and "
            } else {
                ", "
            });
        }
        text = text.push("`").push(fields[position].attribute).push("`");
        position += 1;
    }
    Some(text)
}

const fn is_field_attribute(entity: &EntitySchema, attribute: &str) -> bool {
    let mut position = 0;
    while position < entity.fields.len() {
        if str_eq(entity.fields[position].attribute, attribute) {
            return true;
        }
        position += 1;
    }
    false
}

const fn is_table_attribute(table: &TableSchema, attribute: &str) -> bool {
    if table.attribute(attribute).is_some() {
        return true;
    }
    let mut position = 0;
    while position < table.indexes.len() {
        let index = &table.indexes[position];
        // An attribute the table lists in an index's projection is carried too, though no
        // field writes it now (one an earlier version of the entity wrote, say).
        if index.is_key_attribute(attribute) || index.includes(attribute) {
            return true;
        }
        position += 1;
    }
    false
}

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
