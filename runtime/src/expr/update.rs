//! Update expressions (`SET`, `REMOVE`, `ADD`, `DELETE`).

use super::path::AttrPath;
use super::placeholders::{Expression, Placeholders, Sink};
use aws_sdk_dynamodb::types::AttributeValue;
use std::fmt;

#[doc(hidden)]
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
    /// `path = if_not_exists(path, :zero) + :v`: counts up from zero where the attribute is
    /// missing (how the library counts versions).
    CountUp(AttributeValue),
}

#[doc(hidden)]
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
    /// The document path the action changes.
    pub fn path(&self) -> &AttrPath {
        match self {
            Action::Set(path, _)
            | Action::Remove(path)
            | Action::Add(path, _)
            | Action::Delete(path, _) => path,
        }
    }

    /// The clause the action belongs to, in the order clauses are rendered.
    fn clause(&self) -> usize {
        match self {
            Action::Set(..) => 0,
            Action::Remove(_) => 1,
            Action::Add(..) => 2,
            Action::Delete(..) => 3,
        }
    }

    /// The clause's keyword, and the space before it when it follows another clause.
    fn keyword(&self, first: bool) -> &'static str {
        match (self, first) {
            (Action::Set(..), true) => "SET ",
            (Action::Set(..), false) => " SET ",
            (Action::Remove(_), true) => "REMOVE ",
            (Action::Remove(_), false) => " REMOVE ",
            (Action::Add(..), true) => "ADD ",
            (Action::Add(..), false) => " ADD ",
            (Action::Delete(..), true) => "DELETE ",
            (Action::Delete(..), false) => " DELETE ",
        }
    }
}

/// The action as a reader would write it, values elided: `SET tags = list_append(tags, ..)`.
impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Set(path, value) => match value {
                SetValue::Value(_) => write!(f, "SET {path} = .."),
                SetValue::IfNotExists(_) => write!(f, "SET {path} = if_not_exists({path}, ..)"),
                SetValue::Plus(_) => write!(f, "SET {path} = {path} + .."),
                SetValue::Minus(_) => write!(f, "SET {path} = {path} - .."),
                SetValue::Append(_) => write!(f, "SET {path} = list_append({path}, ..)"),
                SetValue::Prepend(_) => write!(f, "SET {path} = list_append(.., {path})"),
                SetValue::CountUp(_) => write!(f, "SET {path} = if_not_exists({path}, 0) + .."),
            },
            Action::Remove(path) => write!(f, "REMOVE {path}"),
            Action::Add(path, _) => write!(f, "ADD {path} .."),
            Action::Delete(path, _) => write!(f, "DELETE {path} .."),
        }
    }
}

/// The first two actions, in the order given, whose document paths overlap: the same path, or
/// one inside the other. DynamoDB refuses such an update expression as a whole.
pub fn overlapping(actions: &[Action]) -> Option<(&Action, &Action)> {
    actions.iter().enumerate().find_map(|(position, first)| {
        actions[position + 1..]
            .iter()
            .find(|second| first.path().overlaps(second.path()))
            .map(|second| (first, second))
    })
}

/// Renders `actions` as `SET ... REMOVE ... ADD ... DELETE ...`, clauses in that order and
/// actions in the order given within each (placeholders are numbered in that order too).
pub fn render(actions: Vec<Action>, placeholders: &mut Placeholders) -> String {
    super::placeholders::render(&mut Actions::new(actions), placeholders)
}

/// An update expression's actions, in clause order.
#[derive(Clone)]
pub(crate) struct Actions(Vec<Action>);

impl Actions {
    pub(crate) fn new(mut actions: Vec<Action>) -> Self {
        // Stable: actions keep their order within a clause.
        actions.sort_by_key(Action::clause);
        Actions(actions)
    }
}

impl Expression for Actions {
    fn walk(&mut self, sink: &mut impl Sink) {
        let mut current = None;
        for action in &mut self.0 {
            let clause = action.clause();
            if current == Some(clause) {
                sink.text(", ");
            } else {
                sink.text(action.keyword(current.is_none()));
                current = Some(clause);
            }
            match action {
                Action::Set(target, value) => walk_set(target, value, sink),
                Action::Remove(target) => target.walk(sink),
                Action::Add(target, value) | Action::Delete(target, value) => {
                    target.walk(sink);
                    sink.text(" ");
                    sink.value(value);
                }
            }
        }
    }
}

/// `target = value`, `target = target + value`, `target = list_append(target, value)`, ….
fn walk_set(target: &AttrPath, value: &mut SetValue, sink: &mut impl Sink) {
    target.walk(sink);
    sink.text(" = ");
    let (text, value, value_first) = match value {
        SetValue::Value(value) => return sink.value(value),
        SetValue::CountUp(value) => {
            sink.text("if_not_exists(");
            target.walk(sink);
            sink.text(", ");
            sink.new_value(|| AttributeValue::N("0".to_owned()));
            sink.text(") + ");
            return sink.value(value);
        }
        SetValue::Plus(value) => (("", " + ", ""), value, false),
        SetValue::Minus(value) => (("", " - ", ""), value, false),
        SetValue::IfNotExists(value) => (("if_not_exists(", ", ", ")"), value, false),
        SetValue::Append(value) => (("list_append(", ", ", ")"), value, false),
        SetValue::Prepend(value) => (("list_append(", ", ", ")"), value, true),
    };
    let (open, separator, close) = text;
    if !open.is_empty() {
        sink.text(open);
    }
    if value_first {
        sink.value(value);
        sink.text(separator);
        target.walk(sink);
    } else {
        target.walk(sink);
        sink.text(separator);
        sink.value(value);
    }
    if !close.is_empty() {
        sink.text(close);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_actions_that_change_the_item_again_count_as_repeating() {
        let path = || AttrPath::attribute("a");
        let number = || AttributeValue::N("1".into());
        assert!(!Action::Set(path(), SetValue::Value(number())).repeats());
        assert!(!Action::Set(path(), SetValue::IfNotExists(number())).repeats());
        assert!(Action::Set(path(), SetValue::Plus(number())).repeats());
        assert!(Action::Set(path(), SetValue::Append(AttributeValue::L(vec![]))).repeats());
        assert!(Action::Add(path(), number()).repeats());
        assert!(!Action::Add(path(), AttributeValue::Ss(vec!["x".into()])).repeats());
        assert!(!Action::Delete(path(), AttributeValue::Ss(vec!["x".into()])).repeats());
        assert!(Action::Remove(path().index(2)).repeats());
        assert!(!Action::Remove(path().key("k")).repeats());
    }
}
