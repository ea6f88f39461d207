//! Typed paths to an entity's fields: generated as `Ticket::STATUS`, `Ticket::TEAM_ID`, ...
//! A value compared with or written to a field must have the field's Rust type.

use super::condition::Condition;
use super::condition::{AttributeType, Comparison, Node, Operand};
use super::field_role::{FieldOf, StoredForm};
use super::path::AttrPath;
use crate::item::EncodeError;
use crate::schema::entity::Entity;
use crate::schema::field::FieldSchema;
use aws_sdk_dynamodb::types::AttributeValue;
use serde::Serialize;
use std::marker::PhantomData;

/// The typed path to field `F` (of type `T`) of entity `E`; `F` is the field's marker type
/// ([`FieldOf`]). The path is its type alone: its names and stored form come from the
/// entity's schema, so the derive writes each path as one constant of no size.
pub struct Field<E, T, F> {
    types: PhantomData<Marks<E, T, F>>,
}

/// The entity, value and field types a path carries; a function pointer so that a path is
/// `Send`, `Sync` and `Copy` whatever they are.
type Marks<E, T, F> = fn() -> (E, T, F);

/// What the derive generates, deprecated with the reason, in place of the typed path of a
/// field no typed path can serve: one serde never stores, or stores in a form only its own
/// function knows. Using it fails to compile, with the reason as the deprecation note.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct NoTypedPath;

impl<E, T, F> Clone for Field<E, T, F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E, T, F> Copy for Field<E, T, F> {}

impl<E: Entity, T, F: FieldOf<E>> std::fmt::Debug for Field<E, T, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Field({})", self.attribute())
    }
}

#[doc(hidden)]
/// What a typed path points at, for APIs that take "any field path" as one type parameter.
pub trait FieldPath {
    /// The entity.
    type Entity;
    /// The field's type.
    type Value;
}

impl<E, T, F> FieldPath for Field<E, T, F> {
    type Entity = E;
    type Value = T;
}

/// A value as a DynamoDB attribute; a value that cannot be one (a map with non-string keys,
/// say) becomes an error reported when the request is built.
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<AttributeValue, EncodeError> {
    serde_dynamo::to_attribute_value(value).map_err(|error| EncodeError::Serialize {
        entity: "value",
        message: error.to_string(),
    })
}

/// [`to_value`] of a value given away: a `String`, the commonest field type, moves into the
/// `S` value serde would write for it instead of being copied by serializing.
pub(crate) fn into_value<T: Serialize + 'static>(value: T) -> Result<AttributeValue, EncodeError> {
    let mut value = Some(value);
    let text = (&mut value as &mut dyn std::any::Any)
        .downcast_mut::<Option<String>>()
        .and_then(Option::take);
    match text {
        Some(text) => Ok(AttributeValue::S(text)),
        // serde writes `Some(value)` as `value`.
        None => to_value(&value),
    }
}

impl<E, T, F> Field<E, T, F> {
    /// Used by the derive.
    #[doc(hidden)]
    pub const NEW: Self = Field { types: PhantomData };
}

/// Used by the derive, as `FieldOf::STORED` of the field DynamoDB stores in its own form
/// (`#[dynamo(ttl)]`): the form the entity's schema gives it.
#[doc(hidden)]
pub const fn ttl_form(schema: &crate::schema::entity::EntitySchema) -> Option<StoredForm> {
    match &schema.managed.ttl {
        Some(ttl) => Some(ttl.stored),
        None => None,
    }
}

impl<E: Entity, T, F: FieldOf<E>> Field<E, T, F> {
    /// The field's entry in the entity's schema, found when the program is compiled.
    // ok: a constant, evaluated by the compiler from the derive's own data (`F::INDEX` is the
    // field's position in `E::SCHEMA.fields`); no network or user value reaches the index.
    const SCHEMA: &'static FieldSchema = &E::SCHEMA.fields[F::INDEX];

    /// Whether the item stores the field otherwise than serde writes it (a TTL field).
    #[inline]
    pub(crate) fn is_stored_otherwise(&self) -> bool {
        F::STORED.is_some()
    }

    /// A value of the field, encoded by serde, in the form the item stores: `None` when it is
    /// stored as no attribute (a TTL of `None`).
    pub(crate) fn store(
        &self,
        value: AttributeValue,
    ) -> Result<Option<AttributeValue>, EncodeError> {
        match F::STORED {
            None => Ok(Some(value)),
            Some(form) => form(value).map_err(|message| EncodeError::Serialize {
                entity: "value",
                message: format!("`{}`: {message}", self.attribute()),
            }),
        }
    }

    /// A value compared with the field, in the stored form (a missing one compares as `NULL`).
    fn operand_value(&self, value: AttributeValue) -> Result<AttributeValue, EncodeError> {
        Ok(self.store(value)?.unwrap_or(AttributeValue::Null(true)))
    }

    /// The Rust field name.
    pub fn name(&self) -> &'static str {
        Self::SCHEMA.name
    }

    /// The attribute name.
    pub fn attribute(&self) -> &'static str {
        Self::SCHEMA.attribute
    }

    /// The untyped document path.
    pub(crate) fn path(&self) -> AttrPath {
        AttrPath::attribute(self.attribute())
    }

    /// The path to element `index` of this list field.
    pub fn at(self, index: usize) -> Nested<E, T, T::Element, F>
    where
        T: ListType,
    {
        Nested::new(self.name(), self.path().index(index))
    }

    /// The path to key `key` of this map field.
    pub fn key(self, key: &str) -> Nested<E, T, T::Element, F>
    where
        T: MapType,
    {
        Nested::new(self.name(), self.path().key(key))
    }
}

/// The types a [`Nested`] path carries, only at compile time.
type NestedTypes<E, Top, T, F> = fn() -> (E, Top, T, F);

/// The typed path to a value inside field `F` (of type `Top`) of entity `E`: a list
/// element or a map entry, of type `T`.
pub struct Nested<E, Top, T, F> {
    field: &'static str,
    path: AttrPath,
    types: PhantomData<NestedTypes<E, Top, T, F>>,
}

impl<E, Top, T, F> Clone for Nested<E, Top, T, F> {
    fn clone(&self) -> Self {
        Nested::new(self.field, self.path.clone())
    }
}

impl<E, Top, T, F> std::fmt::Debug for Nested<E, Top, T, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Nested({})", self.path)
    }
}

impl<E, Top, T, F> Nested<E, Top, T, F> {
    fn new(field: &'static str, path: AttrPath) -> Self {
        Nested {
            field,
            path,
            types: PhantomData,
        }
    }

    /// The Rust name of the top-level field.
    pub fn name(&self) -> &'static str {
        self.field
    }

    /// The document path.
    pub(crate) fn path(&self) -> AttrPath {
        self.path.clone()
    }

    /// Values inside a field are stored as serde writes them.
    fn operand_value(&self, value: AttributeValue) -> Result<AttributeValue, EncodeError> {
        Ok(value)
    }

    /// The path to element `index` of this list.
    pub fn at(self, index: usize) -> Nested<E, Top, T::Element, F>
    where
        T: ListType,
    {
        Nested::new(self.field, self.path.index(index))
    }

    /// The path to key `key` of this map.
    pub fn key(self, key: &str) -> Nested<E, Top, T::Element, F>
    where
        T: MapType,
    {
        Nested::new(self.field, self.path.key(key))
    }
}

/// `attribute_not_exists(path) OR left <> value`: unequal holds where the attribute is absent,
/// as `None` (stored as no attribute) is unequal to a value, whatever DynamoDB's `<>` gives of a
/// missing attribute, which its documentation does not say; so it holds of no item, and of an
/// expired one (`Node::on_absent_item`).
fn unequal_or_absent(path: AttrPath, left: Operand, value: AttributeValue) -> Node {
    Node::Or(
        Box::new(Node::NotExists(path)),
        Box::new(Node::Compare(left, Comparison::Ne, Operand::Value(value))),
    )
}

/// The condition builders of typed paths, written once for top-level fields and nested
/// values.
macro_rules! condition_methods {
    ([$($generics:tt)*] $path:ty, [$($string_generics:tt)*] $string_path:ty, [$($container_generics:tt)*] $container_path:ty) => {
        impl<$($generics)*> $path {
    fn compare(self, comparison: Comparison, value: impl ValueFor<T>) -> Condition<E>
    where
        T: Serialize,
    {
        encoded(|| {
            let value = self.operand_value(value.to_attribute()?)?;
            // `None` is stored as no attribute: equal to it is absent, unequal is present.
            Ok(match (comparison, value) {
                (Comparison::Eq, AttributeValue::Null(_)) => Node::NotExists(self.path()),
                (Comparison::Ne, AttributeValue::Null(_)) => Node::Exists(self.path()),
                (Comparison::Ne, value) => {
                    unequal_or_absent(self.path(), Operand::Path(self.path()), value)
                }
                (comparison, value) => Node::Compare(
                    Operand::Path(self.path()),
                    comparison,
                    Operand::Value(value),
                ),
            })
        })
    }

    /// `field = value`
    pub fn eq(self, value: impl ValueFor<T>) -> Condition<E>
    where
        T: Serialize,
    {
        self.compare(Comparison::Eq, value)
    }

    /// `field <> value`, or the field absent (as `None` is stored): `attribute_not_exists(field)
    /// OR field <> value`.
    pub fn ne(self, value: impl ValueFor<T>) -> Condition<E>
    where
        T: Serialize,
    {
        self.compare(Comparison::Ne, value)
    }

    /// `field < value`
    pub fn lt(self, value: impl ValueFor<T>) -> Condition<E>
    where
        T: Serialize,
    {
        self.compare(Comparison::Lt, value)
    }

    /// `field <= value`
    pub fn le(self, value: impl ValueFor<T>) -> Condition<E>
    where
        T: Serialize,
    {
        self.compare(Comparison::Le, value)
    }

    /// `field > value`
    pub fn gt(self, value: impl ValueFor<T>) -> Condition<E>
    where
        T: Serialize,
    {
        self.compare(Comparison::Gt, value)
    }

    /// `field >= value`
    pub fn ge(self, value: impl ValueFor<T>) -> Condition<E>
    where
        T: Serialize,
    {
        self.compare(Comparison::Ge, value)
    }

    /// `field BETWEEN low AND high`
    pub fn between(self, low: impl ValueFor<T>, high: impl ValueFor<T>) -> Condition<E>
    where
        T: Serialize,
    {
        encoded(|| {
            Ok(Node::Between(
                Operand::Path(self.path()),
                Operand::Value(self.operand_value(low.to_attribute()?)?),
                Operand::Value(self.operand_value(high.to_attribute()?)?),
            ))
        })
    }

    /// `field IN (a, b, ...)` (DynamoDB allows up to 100 options).
    pub fn is_in<V: ValueFor<T>>(self, options: impl IntoIterator<Item = V>) -> Condition<E>
    where
        T: Serialize,
    {
        let options: Vec<V> = options.into_iter().collect();
        if options.len() > MAX_IN_OPERANDS {
            return Condition::invalid(EncodeError::Limit(crate::LimitError::InOperands {
                count: options.len(),
                max: MAX_IN_OPERANDS,
            }));
        }
        encoded(|| {
            let operands = options
                .iter()
                .map(|option| {
                    let value = self.operand_value(option.to_attribute()?)?;
                    Ok::<_, EncodeError>(Operand::Value(value))
                })
                .collect::<Result<_, _>>()?;
            Ok(Node::In(Operand::Path(self.path()), operands))
        })
    }

    /// `attribute_exists(field)`
    pub fn exists(self) -> Condition<E> {
        Condition::from_node(Node::Exists(self.path()))
    }

    /// `attribute_not_exists(field)`
    pub fn not_exists(self) -> Condition<E> {
        Condition::from_node(Node::NotExists(self.path()))
    }

    /// `attribute_type(field, type)`
    pub fn has_type(self, kind: AttributeType) -> Condition<E> {
        Condition::from_node(Node::Type(self.path(), kind))
    }

    /// `size(field) <op> n`, for strings, binaries, sets, lists and maps. With
    /// [`Comparison::Ne`] it holds where the field is absent too, as [`ne`](Self::ne) does:
    /// `attribute_not_exists(field) OR size(field) <> n`.
    pub fn size(self, comparison: Comparison, size: u64) -> Condition<E> {
        let size = AttributeValue::N(size.to_string());
        Condition::from_node(match comparison {
            Comparison::Ne => unequal_or_absent(self.path(), Operand::Size(self.path()), size),
            _ => Node::Compare(Operand::Size(self.path()), comparison, Operand::Value(size)),
        })
    }

    /// `field <op> other_field`, both of the same type.
    pub fn compare_field<G>(
        self,
        comparison: Comparison,
        other: Field<E, T, G>,
    ) -> Condition<E>
    where
        E: Entity,
        G: FieldOf<E>,
    {
        Condition::from_node(Node::Compare(
            Operand::Path(self.path()),
            comparison,
            Operand::Path(other.path()),
        ))
    }        }

        impl<$($string_generics)*> $string_path {
    /// `begins_with(field, prefix)`
    pub fn begins_with(self, prefix: &str) -> Condition<E> {
        Condition::from_node(Node::BeginsWith(
            self.path(),
            Operand::Value(AttributeValue::S(prefix.to_owned())),
        ))
    }

    /// `contains(field, text)`
    pub fn contains(self, text: &str) -> Condition<E> {
        Condition::from_node(Node::Contains(
            self.path(),
            Operand::Value(AttributeValue::S(text.to_owned())),
        ))
    }
}

        impl<$($container_generics)*> $container_path {
    /// `contains(field, element)` on a set or list.
    pub fn contains_element(self, element: &T::Element) -> Condition<E>
    where
        T::Element: Serialize,
    {
        encoded(|| Ok(Node::Contains(self.path(), operand(element)?)))
    }
}
    };
}

condition_methods!(
    [E: Entity, T, F: FieldOf<E>] Field<E, T, F>,
    [E: Entity, F: FieldOf<E>] Field<E, String, F>,
    [E: Entity, T: Searchable, F: FieldOf<E>] Field<E, T, F>
);
condition_methods!(
    [E, Top, T, F] Nested<E, Top, T, F>,
    [E, Top, F] Nested<E, Top, String, F>,
    [E, Top, T: Searchable, F] Nested<E, Top, T, F>
);

/// DynamoDB's limit on the operands of one `IN`.
pub const MAX_IN_OPERANDS: usize = 100;

/// The condition `build` makes, or, when one of its values does not encode, a condition that
/// carries the error.
fn encoded<E>(build: impl FnOnce() -> Result<Node, EncodeError>) -> Condition<E> {
    match build() {
        Ok(node) => Condition::from_node(node),
        Err(error) => Condition::invalid(error),
    }
}

#[doc(hidden)]
/// A value a condition compares a field of type `T` with: a `T` or a `&T`, or a `&str` for a
/// `String` field, whichever the caller has at hand.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be compared with a field of type `{T}`",
    label = "expected a `{T}` or a reference to one",
    note = "a condition takes the field's own type, by value or by reference (`&str` also works for a `String` field)"
)]
pub trait ValueFor<T> {
    /// The value as DynamoDB stores it.
    fn to_attribute(&self) -> Result<AttributeValue, EncodeError>;
}

impl<T: Serialize> ValueFor<T> for T {
    fn to_attribute(&self) -> Result<AttributeValue, EncodeError> {
        to_value(self)
    }
}

impl<T: Serialize> ValueFor<T> for &T {
    fn to_attribute(&self) -> Result<AttributeValue, EncodeError> {
        to_value(*self)
    }
}

impl ValueFor<String> for &str {
    fn to_attribute(&self) -> Result<AttributeValue, EncodeError> {
        to_value(*self)
    }
}

#[doc(hidden)]
/// A value an update sets a field of type `T` to: a `T`, a `&T` (cloned), or a `&str` for a
/// `String` field.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the value of a field of type `{T}`",
    label = "expected a `{T}` or a reference to one",
    note = "an update takes the field's own type, by value or by reference (`&str` also works for a `String` field)"
)]
pub trait IntoField<T> {
    /// The value, owned.
    fn into_field(self) -> T;
}

impl<T> IntoField<T> for T {
    fn into_field(self) -> T {
        self
    }
}

impl<T: Clone> IntoField<T> for &T {
    fn into_field(self) -> T {
        self.clone()
    }
}

impl IntoField<String> for &str {
    fn into_field(self) -> String {
        self.to_owned()
    }
}

/// A value as an operand.
fn operand<V: Serialize + ?Sized>(value: &V) -> Result<Operand, EncodeError> {
    to_value(value).map(Operand::Value)
}

#[doc(hidden)]
/// A set or list type, for `contains`, `ADD`/`DELETE` of elements and `list_append`.
pub trait Container {
    /// The element type.
    type Element;
}

impl<U> Container for Vec<U> {
    type Element = U;
}

impl<V, S> Container for std::collections::HashMap<String, V, S> {
    type Element = V;
}

impl<V> Container for std::collections::BTreeMap<String, V> {
    type Element = V;
}

impl<U, S> Container for std::collections::HashSet<U, S> {
    type Element = U;
}

impl<U> Container for std::collections::BTreeSet<U> {
    type Element = U;
}

#[doc(hidden)]
/// Optional fields, which `REMOVE` may delete.
#[diagnostic::on_unimplemented(
    message = "cannot REMOVE a required field: its type `{Self}` is not an `Option`",
    label = "REMOVE would leave an item that no longer deserializes",
    note = "make the field `Option<...>` to allow removing it, or `set` a new value instead"
)]
pub trait Optional {
    /// The absent value (what a removed attribute reads as).
    fn none() -> Self;
}

impl<U> Optional for Option<U> {
    fn none() -> Self {
        None
    }
}

#[doc(hidden)]
/// Numbers and sets, which `ADD` works on.
#[diagnostic::on_unimplemented(
    message = "ADD works only on numbers and sets, not on `{Self}`",
    label = "DynamoDB's ADD adds to a number or inserts into a set",
    note = "use `set` to replace a value, or `append` to extend a list"
)]
pub trait Addable {}

macro_rules! addable_numbers {
    ($($ty:ty),*) => {$( impl Addable for $ty {} )*};
}
addable_numbers!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, f32, f64);
impl<U, S> Addable for std::collections::HashSet<U, S> {}
impl<U> Addable for std::collections::BTreeSet<U> {}

#[doc(hidden)]
/// Sets, which `DELETE` removes elements from.
#[diagnostic::on_unimplemented(
    message = "DELETE works only on sets, not on `{Self}`",
    label = "DynamoDB's DELETE removes elements from a set"
)]
pub trait SetType: Container {}

impl<U, S> SetType for std::collections::HashSet<U, S> {}
impl<U> SetType for std::collections::BTreeSet<U> {}

#[doc(hidden)]
/// Maps with string keys, whose entries have paths (`field.key("name")`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a map with string keys, so it has no `key(..)` paths"
)]
pub trait MapType: Container {}

impl<V, S> MapType for std::collections::HashMap<String, V, S> {}
impl<V> MapType for std::collections::BTreeMap<String, V> {}

#[doc(hidden)]
/// Lists and sets, which `contains` searches.
#[diagnostic::on_unimplemented(message = "`contains` searches lists and sets, not `{Self}`")]
pub trait Searchable: Container {}

impl<U> Searchable for Vec<U> {}
impl<U, S> Searchable for std::collections::HashSet<U, S> {}
impl<U> Searchable for std::collections::BTreeSet<U> {}

#[doc(hidden)]
/// Lists, which `list_append` extends.
#[diagnostic::on_unimplemented(
    message = "list_append works only on lists (`Vec`), not on `{Self}`"
)]
pub trait ListType: Container {}

impl<U> ListType for Vec<U> {}

#[cfg(test)]
mod tests {
    use super::{into_value, to_value};
    use serde::Serialize;

    fn same_as_serialized<T: Serialize + Clone + 'static>(value: T) {
        assert_eq!(into_value(value.clone()), to_value(&value));
    }

    #[test]
    fn values_given_away_encode_as_serialized() {
        same_as_serialized("open".to_owned());
        same_as_serialized(String::new());
        same_as_serialized(7u32);
        same_as_serialized(Some("x".to_owned()));
        same_as_serialized(None::<String>);
        same_as_serialized(vec!["a".to_owned(), "b".to_owned()]);
    }
}

#[doc(hidden)]
/// A path [`Update::advance`](crate::op::update::Update::advance) can guard: a field of `E`
/// (`Top = T`), or a list element or map entry inside field `F` (of type `Top`). Sealed:
/// implemented for [`Field`] and [`Nested`] only.
pub trait GuardPath<E, Top, T, F>: guard_path::Sealed {
    /// The Rust field name, for messages.
    fn field_name(&self) -> &'static str;
    /// The document path.
    fn guarded(&self) -> AttrPath;
    /// A value as the guard compares and writes it: its stored form (a TTL field's epoch
    /// seconds), as serde wrote it otherwise.
    fn stored(&self, value: AttributeValue) -> Result<AttributeValue, EncodeError>;
}

mod guard_path {
    #[doc(hidden)]
    pub trait Sealed {}
    impl<E, T, F> Sealed for super::Field<E, T, F> {}
    impl<E, Top, T, F> Sealed for super::Nested<E, Top, T, F> {}
}

impl<E: Entity, T, F: FieldOf<E>> GuardPath<E, T, T, F> for Field<E, T, F> {
    fn field_name(&self) -> &'static str {
        self.name()
    }

    fn guarded(&self) -> AttrPath {
        self.path()
    }

    fn stored(&self, value: AttributeValue) -> Result<AttributeValue, EncodeError> {
        self.operand_value(value)
    }
}

impl<E, Top, T, F> GuardPath<E, Top, T, F> for Nested<E, Top, T, F> {
    fn field_name(&self) -> &'static str {
        self.name()
    }

    fn guarded(&self) -> AttrPath {
        self.path()
    }

    fn stored(&self, value: AttributeValue) -> Result<AttributeValue, EncodeError> {
        Ok(value)
    }
}
