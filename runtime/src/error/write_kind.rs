//! Which kind of write an operation of a transaction is.

use std::fmt;

/// Which kind of write an operation of a transaction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// A put.
    Put,
    /// An update.
    Update,
    /// A delete.
    Delete,
    /// A condition check (writes nothing).
    ConditionCheck,
}

impl WriteKind {
    fn name(self) -> &'static str {
        match self {
            WriteKind::Put => "Put",
            WriteKind::Update => "Update",
            WriteKind::Delete => "Delete",
            WriteKind::ConditionCheck => "ConditionCheck",
        }
    }
}

impl fmt::Display for WriteKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
