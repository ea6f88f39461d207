//! An update's condition expression.

use super::known::KnownValues;
use crate::expr::condition::{walk_and_operand, Node};
use crate::expr::{AttrPath, Expression, Name, Sink};
use aws_sdk_dynamodb::types::AttributeValue;

/// An update's condition: the item exists, is at the expected version, has the current values
/// the caller gave, and the caller's condition holds; joined with `AND`.
pub(super) struct UpdateCondition<'a> {
    pub(super) partition_key: &'static str,
    pub(super) version: Option<(&'static str, u64)>,
    pub(super) version_max: Option<(&'static str, u64)>,
    pub(super) known: KnownValues<'a>,
    /// The TTL attribute and the time in epoch seconds an expired item is judged by.
    pub(super) expiry: Option<(&'static str, i64)>,
    pub(super) user: Option<Node>,
}

/// ` AND path = value`: a current value the caller gave.
pub(super) fn walk_given<S: Sink>(sink: &mut S, path: &AttrPath, value: impl FnOnce(&mut S)) {
    sink.text(" AND ");
    path.walk(sink);
    sink.text(" = ");
    value(sink);
}

impl Expression for UpdateCondition<'_> {
    fn walk(&mut self, sink: &mut impl Sink) {
        sink.text("attribute_exists(");
        sink.name(Name::Known(self.partition_key));
        sink.text(")");
        if let Some((attribute, now)) = self.expiry {
            // An expired item is absent to the update, as to reads.
            sink.text(" AND NOT (");
            sink.name(Name::Known(attribute));
            sink.text(" < ");
            sink.new_value(|| AttributeValue::N(now.to_string()));
            sink.text(")");
        }
        match self.version {
            // Version 0 is an item written without the attribute.
            Some((attribute, 0)) => {
                sink.text(" AND attribute_not_exists(");
                sink.name(Name::Known(attribute));
                sink.text(")");
            }
            Some((attribute, expected)) => {
                sink.text(" AND ");
                sink.name(Name::Known(attribute));
                sink.text(" = ");
                sink.new_value(|| AttributeValue::N(expected.to_string()));
            }
            None => {}
        }
        if let Some((attribute, max)) = self.version_max {
            sink.text(" AND (attribute_not_exists(");
            sink.name(Name::Known(attribute));
            sink.text(") OR ");
            sink.name(Name::Known(attribute));
            sink.text(" < ");
            sink.new_value(|| AttributeValue::N(max.to_string()));
            sink.text(")");
        }
        match &mut self.known {
            KnownValues::Copied(known) => {
                for (path, value) in known.iter().filter_map(|known| known.current.as_ref()) {
                    walk_given(sink, path, |sink| sink.new_value(|| value.clone()));
                }
            }
            KnownValues::Moved(known) => {
                for (path, value) in known.iter_mut().filter_map(|known| known.current.as_mut()) {
                    walk_given(sink, path, |sink| sink.value(value));
                }
            }
        }
        if let Some(user) = &mut self.user {
            sink.text(" AND ");
            walk_and_operand(user, sink);
        }
    }
}
