//! How each Rust type is written into a key so that text order equals value order.

use super::error::{KeyError, PartError};
use super::shape::PartShape;
use super::template::Segment;
use aws_sdk_dynamodb::types::AttributeValue;
use std::any::Any;

/// The character above every other in DynamoDB's byte order (U+10FFFF, `F4 8F BF BF` in
/// UTF-8): what bounds "every key after" in a range, so no key part may hold it.
pub(crate) const HIGHEST_CHARACTER: char = '\u{10FFFF}';

/// Where a part is being rendered, for error messages and the width override.
#[derive(Debug, Clone, Copy)]
pub struct PartContext {
    /// The field name.
    pub field: &'static str,
    /// The width override from the template (`{seq:6}`), if any.
    pub width: Option<u8>,
    /// The template source.
    pub template: &'static str,
    /// The template's segments, whose constant text holds its separators.
    #[doc(hidden)]
    pub segments: &'static [Segment],
}

impl PartContext {
    /// A part written alone, in no template (an attribute's value): no text is a separator.
    pub(crate) fn free(field: &'static str) -> Self {
        PartContext {
            field,
            width: None,
            template: "",
            segments: &[],
        }
    }

    /// The first character of `text` that the template uses to separate key parts: any
    /// character of its constant text that is not a letter or a digit (`#`, `/`, `|`, ...).
    pub fn separator_in(&self, text: &str) -> Option<char> {
        // Most key text is letters and digits alone, and is cleared by this one scan.
        if text.bytes().all(|byte| byte.is_ascii_alphanumeric()) {
            return None;
        }
        text.chars().find(|character| {
            !character.is_alphanumeric()
                && self.segments.iter().any(|segment| {
                    matches!(segment, Segment::Literal(literal) if literal.contains(*character))
                })
        })
    }
}

/// A type that can be part of a key template.
///
/// Implemented for strings, integers (zero-padded so that text order is numeric order),
/// `bool`, timestamps and dates (with the `chrono` feature), UUIDs (`uuid`) and ULIDs (`ulid`),
/// and for unit-variant enums through `#[derive(singletable::KeyPart)]` (which sort by their
/// names).
///
/// # The contract
///
/// Key conditions and the overlap check between entities rely on what an implementation
/// writes:
///
/// - none of the template's separators (the non-alphanumeric characters of its constant
///   text: report [`KeyError::Separator`] as `str`'s implementation does), and never U+10FFFF,
///   which bounds key ranges;
/// - text that sorts (byte-wise, as DynamoDB compares strings) as the values do, equal only
///   for equal values, and that [`KeyField::parse_part`] reads back as the value;
/// - for a [`PrefixFree`] type, no value's text starting another's.
///
/// [`check_key_part`](super::check_key_part) and [`check_prefix_free`](super::check_prefix_free)
/// check it on any values: run them in a property test of your own implementation.
pub trait KeyPart {
    /// Appends this value's key text to `out`.
    fn render_part(&self, context: PartContext, out: &mut String) -> Result<(), KeyError>;
}

/// A [`KeyPart`] none of whose values has key text that starts another value's: every value
/// renders to text of one width (integers, dates, times, UUIDs, ULIDs), or values differ from
/// their first character on (`false`/`true`, an enum whose names start no other name).
///
/// A range condition (`lt`, `between`, ...) on a sort key part that other key text follows is
/// exact only for such a type: values of different lengths, one the start of another, sort by
/// the text after them (`"b c#N"` sorts before `"b#N"`, as a space sorts below `#`), which no
/// one key condition can bound. On the last part of a template, ranges are exact for every
/// key part; on another, a range of a type without this trait does not compile.
///
/// `#[derive(KeyPart)]` implements it when no variant's name starts another's. Implement it
/// for your own key part only if its key texts are prefix-free, and sort as its values do.
#[diagnostic::on_unimplemented(
    message = "the key text of one `{Self}` can start another's, so a range on it cannot be exact where other key text follows it",
    label = "a range on this part needs a prefix-free key part type"
)]
pub trait PrefixFree: KeyPart {}

impl PrefixFree for bool {}

/// The type of a field used in a key template: a [`KeyPart`] that can be read back. Like every
/// field of a stored item, it is `Send + Sync + 'static`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be part of a key template",
    label = "this template uses a field of type `{Self}`",
    note = "key parts must sort as text: strings, integers, `bool`, unit-variant enums with `#[derive(singletable::KeyPart)]`, `chrono::DateTime<Utc>`/`NaiveDate` (feature `chrono`), `uuid::Uuid` (feature `uuid`) or `ulid::Ulid` (feature `ulid`)",
    note = "floats, maps, lists and bytes have no order-preserving text form; keep them as ordinary attributes"
)]
pub trait KeyField: KeyPart + Sized + Send + Sync + 'static {
    /// The type generated key constructors take a reference to (`str` for `String`).
    type Borrowed: ?Sized + KeyPart;

    /// Parses the exact text [`KeyPart::render_part`] writes.
    fn parse_part(text: &str, width: Option<u8>) -> Result<Self, PartError>;

    /// This type's key part functions, type-erased, as the derive's field schemas hold them.
    /// The derive names it as a path, `<T as KeyField>::KEY_PART`, so that a field type that
    /// is no key part is one error, at the field, with this trait's message; one constant per
    /// type, which the compiler evaluates once for every field of that type.
    #[doc(hidden)]
    const KEY_PART: KeyPartFns = KeyPartFns {
        render: render_erased::<Self>,
        parse: parse_erased::<Self>,
        shape: Self::SHAPE,
    };

    /// The texts this type writes, for the overlap check between templates: any text unless
    /// the type says less. Claim less only for texts your `render_part` can never leave.
    #[doc(hidden)]
    const SHAPE: PartShape = PartShape::ANY;

    /// Reads this type's key text as the attribute serde writes for the value, so that a field
    /// an item keeps only in its keys is read from them; `None`: it is not (a type of your
    /// own, whose serde form the library does not know).
    #[doc(hidden)]
    const FROM_KEY: Option<FromKey> = None;
}

#[doc(hidden)]
/// Type-erased [`KeyPart`] functions of a field's type, so that keys can be rendered from an
/// item's fields, and recomputed from the values an update carries, by generic code.
#[derive(Debug, Clone, Copy)]
pub struct KeyPartFns {
    /// Renders a value (of the field's type) into a key.
    pub render: fn(&dyn Any, PartContext, &mut String) -> Result<(), KeyError>,
    /// Parses the field's key text into a value of the field's type.
    pub parse: fn(&str, Option<u8>) -> Result<AnyValue, PartError>,
    /// The texts the field's type writes.
    pub shape: PartShape,
}

/// Renders a type-erased value of key field type `T`.
fn render_erased<T: KeyField>(
    value: &dyn Any,
    context: PartContext,
    out: &mut String,
) -> Result<(), KeyError> {
    match value.downcast_ref::<T>() {
        Some(value) => value.render_part(context, out),
        None => Err(KeyError::Unrepresentable {
            field: context.field,
            reason: format!("expected a value of type {}", std::any::type_name::<T>()),
        }),
    }
}

/// Parses key text into a type-erased value of key field type `T`.
fn parse_erased<T: KeyField>(text: &str, width: Option<u8>) -> Result<AnyValue, PartError> {
    T::parse_part(text, width).map(|value| Box::new(value) as AnyValue)
}

#[doc(hidden)]
/// Reads a key part's text as the attribute serde writes for its value.
pub type FromKey = fn(&str, Option<u8>) -> Result<AttributeValue, PartError>;

#[doc(hidden)]
/// The attribute serde writes for a key part whose key text is its serde form (a string, a
/// `#[derive(KeyPart)]` enum's name, a time, a date, a UUID, a ULID), from that text, which
/// the caller has checked the type reads.
pub fn text_attribute(text: &str, _width: Option<u8>) -> Result<AttributeValue, PartError> {
    Ok(AttributeValue::S(text.to_owned()))
}

#[doc(hidden)]
/// A field value of any type, as updates carry them to recompute index keys.
pub type AnyValue = Box<dyn Any + Send + Sync>;

#[doc(hidden)]
/// What a generated key constructor takes for a key field of type `T`: the value or a
/// reference to it for the `Copy` key types (`Ticket::gsi1(7)` or `(&7)`), and `&str`,
/// `&String` or `String` for a `String` field.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be given for a key field of type `{T}`",
    label = "expected a `{T}`, a reference to one, or `&str` for a `String`"
)]
pub trait KeyArg<T> {
    /// The value as the template renders it (a `str` for a `String` field). A trait object,
    /// so that a constructor's body asks the compiler for no more than this method: the
    /// derive writes one constructor per index and entity (bench-compile/parts.py).
    fn key_part(&self) -> &dyn KeyPart;
}

impl<T: KeyField<Borrowed = T> + Copy> KeyArg<T> for T {
    fn key_part(&self) -> &dyn KeyPart {
        self
    }
}

impl<T: KeyField<Borrowed = T>> KeyArg<T> for &T {
    fn key_part(&self) -> &dyn KeyPart {
        *self
    }
}

impl KeyArg<String> for &str {
    fn key_part(&self) -> &dyn KeyPart {
        self
    }
}

impl KeyArg<String> for String {
    fn key_part(&self) -> &dyn KeyPart {
        self
    }
}

impl KeyArg<String> for &String {
    fn key_part(&self) -> &dyn KeyPart {
        *self
    }
}

impl<T: KeyPart + ?Sized> KeyPart for &T {
    fn render_part(&self, context: PartContext, out: &mut String) -> Result<(), KeyError> {
        (**self).render_part(context, out)
    }
}

/// Free text: it may hold anything but the template's separators, so that no key (of this
/// item, of another value, of another entity) can be read as another.
impl KeyPart for str {
    fn render_part(&self, context: PartContext, out: &mut String) -> Result<(), KeyError> {
        if let Some(separator) = context.separator_in(self) {
            return Err(KeyError::Separator {
                field: context.field,
                value: self.to_owned(),
                separator,
                template: context.template,
            });
        }
        // Range conditions bound "every key after" with U+10FFFF, which no key may then hold.
        if !self.is_ascii() && self.contains(HIGHEST_CHARACTER) {
            return Err(KeyError::Unrepresentable {
                field: context.field,
                reason: format!(
                    "{self:?} holds U+10FFFF, the character above every other, which key ranges use as their upper bound"
                ),
            });
        }
        out.push_str(self);
        Ok(())
    }
}

impl KeyPart for String {
    fn render_part(&self, context: PartContext, out: &mut String) -> Result<(), KeyError> {
        self.as_str().render_part(context, out)
    }
}

impl KeyField for String {
    type Borrowed = str;
    const FROM_KEY: Option<FromKey> = Some(text_attribute);

    fn parse_part(text: &str, _width: Option<u8>) -> Result<Self, PartError> {
        Ok(text.to_owned())
    }
}

impl KeyPart for bool {
    fn render_part(&self, _context: PartContext, out: &mut String) -> Result<(), KeyError> {
        out.push_str(if *self { "true" } else { "false" });
        Ok(())
    }
}

impl KeyField for bool {
    type Borrowed = bool;
    const SHAPE: PartShape = PartShape::one_of(&["false", "true"]);
    const FROM_KEY: Option<FromKey> = Some(|text, _| Ok(AttributeValue::Bool(text == "true")));

    fn parse_part(text: &str, _width: Option<u8>) -> Result<Self, PartError> {
        match text {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(PartError {
                expected: "`true` or `false`",
            }),
        }
    }
}

/// Writes `digits` left-padded with zeros to `width`, or fails if it needs more.
fn push_padded(
    digits: &str,
    value: &dyn std::fmt::Display,
    context: PartContext,
    width: u8,
    out: &mut String,
) -> Result<(), KeyError> {
    if digits.len() > usize::from(width) {
        return Err(KeyError::TooWide {
            field: context.field,
            value: value.to_string(),
            width,
            needed: digits.len(),
            template: context.template,
        });
    }
    out.extend(std::iter::repeat_n('0', usize::from(width) - digits.len()));
    out.push_str(digits);
    Ok(())
}

/// Checks that `text` is exactly `width` ASCII digits.
fn fixed_digits(text: &str, width: u8, expected: &'static str) -> Result<u128, PartError> {
    if text.len() != usize::from(width) || !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(PartError { expected });
    }
    text.parse::<u128>().map_err(|_| PartError { expected })
}

macro_rules! unsigned_key_part {
    ($($ty:ty => $width:expr),* $(,)?) => {$(
        impl KeyPart for $ty {
            fn render_part(&self, context: PartContext, out: &mut String) -> Result<(), KeyError> {
                let width = context.width.unwrap_or($width);
                push_padded(itoa::Buffer::new().format(*self), self, context, width, out)
            }
        }

        // One width per template (its override, or the type's).
        impl PrefixFree for $ty {}

        impl KeyField for $ty {
            type Borrowed = $ty;
            const SHAPE: PartShape = PartShape::integer($width, false);
            const FROM_KEY: Option<FromKey> = Some(|text, width| {
                Ok(AttributeValue::N(<$ty as KeyField>::parse_part(text, width)?.to_string()))
            });

            fn parse_part(text: &str, width: Option<u8>) -> Result<Self, PartError> {
                const EXPECTED: &str = concat!("zero-padded ", stringify!($ty));
                let value = fixed_digits(text, width.unwrap_or($width), EXPECTED)?;
                <$ty>::try_from(value).map_err(|_| PartError { expected: EXPECTED })
            }
        }
    )*};
}

unsigned_key_part!(u8 => 3, u16 => 5, u32 => 10, u64 => 20, usize => 20);

/// Negative integers are written as `-` followed by `10^width + value`, zero-padded: `-` sorts
/// before every digit, and among negatives a larger value gives a larger complement, so text
/// order stays numeric order (`-9999999998` = -2 < `-9999999999` = -1 < `0000000000` = 0).
macro_rules! signed_key_part {
    ($($ty:ty => $width:expr),* $(,)?) => {$(
        impl KeyPart for $ty {
            fn render_part(&self, context: PartContext, out: &mut String) -> Result<(), KeyError> {
                let width = context.width.unwrap_or($width);
                if *self >= 0 {
                    return push_padded(itoa::Buffer::new().format(*self), self, context, width, out);
                }
                // ok: every signed type here fits in i128.
                let magnitude = (*self as i128).unsigned_abs();
                let base = 10u128.checked_pow(u32::from(width)).unwrap_or(u128::MAX);
                if magnitude >= base {
                    return Err(KeyError::TooWide {
                        field: context.field,
                        value: self.to_string(),
                        width,
                        needed: magnitude.to_string().len() + 1,
                        template: context.template,
                    });
                }
                out.push('-');
                push_padded(itoa::Buffer::new().format(base - magnitude), self, context, width, out)
            }
        }

        // Non-negative values have one width, negative ones one more, and start with `-`.
        impl PrefixFree for $ty {}

        impl KeyField for $ty {
            type Borrowed = $ty;
            const SHAPE: PartShape = PartShape::integer($width, true);
            const FROM_KEY: Option<FromKey> = Some(|text, width| {
                Ok(AttributeValue::N(<$ty as KeyField>::parse_part(text, width)?.to_string()))
            });

            fn parse_part(text: &str, width: Option<u8>) -> Result<Self, PartError> {
                const EXPECTED: &str = concat!("zero-padded ", stringify!($ty));
                let width = width.unwrap_or($width);
                let invalid = PartError { expected: EXPECTED };
                let value = match text.strip_prefix('-') {
                    Some(complement) => {
                        let complement = fixed_digits(complement, width, EXPECTED)?;
                        let base = 10u128.checked_pow(u32::from(width)).ok_or(invalid.clone())?;
                        if complement == 0 || complement >= base {
                            return Err(invalid);
                        }
                        -i128::try_from(base - complement).map_err(|_| invalid.clone())?
                    }
                    None => i128::try_from(fixed_digits(text, width, EXPECTED)?).map_err(|_| invalid.clone())?,
                };
                <$ty>::try_from(value).map_err(|_| invalid)
            }
        }
    )*};
}

signed_key_part!(i8 => 3, i16 => 5, i32 => 10, i64 => 19, isize => 19);

#[cfg(feature = "chrono")]
#[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
mod chrono_parts {
    use super::*;
    use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};

    /// RFC 3339 in UTC with nanoseconds and `Z`: fixed width, so text order is time order.
    impl KeyPart for DateTime<Utc> {
        fn render_part(&self, context: PartContext, out: &mut String) -> Result<(), KeyError> {
            use chrono::Datelike;
            if !(0..=9999).contains(&self.year()) {
                return Err(KeyError::Unrepresentable {
                    field: context.field,
                    reason: "its year is outside 0000-9999, so it would not sort as text"
                        .to_owned(),
                });
            }
            out.push_str(&self.to_rfc3339_opts(SecondsFormat::Nanos, true));
            Ok(())
        }
    }

    impl PrefixFree for DateTime<Utc> {}

    impl KeyField for DateTime<Utc> {
        type Borrowed = DateTime<Utc>;
        // `2020-04-27T00:00:00.000000000Z`: years 0 to 9999 only.
        const SHAPE: PartShape = PartShape::fixed(30, "0123456789-:T.Z");
        const FROM_KEY: Option<FromKey> = Some(text_attribute);

        fn parse_part(text: &str, _width: Option<u8>) -> Result<Self, PartError> {
            const EXPECTED: &str = "RFC 3339 UTC timestamp with nanoseconds";
            let parsed = DateTime::parse_from_rfc3339(text)
                .map_err(|_| PartError { expected: EXPECTED })?
                .with_timezone(&Utc);
            // Only the exact rendered form is accepted, so a key has one spelling.
            if parsed.to_rfc3339_opts(SecondsFormat::Nanos, true) != text {
                return Err(PartError { expected: EXPECTED });
            }
            Ok(parsed)
        }
    }

    /// `YYYY-MM-DD`.
    impl KeyPart for NaiveDate {
        fn render_part(&self, context: PartContext, out: &mut String) -> Result<(), KeyError> {
            use chrono::Datelike;
            if !(0..=9999).contains(&self.year()) {
                return Err(KeyError::Unrepresentable {
                    field: context.field,
                    reason: "its year is outside 0000-9999, so it would not sort as text"
                        .to_owned(),
                });
            }
            out.push_str(&self.format("%Y-%m-%d").to_string());
            Ok(())
        }
    }

    impl PrefixFree for NaiveDate {}

    impl KeyField for NaiveDate {
        type Borrowed = NaiveDate;
        const SHAPE: PartShape = PartShape::fixed(10, "0123456789-");
        const FROM_KEY: Option<FromKey> = Some(text_attribute);

        fn parse_part(text: &str, _width: Option<u8>) -> Result<Self, PartError> {
            const EXPECTED: &str = "date YYYY-MM-DD";
            let parsed = NaiveDate::parse_from_str(text, "%Y-%m-%d")
                .map_err(|_| PartError { expected: EXPECTED })?;
            if parsed.format("%Y-%m-%d").to_string() != text {
                return Err(PartError { expected: EXPECTED });
            }
            Ok(parsed)
        }
    }
}

#[cfg(feature = "uuid")]
#[cfg_attr(docsrs, doc(cfg(feature = "uuid")))]
impl KeyPart for uuid::Uuid {
    /// Lowercase hyphenated form.
    fn render_part(&self, _context: PartContext, out: &mut String) -> Result<(), KeyError> {
        out.push_str(
            self.hyphenated()
                .encode_lower(&mut uuid::Uuid::encode_buffer()),
        );
        Ok(())
    }
}

#[cfg(feature = "uuid")]
#[cfg_attr(docsrs, doc(cfg(feature = "uuid")))]
impl PrefixFree for uuid::Uuid {}

#[cfg(feature = "uuid")]
#[cfg_attr(docsrs, doc(cfg(feature = "uuid")))]
impl KeyField for uuid::Uuid {
    type Borrowed = uuid::Uuid;
    const SHAPE: PartShape = PartShape::fixed(36, "0123456789abcdef-");
    const FROM_KEY: Option<FromKey> = Some(text_attribute);

    fn parse_part(text: &str, _width: Option<u8>) -> Result<Self, PartError> {
        const EXPECTED: &str = "lowercase hyphenated UUID";
        let parsed = uuid::Uuid::try_parse(text).map_err(|_| PartError { expected: EXPECTED })?;
        if parsed
            .hyphenated()
            .encode_lower(&mut uuid::Uuid::encode_buffer())
            != text
        {
            return Err(PartError { expected: EXPECTED });
        }
        Ok(parsed)
    }
}

#[cfg(feature = "ulid")]
#[cfg_attr(docsrs, doc(cfg(feature = "ulid")))]
impl KeyPart for ulid::Ulid {
    /// Canonical 26-character Crockford base32, which sorts by creation time.
    fn render_part(&self, _context: PartContext, out: &mut String) -> Result<(), KeyError> {
        out.push_str(&self.to_string());
        Ok(())
    }
}

#[cfg(feature = "ulid")]
#[cfg_attr(docsrs, doc(cfg(feature = "ulid")))]
impl PrefixFree for ulid::Ulid {}

#[cfg(feature = "ulid")]
#[cfg_attr(docsrs, doc(cfg(feature = "ulid")))]
impl KeyField for ulid::Ulid {
    type Borrowed = ulid::Ulid;
    // Crockford's base32: no I, L, O or U.
    const SHAPE: PartShape = PartShape::fixed(26, "0123456789ABCDEFGHJKMNPQRSTVWXYZ");
    const FROM_KEY: Option<FromKey> = Some(text_attribute);

    fn parse_part(text: &str, _width: Option<u8>) -> Result<Self, PartError> {
        const EXPECTED: &str = "26-character ULID";
        let parsed = ulid::Ulid::from_string(text).map_err(|_| PartError { expected: EXPECTED })?;
        if parsed.to_string() != text {
            return Err(PartError { expected: EXPECTED });
        }
        Ok(parsed)
    }
}
