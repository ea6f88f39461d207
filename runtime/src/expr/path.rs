//! Attribute paths: a top-level attribute, nested map keys and list indexes.

use super::placeholders::{Expression, Name, Placeholders, Renderer, Sink};
use std::borrow::Cow;
use std::fmt;

#[doc(hidden)]
/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathStep {
    /// A map key.
    Name(String),
    /// A list index.
    Index(usize),
}

#[doc(hidden)]
/// A document path such as `address.city` or `tags[2]`; each name is a placeholder when
/// rendered, so names may contain any character.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AttrPath {
    /// The top-level attribute: borrowed for the names the derive knows, so a field's path
    /// costs no allocation.
    root: Cow<'static, str>,
    /// Map keys and list indexes below it.
    nested: Vec<PathStep>,
}

impl AttrPath {
    /// A top-level attribute.
    pub fn attribute(name: impl Into<Cow<'static, str>>) -> Self {
        AttrPath {
            root: name.into(),
            nested: Vec::new(),
        }
    }

    /// This path followed by map key `name`.
    pub fn key(mut self, name: &str) -> Self {
        self.nested.push(PathStep::Name(name.to_owned()));
        self
    }

    /// This path followed by list index `index`.
    pub fn index(mut self, index: usize) -> Self {
        self.nested.push(PathStep::Index(index));
        self
    }

    /// The value at this path in `item`, if the item has one there.
    pub(crate) fn value_in<'a>(
        &self,
        item: &'a crate::Item,
    ) -> Option<&'a aws_sdk_dynamodb::types::AttributeValue> {
        use aws_sdk_dynamodb::types::AttributeValue;
        let mut value = item.get(&*self.root)?;
        for step in &self.nested {
            value = match (step, value) {
                (PathStep::Name(name), AttributeValue::M(entries)) => entries.get(name)?,
                (PathStep::Index(index), AttributeValue::L(items)) => items.get(*index)?,
                _ => return None,
            };
        }
        Some(value)
    }

    /// Whether the path ends in a list index (`tags[2]`).
    pub fn ends_in_index(&self) -> bool {
        matches!(self.nested.last(), Some(PathStep::Index(_)))
    }

    /// Whether the two paths name the same document, or one lies inside the other (`tags` and
    /// `tags[2]`); paths side by side (`tags[1]` and `tags[2]`) do not overlap.
    pub fn overlaps(&self, other: &AttrPath) -> bool {
        self.root == other.root
            && self
                .nested
                .iter()
                .zip(&other.nested)
                .all(|(mine, theirs)| mine == theirs)
    }

    /// The attribute's name when the path is a top-level attribute, with nothing below it.
    pub fn top_level(&self) -> Option<&str> {
        self.nested.is_empty().then_some(&*self.root)
    }

    /// The top-level attribute name.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// The map keys and list indexes below the top-level attribute.
    pub(crate) fn steps(&self) -> &[PathStep] {
        &self.nested
    }

    /// Writes the path with name placeholders (`#n0.#n1[2]`).
    pub fn render(&self, placeholders: &mut Placeholders, out: &mut String) {
        self.walk(&mut Renderer { placeholders, out });
    }

    pub(crate) fn walk(&self, sink: &mut impl Sink) {
        sink.name(match &self.root {
            Cow::Borrowed(name) => Name::Known(name),
            Cow::Owned(name) => Name::Dynamic(name),
        });
        for step in &self.nested {
            match step {
                PathStep::Name(name) => {
                    sink.text(".");
                    sink.name(Name::Dynamic(name));
                }
                PathStep::Index(index) => sink.index(*index),
            }
        }
    }
}

/// A `ProjectionExpression`: paths separated by commas.
pub(crate) struct Projection<'a>(pub(crate) &'a [AttrPath]);

impl Expression for Projection<'_> {
    fn walk(&mut self, sink: &mut impl Sink) {
        for (position, path) in self.0.iter().enumerate() {
            if position > 0 {
                sink.text(", ");
            }
            path.walk(sink);
        }
    }
}

impl fmt::Display for AttrPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.root)?;
        for step in &self.nested {
            match step {
                PathStep::Name(name) => write!(f, ".{name}")?,
                PathStep::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}
