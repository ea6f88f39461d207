//! Library-maintained fields: optimistic-locking versions and timestamps.

use crate::expr::field::to_value;
use crate::item::EncodeError;
use aws_sdk_dynamodb::types::AttributeValue;
use serde::Serialize;
use std::time::SystemTime;

/// Integer types a `#[dynamo(version)]` field may have.
#[diagnostic::on_unimplemented(
    message = "a `#[dynamo(version)]` field must be an unsigned or signed integer, not `{Self}`",
    label = "versions count writes"
)]
pub trait VersionNumber {
    /// The largest version the type holds: an item at it cannot be written again.
    const MAX: u64;
}

macro_rules! version_numbers {
    ($($ty:ty),*) => {$(
        impl VersionNumber for $ty {
            // Every implementing type's maximum is positive and fits in a u64.
            const MAX: u64 = <$ty>::MAX as u64;
        }
    )*};
}
version_numbers!(u16, u32, u64, i32, i64);

/// Types a `#[dynamo(created_at)]` or `#[dynamo(updated_at)]` field may have.
#[diagnostic::on_unimplemented(
    message = "a timestamp field must be `chrono::DateTime<Utc>` (feature `chrono`) or `i64`/`u64` milliseconds since the Unix epoch, not `{Self}`"
)]
pub trait Timestamp: Serialize {
    /// What the derive's check names: `<T as Trait>::CHECKED` reports an unmet bound at the
    /// user's tokens, with no note pointing into this crate.
    #[doc(hidden)]
    const CHECKED: () = ();
    /// `time` in this type.
    fn at(time: SystemTime) -> Self;
}

fn epoch_millis(time: SystemTime) -> u128 {
    time.duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis())
        .unwrap_or_default()
}

impl Timestamp for u64 {
    fn at(time: SystemTime) -> Self {
        u64::try_from(epoch_millis(time)).unwrap_or(u64::MAX)
    }
}

impl Timestamp for i64 {
    fn at(time: SystemTime) -> Self {
        i64::try_from(epoch_millis(time)).unwrap_or(i64::MAX)
    }
}

#[cfg(feature = "chrono")]
#[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
impl Timestamp for chrono::DateTime<chrono::Utc> {
    fn at(time: SystemTime) -> Self {
        time.into()
    }
}

/// `time` as a `T` attribute value; referenced by generated schemas.
pub fn timestamp_value<T: Timestamp>(time: SystemTime) -> Result<AttributeValue, EncodeError> {
    to_value(&T::at(time))
}

/// Reads a version attribute (a missing one is version 0: the item was never written).
pub fn version_of(value: Option<&AttributeValue>) -> u64 {
    match value {
        Some(AttributeValue::N(number)) => number.parse().unwrap_or_default(),
        _ => 0,
    }
}
