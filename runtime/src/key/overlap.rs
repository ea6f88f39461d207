//! Whether two key templates of one table can render the same key, so that one entity's item
//! could replace another's.
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

use super::{KeyTemplate, Segment};

/// Characters that some non-string key part can write, so they cannot split a key reliably.
const WRITTEN_BY_PARTS: &str = "-:.+_";

/// Whether `a` and `b` may render the same text.
pub fn may_overlap(a: &KeyTemplate, b: &KeyTemplate) -> bool {
    let Some(separator) = hard_separators(a).find(|c| hard_separators(b).any(|d| d == *c)) else {
        // No common splitter: only the constant text before the first field can tell them
        // apart.
        return prefixes_agree(leading(a.segments), leading(b.segments));
    };
    let (left, right) = (pieces(a, separator), pieces(b, separator));
    left.len() == right.len()
        && left
            .iter()
            .zip(&right)
            .all(|(left, right)| piece_may_match(left, right))
}

/// The template's separators that no key part can write.
fn hard_separators(template: &KeyTemplate) -> impl Iterator<Item = char> + '_ {
    template
        .segments
        .iter()
        .filter_map(|segment| match segment {
            Segment::Literal(text) => Some(text.chars()),
            Segment::Field { .. } => None,
        })
        .flatten()
        .filter(|c| !c.is_alphanumeric() && !WRITTEN_BY_PARTS.contains(*c))
}

/// One piece of a template between two separators: constant text and fields.
#[derive(Debug, Default)]
struct Piece {
    /// `None` for a field, `Some(text)` for constant text.
    parts: Vec<Option<String>>,
}

impl Piece {
    fn push_text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        match self.parts.last_mut() {
            Some(Some(last)) => last.push_str(text),
            _ => self.parts.push(Some(text.to_owned())),
        }
    }
}

/// The template split at every `separator` in its constant text.
fn pieces(template: &KeyTemplate, separator: char) -> Vec<Piece> {
    let mut pieces = vec![Piece::default()];
    for segment in template.segments {
        match segment {
            Segment::Literal(text) => {
                let mut split = text.split(separator);
                if let (Some(first), Some(piece)) = (split.next(), pieces.last_mut()) {
                    piece.push_text(first);
                }
                for rest in split {
                    let mut piece = Piece::default();
                    piece.push_text(rest);
                    pieces.push(piece);
                }
            }
            Segment::Field { .. } => {
                if let Some(piece) = pieces.last_mut() {
                    piece.parts.push(None);
                }
            }
        }
    }
    pieces
}

/// Whether two pieces can be the same text.
fn piece_may_match(a: &Piece, b: &Piece) -> bool {
    let constant = |piece: &Piece| match piece.parts.as_slice() {
        [] => Some(String::new()),
        [Some(text)] => Some(text.clone()),
        _ => None,
    };
    if let (Some(a), Some(b)) = (constant(a), constant(b)) {
        return a == b;
    }
    let start = |piece: &Piece| match piece.parts.first() {
        Some(Some(text)) => text.clone(),
        _ => String::new(),
    };
    let end = |piece: &Piece| match piece.parts.last() {
        Some(Some(text)) => text.clone(),
        _ => String::new(),
    };
    prefixes_agree(&start(a), &start(b)) && suffixes_agree(&end(a), &end(b))
}

fn leading(segments: &[Segment]) -> &str {
    match segments.first() {
        Some(Segment::Literal(text)) => text,
        _ => "",
    }
}

/// One is a prefix of the other (so a field after the shorter could make up the difference).
fn prefixes_agree(a: &str, b: &str) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

fn suffixes_agree(a: &str, b: &str) -> bool {
    a.ends_with(b) || b.ends_with(a)
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
                    segments.push(Segment::Field { name, width: None });
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
