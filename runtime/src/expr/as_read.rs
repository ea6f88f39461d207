//! The condition that an item is as it was read: what a write made from a read (a move, or a
//! write that keeps unique values) is conditioned on, so that it never overwrites a change it
//! did not see.

use crate::expr::condition::{Comparison, ConditionPart, Node, Operand};
use crate::expr::AttrPath;
use crate::item::Item;
use crate::schema::{Entity, Table, TableSchema};
use crate::ttl::Expiry;
use aws_sdk_dynamodb::types::AttributeValue;

/// The condition that the stored item is still the one read: its version, its `updated_at`, or
/// else every field as read (an absent one still absent).
pub(crate) fn unchanged_since_read<E: Entity>(read: &Item) -> Node {
    unchanged::<E>(read, |_| false)
}

/// As [`unchanged_since_read`], for `read` encoded from an entity the caller holds (a rekey's
/// `from`): a field stored before it existed decodes to its default, so where decoding `read`
/// without the attribute gives the same item, the attribute's absence is as read too.
pub(crate) fn unchanged_since_decoded<E: Entity>(read: &Item) -> Node {
    unchanged::<E>(read, |attribute| {
        let mut without = read.clone();
        without.remove(attribute);
        crate::item::decode::<E>(without)
            .ok()
            .and_then(|entity| crate::item::encode(&entity).ok())
            .is_some_and(|again| again.get(attribute) == read.get(attribute))
    })
}

/// The stored item is as `read`: by its version, its `updated_at`, or every field, where an
/// attribute `absent_reads_alike` may also be absent.
fn unchanged<E: Entity>(read: &Item, absent_reads_alike: impl Fn(&'static str) -> bool) -> Node {
    let managed = E::SCHEMA.managed;
    let same = |attribute: &'static str| match read.get(attribute) {
        // Version 0 is an item written without the attribute.
        Some(AttributeValue::N(zero)) if zero == "0" && managed.version == Some(attribute) => {
            Node::NotExists(AttrPath::attribute(attribute))
        }
        Some(_) if absent_reads_alike(attribute) => Node::Or(
            Box::new(attribute_as_read(read, attribute)),
            Box::new(Node::NotExists(AttrPath::attribute(attribute))),
        ),
        _ => attribute_as_read(read, attribute),
    };
    if let Some(attribute) = managed.version {
        return same(attribute);
    }
    if let Some(timestamp) = managed.updated_at {
        return same(timestamp.attribute);
    }
    E::SCHEMA
        .fields
        .iter()
        .map(|field| same(field.attribute))
        .reduce(|all, next| Node::And(Box::new(all), Box::new(next)))
        .unwrap_or_else(|| {
            Node::Exists(AttrPath::attribute(
                <E::Table as Table>::SCHEMA.partition_key,
            ))
        })
}

/// The condition that `attribute` is as in `read`: equal to its value, or absent as it was.
pub(crate) fn attribute_as_read(read: &Item, attribute: &'static str) -> Node {
    match read.get(attribute) {
        Some(value) => Node::Compare(
            Operand::Path(AttrPath::attribute(attribute)),
            Comparison::Eq,
            Operand::Value(value.clone()),
        ),
        None => Node::NotExists(AttrPath::attribute(attribute)),
    }
}

/// The condition that the item is as `stored` says: absent (or expired by `expiry`, which is
/// absent to reads), or unchanged since it was read.
pub(crate) fn as_read<E: crate::Entity>(stored: Option<&crate::Item>, expiry: Expiry) -> Node {
    match stored {
        Some(item) => unchanged_since_read::<E>(item),
        None => absent(expiry, <E::Table as crate::Table>::SCHEMA),
    }
}

/// A user's condition as it must hold of the stored item: of one expired by `expiry` as of no
/// item, since an expired item is absent to writes as to reads.
pub(crate) enum UserAsRead<'a> {
    /// As written: the table has no time to live, or the condition's value on no item is
    /// not certain (see [`Node::on_absent_item`]).
    AsWritten(&'a Node),
    /// As written, and `NOT expired` beside it: a condition false of no item.
    AndUnexpired(&'a Node, Node),
    /// `condition OR expired`: a condition true of no item.
    OrExpired(Node),
}

/// `condition` as it must hold of the stored item; see [`UserAsRead`]. Borrowed, not copied,
/// wherever it is sent as written.
pub(crate) fn user_as_read(condition: &Node, expiry: Expiry) -> UserAsRead<'_> {
    let Some(expired) = expired(expiry) else {
        return UserAsRead::AsWritten(condition);
    };
    match condition.on_absent_item() {
        Some(false) => UserAsRead::AndUnexpired(condition, Node::Not(Box::new(expired))),
        Some(true) => {
            UserAsRead::OrExpired(Node::Or(Box::new(condition.clone()), Box::new(expired)))
        }
        None => UserAsRead::AsWritten(condition),
    }
}

impl UserAsRead<'_> {
    /// The parts it adds to a write's condition, joined with `AND`.
    pub(crate) fn parts(&mut self) -> impl Iterator<Item = ConditionPart<'_>> {
        let (written, added) = match self {
            UserAsRead::AsWritten(condition) => (Some(&**condition), None),
            UserAsRead::AndUnexpired(condition, unexpired) => (Some(&**condition), Some(unexpired)),
            UserAsRead::OrExpired(node) => (None, Some(node)),
        };
        (written.map(ConditionPart::Shared).into_iter()).chain(added.map(ConditionPart::Owned))
    }

    /// As one condition, for a check, which takes one.
    pub(crate) fn into_node(self) -> Node {
        match self {
            UserAsRead::AsWritten(condition) => condition.clone(),
            UserAsRead::AndUnexpired(condition, unexpired) => {
                Node::And(Box::new(condition.clone()), Box::new(unexpired))
            }
            UserAsRead::OrExpired(node) => node,
        }
    }
}

/// The condition that the item is there and has not expired by `expiry`: what a write that
/// needs an item (an update, a delete `only_if_exists`) requires, so that it agrees with reads,
/// which call an expired item not found.
pub(crate) fn present(expiry: Expiry, table: &TableSchema) -> Node {
    unexpired_and(
        Node::Exists(AttrPath::attribute(table.partition_key)),
        expiry,
    )
}

/// `node`, and that the item has not expired by `expiry`: a condition on a stored attribute
/// (a version) that an expired item, absent to writes, must not meet.
pub(crate) fn unexpired_and(node: Node, expiry: Expiry) -> Node {
    match expired(expiry) {
        Some(expired) => Node::And(Box::new(node), Box::new(Node::Not(Box::new(expired)))),
        None => node,
    }
}

/// The condition that there is no item, or one expired by `expiry`: what a write that creates
/// (a put `only_if_absent`) requires, since an expired item is gone to reads.
pub(crate) fn absent(expiry: Expiry, table: &TableSchema) -> Node {
    let missing = Node::NotExists(AttrPath::attribute(table.partition_key));
    match expired(expiry) {
        Some(expired) => Node::Or(Box::new(missing), Box::new(expired)),
        None => missing,
    }
}

/// `ttl < :now`, DynamoDB's rule as a condition (false for a missing attribute or one of
/// another type, which never expire).
fn expired(expiry: Expiry) -> Option<Node> {
    let attribute = expiry.attribute?;
    Some(Node::Compare(
        Operand::Path(AttrPath::attribute(attribute)),
        Comparison::Lt,
        Operand::Value(AttributeValue::N(expiry.now.to_string())),
    ))
}
