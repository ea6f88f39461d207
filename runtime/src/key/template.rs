//! Key templates: constant text and fields, rendered into keys and split back.

use super::error::KeyError;
use super::part::{KeyField, KeyPart, PartContext};
use std::borrow::Cow;
use std::fmt;

#[doc(hidden)]
/// One piece of a key template: constant text or a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment {
    /// Constant text, copied as is (`"TICKET#"`).
    Literal(&'static str),
    /// A field of the entity (`{id}` or, with a width override for integers, `{seq:6}`).
    Field {
        /// The Rust field name.
        name: &'static str,
        /// Zero-padding width for integers; `None` uses the type's full width.
        width: Option<u8>,
        /// The field's number in its entity's schema (declaration order), as
        /// `Entity::key_input` takes it: generic code finds the value without a lookup by
        /// name. A template no entity renders numbers its fields in template order.
        number: u16,
    },
    /// A shard of the partition (`{shard(id, 8)}`): a number below `count` from the key text
    /// of field `name`, numbered as [`Segment::Field`] is (see [`super::shard`]).
    Shard {
        /// The Rust name of the field whose key text decides the shard.
        name: &'static str,
        /// The field's number in its entity's schema.
        number: u16,
        /// How many shards the partition is spread over.
        count: u16,
    },
}

impl Segment {
    /// Whether this segment reads a field: a field's own text, or a shard of it.
    const fn reads_field(&self) -> bool {
        matches!(self, Segment::Field { .. } | Segment::Shard { .. })
    }
}

/// A key template, parsed at compile time by the derive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyTemplate {
    /// The template as written, e.g. `"TICKET#{id}"` (used in messages).
    pub source: &'static str,
    /// The template split into constant text and fields, in order.
    #[doc(hidden)]
    pub segments: &'static [Segment],
}

impl KeyTemplate {
    /// The names of the fields this template uses, in order: a field a shard part reads
    /// (`{shard(id, 8)}`) counts, as its value decides the key.
    pub fn fields(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.field_segments().map(|(name, _, _)| name)
    }

    /// The numbers of the fields this template uses, in order (`Segment::Field::number`).
    pub(crate) fn field_numbers(&self) -> impl Iterator<Item = usize> + '_ {
        self.field_segments()
            .map(|(_, _, number)| usize::from(number))
    }

    /// Each field segment's name, width and number, in order (a shard part's, with no width).
    fn field_segments(&self) -> impl Iterator<Item = (&'static str, Option<u8>, u16)> + '_ {
        self.segments.iter().filter_map(|segment| match *segment {
            Segment::Field {
                name,
                width,
                number,
            } => Some((name, width, number)),
            Segment::Shard { name, number, .. } => Some((name, None, number)),
            Segment::Literal(_) => None,
        })
    }

    /// Whether the template writes field `name`'s own text (not only a shard of it), so that
    /// the field can be read back from a key.
    pub(crate) fn writes_text_of(&self, name: &str) -> bool {
        (self.segments.iter())
            .any(|segment| matches!(segment, Segment::Field { name: field, .. } if *field == name))
    }

    /// The number of shards of a sharded partition template (`{shard(id, 8)}`: 8).
    pub fn shards(&self) -> Option<u16> {
        self.segments.iter().find_map(|segment| match *segment {
            Segment::Shard { count, .. } => Some(count),
            _ => None,
        })
    }

    /// Renders the key of every shard of a sharded template, in shard order, with `values`
    /// given for its other fields (in field order, without the shard's); one key for a
    /// template without shards.
    pub fn render_shards(&self, values: &[&dyn KeyPart]) -> Result<Vec<String>, KeyError> {
        (0..self.shards().unwrap_or(1))
            .map(|shard| {
                self.render_segments(usize::MAX, Some(shard), |position, _, context, out| {
                    let value = values.get(position).ok_or_else(|| KeyError::Mismatch {
                        key: out.clone(),
                        template: self.source,
                        reason: format!("no value was given for `{}`", context.field),
                    })?;
                    value.render_part(context, out)
                })
            })
            .collect()
    }

    /// Whether the template has no fields (a constant such as `"TICKET"`).
    pub fn is_constant(&self) -> bool {
        self.fields().next().is_none()
    }

    /// Renders the template with `values` given in field order (as [`KeyTemplate::fields`]).
    ///
    /// ```
    /// // `TEMPLATE` is what the derive makes of `"TEAM#{team}#TICKET#{id}"`.
    /// # use singletable_runtime::__private::Segment;
    /// # use singletable_runtime::key::KeyTemplate;
    /// # const TEMPLATE: KeyTemplate = KeyTemplate {
    /// #     source: "TEAM#{team}#TICKET#{id}",
    /// #     segments: &[
    /// #         Segment::Literal("TEAM#"),
    /// #         Segment::Field { name: "team", width: None, number: 0 },
    /// #         Segment::Literal("#TICKET#"),
    /// #         Segment::Field { name: "id", width: None, number: 1 },
    /// #     ],
    /// # };
    /// assert_eq!(TEMPLATE.render(&[&7u32, &"8842"])?, "TEAM#0000000007#TICKET#8842");
    /// // A string part cannot hold the template's separators, wherever it stands.
    /// assert!(TEMPLATE.render(&[&7u32, &"a#TICKET#b"]).is_err());
    /// # Ok::<(), singletable_runtime::key::KeyError>(())
    /// ```
    pub fn render(&self, values: &[&dyn KeyPart]) -> Result<String, KeyError> {
        self.render_prefix(values, values.len())
    }

    /// Renders the template as a key: borrowed for a constant template, which costs nothing.
    #[doc(hidden)]
    pub fn render_key(&self, values: &[&dyn KeyPart]) -> Result<Cow<'static, str>, KeyError> {
        match self.constant_text() {
            Some(text) => Ok(Cow::Borrowed(text)),
            None => self.render(values).map(Cow::Owned),
        }
    }

    /// The whole key of a constant template (`"TICKET"`), which every item shares.
    pub(crate) fn constant_text(&self) -> Option<&'static str> {
        match self.segments {
            [Segment::Literal(text)] if !text.is_empty() => Some(text),
            _ => None,
        }
    }

    /// Renders the template up to (not including) field number `fields` and the constant text
    /// after the last rendered field: the prefix a `begins_with` key condition uses.
    pub fn render_prefix(
        &self,
        values: &[&dyn KeyPart],
        fields: usize,
    ) -> Result<String, KeyError> {
        self.render_with(
            fields.min(values.len()),
            |position, context, out| match values.get(position) {
                Some(value) => value.render_part(context, out),
                None => Ok(()),
            },
        )
    }

    /// Renders the first `fields` fields (and the constant text after the last), asking
    /// `part` to write field number `position` with the given context.
    pub fn render_with(
        &self,
        fields: usize,
        mut part: impl FnMut(usize, PartContext, &mut String) -> Result<(), KeyError>,
    ) -> Result<String, KeyError> {
        self.render_numbered(fields, |position, _, context, out| {
            part(position, context, out)
        })
    }

    /// [`KeyTemplate::render_with`], also handing `part` each field's number in its entity's
    /// schema (`Segment::Field::number`).
    pub(crate) fn render_numbered(
        &self,
        fields: usize,
        part: impl FnMut(usize, usize, PartContext, &mut String) -> Result<(), KeyError>,
    ) -> Result<String, KeyError> {
        self.render_segments(fields, None, part)
    }

    /// [`KeyTemplate::render_numbered`], a shard part written as `shard` when given (its field
    /// then takes no place among the values), else as its field's value decides.
    fn render_segments(
        &self,
        fields: usize,
        shard: Option<u16>,
        mut part: impl FnMut(usize, usize, PartContext, &mut String) -> Result<(), KeyError>,
    ) -> Result<String, KeyError> {
        let mut out = String::with_capacity(self.source.len() + 16);
        let mut rendered = 0;
        for (index, segment) in self.segments.iter().enumerate() {
            match *segment {
                Segment::Literal(text) => out.push_str(text),
                Segment::Field { number, .. } => {
                    if rendered == fields {
                        break;
                    }
                    self.write_field(index, &mut out, |context, out| {
                        part(rendered, usize::from(number), context, out)
                    })?;
                    rendered += 1;
                }
                Segment::Shard {
                    name,
                    number,
                    count,
                } => {
                    if let Some(shard) = shard {
                        super::shard::write(shard, count, &mut out);
                        continue;
                    }
                    if rendered == fields {
                        break;
                    }
                    // The field's key text as any template writes it: the shard depends on
                    // the value alone.
                    let mut text = String::new();
                    let context = PartContext {
                        field: name,
                        width: None,
                        template: self.source,
                        segments: self.segments,
                    };
                    part(rendered, usize::from(number), context, &mut text)?;
                    super::shard::write(super::shard::shard_of(&text, count), count, &mut out);
                    rendered += 1;
                }
            }
        }
        if out.is_empty() {
            return Err(KeyError::Empty {
                template: self.source,
            });
        }
        Ok(out)
    }

    /// The constant text before the first field (all of a constant template).
    pub(crate) fn leading_text(&self) -> &'static str {
        match self.segments.first() {
            Some(Segment::Literal(text)) => text,
            _ => "",
        }
    }

    /// Whether field number `position` ends the template: no text follows it.
    pub(crate) fn ends_with_field(&self, position: usize) -> bool {
        let mut fields = (self.segments.iter().enumerate()).filter(|(_, s)| s.reads_field());
        fields
            .nth(position)
            .is_some_and(|(index, _)| index + 1 == self.segments.len())
    }

    /// Appends field number `position`, written by `part`, and the constant text after it to
    /// `out`, which holds the key up to that field: how a key grows one field at a time after
    /// its [leading text](KeyTemplate::leading_text), as [`KeyTemplate::render_with`] renders
    /// it.
    pub(crate) fn push_field(
        &self,
        position: usize,
        out: &mut String,
        part: impl FnOnce(PartContext, &mut String) -> Result<(), KeyError>,
    ) -> Result<(), KeyError> {
        let index = self
            .segments
            .iter()
            .enumerate()
            .filter(|(_, segment)| segment.reads_field())
            .nth(position)
            .map(|(index, _)| index)
            .ok_or_else(|| KeyError::Mismatch {
                key: out.clone(),
                template: self.source,
                reason: format!("the template has no field number {position}"),
            })?;
        self.write_field(index, out, part)?;
        let following = self.segments.get(index + 1..).unwrap_or_default();
        for segment in following {
            match segment {
                Segment::Literal(text) => out.push_str(text),
                Segment::Field { .. } | Segment::Shard { .. } => break,
            }
        }
        Ok(())
    }

    /// How field number `position` is written: the context a part of it renders in.
    pub(crate) fn field_context(&self, position: usize) -> Option<PartContext> {
        let (name, width, _) = self.field_segments().nth(position)?;
        Some(PartContext {
            field: name,
            width,
            template: self.source,
            segments: self.segments,
        })
    }

    /// Writes the field at segment `index` with `part`, checking that the constant text after
    /// it still separates it.
    fn write_field(
        &self,
        index: usize,
        out: &mut String,
        part: impl FnOnce(PartContext, &mut String) -> Result<(), KeyError>,
    ) -> Result<(), KeyError> {
        let Some(Segment::Field { name, width, .. }) = self.segments.get(index) else {
            return Ok(());
        };
        let start = out.len();
        let context = PartContext {
            field: name,
            width: *width,
            template: self.source,
            segments: self.segments,
        };
        part(context, out)?;
        if let Some(Segment::Literal(separator)) = self.segments.get(index + 1) {
            check_separable(name, &out[start..], separator, self.source)?;
        }
        Ok(())
    }

    /// Splits a stored key into the raw text of each field, in field order.
    ///
    /// ```
    /// // `TEMPLATE` is what the derive makes of `"STATUS#{status}#TICKET#{id}"`.
    /// # use singletable_runtime::__private::Segment;
    /// # use singletable_runtime::key::KeyTemplate;
    /// # const TEMPLATE: KeyTemplate = KeyTemplate {
    /// #     source: "STATUS#{status}#TICKET#{id}",
    /// #     segments: &[
    /// #         Segment::Literal("STATUS#"),
    /// #         Segment::Field { name: "status", width: None, number: 0 },
    /// #         Segment::Literal("#TICKET#"),
    /// #         Segment::Field { name: "id", width: None, number: 1 },
    /// #     ],
    /// # };
    /// assert_eq!(TEMPLATE.split("STATUS#open#TICKET#8842")?, vec!["open", "8842"]);
    /// assert!(TEMPLATE.split("ORDER#1").is_err());
    /// # Ok::<(), singletable_runtime::key::KeyError>(())
    /// ```
    pub fn split<'k>(&self, key: &'k str) -> Result<Vec<&'k str>, KeyError> {
        let mut parts = Vec::new();
        self.split_each(key, |_, text| parts.push(text))?;
        Ok(parts)
    }

    /// The raw text of field `name` in a stored key, with the field's width; `None` if the
    /// template has no such field. Unlike [`KeyTemplate::split`], allocates nothing.
    pub(crate) fn field_text<'k>(
        &self,
        key: &'k str,
        name: &str,
    ) -> Result<Option<(&'k str, Option<u8>)>, KeyError> {
        if !self.writes_text_of(name) {
            return Ok(None);
        }
        let mut found = None;
        self.split_each(key, |field, text| {
            if let Segment::Field {
                name: field, width, ..
            } = *field
            {
                if field == name {
                    found = Some((text, width));
                }
            }
        })?;
        Ok(found)
    }

    /// Calls `each` with every field segment and its text in `key`, in order, checking the
    /// literal text around them.
    fn split_each<'k>(
        &self,
        key: &'k str,
        mut each: impl FnMut(&Segment, &'k str),
    ) -> Result<(), KeyError> {
        let mismatch = |reason: String| KeyError::Mismatch {
            key: key.to_owned(),
            template: self.source,
            reason,
        };
        let mut rest = key;
        let mut segments = self.segments.iter().peekable();
        while let Some(segment) = segments.next() {
            match *segment {
                Segment::Literal(text) => {
                    rest = rest
                        .strip_prefix(text)
                        .ok_or_else(|| mismatch(format!("expected {text:?} at {rest:?}")))?;
                }
                Segment::Field { .. } | Segment::Shard { .. } => {
                    let text = match segments.peek() {
                        Some(Segment::Literal(separator)) => {
                            let end = rest.find(separator).ok_or_else(|| {
                                mismatch(format!(
                                    "expected {separator:?} after a field in {rest:?}"
                                ))
                            })?;
                            let (text, after) = rest.split_at(end);
                            rest = after;
                            text
                        }
                        // The derive rejects adjacent fields, so only the last field gets here.
                        _ => std::mem::take(&mut rest),
                    };
                    if let Segment::Shard { count, .. } = *segment {
                        if super::shard::read(text, count).is_none() {
                            return Err(mismatch(format!("{text:?} is not a shard of {count}")));
                        }
                    }
                    each(segment, text);
                }
            }
        }
        if !rest.is_empty() {
            return Err(mismatch(format!("unexpected trailing text {rest:?}")));
        }
        Ok(())
    }

    /// Parses the text of field number `index` (from [`KeyTemplate::split`]) as `T`.
    pub fn parse_part<T: KeyField>(
        &self,
        key: &str,
        index: usize,
        text: &str,
    ) -> Result<T, KeyError> {
        let (name, width, _) =
            self.field_segments()
                .nth(index)
                .ok_or_else(|| KeyError::Mismatch {
                    key: key.to_owned(),
                    template: self.source,
                    reason: format!("the template has no field number {index}"),
                })?;
        T::parse_part(text, width).map_err(|error| KeyError::InvalidPart {
            field: name,
            key: key.to_owned(),
            expected: error.expected,
            text: text.to_owned(),
        })
    }
}

/// A field's text must not run into the constant that follows it: parsing takes the first
/// occurrence of that constant, which must be the one the template put there.
fn check_separable(
    field: &'static str,
    rendered: &str,
    separator: &'static str,
    template: &'static str,
) -> Result<(), KeyError> {
    // `rendered + separator` must not contain `separator` before `rendered.len()`, where it
    // could only start at a byte of `rendered` equal to the separator's first byte: most values
    // have none, and are checked with one scan.
    let never_starts_inside = separator
        .as_bytes()
        .first()
        .is_some_and(|first| !rendered.as_bytes().contains(first));
    if never_starts_inside {
        return Ok(());
    }
    let runs_into_separator = rendered.char_indices().any(|(index, _)| {
        let tail = &rendered[index..];
        if tail.len() >= separator.len() {
            tail.starts_with(separator)
        } else {
            let overlap = separator.len() - tail.len();
            separator.starts_with(tail) && separator.get(tail.len()..) == separator.get(..overlap)
        }
    });
    if runs_into_separator {
        return Err(KeyError::Ambiguous {
            field,
            value: rendered.to_owned(),
            separator,
            template,
        });
    }
    Ok(())
}

impl fmt::Display for KeyTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.source)
    }
}
