//! What generated code calls; not a public API. The derives expand to static schema data and
//! calls into these items, through `::singletable::__private`, so that nothing they need has
//! to be public API of its own.
pub use crate::const_text::str_eq;
pub use crate::design_check::{
    HasNoSortKey, HasSortKey, IndexSortKeyAbsent, IndexSortKeyDeclared, WithSortKey, WithoutSortKey,
};
pub use crate::index_projection::{IndexProjection, ProjectsAll, ProjectsKeys, ProjectsSome};
pub use crate::key::part::{text_attribute, AnyValue, FromKey, KeyArg, KeyPartFns};
pub use crate::key::shape::PartShape;
pub use crate::key::template::Segment;
pub use crate::key::{KeyField, KeyPart, KeyTemplate, PartContext, PartError, PrefixFree};
pub use crate::schema::entity::{EntityIndex, IndexRule, RuleArguments, Unversioned, Versioned};
pub use crate::schema::field::{
    FieldSchema, ManagedFields, ManagedTimestamp, ScalarAttribute, TtlField, UniqueSchema,
};
pub use crate::schema::table::{DeclaresIndex, ExpiringTable, NoStream};
pub use crate::schema::{
    EntitySchema, IndexKind, IndexSchema, KeyAttribute, ScalarType, TableSchema,
};

/// The index slots a template names (`gsi1` to `gsi20`, `lsi1` to `lsi5`).
pub mod index {
    pub use crate::schema::index::*;
}

pub use crate::expr::field::ttl_form;
pub use crate::expr::field::{
    Addable, Container, FieldPath, GuardPath, IntoField, ListType, MapType, NoTypedPath, Optional,
    Searchable, SetType, ValueFor,
};
pub use crate::expr::field_role::{role, FieldOf, StoredForm};
pub use crate::expr::sets::stored_as_set;
pub use crate::expr::Field;

/// The type states of an update: which fields it changed, and whether its versions and
/// timestamps are given.
pub mod state {
    pub use crate::expr::state::*;
}

/// The untyped expression trees and their placeholders, for the property tests and the
/// benches that build requests by hand.
pub mod expr {
    pub use crate::expr::condition::{Node, Operand};
    pub use crate::expr::path::{AttrPath, PathStep};
    pub use crate::expr::placeholders::{Names, Placeholders, Values};
    pub use crate::expr::update::{overlapping, render, Action, SetValue};
}
pub use crate::item::decode_fields;
pub use crate::managed::{timestamp_value, version_of, Timestamp, VersionNumber};
pub use crate::op::batch::{BatchTarget, MemberOf};
pub use crate::op::query::collection_table::{
    CollectionTable, DeclaredTable, InTable, SameTable, UnknownTable,
};
pub use crate::op::query::decode::Decode;
pub use crate::op::query::entry::{unknown_attribute, ProjectionOf};
pub use crate::op::query::indexes::{primary, ConsistentIndex, IndexOf, QueryIndex, ReadsAs};
pub use crate::op::query::key_condition::{
    After, Closed, InnerPart, LastPart, RangeOn, SortKeyPart, Start,
};
pub use crate::op::query::{Collection, PartitionKey, Projection};
pub use crate::schema::primary_key::key_attributes;

/// Whether index `I` of table `T` holds attribute `name` (the `Projection` derive's check).
pub const fn index_holds<T: DeclaresIndex<I>, I: index::IndexSlot>(name: &str) -> bool {
    T::INDEX.holds(T::SCHEMA, name)
}

pub use crate::expr::field::to_value;
pub use crate::schema::space::collection_overlap;
pub use crate::stream::change::collection_key;
pub use crate::stream::view::{DeclaredStream, StreamView, ViewOf};
pub use crate::stream::{CollectionKey, StreamTarget};
pub use crate::stream::{KeysOnly, NewAndOldImages, NewImage, OldImage, StreamViewType};
pub use crate::ttl::{ttl_attribute_mismatch, ttl_field, TtlValue};
pub use crate::unique::markers::{
    AnyUpdate, InTransaction, KeepsSentinels, NoUniqueValues, UniqueField,
};
pub use crate::unique::UniqueValue;

/// Whether key attribute number `position` is named `name` (usable in constants).
pub const fn key_name_is(keys: &[KeyAttribute], position: usize, name: &str) -> bool {
    position < keys.len() && str_eq(keys[position].name, name)
}

/// Whether key attribute number `position` has type `kind` (usable in constants).
pub const fn key_kind_is(keys: &[KeyAttribute], position: usize, kind: ScalarType) -> bool {
    position < keys.len() && keys[position].kind as u8 == kind as u8
}
pub use crate::DecodeError;

pub use std::any::Any;

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

pub use crate::item::decode;
pub use crate::schema::item_keys::key_from_arguments;
#[cfg(feature = "local")]
pub use crate::testing;
pub use crate::{Entity, Item, Key, KeyError, Table};
pub use aws_sdk_dynamodb::types::AttributeValue;
pub use std::option::Option::{self, None, Some};
pub use std::result::Result::{self, Err, Ok};
pub use std::string::String;
