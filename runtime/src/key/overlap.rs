//! Whether two key templates of one table can render the same key, so that one entity's item
//! could replace another's, and how such a pair is described.
//!
//! String parts never hold a separator of their template (see [`KeyTemplate`]), and the other
//! part types write letters, digits and `-`, `:`, `.`, `+`, `_` only (the `KeyPart` derive
//! refuses enum key texts with anything else). So a separator that both
//! templates have and no part can write appears in a key exactly where the template's constant
//! text puts it: splitting both templates at it gives pieces that must match one for one. Two
//! templates are disjoint when they split into different numbers of pieces, or when two pieces
//! cannot be the same text (two different constants, or constants at a piece's start or end
//! that disagree). Anything else counts as a possible overlap: the check may refuse a design
//! that is safe, never pass one that is not.
//!
//! Everything here is a `const fn`, so that a `Collection`, which declares its entities
//! together, runs the same check at compile time that a lone entity runs at its first key.

use super::template::{KeyTemplate, Segment};

/// Characters that some non-string key part can write, so they cannot split a key reliably.
const WRITTEN_BY_PARTS: &[u8] = b"-:.+_";

/// A template is read one symbol at a time: each byte of its constant text, and this symbol
/// for each field.
const FIELD: u16 = 0x100;
/// The symbol past a piece's ends.
const END: u16 = 0x101;

/// Whether `a` and `b` may render the same text.
pub const fn may_overlap(a: &KeyTemplate, b: &KeyTemplate) -> bool {
    let Some(separator) = common_separator(a, b) else {
        // No common splitter: each template is one piece.
        let (left, right) = (
            Piece {
                start: 0,
                end: symbol_count(a),
            },
            Piece {
                start: 0,
                end: symbol_count(b),
            },
        );
        return piece_may_match(a, left, b, right);
    };
    let count = piece_count(a, separator);
    if count != piece_count(b, separator) {
        return false;
    }
    let mut number = 0;
    while number < count {
        let left = piece(a, separator, number);
        let right = piece(b, separator, number);
        if !piece_may_match(a, left, b, right) {
            return false;
        }
        number += 1;
    }
    true
}

/// The number of symbols in `template`.
const fn symbol_count(template: &KeyTemplate) -> usize {
    let mut count = 0;
    let mut index = 0;
    while index < template.segments.len() {
        count += match template.segments[index] {
            Segment::Literal(text) => text.len(),
            Segment::Field { .. } => 1,
        };
        index += 1;
    }
    count
}

/// Symbol number `position` of `template`: a byte of constant text, [`FIELD`], or [`END`].
const fn symbol(template: &KeyTemplate, position: usize) -> u16 {
    let mut rest = position;
    let mut index = 0;
    while index < template.segments.len() {
        match template.segments[index] {
            Segment::Literal(text) => {
                if rest < text.len() {
                    return text.as_bytes()[rest] as u16;
                }
                rest -= text.len();
            }
            Segment::Field { .. } => {
                if rest == 0 {
                    return FIELD;
                }
                rest -= 1;
            }
        }
        index += 1;
    }
    END
}

/// A separator no key part can write. Only ASCII punctuation counts: treating fewer characters
/// as separators can only make the check refuse more.
const fn is_hard_separator(symbol: u16) -> bool {
    if symbol >= 0x80 {
        return false;
    }
    let byte = symbol as u8;
    if byte.is_ascii_alphanumeric() {
        return false;
    }
    let mut index = 0;
    while index < WRITTEN_BY_PARTS.len() {
        if WRITTEN_BY_PARTS[index] == byte {
            return false;
        }
        index += 1;
    }
    true
}

/// Whether `template`'s constant text holds `separator`.
const fn holds(template: &KeyTemplate, separator: u16) -> bool {
    let mut position = 0;
    while position < symbol_count(template) {
        if symbol(template, position) == separator {
            return true;
        }
        position += 1;
    }
    false
}

/// The first hard separator of `a` that `b` has too.
const fn common_separator(a: &KeyTemplate, b: &KeyTemplate) -> Option<u16> {
    let mut position = 0;
    while position < symbol_count(a) {
        let candidate = symbol(a, position);
        if is_hard_separator(candidate) && holds(b, candidate) {
            return Some(candidate);
        }
        position += 1;
    }
    None
}

/// The symbols `start..end` of a template, between two separators (or its ends).
#[derive(Clone, Copy)]
struct Piece {
    start: usize,
    end: usize,
}

const fn piece_count(template: &KeyTemplate, separator: u16) -> usize {
    let mut count = 1;
    let mut position = 0;
    while position < symbol_count(template) {
        if symbol(template, position) == separator {
            count += 1;
        }
        position += 1;
    }
    count
}

/// Piece number `number` of `template` split at `separator`.
const fn piece(template: &KeyTemplate, separator: u16, number: usize) -> Piece {
    let total = symbol_count(template);
    let mut seen = 0;
    let mut start = 0;
    let mut position = 0;
    while position < total {
        if symbol(template, position) == separator {
            if seen == number {
                return Piece {
                    start,
                    end: position,
                };
            }
            seen += 1;
            start = position + 1;
        }
        position += 1;
    }
    Piece { start, end: total }
}

/// Symbol `offset` of `piece` from its start (or, `from_end`, from its end), [`END`] past it.
const fn piece_symbol(template: &KeyTemplate, piece: Piece, offset: usize, from_end: bool) -> u16 {
    if offset >= piece.end - piece.start {
        return END;
    }
    let position = if from_end {
        piece.end - 1 - offset
    } else {
        piece.start + offset
    };
    symbol(template, position)
}

const fn has_field(template: &KeyTemplate, piece: Piece) -> bool {
    let mut position = piece.start;
    while position < piece.end {
        if symbol(template, position) == FIELD {
            return true;
        }
        position += 1;
    }
    false
}

/// Whether two pieces can be the same text: two constants must be equal; otherwise the
/// constant text each starts with must agree (one a prefix of the other, since a field after the
/// shorter could make up the difference), and so must the text each ends with.
const fn piece_may_match(a: &KeyTemplate, left: Piece, b: &KeyTemplate, right: Piece) -> bool {
    let constants = !has_field(a, left) && !has_field(b, right);
    if constants && left.end - left.start != right.end - right.start {
        return false;
    }
    ends_agree(a, left, b, right, false) && ends_agree(a, left, b, right, true)
}

/// Whether the constant text at the start (or end) of both pieces agrees up to the first field
/// or the end of the shorter.
const fn ends_agree(
    a: &KeyTemplate,
    left: Piece,
    b: &KeyTemplate,
    right: Piece,
    from_end: bool,
) -> bool {
    let mut offset = 0;
    loop {
        let x = piece_symbol(a, left, offset, from_end);
        let y = piece_symbol(b, right, offset, from_end);
        if x == FIELD || x == END || y == FIELD || y == END {
            return true;
        }
        if x != y {
            return false;
        }
        offset += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `"A#{x}#B"` into a template, for tests.
    fn template(source: &'static str) -> KeyTemplate {
        let mut segments = Vec::new();
        let mut rest = source;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let end = rest.find('}').unwrap_or(rest.len() - 1);
                    let name: &'static str = Box::leak(rest[1..end].to_owned().into_boxed_str());
                    let number = segments
                        .iter()
                        .filter(|segment| matches!(segment, Segment::Field { .. }))
                        .count() as u16;
                    segments.push(Segment::Field {
                        name,
                        width: None,
                        number,
                    });
                    rest = &rest[end + 1..];
                }
                Some(start) => {
                    segments.push(Segment::Literal(&rest[..start]));
                    rest = &rest[start..];
                }
                None => {
                    segments.push(Segment::Literal(rest));
                    rest = "";
                }
            }
        }
        KeyTemplate {
            source,
            segments: Box::leak(segments.into_boxed_slice()),
        }
    }

    fn overlap(a: &'static str, b: &'static str) -> bool {
        let (a, b) = (template(a), template(b));
        let answer = may_overlap(&a, &b);
        assert_eq!(answer, may_overlap(&b, &a), "symmetric: {a} / {b}");
        answer
    }

    #[test]
    fn templates_of_one_design_are_told_apart() {
        // The reproduced case: a document and its comments in one partition.
        assert!(!overlap("DOC#{doc}", "DOC#{doc}#CMT#{comment}"));
        assert!(!overlap(
            "DOC#{date}#{doc}",
            "DOC#{date}#{doc}#CMT#{comment}"
        ));
        assert!(!overlap("TICKET#{id}", "TEAM#{id}"));
        assert!(!overlap("TICKET", "TEAM"));
        assert!(!overlap("STATUS#{status}", "TICKET"));
        assert!(!overlap("ORDER#{id}#ITEM#{n}", "ORDER#{id}#NOTE#{n}"));
    }

    #[test]
    fn templates_that_can_meet_are_reported() {
        assert!(overlap("DOC#{doc}", "DOC#{other}"));
        assert!(overlap("TICKET", "TICKET"));
        assert!(
            overlap("A{x}", "AB{y}"),
            "no separator: the field can hold the B"
        );
        assert!(
            overlap("{x}#B", "A#{y}"),
            "a field can be A, and a field can be B"
        );
        assert!(
            overlap("T-{x}", "T-{y}-{z}"),
            "dates and negative numbers write -"
        );
    }
}
