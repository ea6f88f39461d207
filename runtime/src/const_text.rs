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
