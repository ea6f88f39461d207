//! Unique values (`#[dynamo(unique)]`, `unique(a, b)`): DynamoDB enforces uniqueness only on
//! the primary key, so each unique value of an item has a sentinel item whose key is the value,
//! written and removed in the same transaction as the item.
//!
//! A sentinel is stored at `PK = "_UNIQUE#<entity>#<name>#<value>"` (and `SK = "_UNIQUE"` in a
//! table with a sort key), and points back to its owner's key. A write claims the sentinels of
//! the item's values (`attribute_not_exists`, or already this item's) and releases those of
//! values it no longer has (only if they are still this item's), and is conditioned on the
//! item being as it was read, so a concurrent change makes it try again instead of leaving a
//! sentinel behind.
//!
//! Values are compared exactly as stored: normalise them (say, lower-case an email) before
//! writing if two spellings should collide. A value must fit its sentinel's partition key,
//! which DynamoDB limits to 2048 bytes: a longer one (a user's 3,000-character "email") is
//! [`LimitError::UniqueValueSize`](crate::item::LimitError::UniqueValueSize), naming the
//! field and its longest value, before any write; a lookup of it finds nothing; an item that
//! held one (written before the field was unique) releases nothing when it drops it, and the
//! claim sweep stops at such an item, with the same error.
//!
//! A sentinel carries its owner's expiry (the TTL attribute), so that a value is held exactly
//! as long as its owner lives, and every write that changes the expiry rewrites the item's
//! sentinels with it.
//!
//! An update that sets a unique value, or the expiry, works the same way: the update, the
//! release of the old value and the claim of the new one (or the claims again, with the new
//! expiry) in one transaction, conditioned on the item as read; it
//! returns the item as a consistent read finds it right after (a transaction returns none). A
//! unique value changed by an amount (`add`, `increment`, `decrement`) has no known new
//! value, and does not compile.
//!
//! Cost: a put, update or delete is a strongly consistent read of the item, then a
//! transaction of the item and one write per value claimed or released, each counted twice (4
//! WCU for a small item with one unique value, against 1 for a plain put); an update of a
//! unique value reads the item once more after. A lookup (`Db::get_by_unique`) is two
//! eventually consistent reads: the sentinel holds its owner's key, not a copy, so writes stay
//! one item wide. Batch writes and puts or deletes in transactions assembled by hand would
//! write the item without its sentinels, and do not compile; nor does such a transaction's
//! update of a unique value or of the expiry the sentinels carry.

mod lookup;
pub use lookup::GetByUnique;
pub(crate) mod markers;
mod sentinel;
mod sweep;
mod write;

#[doc(hidden)]
pub use markers::{AnyUpdate, InTransaction, KeepsSentinels, NoUniqueValues, UniqueField};
pub use sweep::{ClaimReport, ClaimUnique, Duplicate};

pub(crate) use sentinel::{key_of, replaced_releases, sentinel_ops, SENTINEL_ENTITY};
pub(crate) use write::{
    foreign_release, plain_or_with_sentinels, transaction, unique_failure, write_with_sentinels,
    Attempt, SentinelWrite,
};

/// Types a unique value may have: those with one canonical encoding, so that equal values
/// always key the same sentinel. They are the key part types (strings, integers, booleans,
/// times and dates, uuid and ulid, `#[derive(KeyPart)]` enums and your own
/// [`KeyPart`](crate::KeyPart)s), and an `Option` of one (unique only when present).
/// A struct, map or list has no such encoding (a map's entries have no order), so it cannot
/// be unique: make the value a key part, or mark its fields `unique(a, b)`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a unique value: its encoding is not canonical, so equal values could key different sentinels",
    label = "`#[dynamo(unique)]` needs a string, integer, boolean, key part or an `Option` of one",
    note = "unique values are keys: use a key part type (a `String`, an integer, a `#[derive(KeyPart)]` enum), or list the struct's fields as `unique(a, b)` on the entity"
)]
pub trait UniqueValue {
    /// What the derive's check names: `<T as Trait>::CHECKED` reports an unmet bound at the
    /// user's tokens, with no note pointing into this crate.
    #[doc(hidden)]
    const CHECKED: () = ();
}

impl<T: crate::KeyPart + ?Sized> UniqueValue for T {}
impl<T: crate::KeyPart> UniqueValue for Option<T> {}
