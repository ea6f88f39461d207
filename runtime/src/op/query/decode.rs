//! What a query's items decode into: an entity, index entries, or a collection.

use crate::item::DecodeError;
use crate::item::Item;
use crate::schema::{Entity, EntitySchema, Table};

#[doc(hidden)]
/// What a query's items decode into: one entity, or a [`Collection`] of several.
pub trait Decode: Sized {
    /// The only entity to read (the query filters on it), or `None` for a collection.
    const ONLY_ENTITY: Option<&'static str>;
    /// Every entity it decodes (what a sealed cursor is bound to).
    const ENTITIES: &'static [&'static str];
    /// The schemas of those entities: a collection's query reads the sort keys they share.
    const SCHEMAS: &'static [&'static EntitySchema];
    /// The entity's name, or the collection's type name (for tracing).
    const NAME: &'static str;

    /// Decodes one item.
    fn decode(item: Item) -> Result<Self, DecodeError>;

    /// Whether items are told apart by [`Decode::belongs`] rather than by a filter, so that
    /// counting them means reading them.
    const BY_KEY: bool = false;

    /// Whether `item` is one of those this decodes, when the query cannot filter on the entity
    /// attribute (a lean index may not hold it): others are left out, as the filter would.
    fn belongs(item: &Item) -> bool {
        let _ = item;
        true
    }
}

/// A lean index's entries hold the keys, and the entity attribute only if the index projects
/// it; so they are told apart by key: the templates of a table's entities cannot render each
/// other's keys (the key-space check), so the keys that fit `E`'s templates are `E`'s.
impl<E: Entity, T: super::entry::Projection<E>> Decode for super::entry::IndexEntry<E, T> {
    const ONLY_ENTITY: Option<&'static str> = None;
    const ENTITIES: &'static [&'static str] = &[E::SCHEMA.name];
    const SCHEMAS: &'static [&'static EntitySchema] = &[E::SCHEMA];
    const NAME: &'static str = E::SCHEMA.name;
    const BY_KEY: bool = true;

    fn decode(item: Item) -> Result<Self, DecodeError> {
        let key = crate::Key::read(&item)?;
        let value = T::from_item(item)?;
        Ok(super::entry::IndexEntry { key, value })
    }

    fn belongs(item: &Item) -> bool {
        crate::schema::primary_key::fitting_key::<E::Table>(E::SCHEMA, item).is_some()
    }
}

impl<E: Entity> Decode for E {
    const ONLY_ENTITY: Option<&'static str> = Some(E::SCHEMA.name);
    const ENTITIES: &'static [&'static str] = &[E::SCHEMA.name];
    const SCHEMAS: &'static [&'static EntitySchema] = &[E::SCHEMA];
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
