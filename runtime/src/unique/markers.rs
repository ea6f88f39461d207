//! What the `Entity` derive implements for unique values: which fields are unique, and
//! whether an entity has none. Derive support, reached by generated code through `__private`.

use crate::expr::state::{Given, Untouched};

/// A field of entity `E` (its marker type) that is `#[dynamo(unique)]`, so that
/// [`Db::get_by_unique`](crate::Db::get_by_unique) can look an item up by it. Implemented by
/// the `Entity` derive.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not unique, so it cannot find one item",
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

/// Whether a transaction the caller assembles takes an update of entity `E` in update state
/// `S`: it must leave the item's sentinels as they are. `E::TransactionRule` implements it:
/// [`AnyUpdate`] for every entity without unique values, and, for one with them, the entity
/// itself (the derive), for the states that leave each unique value, and the expiry its
/// sentinels carry, unchanged ([`KeepsSentinels`]). A rule type rather than a blanket impl
/// over [`NoUniqueValues`], so that one impl applies and an error names the field.
#[doc(hidden)]
pub trait InTransaction<E, S> {}

/// The transaction rule of an entity without unique values: every update.
#[doc(hidden)]
#[derive(Debug)]
pub enum AnyUpdate {}

impl<E, S> InTransaction<E, S> for AnyUpdate {}

/// The update state of field `F` of entity `E`, a unique value or the expiry of an entity
/// with unique values, in which the update leaves it unchanged, so that the item's
/// sentinels stay right. An update that changes it fails here, naming it.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this update changes `{F}`, which the sentinels of its unique values hold, so a hand-built transaction cannot take it",
    label = "a hand-built transaction cannot rewrite the sentinels",
    note = "send this update on its own: it rewrites the sentinels in a transaction of its own"
)]
pub trait KeepsSentinels<E, F> {}

impl<E, F> KeepsSentinels<E, F> for Untouched {}

impl<E, F> KeepsSentinels<E, F> for Given {}
