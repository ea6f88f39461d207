//! Index maintenance: recomputing the index keys an update changes from the values it sets,
//! the values the caller says are current (`given`) and the primary key's fields, and
//! evaluating sparse rules, so that no index key goes stale.

use super::known::Known;
use crate::error::update::UpdateError;
use crate::error::Error;
use crate::expr::update::{Action, SetValue};
use crate::expr::AttrPath;
use crate::key::{KeyError, PartContext};
use crate::schema::{AnyValue, Entity, EntityIndex, IndexKind, IndexRule, TableSchema};
use crate::Key;
use aws_sdk_dynamodb::types::AttributeValue;
use std::any::Any;

/// Every field value an update knows, by field name: those it sets or is given, and the
/// primary key's fields, as their text in the key (they are never supplied).
pub(super) struct Values<'a, E> {
    pub(super) known: &'a [Known],
    pub(super) key: &'a Key<E>,
}

/// A field value an update knows.
pub(super) enum Value<'a> {
    Typed(&'a dyn Any),
    /// A primary key field's text in `key`, written at `width`.
    KeyText {
        text: &'a str,
        width: Option<u8>,
        key: &'a str,
    },
}

impl<'a, E: Entity> Values<'a, E> {
    /// Whether the update knows field `name` (the key is read only when the value is).
    pub(super) fn has(&self, name: &str) -> bool {
        self.known.iter().any(|known| known.field == name)
            || E::SCHEMA.primary_key_fields().any(|field| field == name)
    }

    pub(super) fn get(&self, name: &str) -> Result<Option<Value<'a>>, KeyError> {
        if let Some(known) = self.known.iter().find(|known| known.field == name) {
            return Ok(Some(Value::Typed(&*known.value)));
        }
        let schema = E::SCHEMA;
        let templates = std::iter::once((schema.partition_key, self.key.partition()))
            .chain(schema.sort_key.zip(self.key.sort()));
        for (template, key) in templates {
            if let Some((text, width)) = template.field_text(key, name)? {
                return Ok(Some(Value::KeyText { text, width, key }));
            }
        }
        Ok(None)
    }

    /// Whether `rule` holds for the values known (key fields parsed back from their text).
    pub(super) fn rule_holds(&self, rule: &IndexRule) -> Result<bool, KeyError> {
        // Key fields are known as text; a rule seldom reads one, so this seldom allocates.
        let mut parsed: Vec<(usize, AnyValue)> = Vec::new();
        for (position, name) in rule.inputs.iter().enumerate() {
            if let Some(Value::KeyText { text, width, key }) = self.get(name)? {
                parsed.push((position, parse_key_text::<E>(name, text, width, key)?));
            }
        }
        let argument = |position: usize| -> Option<&dyn Any> {
            if let Some((_, value)) = parsed.iter().find(|(input, _)| *input == position) {
                return Some(&**value);
            }
            // Reading a value failed above if it can fail: here it is known or missing.
            match self.get(rule.inputs.get(position)?) {
                Ok(Some(Value::Typed(value))) => Some(value),
                _ => None,
            }
        };
        Ok((rule.evaluate)(&argument).unwrap_or(false))
    }

    /// Writes field `number` (named in `context`) into an index key: a known value rendered,
    /// or a primary key field's text as it is when the index writes it at the same width (a
    /// key part's text depends only on its value and width), else parsed and rendered again.
    pub(super) fn render(
        &self,
        number: usize,
        context: PartContext,
        out: &mut String,
    ) -> Result<(), KeyError> {
        let name = context.field;
        let value = match self.get(name)? {
            Some(Value::KeyText { text, width, .. }) if width == context.width => {
                out.push_str(text);
                return Ok(());
            }
            value => value,
        };
        match (
            value,
            E::SCHEMA
                .fields
                .get(number)
                .and_then(|field| field.key_part),
        ) {
            (Some(Value::Typed(value)), Some(fns)) => (fns.render)(value, context, out),
            (Some(Value::KeyText { text, width, key }), Some(fns)) => {
                let value = parse_key_text::<E>(name, text, width, key)?;
                (fns.render)(&*value, context, out)
            }
            _ => Err(KeyError::Unrepresentable {
                field: name,
                reason: "its value is not known to this update".to_owned(),
            }),
        }
    }
}

pub(super) fn parse_key_text<E: Entity>(
    field: &'static str,
    text: &str,
    width: Option<u8>,
    key: &str,
) -> Result<AnyValue, KeyError> {
    let invalid = |expected| KeyError::InvalidPart {
        field,
        key: key.to_owned(),
        expected,
        text: text.to_owned(),
    };
    let fns = E::SCHEMA
        .field(field)
        .and_then(|field| field.key_part)
        .ok_or_else(|| invalid("a field that can be part of a key"))?;
    (fns.parse)(text, width).map_err(|error| invalid(error.expected))
}

/// An index's inputs, each once.
pub(super) fn unique_inputs(index: &EntityIndex) -> impl Iterator<Item = &'static str> + '_ {
    index
        .inputs()
        .enumerate()
        .filter(|(position, input)| !index.inputs().take(*position).any(|seen| seen == *input))
        .map(|(_, input)| input)
}

#[cold]
pub(super) fn index_inputs_missing(
    entity: &'static str,
    index: &EntityIndex,
    missing: &[&str],
    changes: impl Fn(&&str) -> bool,
) -> UpdateError {
    let quote = |names: &mut dyn Iterator<Item = &str>| {
        names
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let slot = index.index.slot;
    let mut templates = Vec::new();
    if let Some(template) = index.partition_key {
        templates.push(format!("{slot}pk = {:?}", template.source));
    }
    if let Some(template) = index.sort_key {
        templates.push(format!("{slot}sk = {:?}", template.source));
    }
    if let Some(rule) = index.rule {
        templates.push(format!("{slot}_when = {}", rule.source));
    }
    UpdateError::IndexInputsMissing {
        entity,
        index: slot,
        changed: quote(&mut unique_inputs(index).filter(|name| changes(name))),
        missing: quote(&mut missing.iter().copied()),
        templates: templates.join(", "),
    }
}

/// SETs the index's key attributes from the known values, or REMOVEs them when its rule
/// fails (then returns true), appending to `actions`.
pub(super) fn index_actions<E: Entity>(
    index: &EntityIndex,
    table: &TableSchema,
    values: &Values<'_, E>,
    actions: &mut Vec<Action>,
) -> Result<bool, Error> {
    let partition = match index.index.kind {
        IndexKind::Global => Some(index.index.partition_key),
        // A local index shares the table's partition key, which never changes.
        IndexKind::Local => None,
    };
    let attributes = [
        (partition, index.partition_key),
        (index.index.sort_key, index.sort_key),
    ];
    let indexed = match &index.rule {
        Some(rule) => values.rule_holds(rule)?,
        None => true,
    };
    for (attribute, template) in attributes {
        let (Some(attribute), Some(template)) = (attribute, template) else {
            continue;
        };
        // The table's own key, serving the index (an inverted or overloaded index), never
        // changes in place.
        if attribute == table.partition_key || table.sort_key == Some(attribute) {
            continue;
        }
        let path = AttrPath::attribute(attribute);
        if !indexed {
            actions.push(Action::Remove(path));
            continue;
        }
        // Checked with the other index key writes (`item::check_index_key_write`).
        let rendered = template.render_numbered(usize::MAX, |_, number, context, out| {
            values.render(number, context, out)
        })?;
        actions.push(Action::Set(
            path,
            SetValue::Value(AttributeValue::S(rendered)),
        ));
    }
    Ok(!indexed)
}
