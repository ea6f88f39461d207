//! Update expressions (`SET`, `REMOVE`, `ADD`, `DELETE`).

use super::condition::Operand;
use super::{AttrPath, Placeholders};
use aws_sdk_dynamodb::types::AttributeValue;

/// What a `SET` writes.
#[derive(Debug, Clone, PartialEq)]
pub enum SetValue {
    /// `path = :v`
    Value(AttributeValue),
    /// `path = if_not_exists(path, :v)`
    IfNotExists(AttributeValue),
    /// `path = path + :v`
    Plus(AttributeValue),
    /// `path = path - :v`
    Minus(AttributeValue),
    /// `path = list_append(path, :v)`
    Append(AttributeValue),
    /// `path = list_append(:v, path)`
    Prepend(AttributeValue),
}

/// One clause of an update expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `SET`
    Set(AttrPath, SetValue),
    /// `REMOVE`
    Remove(AttrPath),
    /// `ADD path :v`
    Add(AttrPath, AttributeValue),
    /// `DELETE path :v`
    Delete(AttrPath, AttributeValue),
}

impl Action {
    /// Whether applying this action twice changes the item again (adding to a number,
    /// appending, removing a list element by position): such an update is not safe to resend
    /// when its first response was lost.
    pub fn repeats(&self) -> bool {
        match self {
            Action::Set(_, SetValue::Value(_) | SetValue::IfNotExists(_)) => false,
            Action::Set(_, _) => true,
            Action::Add(_, value) => matches!(value, AttributeValue::N(_)),
            Action::Remove(path) => path.ends_in_index(),
            Action::Delete(_, _) => false,
        }
    }
}

impl Action {
    /// The clause the action belongs to, in the order clauses are rendered.
    fn clause(&self) -> usize {
        match self {
            Action::Set(..) => 0,
            Action::Remove(_) => 1,
            Action::Add(..) => 2,
            Action::Delete(..) => 3,
        }
    }
}

const CLAUSES: [&str; 4] = ["SET ", "REMOVE ", "ADD ", "DELETE "];

/// Renders `actions` as `SET ... REMOVE ... ADD ... DELETE ...`, clauses in that order and
/// actions in the order given within each (placeholders are numbered in that order too).
pub fn render(mut actions: Vec<Action>, placeholders: &mut Placeholders) -> String {
    // Stable: actions keep their order within a clause.
    actions.sort_by_key(Action::clause);
    let mut out = String::with_capacity(24 * actions.len());
    let mut current = None;
    for action in actions {
        let clause = action.clause();
        if current == Some(clause) {
            out.push_str(", ");
        } else {
            if current.is_some() {
                out.push(' ');
            }
            out.push_str(CLAUSES.get(clause).copied().unwrap_or_default());
            current = Some(clause);
        }
        match action {
            Action::Set(target, value) => render_set(&target, value, placeholders, &mut out),
            Action::Remove(target) => target.render(placeholders, &mut out),
            Action::Add(target, value) | Action::Delete(target, value) => {
                target.render(placeholders, &mut out);
                out.push(' ');
                placeholders.push_value(value, &mut out);
            }
        }
    }
    out
}

/// `target = value`, `target = target + value`, `target = list_append(target, value)`, ….
fn render_set(
    target: &AttrPath,
    value: SetValue,
    placeholders: &mut Placeholders,
    out: &mut String,
) {
    target.render(placeholders, out);
    out.push_str(" = ");
    // The target again: a top-level path clones without allocating, and rendering it twice
    // reuses its placeholder.
    let path = || Operand::Path(target.clone());
    let ((open, separator, close), first, second) = match value {
        SetValue::Value(v) => return placeholders.push_value(v, out),
        SetValue::Plus(v) => (("", " + ", ""), path(), Operand::Value(v)),
        SetValue::Minus(v) => (("", " - ", ""), path(), Operand::Value(v)),
        SetValue::IfNotExists(v) => (("if_not_exists(", ", ", ")"), path(), Operand::Value(v)),
        SetValue::Append(v) => (("list_append(", ", ", ")"), path(), Operand::Value(v)),
        SetValue::Prepend(v) => (("list_append(", ", ", ")"), Operand::Value(v), path()),
    };
    out.push_str(open);
    first.render(placeholders, out);
    out.push_str(separator);
    second.render(placeholders, out);
    out.push_str(close);
}
