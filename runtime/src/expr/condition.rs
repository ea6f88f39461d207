//! Condition expressions (`ConditionExpression`, `FilterExpression`).

use super::{AttrPath, Placeholders};
use crate::error::EncodeError;
use aws_sdk_dynamodb::types::AttributeValue;
use std::marker::PhantomData;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    /// `=`
    Eq,
    /// `<>`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl Comparison {
    fn symbol(self) -> &'static str {
        match self {
            Comparison::Eq => "=",
            Comparison::Ne => "<>",
            Comparison::Lt => "<",
            Comparison::Le => "<=",
            Comparison::Gt => ">",
            Comparison::Ge => ">=",
        }
    }
}

/// A DynamoDB attribute type, for `attribute_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttributeType {
    /// `S`
    String,
    /// `N`
    Number,
    /// `B`
    Binary,
    /// `BOOL`
    Bool,
    /// `NULL`
    Null,
    /// `SS`
    StringSet,
    /// `NS`
    NumberSet,
    /// `BS`
    BinarySet,
    /// `L`
    List,
    /// `M`
    Map,
}

impl AttributeType {
    fn code(self) -> &'static str {
        match self {
            AttributeType::String => "S",
            AttributeType::Number => "N",
            AttributeType::Binary => "B",
            AttributeType::Bool => "BOOL",
            AttributeType::Null => "NULL",
            AttributeType::StringSet => "SS",
            AttributeType::NumberSet => "NS",
            AttributeType::BinarySet => "BS",
            AttributeType::List => "L",
            AttributeType::Map => "M",
        }
    }
}

/// The right-hand side of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A value.
    Value(AttributeValue),
    /// Another attribute.
    Path(AttrPath),
    /// `size(path)`.
    Size(AttrPath),
}

impl Operand {
    pub(crate) fn render(self, placeholders: &mut Placeholders, out: &mut String) {
        match self {
            Operand::Value(value) => placeholders.push_value(value, out),
            Operand::Path(path) => path.render(placeholders, out),
            Operand::Size(path) => {
                out.push_str("size(");
                path.render(placeholders, out);
                out.push(')');
            }
        }
    }
}

/// An untyped condition tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// `a <op> b`
    Compare(Operand, Comparison, Operand),
    /// `a BETWEEN low AND high`
    Between(Operand, Operand, Operand),
    /// `a IN (b, c, ...)`
    In(Operand, Vec<Operand>),
    /// `begins_with(path, value)`
    BeginsWith(AttrPath, Operand),
    /// `contains(path, value)`
    Contains(AttrPath, Operand),
    /// `attribute_exists(path)`
    Exists(AttrPath),
    /// `attribute_not_exists(path)`
    NotExists(AttrPath),
    /// `attribute_type(path, type)`
    Type(AttrPath, AttributeType),
    /// Both.
    And(Box<Node>, Box<Node>),
    /// Either.
    Or(Box<Node>, Box<Node>),
    /// Negation.
    Not(Box<Node>),
}

impl Node {
    /// Writes the expression text, drawing placeholders from `placeholders` (values move
    /// into them).
    pub fn render(self, placeholders: &mut Placeholders, out: &mut String) {
        match self {
            Node::Compare(left, comparison, right) => {
                left.render(placeholders, out);
                out.push(' ');
                out.push_str(comparison.symbol());
                out.push(' ');
                right.render(placeholders, out);
            }
            Node::Between(subject, low, high) => {
                subject.render(placeholders, out);
                out.push_str(" BETWEEN ");
                low.render(placeholders, out);
                out.push_str(" AND ");
                high.render(placeholders, out);
            }
            Node::In(subject, options) => {
                subject.render(placeholders, out);
                out.push_str(" IN (");
                for (position, option) in options.into_iter().enumerate() {
                    if position > 0 {
                        out.push_str(", ");
                    }
                    option.render(placeholders, out);
                }
                out.push(')');
            }
            Node::BeginsWith(path, operand) => {
                function(placeholders, out, "begins_with", &path, Some(operand))
            }
            Node::Contains(path, operand) => {
                function(placeholders, out, "contains", &path, Some(operand))
            }
            Node::Exists(path) => function(placeholders, out, "attribute_exists", &path, None),
            Node::NotExists(path) => {
                function(placeholders, out, "attribute_not_exists", &path, None)
            }
            Node::Type(path, kind) => {
                let operand = Operand::Value(AttributeValue::S(kind.code().to_owned()));
                function(placeholders, out, "attribute_type", &path, Some(operand));
            }
            Node::And(left, right) => {
                group(*left, placeholders, out, |node| {
                    matches!(node, Node::Or(..))
                });
                out.push_str(" AND ");
                group(*right, placeholders, out, |node| {
                    matches!(node, Node::Or(..))
                });
            }
            Node::Or(left, right) => {
                group(*left, placeholders, out, |node| {
                    matches!(node, Node::And(..))
                });
                out.push_str(" OR ");
                group(*right, placeholders, out, |node| {
                    matches!(node, Node::And(..))
                });
            }
            Node::Not(inner) => {
                out.push_str("NOT ");
                group(*inner, placeholders, out, |node| {
                    matches!(node, Node::And(..) | Node::Or(..))
                });
            }
        }
    }

    /// The rendered expression text alone.
    pub fn to_expression(&self, placeholders: &mut Placeholders) -> String {
        self.clone().into_expression(placeholders)
    }

    /// The rendered expression text, moving the values into `placeholders`.
    pub fn into_expression(self, placeholders: &mut Placeholders) -> String {
        let mut out = String::with_capacity(64);
        self.render(placeholders, &mut out);
        out
    }
}

fn function(
    placeholders: &mut Placeholders,
    out: &mut String,
    name: &str,
    path: &AttrPath,
    operand: Option<Operand>,
) {
    out.push_str(name);
    out.push('(');
    path.render(placeholders, out);
    if let Some(operand) = operand {
        out.push_str(", ");
        operand.render(placeholders, out);
    }
    out.push(')');
}

/// Parenthesises a mixed `AND`/`OR` operand so precedence never depends on the reader.
fn group(
    node: Node,
    placeholders: &mut Placeholders,
    out: &mut String,
    needs_parens: impl Fn(&Node) -> bool,
) {
    if needs_parens(&node) {
        out.push('(');
        node.render(placeholders, out);
        out.push(')');
    } else {
        node.render(placeholders, out);
    }
}

/// A condition on items of entity `E`, built from its typed paths (`Ticket::STATUS.eq(..)`).
#[derive(Debug, Clone, PartialEq)]
pub struct Condition<E> {
    node: Result<Node, EncodeError>,
    entity: PhantomData<fn() -> E>,
}

impl<E> Condition<E> {
    /// Wraps an untyped tree; the typed builders are the public way in.
    #[doc(hidden)]
    pub fn from_node(node: Node) -> Self {
        Condition {
            node: Ok(node),
            entity: PhantomData,
        }
    }

    /// A condition whose value could not be encoded; the error surfaces when the request is
    /// built.
    pub(crate) fn invalid(error: EncodeError) -> Self {
        Condition {
            node: Err(error),
            entity: PhantomData,
        }
    }

    /// The untyped tree, or the error of a value that could not be encoded.
    pub fn node(&self) -> Result<&Node, &EncodeError> {
        self.node.as_ref()
    }

    fn combine(self, other: Condition<E>, join: fn(Box<Node>, Box<Node>) -> Node) -> Self {
        match (self.node, other.node) {
            (Ok(left), Ok(right)) => Self::from_node(join(Box::new(left), Box::new(right))),
            (Err(error), _) | (_, Err(error)) => Self::invalid(error),
        }
    }

    /// Adds `condition` to an optional one with `AND` (builders accumulate conditions this way).
    pub fn and_to(existing: &mut Option<Condition<E>>, condition: Condition<E>) {
        *existing = Some(match existing.take() {
            Some(existing) => existing.and(condition),
            None => condition,
        });
    }

    /// Both conditions.
    pub fn and(self, other: Condition<E>) -> Self {
        self.combine(other, Node::And)
    }

    /// Either condition.
    pub fn or(self, other: Condition<E>) -> Self {
        self.combine(other, Node::Or)
    }

    /// The negation.
    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> Self {
        match self.node {
            Ok(node) => Self::from_node(Node::Not(Box::new(node))),
            Err(error) => Self::invalid(error),
        }
    }
}

/// Joins optional condition parts with `AND`.
pub(crate) fn all(parts: impl IntoIterator<Item = Node>) -> Option<Node> {
    parts
        .into_iter()
        .reduce(|left, right| Node::And(Box::new(left), Box::new(right)))
}

/// Renders condition parts joined with `AND`, as [`all`]'s tree renders, without building it.
pub(crate) fn render_all(
    parts: impl IntoIterator<Item = Node>,
    placeholders: &mut Placeholders,
) -> Option<String> {
    let mut parts = parts.into_iter().peekable();
    let first = parts.next()?;
    let mut out = String::with_capacity(64);
    if parts.peek().is_none() {
        first.render(placeholders, &mut out);
        return Some(out);
    }
    let needs_parens = |node: &Node| matches!(node, Node::Or(..));
    group(first, placeholders, &mut out, needs_parens);
    for part in parts {
        out.push_str(" AND ");
        group(part, placeholders, &mut out, needs_parens);
    }
    Some(out)
}

/// The tree of an optional user condition, or the error of a value it could not encode.
pub(crate) fn user_node<E>(condition: Option<&Condition<E>>) -> Result<Option<Node>, EncodeError> {
    condition
        .map(|condition| condition.node().cloned().map_err(Clone::clone))
        .transpose()
}

/// A filter that keeps one entity's items of a shared table, and also items with no entity
/// attribute (or one that is not a string), so that decoding reports those instead of skipping
/// them silently; joined with the user's condition, if any. Rendered directly (it is part of
/// every query of one entity): `#n = :v OR attribute_not_exists(#n) OR NOT
/// attribute_type(#n, :S)`, parenthesised before `AND user`.
pub(crate) fn render_entity_filter(
    attribute: &'static str,
    entity: &'static str,
    user: Option<Node>,
    placeholders: &mut Placeholders,
) -> String {
    let mut out = String::with_capacity(96);
    if user.is_some() {
        out.push('(');
    }
    placeholders.push_name(attribute, &mut out);
    out.push_str(" = ");
    placeholders.push_value(AttributeValue::S(entity.to_owned()), &mut out);
    out.push_str(" OR attribute_not_exists(");
    placeholders.push_name(attribute, &mut out);
    out.push_str(") OR NOT attribute_type(");
    placeholders.push_name(attribute, &mut out);
    out.push_str(", ");
    let string = AttributeType::String.code().to_owned();
    placeholders.push_value(AttributeValue::S(string), &mut out);
    out.push(')');
    if let Some(user) = user {
        out.push_str(") AND ");
        group(user, placeholders, &mut out, |node| {
            matches!(node, Node::Or(..))
        });
    }
    out
}
