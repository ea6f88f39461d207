//! The values that can guard an append, and the form the latest pointer keeps them in, so that
//! DynamoDB's `<` on that form is the value's own order.

use aws_sdk_dynamodb::types::AttributeValue;

/// A field type that can guard [`Db::append`](crate::Db::append): the latest pointer stores
/// it in a form that DynamoDB compares in the value's own order ([`Ord`]).
///
/// - Integers are numbers, which DynamoDB compares numerically.
/// - `String` is a string, which DynamoDB compares by its UTF-8 bytes, as [`str`]'s `Ord`.
/// - `chrono::DateTime<Utc>` (feature `chrono`) is a number of seconds with nine decimals,
///   exact to the nanosecond. Its RFC 3339 text would not do: with fractions of varying
///   length, `12:00:00.5Z` sorts before `12:00:00Z`.
///
/// Floats are left out (`NaN` has no place in an order), and so is every type whose stored
/// form DynamoDB does not order as the type does.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot guard an append: DynamoDB would not compare it in its own order",
    label = "the guarded field is `{Self}`",
    note = "guard appends with an integer, a `String` or a `chrono::DateTime<Utc>` field: DynamoDB compares numbers numerically and strings by their UTF-8 bytes"
)]
pub trait AppendOrder: Ord + Sized {
    /// The pointer's form of the value.
    fn to_latest(&self) -> AttributeValue;

    /// The value back from the pointer's form, or `None` when it is not this type's form.
    fn from_latest(value: &AttributeValue) -> Option<Self>;
}

macro_rules! integer_order {
    ($($int:ty),*) => {$(
        impl AppendOrder for $int {
            fn to_latest(&self) -> AttributeValue {
                AttributeValue::N(itoa::Buffer::new().format(*self).to_owned())
            }

            fn from_latest(value: &AttributeValue) -> Option<Self> {
                value.as_n().ok()?.parse().ok()
            }
        }
    )*};
}

integer_order!(u8, u16, u32, u64, u128, i8, i16, i32, i64, i128);

impl AppendOrder for String {
    fn to_latest(&self) -> AttributeValue {
        AttributeValue::S(self.clone())
    }

    fn from_latest(value: &AttributeValue) -> Option<Self> {
        value.as_s().ok().cloned()
    }
}

#[cfg(feature = "chrono")]
#[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
mod time {
    use super::AppendOrder;
    use aws_sdk_dynamodb::types::AttributeValue;
    use chrono::{DateTime, Utc};

    const NANOS_PER_SECOND: i128 = 1_000_000_000;

    /// `seconds.nnnnnnnnn` since the epoch: at most 22 significant digits over chrono's
    /// whole range, well inside the 38 that DynamoDB keeps exactly.
    impl AppendOrder for DateTime<Utc> {
        fn to_latest(&self) -> AttributeValue {
            let nanos = i128::from(self.timestamp()) * NANOS_PER_SECOND
                + i128::from(self.timestamp_subsec_nanos());
            let sign = if nanos < 0 { "-" } else { "" };
            let whole = nanos.unsigned_abs() / NANOS_PER_SECOND.unsigned_abs();
            let fraction = nanos.unsigned_abs() % NANOS_PER_SECOND.unsigned_abs();
            AttributeValue::N(format!("{sign}{whole}.{fraction:09}"))
        }

        fn from_latest(value: &AttributeValue) -> Option<Self> {
            let text = value.as_n().ok()?;
            let (negative, digits) = match text.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, text.as_str()),
            };
            let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
            if fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let whole: i128 = whole.parse().ok()?;
            let fraction: i128 = format!("{fraction:0<9}").parse().ok()?;
            let magnitude = whole.checked_mul(NANOS_PER_SECOND)?.checked_add(fraction)?;
            let nanos = if negative { -magnitude } else { magnitude };
            let seconds = i64::try_from(nanos.div_euclid(NANOS_PER_SECOND)).ok()?;
            let subsecond = u32::try_from(nanos.rem_euclid(NANOS_PER_SECOND)).ok()?;
            DateTime::from_timestamp(seconds, subsecond)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::AppendOrder;

    #[test]
    fn integers_round_trip_at_their_extremes() {
        for value in [i64::MIN, -1, 0, 1, i64::MAX] {
            assert_eq!(i64::from_latest(&value.to_latest()), Some(value));
        }
        assert_eq!(u64::from_latest(&u64::MAX.to_latest()), Some(u64::MAX));
        assert_eq!(u64::from_latest(&"x".to_owned().to_latest()), None);
    }

    #[cfg(feature = "chrono")]
    #[test]
    fn times_keep_their_order_and_round_trip() -> Result<(), Box<dyn std::error::Error>> {
        use aws_sdk_dynamodb::types::AttributeValue;
        use chrono::{DateTime, Utc};
        let times = [
            "1969-12-31T23:59:58.5Z",
            "1969-12-31T23:59:59.999999999Z",
            "1970-01-01T00:00:00Z",
            "2026-04-01T12:00:00Z",
            "2026-04-01T12:00:00.000000001Z",
            "2026-04-01T12:00:00.5Z",
            "2026-04-01T12:00:01Z",
        ]
        .iter()
        .map(|text| text.parse::<DateTime<Utc>>())
        .collect::<Result<Vec<_>, _>>()?;
        let mut nanos = Vec::new();
        for time in &times {
            let value = time.to_latest();
            assert_eq!(DateTime::<Utc>::from_latest(&value), Some(*time));
            // Always nine decimals, so the digits without the point are the nanoseconds: the
            // number DynamoDB compares, exactly.
            let text = value.as_n().map_err(|_| "a number")?;
            assert_eq!(
                text.split_once('.').map(|(_, fraction)| fraction.len()),
                Some(9)
            );
            nanos.push(text.replace('.', "").parse::<i128>()?);
        }
        assert!(nanos.windows(2).all(|pair| pair[0] < pair[1]), "{nanos:?}");
        assert_eq!(
            times[0].to_latest(),
            AttributeValue::N("-1.500000000".into())
        );
        assert_eq!(
            times[4].to_latest(),
            AttributeValue::N("1775044800.000000001".into())
        );
        Ok(())
    }
}
