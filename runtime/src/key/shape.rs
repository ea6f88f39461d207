//! What text a key part type can write: how many bytes, and which characters. The overlap
//! check reads it, so that a fixed-width part tells templates apart: `v{version}` of a `u64`
//! is always `v` and 20 digits, so it never renders `v0`.

#[doc(hidden)]
/// The texts a key part type can write, as the overlap check between templates reads them.
/// [`PartShape::ANY`] (the default of [`KeyField::SHAPE`](super::KeyField::SHAPE)) claims
/// nothing, so that a key part type of the user's own can only make the check refuse more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartShape {
    /// The fewest bytes a value writes (at `width`, for integers).
    pub min: u16,
    /// The most bytes a value writes, or `None` without bound.
    pub max: Option<u16>,
    /// The ASCII characters a value can write, one bit each.
    pub ascii: u128,
    /// Whether a value can write characters beyond ASCII.
    pub beyond_ascii: bool,
    /// The type's own width, for integers, whose lengths a template's width override
    /// (`{seq:6}`) sets instead.
    pub width: Option<u8>,
}

impl PartShape {
    /// Any text: what strings write (less their template's separators, which the overlap
    /// check accounts for on its own).
    pub const ANY: PartShape = PartShape {
        min: 0,
        max: None,
        ascii: u128::MAX,
        beyond_ascii: true,
        width: None,
    };

    /// One of `texts` (`bool`, the names of a `#[derive(KeyPart)]` enum).
    pub const fn one_of(texts: &[&str]) -> PartShape {
        let mut shape = PartShape {
            min: u16::MAX,
            max: Some(0),
            ascii: 0,
            beyond_ascii: false,
            width: None,
        };
        let mut index = 0;
        while index < texts.len() {
            let text = texts[index].as_bytes();
            let length = if text.len() > u16::MAX as usize {
                u16::MAX
            } else {
                text.len() as u16
            };
            if length < shape.min {
                shape.min = length;
            }
            if let Some(max) = shape.max {
                if length > max {
                    shape.max = Some(length);
                }
            }
            shape = shape.with_characters(text);
            index += 1;
        }
        if texts.is_empty() {
            shape.min = 0;
        }
        shape
    }

    /// Exactly `length` bytes, each one of `characters`.
    pub const fn fixed(length: u16, characters: &str) -> PartShape {
        PartShape {
            min: length,
            max: Some(length),
            ascii: 0,
            beyond_ascii: false,
            width: None,
        }
        .with_characters(characters.as_bytes())
    }

    /// An integer zero-padded to `width` digits; a signed one writes a negative value as `-`
    /// and `width` digits.
    pub const fn integer(width: u8, signed: bool) -> PartShape {
        let digits = PartShape::fixed(width as u16, "0123456789");
        if signed {
            PartShape {
                max: Some(width as u16 + 1),
                width: Some(width),
                ..digits.with_characters(b"-")
            }
        } else {
            PartShape {
                width: Some(width),
                ..digits
            }
        }
    }

    const fn with_characters(mut self, text: &[u8]) -> PartShape {
        let mut index = 0;
        while index < text.len() {
            let byte = text[index];
            if byte < 0x80 {
                self.ascii |= 1 << byte;
            } else {
                self.beyond_ascii = true;
            }
            index += 1;
        }
        self
    }

    /// The fewest and most bytes a value writes in a template whose field has `width`
    /// (its override, if any).
    pub(crate) const fn lengths(&self, width: Option<u8>) -> (u16, Option<u16>) {
        match (self.width, width, self.max) {
            (Some(_), Some(given), Some(max)) => {
                (given as u16, Some(given as u16 + (max - self.min)))
            }
            _ => (self.min, self.max),
        }
    }

    /// Whether a value can write `byte` (a byte of UTF-8 text: one of a character beyond
    /// ASCII counts as such a character).
    pub(crate) const fn writes(&self, byte: u8) -> bool {
        if byte < 0x80 {
            self.ascii & (1 << byte) != 0
        } else {
            self.beyond_ascii
        }
    }

    /// Whether two parts can write the same byte at one place.
    pub(crate) const fn shares_a_character(&self, other: &PartShape) -> bool {
        self.ascii & other.ascii != 0 || (self.beyond_ascii && other.beyond_ascii)
    }
}
