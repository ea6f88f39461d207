//! The [`KeyPart`] contract, checkable on any values of a type: what the library's key
//! conditions and overlap checks rely on, for a property test of your own implementation.

use super::part::{KeyField, KeyPart, PrefixFree, HIGHEST_CHARACTER};
use super::template::{KeyTemplate, Segment};
use std::fmt::Debug;

/// The template values are rendered in: the part between constant text, as in most keys.
const CHECKED: KeyTemplate = KeyTemplate {
    source: "P#{part}#S",
    segments: &[
        Segment::Literal("P#"),
        Segment::Field {
            name: "part",
            width: None,
            number: 0,
        },
        Segment::Literal("#S"),
    ],
};

/// How values broke the [`KeyPart`] contract (values and texts as `Debug` prints them).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyPartViolation {
    /// A value did not render, or rendered the template's separator.
    #[error("{value} did not render in {template:?}: {error}")]
    Render {
        /// The value.
        value: String,
        /// The template it was rendered in.
        template: &'static str,
        /// Why.
        error: String,
    },
    /// A value's key text holds U+10FFFF, which bounds key ranges.
    #[error("{value} renders {text}, which holds U+10FFFF, the character key ranges use as their upper bound")]
    HighestCharacter {
        /// The value.
        value: String,
        /// Its key text.
        text: String,
    },
    /// A value's key text does not read back as the value.
    #[error("{value} renders {text}, which reads back as {read}")]
    ReadBack {
        /// The value.
        value: String,
        /// Its key text.
        text: String,
        /// What `parse_part` made of it.
        read: String,
    },
    /// Two values' key texts do not sort as the values do.
    #[error("{smaller} is below {larger}, but their key texts {smaller_text} and {larger_text} do not sort that way")]
    Order {
        /// The smaller value.
        smaller: String,
        /// Its key text.
        smaller_text: String,
        /// The larger value.
        larger: String,
        /// Its key text.
        larger_text: String,
    },
    /// A value's key text starts another's, for a type that says it is [`PrefixFree`].
    #[error(
        "{value}'s key text {text} starts {other}'s, {other_text}, so the type is not prefix-free"
    )]
    Prefix {
        /// The value.
        value: String,
        /// Its key text.
        text: String,
        /// The other value.
        other: String,
        /// Its key text.
        other_text: String,
    },
}

/// Checks the [`KeyPart`] contract on `values`: each value renders between constant text
/// (its key text may hold neither the template's separators nor U+10FFFF), reads back as
/// itself through [`KeyField::parse_part`], and the key texts sort as the values do, equal
/// only for equal values. Run it in a property test over your type's domain:
///
/// ```
/// use singletable_runtime::key::check_key_part;
/// assert_eq!(check_key_part(&[-3i64, 0, 7, i64::MIN, i64::MAX]), Ok(()));
/// ```
///
/// # Errors
///
/// The first [`KeyPartViolation`] found.
pub fn check_key_part<T: KeyField + Ord + Debug>(values: &[T]) -> Result<(), KeyPartViolation> {
    let texts = values
        .iter()
        .map(|value| {
            let text = key_text(value)?;
            let read = T::parse_part(&text, None).map_err(|error| KeyPartViolation::ReadBack {
                value: format!("{value:?}"),
                text: format!("{text:?}"),
                read: format!("an error (expected {})", error.expected),
            })?;
            if read != *value {
                return Err(KeyPartViolation::ReadBack {
                    value: format!("{value:?}"),
                    text: format!("{text:?}"),
                    read: format!("{read:?}"),
                });
            }
            Ok(text)
        })
        .collect::<Result<Vec<String>, KeyPartViolation>>()?;
    match first_pair(values, &texts, |value, text, other, other_text| {
        value < other && text >= other_text
    }) {
        Some([smaller, smaller_text, larger, larger_text]) => Err(KeyPartViolation::Order {
            smaller,
            smaller_text,
            larger,
            larger_text,
        }),
        None => Ok(()),
    }
}

/// Checks that no value's key text starts another's, as [`PrefixFree`] promises: what makes a
/// range on a part that other key text follows exact.
///
/// ```
/// use singletable_runtime::key::check_prefix_free;
/// assert_eq!(check_prefix_free(&[0u8, 7, 255]), Ok(()));
/// ```
///
/// # Errors
///
/// A render failure, or the first [`KeyPartViolation::Prefix`] found.
pub fn check_prefix_free<T: PrefixFree + Debug>(values: &[T]) -> Result<(), KeyPartViolation> {
    let texts = values
        .iter()
        .map(key_text)
        .collect::<Result<Vec<String>, KeyPartViolation>>()?;
    match first_pair(values, &texts, |_, text, _, other_text| {
        other_text.len() > text.len() && other_text.starts_with(text)
    }) {
        Some([value, text, other, other_text]) => Err(KeyPartViolation::Prefix {
            value,
            text,
            other,
            other_text,
        }),
        None => Ok(()),
    }
}

/// The first pair of values (with their key texts) that `broken` finds, as `Debug` prints
/// them: value, text, other value, other text. Every ordered pair is tried (n² for n values).
fn first_pair<T: Debug>(
    values: &[T],
    texts: &[String],
    broken: impl Fn(&T, &str, &T, &str) -> bool,
) -> Option<[String; 4]> {
    let pairs = values
        .iter()
        .zip(texts)
        .flat_map(|first| values.iter().zip(texts).map(move |second| (first, second)));
    pairs
        .filter(|((value, text), (other, other_text))| broken(value, text, other, other_text))
        .map(|((value, text), (other, other_text))| {
            [
                format!("{value:?}"),
                format!("{text:?}"),
                format!("{other:?}"),
                format!("{other_text:?}"),
            ]
        })
        .next()
}

/// `value`'s key text, rendered in [`CHECKED`].
fn key_text<T: KeyPart + Debug>(value: &T) -> Result<String, KeyPartViolation> {
    let rendered = CHECKED
        .render(&[value])
        .map_err(|error| KeyPartViolation::Render {
            value: format!("{value:?}"),
            template: CHECKED.source,
            error: error.to_string(),
        })?;
    let text = rendered
        .strip_prefix("P#")
        .and_then(|text| text.strip_suffix("#S"))
        .unwrap_or_default()
        .to_owned();
    if text.contains(HIGHEST_CHARACTER) {
        return Err(KeyPartViolation::HighestCharacter {
            value: format!("{value:?}"),
            text: format!("{text:?}"),
        });
    }
    Ok(text)
}
