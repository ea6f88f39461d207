//! What generated code calls; not a public API. The derives expand to static schema data and
//! calls into these items, through `::singletable::__private`, so that nothing they need has
//! to be public API of its own.
pub use crate::key::{
    KeyArg, KeyField, KeyPart, KeyTemplate, PartContext, PartError, PrefixFree, Segment,
};
pub use crate::schema::index;
pub use crate::schema::{
    DeclaresIndex, EntityIndex, EntitySchema, HasNoSortKey, HasSortKey, IndexKind, IndexSchema,
    IndexSortKeyAbsent, IndexSortKeyDeclared, TableSchema, WithSortKey, WithoutSortKey,
};

pub use crate::expr::field_role::{role, FieldOf};
pub use crate::expr::state;
pub use crate::expr::Field;
pub use crate::item::decode_fields;
pub use crate::managed::{timestamp_value, Timestamp, VersionNumber};
pub use crate::op::query::{
    primary, After, Collection, Decode, InnerPart, LastPart, PartitionKey, SortKeyPart, Start,
};
pub use crate::op::query::{Projection, ProjectionOf};
pub use crate::schema::{ExpiringTable, IndexProjection, ProjectsAll, ProjectsKeys, ProjectsSome};

/// What the derive generates, deprecated with the reason, in place of the typed path of a
/// field no typed path can serve: one serde never stores, or stores in a form only its own
/// function knows. Using it fails to compile, with the reason as the deprecation note.
#[derive(Debug, Clone, Copy)]
pub struct NoTypedPath;

/// Whether index `I` of table `T` holds attribute `name` (the `Projection` derive's check).
pub const fn index_holds<T: DeclaresIndex<I>, I: index::IndexSlot>(name: &str) -> bool {
    T::INDEX.holds(T::SCHEMA, name)
}
pub use crate::schema::{
    str_eq, FieldSchema, IndexRule, KeyPartFns, ManagedFields, ManagedTimestamp, ScalarAttribute,
    ScalarType, Versioned,
};

pub use crate::expr::field::to_value;
pub use crate::key_space::assert_disjoint;
pub use crate::schema::KeyAttribute;
pub use crate::schema::{NoStream, UniqueSchema};
pub use crate::stream::{collection_key, CollectionKey, StreamTarget};
pub use crate::stream::{KeysOnly, NewAndOldImages, NewImage, OldImage, StreamViewType};
pub use crate::ttl::{assert_ttl_attribute, ttl_field, TtlField, TtlValue};
pub use crate::unique::{NoUniqueValues, UniqueField};

/// Checked for each unique field: its type has one canonical encoding.
pub fn assert_unique_value<T: crate::unique::UniqueValue + ?Sized>(_: &T) {}

/// Whether key attribute number `position` is named `name` (usable in constants).
pub const fn key_name_is(keys: &[KeyAttribute], position: usize, name: &str) -> bool {
    position < keys.len() && str_eq(keys[position].name, name)
}

/// Whether key attribute number `position` has type `kind` (usable in constants).
pub const fn key_kind_is(keys: &[KeyAttribute], position: usize, kind: ScalarType) -> bool {
    position < keys.len() && keys[position].kind as u8 == kind as u8
}
pub use crate::DecodeError;

/// Checked for a timestamp field.
pub fn assert_timestamp<T: Timestamp>(_: &T) {}
pub use std::any::Any;

/// Renders a type-erased field value; used through [`KeyPartFns`].
pub fn render_any<T: KeyPart + 'static>(
    value: &dyn Any,
    context: PartContext,
    out: &mut String,
) -> Result<(), KeyError> {
    match value.downcast_ref::<T>() {
        Some(value) => value.render_part(context, out),
        None => Err(KeyError::Unrepresentable {
            field: context.field,
            reason: format!("expected a value of type {}", std::any::type_name::<T>()),
        }),
    }
}

/// Parses a field's key text into a type-erased value; used through [`KeyPartFns`].
pub fn parse_any<T: KeyField + Send + Sync + 'static>(
    text: &str,
    width: Option<u8>,
) -> Result<crate::schema::AnyValue, PartError> {
    T::parse_part(text, width).map(|value| Box::new(value) as crate::schema::AnyValue)
}

/// The entity attribute of a raw item, if it is a string.
pub fn entity_name<T: Table>(item: &crate::Item) -> Option<&str> {
    match item.get(T::SCHEMA.entity_attribute) {
        Some(AttributeValue::S(name)) => Some(name),
        _ => None,
    }
}

/// The error for an item of an entity a collection does not know.
pub fn unknown_entity<T: Table>(
    item: &crate::Item,
    collection: &'static str,
) -> crate::DecodeError {
    crate::DecodeError::WrongEntity {
        key: crate::item::key_text::<T>(item),
        attribute: T::SCHEMA.entity_attribute,
        expected: collection,
        found: entity_name::<T>(item).map(str::to_owned),
    }
}

/// Checked for each variant of a collection: every entity lives in table `T`.
pub fn assert_in_table<T: Table, E: InTable<T>>() {}

/// An entity of table `T`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` lives in another table than `{T}`, the table of the collection's first entity",
    label = "not an entity of `{T}`",
    note = "a collection's entities share one table, as the items of one query do"
)]
pub trait InTable<T> {}

// Not recommended: the error is then `InTable`'s, which names both tables.
#[diagnostic::do_not_recommend]
impl<T: Table, E: Entity<Table = T>> InTable<T> for E {}

/// A template field's value as the key part it renders: the derive calls
/// `(&KeyPartOf(&value)).key_part()` with [`IsKeyPart`] and [`NotKeyPart`] in scope.
///
/// A field whose type is no [`KeyField`] is reported once, at the field, by its schema's
/// `parse_any::<T>`; its templates then take [`NotKeyPart`]'s stand-in, which compiles, so
/// that they report nothing more (the program never builds, so it never renders).
pub struct KeyPartOf<'a, T>(pub &'a T);

/// The key part of a [`KeyField`] value (chosen first by method resolution).
pub trait IsKeyPart {
    /// The value, as a key part.
    fn key_part(&self) -> &dyn KeyPart;
}

impl<T: KeyField> IsKeyPart for KeyPartOf<'_, T> {
    fn key_part(&self) -> &dyn KeyPart {
        self.0
    }
}

/// The stand-in for a value of a type that is no key part, already an error at its field.
pub trait NotKeyPart {
    /// The stand-in.
    fn key_part(&self) -> &dyn KeyPart;
}

impl<T> NotKeyPart for &KeyPartOf<'_, T> {
    fn key_part(&self) -> &dyn KeyPart {
        &NoKeyPart
    }
}

/// What [`NotKeyPart`] stands in with.
struct NoKeyPart;

impl KeyPart for NoKeyPart {
    fn render_part(&self, context: PartContext, _: &mut String) -> Result<(), KeyError> {
        Err(KeyError::Unrepresentable {
            field: context.field,
            reason: "its type is no key part".to_owned(),
        })
    }
}
/// Checked for an entity with an `sk` template.
pub fn assert_table_has_sort_key<T: HasSortKey>() {}
/// Checked for an entity without an `sk` template.
pub fn assert_table_has_no_sort_key<T: HasNoSortKey>() {}
/// Checked for an index sort key template.
pub fn assert_index_has_sort_key<S: IndexSortKeyDeclared>() {}
/// Checked for an index without a sort key template.
pub fn assert_index_has_no_sort_key<S: IndexSortKeyAbsent>() {}
pub use crate::item::decode;
#[cfg(feature = "local")]
pub use crate::testing;
pub use crate::{Entity, Item, Key, KeyError, Table};
pub use aws_sdk_dynamodb::types::AttributeValue;
pub use std::option::Option::{self, None, Some};
pub use std::result::Result::{self, Err, Ok};
pub use std::string::String;
