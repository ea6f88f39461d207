//! The indexes a query can read: the table's key, a global or a local secondary index.

use crate::schema::index;

/// Marks the table's own key as the queried "index".
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy)]
pub enum primary {}

/// An index a query can target: the table's primary key, a GSI or an LSI.
pub trait QueryIndex: 'static {}
impl QueryIndex for primary {}
impl<I: index::IndexSlot> QueryIndex for I {}

/// Indexes that support strongly consistent reads.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is a global secondary index: DynamoDB rejects ConsistentRead on global secondary indexes",
    label = "global secondary indexes are eventually consistent",
    note = "read from the table or a local secondary index for strong consistency, or drop `.consistent()`"
)]
pub trait ConsistentIndex {}
impl ConsistentIndex for primary {}
macro_rules! consistent_local_indexes {
    ($($slot:ident),*) => {$( impl ConsistentIndex for index::$slot {} )*};
}
consistent_local_indexes!(lsi1, lsi2, lsi3, lsi4, lsi5);
