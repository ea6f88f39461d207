//! What a field is to its entity, at the type level: the derive gives each field a marker type
//! named after it (`id`, `team_id`), the third parameter of its [`Field`](super::Field) path,
//! and implements [`FieldOf`] for it. Compile errors about a field then name the field as the
//! user wrote it, rather than a number or a generated trait.

/// Implemented by the derive for the marker type of each field of entity `E`.
pub trait FieldOf<E> {
    /// The field's position in `E::SCHEMA.fields`.
    const INDEX: usize;
    /// What the field is to the entity: [`role::Plain`], [`role::Key`], [`role::Managed`] or
    /// [`role::Unique`].
    type Role;
    /// What an update of the field does to the entity's update state: the marker itself for
    /// a field an index reads (the derive implements `state::TouchInput` on it), and
    /// `state::NoInput` for the others.
    type Input;
    /// How DynamoDB stores the field when that is not how serde writes it: a TTL field (the
    /// derive gives it `ttl_form`) or a set (`stored_as_set`).
    const STORED: Option<StoredForm> = None;
}

#[doc(hidden)]
/// The stored form of a value as serde writes it; `None` for a value stored as no attribute.
pub type StoredForm = fn(
    aws_sdk_dynamodb::types::AttributeValue,
) -> Result<Option<aws_sdk_dynamodb::types::AttributeValue>, String>;

/// The roles of a field.
pub mod role {
    /// An ordinary attribute (a TTL field too: extending an expiry is an update).
    #[derive(Debug)]
    pub enum Plain {}
    /// A field of the primary key's templates: the key supplies it, and it cannot change in
    /// place.
    #[derive(Debug)]
    pub enum Key {}
    /// A field the library maintains on every write: a version or a timestamp.
    #[derive(Debug)]
    pub enum Managed {}
    /// A field outside the primary key that is a unique value or part of one: its sentinel
    /// is keyed by its value, so an update sets it to a known value.
    #[derive(Debug)]
    pub enum Unique {}

    /// Roles outside the primary key.
    pub trait OutsideKey {}
    impl OutsideKey for Plain {}
    impl OutsideKey for Managed {}
    impl OutsideKey for Unique {}

    /// Roles the library does not maintain.
    pub trait Unmanaged {}
    impl Unmanaged for Plain {}
    impl Unmanaged for Key {}
    impl Unmanaged for Unique {}

    /// Roles an update may change by an amount: all but [`Unique`] (a key or a managed field
    /// is refused by its own bound, with its own message).
    pub trait ChangesByAmount {}
    impl ChangesByAmount for Plain {}
    impl ChangesByAmount for Key {}
    impl ChangesByAmount for Managed {}
}

/// A field outside the primary key of `E`. An update may change a field that is
/// [`OutsideKey`] and [`Unmanaged`]; each is a bound of its own, so that the error names the
/// one that fails.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is part of the primary key; keys cannot change in place",
    label = "cannot update a key attribute",
    note = "to change it, move the item with `db.rekey(&old, &new)`: it deletes the old item and puts the new one in one transaction, so the item is never lost or duplicated; or keep the changing value on an index key, which an update can change"
)]
pub trait OutsideKey<E> {}

// Not recommended: the error is then this trait's, which names the field and its entity.
#[diagnostic::do_not_recommend]
impl<E, F: FieldOf<E>> OutsideKey<E> for F where F::Role: role::OutsideKey {}

/// A field of `E` the library does not maintain.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is maintained by singletable on every put and update, so it cannot be updated directly",
    label = "maintained by singletable",
    note = "a `#[dynamo(version)]` field advances by itself: use `.expect_version(v)` to update only if the item is still at the version you read; `created_at` and `updated_at` are written with the current time"
)]
pub trait Unmanaged<E> {}

#[diagnostic::do_not_recommend]
impl<E, F: FieldOf<E>> Unmanaged<E> for F where F::Role: role::Unmanaged {}

/// A field of `E` that is no unique value: an update may change it by an amount (`add`,
/// `increment`, `decrement`). A unique value's new value keys its sentinel, so it must be
/// known before the write.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is unique, so it must be changed with `set`, to a known value, not by an amount",
    label = "the sentinel of a unique value is keyed by its new value, which an amount leaves unknown until the write",
    note = "set the new value with `.set(..)`: the update then moves the value's sentinel in its own transaction"
)]
pub trait NotUnique<E> {}

#[diagnostic::do_not_recommend]
impl<E, F: FieldOf<E>> NotUnique<E> for F where F::Role: role::ChangesByAmount {}

/// The indexes of entity `E` that its field `F` (a marker type) is an input of, worked out at
/// compile time: bit `i` stands for `E::SCHEMA.indexes[i]`. An update tells from these which indexes
/// it changes without reading templates.
pub(crate) struct FieldIndexes<E, F>(std::marker::PhantomData<fn() -> (E, F)>);

impl<E: crate::schema::Entity, F: FieldOf<E>> FieldIndexes<E, F> {
    pub(crate) const MASK: u64 = E::SCHEMA.index_mask(F::INDEX);
}
