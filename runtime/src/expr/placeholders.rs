//! Placeholders: every attribute name and value of an expression goes through one, and the
//! traits expressions render through.

use aws_sdk_dynamodb::types::AttributeValue;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write;

#[doc(hidden)]
/// `ExpressionAttributeNames`: placeholder to attribute name.
pub type Names = HashMap<String, String>;
#[doc(hidden)]
/// `ExpressionAttributeValues`: placeholder to value.
pub type Values = HashMap<String, AttributeValue>;

#[doc(hidden)]
/// Placeholders for the names and values of one request's expressions, kept as the maps the
/// SDK sends (so sending moves them instead of building them).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Placeholders {
    names: Names,
    values: Values,
}

/// Room for a typical request's names or values, reserved on first use so that a map is
/// allocated once (and not at all when unused). Why seven: bench `operations`, group
/// `status_update`; benches/README.md, "The mechanics behind the ratios".
const TYPICAL_PLACEHOLDERS: usize = 7;

impl Placeholders {
    /// The placeholder for attribute `name`, reused if the name was seen before.
    pub fn name(&mut self, name: impl Into<Cow<'static, str>>) -> String {
        let mut out = String::new();
        self.push_name(&name.into(), &mut out);
        out
    }

    /// A new placeholder for `value`.
    pub fn value(&mut self, value: AttributeValue) -> String {
        let mut out = String::new();
        self.push_value(value, &mut out);
        out
    }

    /// Writes the placeholder for attribute `name` into `out` (expression text is built in
    /// one buffer, without a string per placeholder).
    pub fn push_name(&mut self, name: &str, out: &mut String) {
        let existing = self
            .names
            .iter()
            .find(|(_, known)| *known == name)
            .map(|(placeholder, _)| placeholder);
        match existing {
            Some(placeholder) => out.push_str(placeholder),
            None => {
                let placeholder = placeholder("#n", self.names.len());
                out.push_str(&placeholder);
                reserve_typical(&mut self.names);
                self.names.insert(placeholder, name.to_owned());
            }
        }
    }

    /// Writes a new placeholder for `value` into `out`.
    pub fn push_value(&mut self, value: AttributeValue, out: &mut String) {
        push_placeholder(out, ":v", self.values.len());
        self.insert_value(value);
    }

    /// Adds `value` under the next placeholder, for text that is already written.
    pub(crate) fn insert_value(&mut self, value: AttributeValue) {
        let placeholder = placeholder(":v", self.values.len());
        reserve_typical(&mut self.values);
        self.values.insert(placeholder, value);
    }

    /// Takes the names of an expression shape rendered before.
    pub(crate) fn set_names(&mut self, names: Names) {
        self.names = names;
    }

    /// Takes the values of an expression shape rendered before, placed in its slots.
    pub(crate) fn set_values(&mut self, values: Values) {
        self.values = values;
    }

    /// The value placeholders, each holding `NULL`, with room for as many values as the map
    /// reserves on first use (none when there are none, as a copy of a map keeps its
    /// capacity).
    pub(crate) fn value_slots(&self) -> Values {
        if self.values.is_empty() {
            return Values::new();
        }
        let mut slots = Values::with_capacity(self.values.len().max(TYPICAL_PLACEHOLDERS));
        slots.extend(
            self.values
                .keys()
                .map(|placeholder| (placeholder.clone(), AttributeValue::Null(true))),
        );
        slots
    }

    /// `ExpressionAttributeNames` and `ExpressionAttributeValues`, moved out (for sending);
    /// `None` when empty (DynamoDB rejects an empty map).
    pub fn into_maps(self) -> (Option<Names>, Option<Values>) {
        (
            (!self.names.is_empty()).then_some(self.names),
            (!self.values.is_empty()).then_some(self.values),
        )
    }

    /// Whether no placeholder was used.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.values.is_empty()
    }

    /// `ExpressionAttributeNames`, or `None` when empty (DynamoDB rejects an empty map).
    pub fn names(&self) -> Option<Names> {
        (!self.names.is_empty()).then(|| self.names.clone())
    }

    /// `ExpressionAttributeValues`, or `None` when empty.
    pub fn values(&self) -> Option<Values> {
        (!self.values.is_empty()).then(|| self.values.clone())
    }
}

/// An attribute name as an expression refers to it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Name<'a> {
    /// A name the derive knows: the same text at the same address on every call.
    Known(&'static str),
    /// A name made at run time (a map key).
    Dynamic(&'a str),
}

impl Name<'_> {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Name::Known(name) => name,
            Name::Dynamic(name) => name,
        }
    }
}

/// Receives an expression piece by piece, in reading order. [`Renderer`] writes its text and
/// placeholders; the shape cache ([`shape`]) records the pieces to recognise an expression it
/// has rendered before, whatever its values.
pub(crate) trait Sink {
    /// Fixed text: operators, keywords, function names.
    fn text(&mut self, text: &'static str);
    /// An attribute name.
    fn name(&mut self, name: Name<'_>);
    /// A list index in a path (`[2]`).
    fn index(&mut self, index: usize);
    /// A value; a sink that keeps it takes it (leaving `NULL`).
    fn value(&mut self, value: &mut AttributeValue);
    /// A value the expression makes itself (`attribute_type`'s type code), made only by a
    /// sink that keeps it.
    fn new_value(&mut self, make: impl FnOnce() -> AttributeValue);
}

/// Something that renders to one expression.
pub(crate) trait Expression {
    /// Passes the expression's pieces to `sink`, in reading order.
    fn walk(&mut self, sink: &mut impl Sink);
}

/// An [`Expression`] walked by each sink, so that expressions of different types can be
/// rendered together (each sink's walk is compiled on its own, its calls inlined).
pub(crate) trait AnyExpression {
    fn render(&mut self, renderer: &mut Renderer<'_>);
    fn record(&mut self, recorder: &mut super::shape::Recorder<'_>);
    fn write_text(&mut self, writer: &mut super::shape::TextWriter<'_>);
}

impl<T: Expression> AnyExpression for T {
    fn render(&mut self, renderer: &mut Renderer<'_>) {
        self.walk(renderer);
    }

    fn record(&mut self, recorder: &mut super::shape::Recorder<'_>) {
        self.walk(recorder);
    }

    fn write_text(&mut self, writer: &mut super::shape::TextWriter<'_>) {
        self.walk(writer);
    }
}

/// Writes an expression's text into `out`, drawing placeholders from `placeholders` (values
/// move into them).
pub(crate) struct Renderer<'a> {
    pub(crate) placeholders: &'a mut Placeholders,
    pub(crate) out: &'a mut String,
}

impl Sink for Renderer<'_> {
    #[inline]
    fn text(&mut self, text: &'static str) {
        self.out.push_str(text);
    }

    fn name(&mut self, name: Name<'_>) {
        self.placeholders.push_name(name.as_str(), self.out);
    }

    fn index(&mut self, index: usize) {
        push_index(self.out, index);
    }

    fn value(&mut self, value: &mut AttributeValue) {
        let value = std::mem::replace(value, AttributeValue::Null(true));
        self.placeholders.push_value(value, self.out);
    }

    fn new_value(&mut self, make: impl FnOnce() -> AttributeValue) {
        self.placeholders.push_value(make(), self.out);
    }
}

/// Renders one expression into a new string.
pub(crate) fn render(
    expression: &mut dyn AnyExpression,
    placeholders: &mut Placeholders,
) -> String {
    let mut out = String::with_capacity(64);
    expression.render(&mut Renderer {
        placeholders,
        out: &mut out,
    });
    out
}

fn reserve_typical<V>(map: &mut HashMap<String, V>) {
    if map.capacity() == 0 {
        map.reserve(TYPICAL_PLACEHOLDERS);
    }
}

/// `#n12`, `:v3`, `[2`: a prefix and an index, without the formatting machinery (requests
/// are built on every call).
pub(crate) fn push_placeholder(out: &mut String, prefix: &str, index: usize) {
    out.push_str(prefix);
    if index < 10 {
        out.push(char::from(b'0' + index as u8));
    } else {
        let _ = write!(out, "{index}");
    }
}

/// `[2]`: a list index in a path.
pub(crate) fn push_index(out: &mut String, index: usize) {
    push_placeholder(out, "[", index);
    out.push(']');
}

fn placeholder(prefix: &str, index: usize) -> String {
    let mut out = String::with_capacity(prefix.len() + 3);
    push_placeholder(&mut out, prefix, index);
    out
}

/// DynamoDB's limit on the size of one expression.
pub const MAX_EXPRESSION_BYTES: usize = 4096;
/// DynamoDB's limit on the expression attribute names and values of one request, together.
pub const MAX_SUBSTITUTION_BYTES: usize = 2 * 1024 * 1024;

impl Placeholders {
    /// Fails when a value nests deeper than DynamoDB's 32 levels, or the names and values
    /// together are above its 2 MB.
    pub(crate) fn check(&self) -> Result<(), crate::LimitError> {
        let mut size = 0;
        for (placeholder, name) in &self.names {
            size += placeholder.len() + name.len();
        }
        for (placeholder, value) in &self.values {
            crate::item::check_nesting(placeholder, value)?;
            size += placeholder.len() + crate::item::value_size(value);
        }
        if size > MAX_SUBSTITUTION_BYTES {
            return Err(crate::LimitError::Substitutions {
                size,
                max: MAX_SUBSTITUTION_BYTES,
            });
        }
        Ok(())
    }
}

/// Fails when an expression is above DynamoDB's 4 KB limit (some engines accept it).
pub(crate) fn check_expression(kind: &'static str, text: &str) -> Result<(), crate::LimitError> {
    if text.len() > MAX_EXPRESSION_BYTES {
        return Err(crate::LimitError::Expression {
            kind,
            size: text.len(),
            max: MAX_EXPRESSION_BYTES,
        });
    }
    Ok(())
}
