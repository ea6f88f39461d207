//! Attribute names and values only ever reach expressions as `#n`/`:v` placeholders.
#![no_main]

mod common;

use aws_sdk_dynamodb::types::AttributeValue;
use libfuzzer_sys::fuzz_target;
// The expression trees and their placeholders are internal: reached as generated code and
// the property tests reach them.
use singletable::__private::expr::{
    self as update, Action, AttrPath, Node, Operand, Placeholders, SetValue,
};
use singletable::expr::Comparison;

#[derive(Debug, arbitrary::Arbitrary)]
enum Value {
    S(String),
    N(String),
    Bool(bool),
    L(Vec<Value>),
    M(Vec<(String, Value)>),
}

impl Value {
    fn attribute(&self) -> AttributeValue {
        match self {
            Value::S(text) => AttributeValue::S(text.clone()),
            Value::N(text) => AttributeValue::N(text.clone()),
            Value::Bool(flag) => AttributeValue::Bool(*flag),
            Value::L(values) => AttributeValue::L(values.iter().map(Value::attribute).collect()),
            Value::M(entries) => AttributeValue::M(
                entries
                    .iter()
                    .map(|(name, value)| (name.clone(), value.attribute()))
                    .collect(),
            ),
        }
    }
}

#[derive(Debug, arbitrary::Arbitrary)]
struct Path {
    root: String,
    steps: Vec<Result<String, u16>>,
}

impl Path {
    fn attr(&self) -> AttrPath {
        self.steps.iter().fold(
            AttrPath::attribute(self.root.clone()),
            |path, step| match step {
                Ok(name) => path.key(name),
                Err(index) => path.index(usize::from(*index)),
            },
        )
    }
}

#[derive(Debug, arbitrary::Arbitrary)]
enum Condition {
    Eq(Path, Value),
    Lt(Path, Path),
    Between(Path, Value, Value),
    In(Path, Vec<Value>),
    BeginsWith(Path, Value),
    Size(Path, Value),
    Exists(Path),
    And(Box<Condition>, Box<Condition>),
    Or(Box<Condition>, Box<Condition>),
    Not(Box<Condition>),
}

impl Condition {
    fn node(&self) -> Node {
        let value = |value: &Value| Operand::Value(value.attribute());
        match self {
            Condition::Eq(path, v) => {
                Node::Compare(Operand::Path(path.attr()), Comparison::Eq, value(v))
            }
            Condition::Lt(a, b) => Node::Compare(
                Operand::Path(a.attr()),
                Comparison::Lt,
                Operand::Path(b.attr()),
            ),
            Condition::Between(path, low, high) => {
                Node::Between(Operand::Path(path.attr()), value(low), value(high))
            }
            Condition::In(path, values) => Node::In(
                Operand::Path(path.attr()),
                values.iter().map(value).collect(),
            ),
            Condition::BeginsWith(path, v) => Node::BeginsWith(path.attr(), value(v)),
            Condition::Size(path, v) => {
                Node::Compare(Operand::Size(path.attr()), Comparison::Ge, value(v))
            }
            Condition::Exists(path) => Node::Exists(path.attr()),
            Condition::And(a, b) => Node::And(Box::new(a.node()), Box::new(b.node())),
            Condition::Or(a, b) => Node::Or(Box::new(a.node()), Box::new(b.node())),
            Condition::Not(inner) => Node::Not(Box::new(inner.node())),
        }
    }
}

#[derive(Debug, arbitrary::Arbitrary)]
enum Change {
    Set(Path, Value),
    Plus(Path, Value),
    Append(Path, Value),
    IfNotExists(Path, Value),
    Remove(Path),
    Add(Path, Value),
    Delete(Path, Value),
}

impl Change {
    fn action(&self) -> Action {
        match self {
            Change::Set(path, value) => {
                Action::Set(path.attr(), SetValue::Value(value.attribute()))
            }
            Change::Plus(path, value) => {
                Action::Set(path.attr(), SetValue::Plus(value.attribute()))
            }
            Change::Append(path, value) => {
                Action::Set(path.attr(), SetValue::Append(value.attribute()))
            }
            Change::IfNotExists(path, value) => {
                Action::Set(path.attr(), SetValue::IfNotExists(value.attribute()))
            }
            Change::Remove(path) => Action::Remove(path.attr()),
            Change::Add(path, value) => Action::Add(path.attr(), value.attribute()),
            Change::Delete(path, value) => Action::Delete(path.attr(), value.attribute()),
        }
    }
}

fuzz_target!(|input: (Condition, Vec<Change>)| {
    let (condition, changes) = input;
    let mut placeholders = Placeholders::default();
    let text = condition.node().to_expression(&mut placeholders);
    common::assert_placeholders_only(&text);
    let actions: Vec<Action> = changes.iter().map(Change::action).collect();
    let text = update::render(actions, &mut placeholders);
    common::assert_placeholders_only(&text);
    // Every placeholder is defined once, and names map back to what was given.
    let names = placeholders.names().unwrap_or_default();
    let distinct: std::collections::BTreeSet<&String> = names.values().collect();
    assert_eq!(distinct.len(), names.len(), "one placeholder per name");
});
