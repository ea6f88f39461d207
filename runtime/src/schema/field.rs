//! An entity's fields and their roles: how a key field renders and parses, which field types
//! can be an index key attribute, the fields the library maintains (version, timestamps,
//! expiry) and the values no two items share.

use super::table::ScalarType;

pub use crate::key::field::FieldSchema;

#[doc(hidden)]
/// Field types that can be an index key attribute read directly from the item
/// (`gsi2pk = author`), by the DynamoDB type serde writes them as.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an index key attribute",
    label = "index keys are strings, numbers or binary",
    note = "use a key template (`gsi2pk = \"MEMBER#{{author}}\"`) for other types"
)]
pub trait ScalarAttribute {
    /// The DynamoDB type.
    const TYPE: ScalarType;
}

macro_rules! scalar_attributes {
    ($kind:ident: $($ty:ty),*) => {$( impl ScalarAttribute for $ty { const TYPE: ScalarType = ScalarType::$kind; } )*};
}
scalar_attributes!(String: String);

/// An optional index key attribute: `None` is no attribute, so the item is not in the index
/// (a sparse index without a rule).
impl<T: ScalarAttribute> ScalarAttribute for Option<T> {
    const TYPE: ScalarType = T::TYPE;
}
scalar_attributes!(Number: u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, f32, f64);
#[cfg(feature = "chrono")]
scalar_attributes!(String: chrono::DateTime<chrono::Utc>, chrono::NaiveDate);
#[cfg(feature = "uuid")]
scalar_attributes!(String: uuid::Uuid);
#[cfg(feature = "ulid")]
scalar_attributes!(String: ulid::Ulid);

#[doc(hidden)]
/// Fields maintained by the library, `#[dynamo(version)]`, `#[dynamo(created_at)]` and
/// `#[dynamo(updated_at)]`, and the field stored in DynamoDB's own form, `#[dynamo(ttl)]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ManagedFields {
    /// The optimistic-locking version attribute.
    pub version: Option<&'static str>,
    /// The largest version the version field's type holds (0 without one).
    pub version_max: u64,
    /// Set when the item is created.
    pub created_at: Option<ManagedTimestamp>,
    /// Set on every put and update.
    pub updated_at: Option<ManagedTimestamp>,
    /// The expiry time DynamoDB's time to live reads (`#[dynamo(ttl)]`).
    pub ttl: Option<TtlField>,
}

#[doc(hidden)]
/// A timestamp attribute and how to write a time in the field's own type.
#[derive(Debug, Clone, Copy)]
pub struct ManagedTimestamp {
    /// The attribute.
    pub attribute: &'static str,
    /// A time as the field's attribute value.
    pub at: fn(
        std::time::SystemTime,
    ) -> Result<aws_sdk_dynamodb::types::AttributeValue, crate::codec::EncodeError>,
}

impl PartialEq for ManagedTimestamp {
    fn eq(&self, other: &Self) -> bool {
        self.attribute == other.attribute
    }
}

impl Eq for ManagedTimestamp {}

#[doc(hidden)]
/// How an entity's TTL field is stored; referenced by generated schemas.
#[derive(Debug, Clone, Copy)]
pub struct TtlField {
    /// The attribute (the table's TTL attribute).
    pub attribute: &'static str,
    /// The stored form of the value serde writes.
    pub stored: fn(
        aws_sdk_dynamodb::types::AttributeValue,
    ) -> Result<Option<aws_sdk_dynamodb::types::AttributeValue>, String>,
    /// The value serde reads, from the stored form.
    pub read: fn(
        aws_sdk_dynamodb::types::AttributeValue,
    ) -> Result<aws_sdk_dynamodb::types::AttributeValue, String>,
}

impl PartialEq for TtlField {
    fn eq(&self, other: &Self) -> bool {
        self.attribute == other.attribute
    }
}

impl Eq for TtlField {}

#[doc(hidden)]
/// A value no two items of an entity share: one field, or several together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UniqueSchema {
    /// Its name in messages and sentinel keys: the field's name, or the fields' names joined
    /// by `+`.
    pub name: &'static str,
    /// The attributes that make up the value, in order.
    pub attributes: &'static [&'static str],
}
