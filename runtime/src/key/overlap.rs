//! Whether two key templates of one table can render the same key, so that one entity's item
//! could replace another's, and how such a pair is described.
//!
//! String parts never hold a separator of their template (see [`KeyTemplate`]), and the other
//! part types write letters, digits and `-`, `:`, `.`, `+`, `_` only (the `KeyPart` derive
//! refuses enum key texts with anything else). So a separator that both
//! templates have and no part can write appears in a key exactly where the template's constant
//! text puts it: splitting both templates at it gives pieces that must match one for one. Two
//! templates are disjoint when they split into different numbers of pieces, or when two pieces
//! cannot be the same text: their lengths cannot agree (a piece's constant text and its
//! fixed-width parts have one length: `v{version}` of a `u64` is 21 bytes, `v0` is 2), or the
//! bytes from either end up to the first part of unfixed length disagree (a constant byte
//! against another, or against a fixed-width part that never writes it: digits against `L`).
//! What each part type writes is its [`PartShape`]. Anything else counts as a possible
//! overlap: the check may refuse a design that is safe, never pass one that is not. It refuses
//! where a part of unfixed length (a string, a signed integer, `bool`, an enum whose names
//! differ in length) could make up the difference: `{name}` against `v0`, `A{x}` against
//! `AB{y}`.
//!
//! Everything here is a `const fn`, so that a `Collection`, which declares its entities
//! together, runs the same check at compile time that a lone entity runs at its first key.

use super::field::FieldSchema;
use super::shape::PartShape;
use super::template::{KeyTemplate, Segment};

/// Characters that some non-string key part can write, so they cannot split a key reliably.
const WRITTEN_BY_PARTS: &[u8] = b"-:.+_";

/// A template and the fields its parts are numbered in: what it can render.
#[derive(Clone, Copy)]
pub(crate) struct Rendering<'a> {
    pub(crate) template: &'a KeyTemplate,
    pub(crate) fields: &'a [FieldSchema],
}

/// One symbol of a template: a byte of its constant text, one byte of a fixed-width part, a
/// part of unfixed length, or the end.
#[derive(Clone, Copy)]
enum Symbol {
    Byte(u8),
    Fixed(PartShape),
    Unfixed(PartShape, Option<u8>),
    End,
}

/// Whether `a` and `b` may render the same text, whatever their fields' types (each part
/// any text).
pub const fn may_overlap(a: &KeyTemplate, b: &KeyTemplate) -> bool {
    renderings_may_overlap(
        Rendering {
            template: a,
            fields: &[],
        },
        Rendering {
            template: b,
            fields: &[],
        },
    )
}

/// Whether `a` and `b` may render the same text, from what their fields' types write.
pub(crate) const fn renderings_may_overlap(a: Rendering<'_>, b: Rendering<'_>) -> bool {
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

/// What field `number` of `rendering` writes, and the width its template gives it.
const fn shape(rendering: Rendering<'_>, number: u16) -> PartShape {
    let number = number as usize;
    if number < rendering.fields.len() {
        if let Some(part) = &rendering.fields[number].key_part {
            return part.shape;
        }
    }
    PartShape::ANY
}

/// A fixed length: the same fewest and most bytes.
const fn fixed_length(shape: &PartShape, width: Option<u8>) -> Option<u16> {
    match shape.lengths(width) {
        (min, Some(max)) if min == max => Some(min),
        _ => None,
    }
}

/// The number of symbols in `rendering`.
const fn symbol_count(rendering: Rendering<'_>) -> usize {
    let mut count = 0;
    let mut index = 0;
    while index < rendering.template.segments.len() {
        count += match rendering.template.segments[index] {
            Segment::Literal(text) => text.len(),
            Segment::Field { number, width, .. } => {
                match fixed_length(&shape(rendering, number), width) {
                    Some(length) => length as usize,
                    None => 1,
                }
            }
            Segment::Shard { count, .. } => super::shard::digits(count) as usize,
        };
        index += 1;
    }
    count
}

/// Symbol number `position` of `rendering`.
const fn symbol(rendering: Rendering<'_>, position: usize) -> Symbol {
    let mut rest = position;
    let mut index = 0;
    while index < rendering.template.segments.len() {
        match rendering.template.segments[index] {
            Segment::Literal(text) => {
                if rest < text.len() {
                    return Symbol::Byte(text.as_bytes()[rest]);
                }
                rest -= text.len();
            }
            Segment::Field { number, width, .. } => {
                let shape = shape(rendering, number);
                match fixed_length(&shape, width) {
                    Some(length) => {
                        if rest < length as usize {
                            return Symbol::Fixed(shape);
                        }
                        rest -= length as usize;
                    }
                    None => {
                        if rest == 0 {
                            return Symbol::Unfixed(shape, width);
                        }
                        rest -= 1;
                    }
                }
            }
            Segment::Shard { count, .. } => {
                let digits = super::shard::digits(count) as usize;
                if rest < digits {
                    return Symbol::Fixed(super::shard::shape(count));
                }
                rest -= digits;
            }
        }
        index += 1;
    }
    Symbol::End
}

/// The byte of constant text at `position`, if that is what is there.
const fn byte(rendering: Rendering<'_>, position: usize) -> Option<u8> {
    match symbol(rendering, position) {
        Symbol::Byte(byte) => Some(byte),
        _ => None,
    }
}

/// A separator no key part can write. Only ASCII punctuation counts: treating fewer characters
/// as separators can only make the check refuse more.
const fn is_hard_separator(byte: u8) -> bool {
    if byte >= 0x80 || byte.is_ascii_alphanumeric() {
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

/// Whether `rendering`'s constant text holds `separator`.
const fn holds(rendering: Rendering<'_>, separator: u8) -> bool {
    let mut position = 0;
    while position < symbol_count(rendering) {
        if matches!(byte(rendering, position), Some(found) if found == separator) {
            return true;
        }
        position += 1;
    }
    false
}

/// The first hard separator of `a` that `b` has too.
const fn common_separator(a: Rendering<'_>, b: Rendering<'_>) -> Option<u8> {
    let mut position = 0;
    while position < symbol_count(a) {
        if let Some(candidate) = byte(a, position) {
            if is_hard_separator(candidate) && holds(b, candidate) {
                return Some(candidate);
            }
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

const fn piece_count(rendering: Rendering<'_>, separator: u8) -> usize {
    let mut count = 1;
    let mut position = 0;
    while position < symbol_count(rendering) {
        if matches!(byte(rendering, position), Some(found) if found == separator) {
            count += 1;
        }
        position += 1;
    }
    count
}

/// Piece number `number` of `rendering` split at `separator`.
const fn piece(rendering: Rendering<'_>, separator: u8, number: usize) -> Piece {
    let total = symbol_count(rendering);
    let mut seen = 0;
    let mut start = 0;
    let mut position = 0;
    while position < total {
        if matches!(byte(rendering, position), Some(found) if found == separator) {
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

/// Symbol `offset` of `piece` from its start (or, `from_end`, from its end), [`Symbol::End`]
/// past it.
const fn piece_symbol(
    rendering: Rendering<'_>,
    piece: Piece,
    offset: usize,
    from_end: bool,
) -> Symbol {
    if offset >= piece.end - piece.start {
        return Symbol::End;
    }
    let position = if from_end {
        piece.end - 1 - offset
    } else {
        piece.start + offset
    };
    symbol(rendering, position)
}

/// The fewest and most bytes `piece` renders (`None`: no bound).
const fn piece_lengths(rendering: Rendering<'_>, piece: Piece) -> (usize, Option<usize>) {
    let (mut min, mut max) = (0, Some(0));
    let mut position = piece.start;
    while position < piece.end {
        let (least, most) = match symbol(rendering, position) {
            Symbol::Byte(_) | Symbol::Fixed(_) => (1, Some(1)),
            Symbol::Unfixed(shape, width) => match shape.lengths(width) {
                (least, Some(most)) => (least as usize, Some(most as usize)),
                (least, None) => (least as usize, None),
            },
            Symbol::End => (0, Some(0)),
        };
        min += least;
        max = match (max, most) {
            (Some(max), Some(most)) => Some(max + most),
            _ => None,
        };
        position += 1;
    }
    (min, max)
}

/// Whether two pieces can be the same text: their lengths must be able to agree, and so must
/// the bytes each starts and ends with, up to the first part of unfixed length.
const fn piece_may_match(a: Rendering<'_>, left: Piece, b: Rendering<'_>, right: Piece) -> bool {
    let (left_min, left_max) = piece_lengths(a, left);
    let (right_min, right_max) = piece_lengths(b, right);
    let too_long_for_right = matches!(right_max, Some(max) if left_min > max);
    let too_long_for_left = matches!(left_max, Some(max) if right_min > max);
    if too_long_for_right || too_long_for_left {
        return false;
    }
    ends_agree(a, left, b, right, false) && ends_agree(a, left, b, right, true)
}

/// Whether two symbols can be the same byte.
const fn symbols_agree(x: Symbol, y: Symbol) -> bool {
    match (x, y) {
        (Symbol::Byte(x), Symbol::Byte(y)) => x == y,
        (Symbol::Byte(byte), Symbol::Fixed(shape)) | (Symbol::Fixed(shape), Symbol::Byte(byte)) => {
            shape.writes(byte)
        }
        (Symbol::Fixed(x), Symbol::Fixed(y)) => x.shares_a_character(&y),
        _ => true,
    }
}

/// Whether the bytes at the start (or end) of both pieces agree up to the first part of
/// unfixed length or the end of the shorter.
const fn ends_agree(
    a: Rendering<'_>,
    left: Piece,
    b: Rendering<'_>,
    right: Piece,
    from_end: bool,
) -> bool {
    let mut offset = 0;
    loop {
        let x = piece_symbol(a, left, offset, from_end);
        let y = piece_symbol(b, right, offset, from_end);
        if matches!(x, Symbol::Unfixed(..) | Symbol::End)
            || matches!(y, Symbol::Unfixed(..) | Symbol::End)
        {
            return true;
        }
        if !symbols_agree(x, y) {
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
                    let (name, width) = match rest[1..end].split_once(':') {
                        Some((name, width)) => (name, width.parse().ok()),
                        None => (&rest[1..end], None),
                    };
                    let name: &'static str = Box::leak(name.to_owned().into_boxed_str());
                    let number = segments
                        .iter()
                        .filter(|segment| matches!(segment, Segment::Field { .. }))
                        .count() as u16;
                    segments.push(Segment::Field {
                        name,
                        width,
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

    /// The fields of a template, one per `{..}` in order, with the key part of `T`.
    fn typed<T: crate::key::KeyField>(count: usize) -> &'static [FieldSchema] {
        let fields: Vec<FieldSchema> = (0..count)
            .map(|_| FieldSchema {
                name: "field",
                attribute: "field",
                key_part: Some(T::KEY_PART),
                from_key: None,
            })
            .collect();
        Box::leak(fields.into_boxed_slice())
    }

    /// Whether `a` (its fields of type `A`) and `b` (of `B`) may render the same text.
    fn typed_overlap<A: crate::key::KeyField, B: crate::key::KeyField>(
        a: &'static str,
        b: &'static str,
    ) -> bool {
        let (left, right) = (template(a), template(b));
        let fields = |template: &KeyTemplate| {
            template
                .segments
                .iter()
                .filter(|segment| matches!(segment, Segment::Field { .. }))
                .count()
        };
        let a = Rendering {
            template: Box::leak(Box::new(left)),
            fields: typed::<A>(fields(&left)),
        };
        let b = Rendering {
            template: Box::leak(Box::new(right)),
            fields: typed::<B>(fields(&right)),
        };
        let answer = renderings_may_overlap(a, b);
        assert_eq!(
            answer,
            renderings_may_overlap(b, a),
            "symmetric: {a:?} / {b:?}",
            a = a.template,
            b = b.template
        );
        answer
    }

    #[test]
    fn fixed_width_parts_tell_templates_apart() {
        // AWS's version control: `v0` holds the latest, `v{version}` each version.
        assert!(!typed_overlap::<u64, u64>("v{version}", "v0"));
        assert!(!typed_overlap::<u64, u64>("v{version}", "vLATEST"));
        // The same width: digits meet digits, never letters.
        assert!(typed_overlap::<u8, u8>("v{version}", "v007"));
        assert!(!typed_overlap::<u8, u8>("v{version}", "vABC"));
        assert!(typed_overlap::<u8, u8>("v{a}{b}", "v{c}000"));
        assert!(!typed_overlap::<u8, u8>("v{a}{b}", "v{c}00"));
        // A template's width override is the width.
        assert!(typed_overlap::<u64, u64>("v{version:1}", "v0"));
        // A signed integer writes `width` digits, or `-` and `width` digits.
        assert!(typed_overlap::<i8, i8>("{n}", "-{m}"));
        assert!(!typed_overlap::<i8, i8>("{n}", "ab"));
        // Lengths that cannot agree, whatever the parts hold.
        assert!(!typed_overlap::<u16, u16>("{n}", "{m}x"));
    }

    #[test]
    fn parts_of_unfixed_length_still_count_as_any_length() {
        assert!(typed_overlap::<String, u64>("v{name}", "v{version}"));
        assert!(typed_overlap::<String, u64>("{name}", "v0"));
        assert!(
            typed_overlap::<bool, bool>("{flag}", "maybe"),
            "true or false are 4 or 5 bytes; the check does not read further"
        );
        assert!(typed_overlap::<u64, String>("{n}0", "{name}"));
        // Without the types, as `may_overlap` sees templates: any text.
        assert!(overlap("v{version}", "v0"));
    }
}
