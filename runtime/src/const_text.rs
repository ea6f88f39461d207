//! Text assembled by a `const fn`, so that a check run at compile time can panic with the same
//! message that the run-time error prints.

/// Room for the longest message the library assembles; longer text is cut at a character
/// boundary.
const CAPACITY: usize = 1024;

#[doc(hidden)]
/// A string built by value in constant evaluation.
#[derive(Clone, Copy)]
pub struct ConstText {
    bytes: [u8; CAPACITY],
    len: usize,
}

impl ConstText {
    /// Empty text.
    pub(crate) const fn new() -> ConstText {
        ConstText {
            bytes: [0; CAPACITY],
            len: 0,
        }
    }

    /// The text with `text` appended, as much of it as fits in whole characters.
    pub(crate) const fn push(mut self, text: &str) -> ConstText {
        let source = text.as_bytes();
        let mut end = source.len();
        if end > CAPACITY - self.len {
            end = CAPACITY - self.len;
            // Back off to the start of a character: UTF-8 continuation bytes are 0b10xxxxxx.
            while end > 0 && source[end] & 0xC0 == 0x80 {
                end -= 1;
            }
        }
        let mut index = 0;
        while index < end {
            self.bytes[self.len + index] = source[index];
            index += 1;
        }
        self.len += end;
        self
    }

    /// The text.
    pub const fn as_str(&self) -> &str {
        let bytes = self.bytes.split_at(self.len).0;
        match std::str::from_utf8(bytes) {
            Ok(text) => text,
            // Unreachable: only whole characters of `&str`s are copied in.
            Err(_) => "",
        }
    }
}

impl Default for ConstText {
    fn default() -> Self {
        ConstText::new()
    }
}

impl std::fmt::Debug for ConstText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

#[doc(hidden)]
/// Byte-wise string equality usable in constants (the derive checks attribute names with it).
pub const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut position = 0;
    while position < a.len() {
        if a[position] != b[position] {
            return false;
        }
        position += 1;
    }
    true
}

/// Whether `name` is one of `names`, usable in constants.
pub(crate) const fn listed(names: &[&str], name: &str) -> bool {
    let mut position = 0;
    while position < names.len() {
        if str_eq(names[position], name) {
            return true;
        }
        position += 1;
    }
    false
}

/// Names longer than this are never suggested: the edit distance keeps rows of this size.
const LONGEST_SUGGESTED: usize = 64;

/// The fewest single-byte insertions, deletions, substitutions and swaps of two neighbours
/// that turn `a` into `b` (the optimal string alignment distance), usable in constants;
/// `usize::MAX` when `b` is too long to be suggested. Compile-time checks use it for "did you
/// mean" in the user's names, where a swap (`titel`) is as common a slip as a wrong letter.
pub(crate) const fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if b.len() >= LONGEST_SUGGESTED {
        return usize::MAX;
    }
    // Row i holds the distances between the first i bytes of `a` and the first j of `b`;
    // a swap looks two rows back.
    let mut before_previous = [0usize; LONGEST_SUGGESTED];
    let mut previous = [0usize; LONGEST_SUGGESTED];
    let mut column = 0;
    while column <= b.len() {
        previous[column] = column;
        column += 1;
    }
    let mut line = 1;
    while line <= a.len() {
        let mut current = [0usize; LONGEST_SUGGESTED];
        current[0] = line;
        column = 1;
        while column <= b.len() {
            let differ = (a[line - 1] != b[column - 1]) as usize;
            let mut best = min(
                previous[column - 1] + differ,
                min(current[column - 1] + 1, previous[column] + 1),
            );
            if line > 1
                && column > 1
                && a[line - 1] == b[column - 2]
                && a[line - 2] == b[column - 1]
            {
                best = min(best, before_previous[column - 2] + 1);
            }
            current[column] = best;
            column += 1;
        }
        before_previous = previous;
        previous = current;
        line += 1;
    }
    previous[b.len()]
}

const fn min(a: usize, b: usize) -> usize {
    if a < b {
        a
    } else {
        b
    }
}

/// The largest edit distance at which a name is suggested for `unknown`: a third of its
/// length, and at least one.
pub(crate) const fn suggestion_limit(unknown: &str) -> usize {
    if unknown.len() < 3 {
        1
    } else {
        unknown.len() / 3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_single_byte_edits() {
        assert_eq!(edit_distance("title", "title"), 0);
        assert_eq!(edit_distance("titel", "title"), 1);
        assert_eq!(edit_distance("tilte", "title"), 1);
        assert_eq!(edit_distance("tile", "title"), 1);
        assert_eq!(edit_distance("titles", "title"), 1);
        assert_eq!(edit_distance("", "id"), 2);
        assert_eq!(edit_distance("colour", "body"), 5);
        assert_eq!(
            edit_distance("a", &"b".repeat(LONGEST_SUGGESTED)),
            usize::MAX
        );
    }

    #[test]
    fn a_suggestion_allows_a_third_of_the_name() {
        assert_eq!(suggestion_limit("id"), 1);
        assert_eq!(suggestion_limit("titel"), 1);
        assert_eq!(suggestion_limit("status"), 2);
        assert_eq!(suggestion_limit("created_at"), 3);
    }
}
