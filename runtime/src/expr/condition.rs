//! Condition expressions (`ConditionExpression`, `FilterExpression`).

use super::path::AttrPath;
use super::placeholders::{Expression, Name, Placeholders, Renderer, Sink};
use crate::item::EncodeError;
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
    /// The operator with the spaces around it.
    fn spaced(self) -> &'static str {
        match self {
            Comparison::Eq => " = ",
            Comparison::Ne => " <> ",
            Comparison::Lt => " < ",
            Comparison::Le => " <= ",
            Comparison::Gt => " > ",
            Comparison::Ge => " >= ",
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

#[doc(hidden)]
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

#[doc(hidden)]
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
    /// What the condition is on an item that is not there: `attribute_not_exists` holds, and
    /// a comparison or function of a missing attribute does not (DynamoDB's rule, which the
    /// library's `ttl < :now` relies on too). `None` where that is not certain: `<>`, and an
    /// operand that reads no attribute.
    pub(crate) fn on_absent_item(&self) -> Option<bool> {
        let reads = |operand: &Operand| matches!(operand, Operand::Path(_) | Operand::Size(_));
        match self {
            Node::Compare(_, Comparison::Ne, _) => None,
            Node::Compare(left, _, right) => (reads(left) || reads(right)).then_some(false),
            Node::Between(value, low, high) => {
                [value, low, high].into_iter().any(reads).then_some(false)
            }
            Node::In(value, list) => (reads(value) || list.iter().any(reads)).then_some(false),
            Node::BeginsWith(..) | Node::Contains(..) | Node::Exists(_) | Node::Type(..) => {
                Some(false)
            }
            Node::NotExists(_) => Some(true),
            Node::And(left, right) => match (left.on_absent_item(), right.on_absent_item()) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            Node::Or(left, right) => match (left.on_absent_item(), right.on_absent_item()) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            Node::Not(inner) => inner.on_absent_item().map(|holds| !holds),
        }
    }

    /// Calls `read` with every attribute path the condition reads.
    pub fn for_each_path(&self, read: &mut impl FnMut(&AttrPath)) {
        let operand = |operand: &Operand, read: &mut dyn FnMut(&AttrPath)| match operand {
            Operand::Path(path) | Operand::Size(path) => read(path),
            Operand::Value(_) => {}
        };
        match self {
            Node::Compare(left, _, right) => {
                operand(left, read);
                operand(right, read);
            }
            Node::Between(value, low, high) => {
                for each in [value, low, high] {
                    operand(each, read);
                }
            }
            Node::In(value, list) => {
                operand(value, read);
                for each in list {
                    operand(each, read);
                }
            }
            Node::BeginsWith(path, other) | Node::Contains(path, other) => {
                read(path);
                operand(other, read);
            }
            Node::Exists(path) | Node::NotExists(path) | Node::Type(path, _) => read(path),
            Node::And(left, right) | Node::Or(left, right) => {
                left.for_each_path(read);
                right.for_each_path(read);
            }
            Node::Not(inner) => inner.for_each_path(read),
        }
    }

    /// Writes the expression text, drawing placeholders from `placeholders` (values move
    /// into them).
    pub fn render(mut self, placeholders: &mut Placeholders, out: &mut String) {
        self.walk(&mut Renderer { placeholders, out });
    }

    /// The rendered expression text alone.
    pub fn to_expression(&self, placeholders: &mut Placeholders) -> String {
        self.clone().into_expression(placeholders)
    }

    /// The rendered expression text, moving the values into `placeholders`.
    pub fn into_expression(mut self, placeholders: &mut Placeholders) -> String {
        super::placeholders::render(&mut self, placeholders)
    }
}

impl Expression for Node {
    fn walk(&mut self, sink: &mut impl Sink) {
        walk_owned(self, sink);
    }
}

fn is_and(node: &Node) -> bool {
    matches!(node, Node::And(..))
}

fn is_or(node: &Node) -> bool {
    matches!(node, Node::Or(..))
}

/// How a walk hands a value to its sink: out of a tree the request owns (moved), or out of one
/// it borrows (copied, and only by a sink that keeps values).
trait HandValue {
    fn hand(self, sink: &mut impl Sink);
}

impl HandValue for &mut AttributeValue {
    fn hand(self, sink: &mut impl Sink) {
        sink.value(self);
    }
}

impl HandValue for &AttributeValue {
    fn hand(self, sink: &mut impl Sink) {
        sink.new_value(|| self.clone());
    }
}

/// The walks of a condition tree, over `&mut` for a tree the request owns (its values move
/// into the request) and over `&` for one it borrows: a query's filter, which every page sends
/// again, is not copied for each. One body serves both; match ergonomics and [`HandValue`]
/// make the difference.
macro_rules! condition_walks {
    ($node:ident, $operand:ident, $group:ident, $function:ident $(, $mutability:ident)?) => {
        fn $node(node: &$($mutability)? Node, sink: &mut impl Sink) {
            match node {
                Node::Compare(left, comparison, right) => {
                    $operand(left, sink);
                    sink.text(comparison.spaced());
                    $operand(right, sink);
                }
                Node::Between(subject, low, high) => {
                    $operand(subject, sink);
                    sink.text(" BETWEEN ");
                    $operand(low, sink);
                    sink.text(" AND ");
                    $operand(high, sink);
                }
                Node::In(subject, options) => {
                    $operand(subject, sink);
                    sink.text(" IN (");
                    for (position, option) in (0usize..).zip(options) {
                        if position > 0 {
                            sink.text(", ");
                        }
                        $operand(option, sink);
                    }
                    sink.text(")");
                }
                Node::BeginsWith(path, operand) => {
                    $function(sink, "begins_with(", path, Some(operand))
                }
                Node::Contains(path, operand) => $function(sink, "contains(", path, Some(operand)),
                Node::Exists(path) => $function(sink, "attribute_exists(", path, None),
                Node::NotExists(path) => $function(sink, "attribute_not_exists(", path, None),
                Node::Type(path, kind) => {
                    sink.text("attribute_type(");
                    path.walk(sink);
                    sink.text(", ");
                    let code = kind.code();
                    sink.new_value(|| AttributeValue::S(code.to_owned()));
                    sink.text(")");
                }
                Node::And(left, right) => {
                    $group(left, sink, is_or);
                    sink.text(" AND ");
                    $group(right, sink, is_or);
                }
                Node::Or(left, right) => {
                    $group(left, sink, is_and);
                    sink.text(" OR ");
                    $group(right, sink, is_and);
                }
                Node::Not(inner) => {
                    sink.text("NOT ");
                    $group(inner, sink, |node| is_and(node) || is_or(node));
                }
            }
        }

        fn $operand(operand: &$($mutability)? Operand, sink: &mut impl Sink) {
            match operand {
                Operand::Value(value) => value.hand(sink),
                Operand::Path(path) => path.walk(sink),
                Operand::Size(path) => {
                    sink.text("size(");
                    path.walk(sink);
                    sink.text(")");
                }
            }
        }

        /// Parenthesises a mixed `AND`/`OR` operand so precedence never depends on the reader.
        fn $group(
            node: &$($mutability)? Node,
            sink: &mut impl Sink,
            needs_parens: fn(&Node) -> bool,
        ) {
            if needs_parens(node) {
                sink.text("(");
                $node(node, sink);
                sink.text(")");
            } else {
                $node(node, sink);
            }
        }

        /// `name` is the function with its opening parenthesis (`begins_with(`).
        fn $function(
            sink: &mut impl Sink,
            name: &'static str,
            path: &AttrPath,
            operand: Option<&$($mutability)? Operand>,
        ) {
            sink.text(name);
            path.walk(sink);
            if let Some(operand) = operand {
                sink.text(", ");
                $operand(operand, sink);
            }
            sink.text(")");
        }
    };
}

condition_walks!(
    walk_owned,
    walk_owned_operand,
    group_owned,
    function_owned,
    mut
);
condition_walks!(
    walk_shared,
    walk_shared_operand,
    group_shared,
    function_shared
);

/// Walks one operand of an `AND` (parenthesised if it is an `OR`).
pub(crate) fn walk_and_operand(node: &mut Node, sink: &mut impl Sink) {
    group_owned(node, sink, is_or);
}

/// A condition on items of entity `E`, built from its typed paths (`Ticket::STATUS.eq(..)`).
#[derive(Debug, PartialEq)]
pub struct Condition<E> {
    node: Result<Node, EncodeError>,
    entity: PhantomData<fn() -> E>,
}

// Not derived: a condition is cloned whatever `E` is.
impl<E> Clone for Condition<E> {
    fn clone(&self) -> Self {
        Condition {
            node: self.node.clone(),
            entity: PhantomData,
        }
    }
}

impl<E> Condition<E> {
    /// Wraps an untyped tree; the typed builders are the public way in.
    pub(crate) fn from_node(node: Node) -> Self {
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
    pub(crate) fn node(&self) -> Result<&Node, &EncodeError> {
        self.node.as_ref()
    }

    /// The untyped tree, moved out.
    pub(crate) fn into_node(self) -> Result<Node, EncodeError> {
        self.node
    }

    fn combine(self, other: Condition<E>, join: fn(Box<Node>, Box<Node>) -> Node) -> Self {
        match (self.node, other.node) {
            (Ok(left), Ok(right)) => Self::from_node(join(Box::new(left), Box::new(right))),
            (Err(error), _) | (_, Err(error)) => Self::invalid(error),
        }
    }

    /// Adds `condition` to an optional one with `AND` (builders accumulate conditions this way).
    pub(crate) fn and_to(existing: &mut Option<Condition<E>>, condition: Condition<E>) {
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

/// Condition parts joined with `AND`, rendered as [`all`]'s tree renders, without building
/// it; empty when there are none. The shape cache's tests render conditions as requests do.
#[cfg(test)]
#[derive(Clone)]
pub(crate) struct AllOf(pub(crate) Vec<Node>);

#[cfg(test)]
impl Expression for AllOf {
    fn walk(&mut self, sink: &mut impl Sink) {
        walk_all(self.0.iter_mut().map(ConditionPart::Owned), sink);
    }
}

/// One part of a condition joined with `AND`: built for this request (its values move into
/// the request), or borrowed from the builder, such as the user's condition (its values are
/// copied).
pub(crate) enum ConditionPart<'a> {
    Owned(&'a mut Node),
    Shared(&'a Node),
}

impl ConditionPart<'_> {
    fn walk(self, sink: &mut impl Sink) {
        match self {
            ConditionPart::Owned(node) => walk_owned(node, sink),
            ConditionPart::Shared(node) => walk_shared(node, sink),
        }
    }

    /// Walks the part as an operand of `AND` (parenthesised if it is an `OR`).
    fn walk_in_and(self, sink: &mut impl Sink) {
        match self {
            ConditionPart::Owned(node) => group_owned(node, sink, is_or),
            ConditionPart::Shared(node) => group_shared(node, sink, is_or),
        }
    }
}

/// Walks `parts` joined with `AND` (a single part is not parenthesised); false if there are
/// none.
fn walk_all<'a>(parts: impl IntoIterator<Item = ConditionPart<'a>>, sink: &mut impl Sink) -> bool {
    let mut parts = parts.into_iter().peekable();
    let Some(first) = parts.next() else {
        return false;
    };
    if parts.peek().is_none() {
        first.walk(sink);
        return true;
    }
    first.walk_in_and(sink);
    for part in parts {
        sink.text(" AND ");
        part.walk_in_and(sink);
    }
    true
}

/// Renders condition parts joined with `AND`, or `None` when there are none.
pub(crate) fn render_all<'a>(
    parts: impl IntoIterator<Item = ConditionPart<'a>>,
    placeholders: &mut Placeholders,
) -> Option<String> {
    let mut out = String::with_capacity(64);
    walk_all(
        parts,
        &mut Renderer {
            placeholders,
            out: &mut out,
        },
    )
    .then_some(out)
}

/// The tree of an optional user condition, or the error of a value it could not encode.
pub(crate) fn user_node<E>(condition: Option<&Condition<E>>) -> Result<Option<&Node>, EncodeError> {
    condition
        .map(|condition| condition.node().map_err(Clone::clone))
        .transpose()
}

/// A filter that keeps one entity's items of a shared table, and also items with no entity
/// attribute (or one that is not a string), so that decoding reports those instead of skipping
/// them silently; joined with the user's condition, if any: `#n = :v OR
/// attribute_not_exists(#n) OR NOT attribute_type(#n, :S)`, parenthesised before `AND user`.
/// A collection (no one entity) reads every item but the library's own, which its filter
/// leaves out by their entity attribute, so that a count counts what the pages return.
///
/// It is part of every query and scan, so it is walked directly, not built as a tree; the
/// user's condition is borrowed, as every page sends it again.
pub(crate) struct EntityFilter<'a> {
    pub(crate) attribute: &'static str,
    pub(crate) keeps: Keeps,
    pub(crate) user: Option<&'a Node>,
    /// Hides items whose TTL has passed.
    pub(crate) expiry: crate::ttl::Expiry,
}

/// Whose items an [`EntityFilter`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keeps {
    /// One entity's (a query or scan of it).
    Entity(&'static str),
    /// Every item but the library's own (a collection's).
    AllButLibrary,
    /// Every item (entries told apart by key, as a lean index's are).
    All,
}

impl Expression for EntityFilter<'_> {
    fn walk(&mut self, sink: &mut impl Sink) {
        let Some(ttl) = self.expiry.attribute else {
            return self.walk_entity_and_user(sink);
        };
        let has_more = self.keeps != Keeps::All || self.user.is_some();
        // What DynamoDB's TTL never deletes stays: no attribute, or one that is no number.
        let ttl = Name::Known(ttl);
        sink.text("(attribute_not_exists(");
        sink.name(ttl);
        sink.text(") OR NOT attribute_type(");
        sink.name(ttl);
        sink.text(", ");
        sink.new_value(|| AttributeValue::S(AttributeType::Number.code().to_owned()));
        sink.text(") OR ");
        sink.name(ttl);
        sink.text(" >= ");
        let now = self.expiry.now;
        sink.new_value(|| AttributeValue::N(now.to_string()));
        sink.text(")");
        if has_more {
            sink.text(" AND (");
            self.walk_entity_and_user(sink);
            sink.text(")");
        }
    }
}

impl EntityFilter<'_> {
    fn walk_entity_and_user(&mut self, sink: &mut impl Sink) {
        let attribute = Name::Known(self.attribute);
        if self.keeps == Keeps::All {
            if let Some(user) = self.user {
                walk_shared(user, sink);
            }
            return;
        }
        if self.user.is_some() {
            sink.text("(");
        }
        match self.keeps {
            Keeps::Entity(entity) => walk_entity(attribute, entity, sink),
            Keeps::AllButLibrary => walk_not_library(attribute, sink),
            Keeps::All => {}
        }
        if let Some(user) = self.user {
            sink.text(") AND ");
            group_shared(user, sink, is_or);
        }
    }
}

/// The items of `entity`, and those without a string entity attribute (another tool's, which
/// the decoder reports rather than drops).
fn walk_entity(attribute: Name, entity: &'static str, sink: &mut impl Sink) {
    sink.name(attribute);
    sink.text(" = ");
    sink.new_value(|| AttributeValue::S(entity.to_owned()));
    sink.text(" OR attribute_not_exists(");
    sink.name(attribute);
    sink.text(") OR NOT attribute_type(");
    sink.name(attribute);
    sink.text(", ");
    sink.new_value(|| AttributeValue::S(AttributeType::String.code().to_owned()));
    sink.text(")");
}

/// Every item but the library's own, told by their entity attribute as the registry gives it
/// ([`crate::library::entity_tags`]); an item without one passes (`IN` and `contains` are false
/// on an absent attribute), for the decoder to report.
fn walk_not_library(attribute: Name, sink: &mut impl Sink) {
    use crate::library::{entity_tags, EntityTag};
    let exact = entity_tags().filter(|tag| matches!(tag, EntityTag::Exact(_)));
    let suffixes = entity_tags().filter(|tag| matches!(tag, EntityTag::EntitySuffix(_)));
    sink.text("NOT ");
    sink.name(attribute);
    sink.text(" IN (");
    for (position, tag) in exact.enumerate() {
        if position > 0 {
            sink.text(", ");
        }
        let value = tag.value();
        sink.new_value(|| AttributeValue::S(value.to_owned()));
    }
    sink.text(")");
    for tag in suffixes {
        sink.text(" AND NOT contains(");
        sink.name(attribute);
        sink.text(", ");
        let value = tag.value();
        sink.new_value(|| AttributeValue::S(value.to_owned()));
        sink.text(")");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn equals(name: &'static str, value: &str) -> Node {
        Node::Compare(
            Operand::Path(AttrPath::attribute(name)),
            Comparison::Eq,
            Operand::Value(AttributeValue::S(value.to_owned())),
        )
    }

    #[test]
    fn built_and_borrowed_parts_render_as_one_condition() {
        let user = Node::Or(
            Box::new(equals("status", "open")),
            Box::new(equals("status", "pending")),
        );
        let mut exists = Node::Exists(AttrPath::attribute("PK"));
        let mut placeholders = Placeholders::default();
        let text = render_all(
            [
                ConditionPart::Owned(&mut exists),
                ConditionPart::Shared(&user),
            ],
            &mut placeholders,
        );
        assert_eq!(
            text.as_deref(),
            Some("attribute_exists(#n0) AND (#n1 = :v0 OR #n1 = :v1)")
        );
        let values = placeholders.values().unwrap_or_default();
        assert_eq!(
            values.get(":v1"),
            Some(&AttributeValue::S("pending".into()))
        );
        assert_eq!(render_all([], &mut Placeholders::default()), None);
    }

    /// On no item, `attribute_not_exists` holds and a comparison of a missing attribute does
    /// not; `<>` is left undecided, and so is what it takes part in unless the rest decides.
    #[test]
    fn a_condition_on_no_item() {
        let path = || AttrPath::attribute("status");
        let value = || Operand::Value(AttributeValue::S("open".into()));
        let ne = || Node::Compare(Operand::Path(path()), Comparison::Ne, value());
        let missing = || Node::NotExists(path());
        let not = |node: Node| Node::Not(Box::new(node));
        let and = |a: Node, b: Node| Node::And(Box::new(a), Box::new(b));
        let or = |a: Node, b: Node| Node::Or(Box::new(a), Box::new(b));
        assert_eq!(equals("status", "open").on_absent_item(), Some(false));
        assert_eq!(missing().on_absent_item(), Some(true));
        assert_eq!(not(equals("status", "open")).on_absent_item(), Some(true));
        assert_eq!(ne().on_absent_item(), None);
        assert_eq!(
            and(ne(), equals("status", "open")).on_absent_item(),
            Some(false)
        );
        assert_eq!(or(ne(), missing()).on_absent_item(), Some(true));
        assert_eq!(or(ne(), equals("status", "open")).on_absent_item(), None);
        let constant = Node::Compare(value(), Comparison::Eq, value());
        assert_eq!(constant.on_absent_item(), None);
    }
}
