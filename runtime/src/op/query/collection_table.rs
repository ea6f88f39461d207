//! The table a collection's entities share, worked out and checked at compile time.
//!
//! An entity whose derive failed for want of `table = ..` has [`UnknownTable`], so that a
//! collection holding it reports nothing more: [`CollectionTable`] picks the table of its
//! other entities, and [`InTable`] lets the stand-in pass. Both tell tables apart by
//! [`DeclaredTable`], which only the `Table` derive implements.

use crate::schema::{Entity, NoStream, Table, TableSchema};

#[doc(hidden)]
/// Implemented by `#[derive(Table)]`: a table the user declared, never [`UnknownTable`].
pub trait DeclaredTable: Table {}

#[doc(hidden)]
/// The table of an entity whose `table = ..` is missing; that error is already reported.
#[derive(Debug, Clone, Copy)]
pub enum UnknownTable {}

impl Table for UnknownTable {
    const SCHEMA: &'static TableSchema = &TableSchema {
        type_name: "(unknown table)",
        name: "",
        partition_key: "",
        sort_key: None,
        entity_attribute: "",
        schema_version_attribute: "",
        indexes: &[],
        ttl_attribute: None,
        stream: None,
    };
    type Stream = NoStream;
}

#[doc(hidden)]
/// The table of a collection's entities so far (`Self`) and one more entity's table (`T`):
/// the first declared one. Whether they are the same is [`InTable`]'s check, not this one's.
pub trait CollectionTable<T> {
    /// The collection's table.
    type Out: Table;
}

impl<A: DeclaredTable, B: DeclaredTable> CollectionTable<B> for A {
    type Out = A;
}

impl<B: Table> CollectionTable<B> for UnknownTable {
    type Out = B;
}

impl<A: DeclaredTable> CollectionTable<UnknownTable> for A {
    type Out = A;
}

#[doc(hidden)]
/// An entity of table `T`: checked for each variant of a `Collection`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` lives in another table than `{T}`, the table of the collection's first entity",
    label = "not an entity of `{T}`",
    note = "a collection's entities share one table, as the items of one query do"
)]
pub trait InTable<T> {
    /// What the derive's check names: `<T as Trait>::CHECKED` reports an unmet bound at the
    /// user's tokens, with no note pointing into this crate.
    #[doc(hidden)]
    const CHECKED: () = ();
}

// Not recommended: the error is then `InTable`'s, which names both tables.
#[diagnostic::do_not_recommend]
impl<T, E: Entity> InTable<T> for E where E::Table: SameTable<T> {}

#[doc(hidden)]
/// Tables `Self` and `T` are one, or one of them is [`UnknownTable`].
pub trait SameTable<T> {}

impl<T: DeclaredTable> SameTable<T> for T {}

impl<T: Table> SameTable<T> for UnknownTable {}

impl<T: DeclaredTable> SameTable<UnknownTable> for T {}
