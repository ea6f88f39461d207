//! What a query's items decode into: an entity, a projection, or a collection.

use crate::item::DecodeError;
use crate::item::Item;
use crate::schema::{Entity, Table};
use std::marker::PhantomData;

/// Items of entity `E` read with a projection, decoded as `T` (see [`Query::project`](super::Query::project)).
#[derive(Debug, Clone, PartialEq)]
pub struct Projected<E, T> {
    /// The projected attributes.
    pub value: T,
    pub(super) entity: PhantomData<fn() -> E>,
}

impl<E: Entity, T: serde::de::DeserializeOwned> Decode for Projected<E, T> {
    const ONLY_ENTITY: Option<&'static str> = Some(E::SCHEMA.name);
    const ENTITIES: &'static [&'static str] = &[E::SCHEMA.name];
    const NAME: &'static str = E::SCHEMA.name;

    fn decode(item: Item) -> Result<Self, DecodeError> {
        crate::item::decode_as::<E, T>(item).map(|value| Projected {
            value,
            entity: PhantomData,
        })
    }
}

/// What a query's items decode into: one entity, or a [`Collection`] of several.
pub trait Decode: Sized {
    /// The only entity to read (the query filters on it), or `None` for a collection.
    const ONLY_ENTITY: Option<&'static str>;
    /// Every entity it decodes (what a sealed cursor is bound to).
    const ENTITIES: &'static [&'static str];
    /// The entity's name, or the collection's type name (for tracing).
    const NAME: &'static str;

    /// Decodes one item.
    fn decode(item: Item) -> Result<Self, DecodeError>;
}

impl<E: Entity> Decode for E {
    const ONLY_ENTITY: Option<&'static str> = Some(E::SCHEMA.name);
    const ENTITIES: &'static [&'static str] = &[E::SCHEMA.name];
    const NAME: &'static str = E::SCHEMA.name;

    fn decode(item: Item) -> Result<Self, DecodeError> {
        crate::item::decode(item)
    }
}

/// Several entities sharing partitions (an item collection), as one enum; implemented by
/// `#[derive(singletable::Collection)]`.
pub trait Collection: Sized {
    /// The table the entities live in.
    type Table: Table;
    /// The entities, by the entity attribute's value.
    const ENTITIES: &'static [&'static str];

    /// Decodes an item into the variant its entity attribute names.
    fn decode_item(item: Item) -> Result<Self, DecodeError>;
}
