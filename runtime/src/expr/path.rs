//! Attribute paths: a top-level attribute, nested map keys and list indexes.

use super::Placeholders;
use std::fmt;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathStep {
    /// A map key (or the top-level attribute name).
    Name(String),
    /// A list index.
    Index(usize),
}

/// A document path such as `address.city` or `tags[2]`; each name is a placeholder when
/// rendered, so names may contain any character.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AttrPath {
    steps: Vec<PathStep>,
}

impl AttrPath {
    /// A top-level attribute.
    pub fn attribute(name: &str) -> Self {
        AttrPath {
            steps: vec![PathStep::Name(name.to_owned())],
        }
    }

    /// This path followed by map key `name`.
    pub fn key(mut self, name: &str) -> Self {
        self.steps.push(PathStep::Name(name.to_owned()));
        self
    }

    /// This path followed by list index `index`.
    pub fn index(mut self, index: usize) -> Self {
        self.steps.push(PathStep::Index(index));
        self
    }

    /// Whether the path ends in a list index (`tags[2]`).
    pub fn ends_in_index(&self) -> bool {
        matches!(self.steps.last(), Some(PathStep::Index(_)))
    }

    /// The top-level attribute name.
    pub fn root(&self) -> &str {
        match self.steps.first() {
            Some(PathStep::Name(name)) => name,
            _ => "",
        }
    }

    /// Writes the path with name placeholders (`#n0.#n1[2]`).
    pub fn render(&self, placeholders: &mut Placeholders, out: &mut String) {
        for (position, step) in self.steps.iter().enumerate() {
            match step {
                PathStep::Name(name) => {
                    if position > 0 {
                        out.push('.');
                    }
                    placeholders.push_name(name, out);
                }
                PathStep::Index(index) => {
                    out.push('[');
                    out.push_str(&index.to_string());
                    out.push(']');
                }
            }
        }
    }
}

impl fmt::Display for AttrPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (position, step) in self.steps.iter().enumerate() {
            match step {
                PathStep::Name(name) if position == 0 => write!(f, "{name}")?,
                PathStep::Name(name) => write!(f, ".{name}")?,
                PathStep::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}
