//! The indexes a query can read: the table's key, a global or a local secondary index.

use super::entry::IndexEntry;
use crate::schema::{index, DeclaresIndex, Entity, ProjectionKind, Table};
use crate::schema::{ProjectsAll, ProjectsKeys, ProjectsSome};

/// Marks the table's own key as the queried "index".
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy)]
pub enum primary {}

#[doc(hidden)]
/// An index a query can target: the table's primary key, a GSI or an LSI.
pub trait QueryIndex: 'static {}
impl QueryIndex for primary {}
impl<I: index::IndexSlot> QueryIndex for I {}

#[doc(hidden)]
/// What a query of this index of table `T` returns for entity `E`: entities, from the table
/// and from indexes that project every attribute; [`IndexEntry`]
/// values from lean ones (`KEYS_ONLY`, `INCLUDE`).
pub trait IndexOf<T: Table>: QueryIndex {
    /// The decoded item.
    type Entry<E: Entity<Table = T>>;
}

impl<T: Table> IndexOf<T> for primary {
    type Entry<E: Entity<Table = T>> = E;
}

impl<T: DeclaresIndex<I>, I: index::IndexSlot> IndexOf<T> for I
where
    T::Projection: ReadsAs,
{
    type Entry<E: Entity<Table = T>> = <T::Projection as ReadsAs>::Entry<E>;
}

#[doc(hidden)]
/// What queries of an index with this projection return for entity `E`.
pub trait ReadsAs: ProjectionKind {
    /// The decoded item.
    type Entry<E: Entity>;
}

impl ReadsAs for ProjectsAll {
    type Entry<E: Entity> = E;
}
impl ReadsAs for ProjectsKeys {
    type Entry<E: Entity> = IndexEntry<E>;
}
impl ReadsAs for ProjectsSome {
    type Entry<E: Entity> = IndexEntry<E>;
}

#[doc(hidden)]
/// Indexes that support strongly consistent reads.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is a global secondary index: DynamoDB rejects ConsistentRead on global secondary indexes",
    label = "global secondary indexes are eventually consistent",
    note = "read from the table or a local secondary index for strong consistency, or drop `.consistent()`"
)]
pub trait ConsistentIndex {}
impl ConsistentIndex for primary {}
macro_rules! consistent_local_indexes {
    (global: $($global:ident),*; local: $($local:ident),*) => {
        $( impl ConsistentIndex for index::$local {} )*
    };
}
index::with_index_slots!(consistent_local_indexes);
