//! Time to live: the `#[dynamo(ttl)]` field, stored as the number of seconds since the Unix
//! epoch that DynamoDB's TTL reads, whatever its Rust type, and the expiry rule reads apply.
//!
//! DynamoDB deletes an expired item in the background, typically within two days of its
//! expiry, and until then reads, queries and scans still return it (UpdateTimeToLive, API
//! reference). Reads of a table with a TTL attribute therefore hide expired items themselves:
//! `get` reports an expired item as not found, and queries and scans filter them out, unless
//! asked with `include_expired()`.
//!
//! Writes agree with reads: an expired item is absent to their conditions too. A put
//! `only_if_absent` (or of a version 0) creates over it, an update or a delete
//! `only_if_exists` of it is [`Error::NotFound`](crate::Error::NotFound), and a write that keeps
//! unique values treats it as gone. "Expired" is DynamoDB's rule, a number of epoch seconds
//! below now, judged by the [`Db`](crate::Db)'s clock ([`Db::with_clock`](crate::Db::with_clock)).
//!
//! DynamoDB never deletes an item whose TTL is more than five years in the past (it takes such
//! a value for a mistake). Reads hide it all the same, since its writer declared it gone: read
//! it with `include_expired()`, and delete it, or set a new expiry, if it should live.

use crate::const_text::ConstText;
use crate::schema::{str_eq, TableSchema, TtlField};
use aws_sdk_dynamodb::types::AttributeValue;

/// Rust types a `#[dynamo(ttl)]` field may have.
#[diagnostic::on_unimplemented(
    message = "a `#[dynamo(ttl)]` field must be `u64` or `i64` seconds since the Unix epoch, `chrono::DateTime<Utc>` (feature `chrono`), or an `Option` of one, not `{Self}`",
    label = "DynamoDB's time to live reads a number of epoch seconds"
)]
pub trait TtlValue {
    /// The stored attribute (a number of epoch seconds) for the value as serde wrote it;
    /// `None` when the item has no expiry.
    fn stored(value: AttributeValue) -> Result<Option<AttributeValue>, String>;

    /// The value as serde reads it back, from the stored number.
    fn read(stored: AttributeValue) -> Result<AttributeValue, String>;
}

/// The number a stored TTL attribute holds.
fn seconds(value: &AttributeValue) -> Result<i64, String> {
    match value {
        AttributeValue::N(number) => number
            .parse()
            .map_err(|_| format!("{number} is not a whole number of seconds")),
        other => Err(format!(
            "expected a number of epoch seconds, found {other:?}"
        )),
    }
}

macro_rules! seconds_types {
    ($($ty:ty),*) => {$(
        impl TtlValue for $ty {
            fn stored(value: AttributeValue) -> Result<Option<AttributeValue>, String> {
                seconds(&value).map(|_| Some(value))
            }

            fn read(stored: AttributeValue) -> Result<AttributeValue, String> {
                seconds(&stored).map(|_| stored)
            }
        }
    )*};
}
seconds_types!(u64, i64);

/// Stored as whole seconds: the fraction of a second is dropped, since TTL has no finer grain.
#[cfg(feature = "chrono")]
#[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
impl TtlValue for chrono::DateTime<chrono::Utc> {
    fn stored(value: AttributeValue) -> Result<Option<AttributeValue>, String> {
        let AttributeValue::S(text) = &value else {
            return Err(format!("expected an RFC 3339 time, found {value:?}"));
        };
        let time = chrono::DateTime::parse_from_rfc3339(text)
            .map_err(|error| format!("{text:?} is not an RFC 3339 time: {error}"))?;
        Ok(Some(AttributeValue::N(time.timestamp().to_string())))
    }

    fn read(stored: AttributeValue) -> Result<AttributeValue, String> {
        let seconds = seconds(&stored)?;
        let time = chrono::DateTime::from_timestamp(seconds, 0)
            .ok_or_else(|| format!("{seconds} seconds since the epoch is out of range"))?;
        Ok(AttributeValue::S(time.to_rfc3339()))
    }
}

/// `None` is no expiry: the attribute is left out, so the item never expires.
impl<T: TtlValue> TtlValue for Option<T> {
    fn stored(value: AttributeValue) -> Result<Option<AttributeValue>, String> {
        match value {
            AttributeValue::Null(_) => Ok(None),
            value => T::stored(value),
        }
    }

    fn read(stored: AttributeValue) -> Result<AttributeValue, String> {
        T::read(stored)
    }
}

/// The field's stored form, as the derive refers to it.
pub const fn ttl_field<T: TtlValue>(attribute: &'static str) -> TtlField {
    TtlField {
        attribute,
        stored: T::stored,
        read: T::read,
    }
}

/// Why an entity's TTL field is stored where DynamoDB never reads it: not under its table's
/// TTL attribute. The derive panics with it in a constant of the user's crate, so that the
/// compile error points at `ttl` and at nothing inside this crate.
#[doc(hidden)]
pub const fn ttl_attribute_mismatch(
    table: &TableSchema,
    entity: &str,
    field: &str,
    attribute: &str,
) -> Option<ConstText> {
    let message = match table.ttl_attribute {
        Some(declared) if str_eq(declared, attribute) => return None,
        Some(declared) => ConstText::new()
            .push("`")
            .push(entity)
            .push("::")
            .push(field)
            .push("` is `#[dynamo(ttl)]` but is stored as `")
            .push(attribute)
            .push("`, while table `")
            .push(table.type_name)
            .push("` reads expiry times from `")
            .push(declared)
            .push("` (ttl = \"")
            .push(declared)
            .push("\"): rename the field for serde (`#[serde(rename = \"")
            .push(declared)
            .push("\")]`)"),
        None => ConstText::new()
            .push("`")
            .push(entity)
            .push("::")
            .push(field)
            .push("` is `#[dynamo(ttl)]` but table `")
            .push(table.type_name)
            .push("` has no TTL attribute: add `ttl = \"")
            .push(attribute)
            .push("\"` to its `#[dynamo(..)]`"),
    };
    Some(message)
}

/// `time` in epoch seconds, as TTL counts it (a time before the epoch is 0).
pub(crate) fn epoch_seconds(time: std::time::SystemTime) -> i64 {
    time.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
        })
}

/// Whether reads hide items whose TTL has passed, and the time they compare with.
///
/// Hiding is the default for every read of a table with a TTL attribute: an expired item is
/// one its writer declared gone, and DynamoDB only deletes it eventually, so returning it would
/// be a stale read that depends on when DynamoDB's background process ran. A read that wants
/// to see them anyway (an audit, or a cleanup job) asks with `include_expired()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Expiry {
    /// The TTL attribute, when the table has one and reads hide expired items.
    pub(crate) attribute: Option<&'static str>,
    /// The time items are compared with, in epoch seconds: fixed when the read is built, so
    /// every page of it agrees.
    pub(crate) now: i64,
}

impl Expiry {
    /// Hiding expired items of `table`, as of `now` (a clock read only for a table with a
    /// TTL attribute: every read builds one).
    pub(crate) fn hidden(
        table: &TableSchema,
        now: impl FnOnce() -> std::time::SystemTime,
    ) -> Expiry {
        Expiry {
            attribute: table.ttl_attribute,
            now: table.ttl_attribute.map_or(0, |_| epoch_seconds(now())),
        }
    }

    /// Whether `item` has expired: DynamoDB's rule, a TTL attribute holding a number of epoch
    /// seconds less than now. An item without one, or with one of another type, never expires.
    pub(crate) fn has_expired(&self, item: &crate::Item) -> bool {
        let Some(attribute) = self.attribute else {
            return false;
        };
        match item.get(attribute).map(seconds) {
            Some(Ok(expires)) => expires < self.now,
            _ => false,
        }
    }
}
