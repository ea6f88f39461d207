//! What the `Entity` derive implements for unique values: which fields are unique, and
//! whether an entity has none. Derive support, reached by generated code through `__private`.

use crate::expr::state::{Given, Untouched};

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

/// An update of entity `Self` in update state `S` that a transaction the caller assembles
/// can hold: it leaves the item's sentinels as they are. Every update of an entity without
/// unique values can; for one with them, the derive implements it for the states that leave
/// each unique value, and the expiry its sentinels carry, unchanged ([`KeepsSentinels`]).
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this update of `{Self}` changes a unique value, or the expiry its sentinels hold, so a hand-built transaction cannot take it",
    label = "a hand-built transaction cannot rewrite the sentinels",
    note = "send this update on its own: it rewrites the sentinels in a transaction of its own"
)]
pub trait InTransaction<S> {}

// Not recommended: an error then descends into the derive's impl, which names the field.
#[diagnostic::do_not_recommend]
impl<E: NoUniqueValues, S> InTransaction<S> for E {}

/// The update state of field `F` of entity `E`, a unique value or the expiry of an entity
/// with unique values, in which the update leaves it unchanged, so that the item's
/// sentinels stay right. (rustc reports a failure as [`InTransaction`]'s, whose help line
/// shows the states by field: `(EmailState, ..)`.)
#[doc(hidden)]
pub trait KeepsSentinels<E, F> {}

impl<E, F> KeepsSentinels<E, F> for Untouched {}

impl<E, F> KeepsSentinels<E, F> for Given {}
