//! An item's primary key as text, for messages and errors.

use serde::Serialize;
use std::cell::Cell;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

/// The primary key of an item, as text, for messages; serialized as that text too. Its
/// values are `‹hidden›` in the text unless [`show_values`](crate::error::show_values) is
/// on; the fields hold them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(into = "String")]
pub struct KeyText {
    /// Partition key attribute and value.
    pub partition: (&'static str, String),
    /// Sort key attribute and value.
    pub sort: Option<(&'static str, String)>,
}

impl fmt::Display for KeyText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {}", self.partition.0, Shown(&self.partition.1))?;
        if let Some((name, value)) = &self.sort {
            write!(f, ", {name} = {}", Shown(value))?;
        }
        Ok(())
    }
}

impl From<KeyText> for String {
    fn from(key: KeyText) -> String {
        key.to_string()
    }
}

/// Whether error texts show the values they are about; see [`show_values`].
static SHOW_VALUES: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// A test's choice for its own thread, over the process's.
    static SHOWN_HERE: Cell<Option<bool>> = const { Cell::new(None) };
}

/// Makes the texts of errors (their `Display`, and a [`KeyText`]'s) show key and attribute
/// values, in the whole process, or hide them again. Off by default: keys and unique values
/// are often personal data (an e-mail, a name), and error texts end up in logs. Hidden values
/// read `‹hidden›`; the values stay in the errors' fields for code to read.
///
/// Spans have their own switch, per `Db`: `Db::trace_values`.
pub fn show_values(show: bool) {
    SHOW_VALUES.store(show, Ordering::Relaxed);
}

/// Whether error texts show values now ([`show_values`]).
pub fn values_shown() -> bool {
    SHOWN_HERE
        .with(Cell::get)
        .unwrap_or_else(|| SHOW_VALUES.load(Ordering::Relaxed))
}

/// Runs `text` with values shown, or not, on this thread alone, whatever the process's
/// choice: for what a `Db` that records values writes into its spans and events, and for
/// tests, which run in parallel within one process.
pub(crate) fn with_values_shown<R>(show: bool, text: impl FnOnce() -> R) -> R {
    let before = SHOWN_HERE.with(|here| here.replace(Some(show)));
    let result = text();
    SHOWN_HERE.with(|here| here.set(before));
    result
}

/// What an error text shows of a value: the value (`{:?}`) when values are shown, otherwise
/// `‹hidden›`.
pub(crate) struct Shown<'a, T: ?Sized>(pub(crate) &'a T);

impl<T: fmt::Debug + ?Sized> fmt::Display for Shown<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if values_shown() {
            write!(f, "{:?}", self.0)
        } else {
            f.write_str(HIDDEN)
        }
    }
}

/// A value left out of an error text.
pub(crate) const HIDDEN: &str = "‹hidden›";

/// A message from elsewhere (serde's, a parser's) that may quote values: as it is when values
/// are shown, otherwise with every quoted string (`"…"`) and every value serde names between
/// backticks (``integer `42` ``) hidden. Field and type names stay.
pub(crate) struct Redacted<'a>(pub(crate) &'a str);

impl fmt::Display for Redacted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if values_shown() {
            return f.write_str(self.0);
        }
        f.write_str(&redact(self.0))
    }
}

/// The words before a value serde's messages quote between backticks.
const VALUE_WORDS: [&str; 8] = [
    "integer",
    "point",
    "boolean",
    "character",
    "variant",
    "value",
    "char",
    "number",
];

fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(['"', '`']) {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        let quote = if from.starts_with('"') { '"' } else { '`' };
        let body = &from[1..];
        // The closing quote; a `\"` inside a string is not one.
        let mut end = None;
        let mut escaped = false;
        for (i, c) in body.char_indices() {
            if escaped {
                escaped = false;
            } else if c == '\\' && quote == '"' {
                escaped = true;
            } else if c == quote {
                end = Some(i);
                break;
            }
        }
        let Some(end) = end else {
            out.push_str(from);
            return out;
        };
        let names_a_value = quote == '"'
            || VALUE_WORDS
                .iter()
                .any(|word| before.trim_end().ends_with(word));
        if names_a_value {
            out.push(quote);
            out.push_str(HIDDEN);
            out.push(quote);
        } else {
            out.push(quote);
            out.push_str(&body[..end]);
            out.push(quote);
        }
        rest = &body[end + quote.len_utf8()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_show_their_values_only_when_asked() {
        let key = KeyText {
            partition: ("PK", "USER#ana@example.com".to_owned()),
            sort: Some(("SK", "USER".to_owned())),
        };
        let hidden = with_values_shown(false, || key.to_string());
        assert_eq!(hidden, "PK = ‹hidden›, SK = ‹hidden›");
        let shown = with_values_shown(true, || key.to_string());
        assert_eq!(shown, r#"PK = "USER#ana@example.com", SK = "USER""#);
    }

    #[test]
    fn messages_lose_quoted_values_and_keep_names() {
        let message = r#"invalid type: string "ana@example.com", expected u32; missing field `id`; invalid value: integer `42`; unknown variant `Vip`, expected one of `A`, `B`; say "a \"quoted\" word""#;
        assert_eq!(
            with_values_shown(false, || Redacted(message).to_string()),
            "invalid type: string \"‹hidden›\", expected u32; missing field `id`; invalid value: integer `‹hidden›`; unknown variant `‹hidden›`, expected one of `A`, `B`; say \"‹hidden›\""
        );
        assert_eq!(
            with_values_shown(true, || Redacted(message).to_string()),
            message
        );
        assert_eq!(redact("an open \"quote"), "an open \"quote");
    }
}
