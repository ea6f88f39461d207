//! Update expressions (`SET`, `REMOVE`, `ADD`, `DELETE`).

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

/// Renders `actions` as `SET ... REMOVE ... ADD ... DELETE ...`, clauses in that order and
/// actions in the order given within each.
pub fn render(actions: Vec<Action>, placeholders: &mut Placeholders) -> String {
    let mut clauses: [(&str, Vec<String>); 4] = [
        ("SET", Vec::new()),
        ("REMOVE", Vec::new()),
        ("ADD", Vec::new()),
        ("DELETE", Vec::new()),
    ];
    for action in actions {
        let mut text = String::new();
        let path = |placeholders: &mut Placeholders, path: &AttrPath| {
            let mut out = String::new();
            path.render(placeholders, &mut out);
            out
        };
        let clause = match action {
            Action::Set(target, value) => {
                let target = path(placeholders, &target);
                text.push_str(&target);
                text.push_str(" = ");
                match value {
                    SetValue::Value(value) => placeholders.push_value(value, &mut text),
                    SetValue::IfNotExists(value) => {
                        let value = placeholders.value(value);
                        text.push_str(&format!("if_not_exists({target}, {value})"));
                    }
                    SetValue::Plus(value) => {
                        let value = placeholders.value(value);
                        text.push_str(&format!("{target} + {value}"));
                    }
                    SetValue::Minus(value) => {
                        let value = placeholders.value(value);
                        text.push_str(&format!("{target} - {value}"));
                    }
                    SetValue::Append(value) => {
                        let value = placeholders.value(value);
                        text.push_str(&format!("list_append({target}, {value})"));
                    }
                    SetValue::Prepend(value) => {
                        let value = placeholders.value(value);
                        text.push_str(&format!("list_append({value}, {target})"));
                    }
                }
                0
            }
            Action::Remove(target) => {
                text.push_str(&path(placeholders, &target));
                1
            }
            Action::Add(target, value) => {
                text.push_str(&path(placeholders, &target));
                text.push(' ');
                placeholders.push_value(value, &mut text);
                2
            }
            Action::Delete(target, value) => {
                text.push_str(&path(placeholders, &target));
                text.push(' ');
                placeholders.push_value(value, &mut text);
                3
            }
        };
        if let Some((_, parts)) = clauses.get_mut(clause) {
            parts.push(text);
        }
    }
    clauses
        .iter()
        .filter(|(_, parts)| !parts.is_empty())
        .map(|(keyword, parts)| format!("{keyword} {}", parts.join(", ")))
        .collect::<Vec<_>>()
        .join(" ")
}
