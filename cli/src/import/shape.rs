//! Items grouped into entities by the shape of their keys, and each group's key templates.
//!
//! A key attribute's **separator** is the first of `#`, `|`, `/`, `~` and `:` that some value
//! has right after a leading word (`ACC#123`, `User:UserA`): a timestamp's `:` is no separator,
//! since no word comes before it. A key splits at its separator into pieces. A leading piece
//! that is a word (`ACC`, `User`, `metadata`) is the key's **tag**; items whose keys have the
//! same tags and numbers of pieces are one shape. Within a shape, a piece that is the same
//! word in every item is constant text, and every other piece is a field: named after an
//! attribute every item holds with the same value, else the facet's alias, else the word
//! before it, else the key attribute. A constant read from a single item is a guess, and is
//! said to be one.

use serde_json::Value;

const SEPARATORS: [char; 5] = ['#', '|', '/', '~', ':'];

/// The separator of a key attribute whose values are `values`, if it has one.
pub(super) fn separator<'a>(values: impl Iterator<Item = &'a str> + Clone) -> Option<char> {
    SEPARATORS.into_iter().find(|&separator| {
        values.clone().any(|value| {
            value
                .split_once(separator)
                .is_some_and(|(head, _)| is_word(head))
        })
    })
}

/// Letters only: a tag, or constant text.
pub(super) fn is_word(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_ascii_alphabetic())
}

/// A key's pieces, split at `separator`.
pub(super) fn pieces(key: &str, separator: Option<char>) -> Vec<&str> {
    match separator {
        Some(separator) => key.split(separator).collect(),
        None => vec![key],
    }
}

/// What tells shapes apart: each key's tag and number of pieces.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct ShapeId {
    pub(super) partition: (Option<String>, usize),
    pub(super) sort: Option<(Option<String>, usize)>,
}

pub(super) fn shape_of(partition: &[&str], sort: Option<&[&str]>) -> ShapeId {
    let id = |pieces: &[&str]| {
        let tag = pieces
            .first()
            .filter(|piece| is_word(piece))
            .map(|piece| (*piece).to_owned());
        (tag, pieces.len())
    };
    ShapeId {
        partition: id(partition),
        sort: sort.map(id),
    }
}

/// A piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Piece {
    Constant(String),
    /// A field, by its Rust name.
    Field(String),
}

/// A key template: pieces joined by the separator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Template {
    pub(super) pieces: Vec<Piece>,
    pub(super) separator: Option<char>,
}

impl Template {
    /// As the derive reads it: `"SUB#{sub_id}#SKU#{sku}"`.
    pub(super) fn source(&self) -> String {
        let separator = self.separator.map(String::from).unwrap_or_default();
        self.pieces
            .iter()
            .map(|piece| match piece {
                Piece::Constant(text) => text.clone(),
                Piece::Field(name) => format!("{{{name}}}"),
            })
            .collect::<Vec<_>>()
            .join(&separator)
    }
}

/// One piece position of a shape, as its items fill it.
pub(super) struct Position<'a> {
    /// The value each item has there.
    pub(super) values: Vec<&'a str>,
}

impl Position<'_> {
    /// The constant text every item has here, if it is one word in all of them.
    pub(super) fn constant(&self) -> Option<&str> {
        let first = *self.values.first()?;
        (is_word(first) && self.values.iter().all(|value| *value == first)).then_some(first)
    }
}

/// The attributes (of type `S`) every one of `items` holds with the value `values` gives it,
/// in the items' order: what a key piece may be named after.
pub(super) fn attributes_equal_to<'a>(items: &[&'a Value], values: &[&str]) -> Vec<&'a str> {
    let Some(first) = items.first().and_then(|item| item.as_object()) else {
        return Vec::new();
    };
    first
        .keys()
        .filter(|name| {
            items.iter().zip(values).all(|(item, value)| {
                item.get(name.as_str())
                    .and_then(|attribute| attribute.get("S"))
                    .and_then(Value::as_str)
                    == Some(*value)
            })
        })
        .map(String::as_str)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_separator_follows_a_leading_word() {
        assert_eq!(separator(["ACC#123", "x"].into_iter()), Some('#'));
        assert_eq!(separator(["User:UserA", "Room:Art"].into_iter()), Some(':'));
        assert_eq!(
            separator(["2023-04-01T12:00:00.001Z", "meta"].into_iter()),
            None
        );
        assert_eq!(separator(["Complaint123"].into_iter()), None);
    }

    #[test]
    fn shapes_are_told_apart_by_tags_and_piece_counts() {
        let comment = shape_of(&["User", "UserA"], Some(&["2023-04-01T12:00:00.001Z"]));
        let room = shape_of(&["Room", "Art"], Some(&["meta"]));
        assert_ne!(comment, room);
        assert_eq!(comment.partition, (Some("User".to_owned()), 2));
        assert_eq!(comment.sort, Some((None, 1)));
    }

    #[test]
    fn templates_read_as_the_derive_takes_them() {
        let template = Template {
            pieces: vec![
                Piece::Constant("SUB".into()),
                Piece::Field("sub_id".into()),
                Piece::Constant("SKU".into()),
                Piece::Field("sku".into()),
            ],
            separator: Some('#'),
        };
        assert_eq!(template.source(), "SUB#{sub_id}#SKU#{sku}");
    }
}
