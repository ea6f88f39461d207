//! What the `Entity` derive implements for unique values: which fields are unique, and
//! whether an entity has none. Derive support, reached by generated code through `__private`.

/// A field of entity `E` (its marker type) that is `#[dynamo(unique)]`, so that
/// [`Db::get_by_unique`](crate::Db::get_by_unique) can look an item up by it. Implemented by
/// the `Entity` derive.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` of `{E}` is not unique, so it cannot find one item",
    label = "a lookup by value needs a `#[dynamo(unique)]` field",
    note = "mark the field `#[dynamo(unique)]` (writes then keep a sentinel item per value), or query an index on it"
)]
pub trait UniqueField<E> {
    /// Its position in the entity's unique values.
    const UNIQUE: usize;
}

/// An entity without unique values: what batch writes, user-built transactions and guarded
/// appends need, since they would write the item without its sentinels (a batch cannot even
/// be conditional). Implemented by the `Entity` derive.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` has unique values, which only its own writes keep",
    label = "this would write the item without the sentinel items of its unique values",
    note = "write `{Self}` with `db.put(..)`, `db.delete(..)` or `db.rekey(..)`: each keeps its unique values in a transaction of its own"
)]
pub trait NoUniqueValues {}
