//! An item's keys, rendered from its fields through its entity's schema: the primary key, the
//! keys a key constructor takes, and the secondary index key attributes.
//!
//! The derive emits data (the templates, each field's key-part functions, each index's rule)
//! and one small function per entity, [`Entity::key_input`], that hands out the fields the
//! templates and rules read. Everything else is this generic code, compiled once in the
//! library rather than type-checked again for every entity (issue 32: the derive's compile
//! cost is in how many items and bodies each entity gets).

use super::entity::{Entity, EntityIndex, EntitySchema};
use crate::codec::Item;
use crate::key::{KeyError, KeyPart, KeyTemplate, PartContext};
use crate::Key;
use aws_sdk_dynamodb::types::AttributeValue;
use std::any::Any;
use std::borrow::Cow;

/// The item's primary key, from its fields.
pub(crate) fn primary_key<E: Entity>(item: &E) -> Result<Key<E>, KeyError> {
    key_with::<E>(|number, context, out| render_field(item, number, context, out))
}

/// The primary key from a key constructor's arguments: one value per primary key field, in
/// the order the fields first appear in the partition and then the sort key template
/// ([`EntitySchema::primary_key_fields`](super::EntitySchema::primary_key_fields)).
pub fn key_from_arguments<E: Entity>(arguments: &[&dyn KeyPart]) -> Result<Key<E>, KeyError> {
    key_with::<E>(|number, context, out| {
        let position = argument_position(E::SCHEMA, number);
        match position.and_then(|position| arguments.get(position)) {
            Some(value) => value.render_part(context, out),
            None => Err(missing(context.field)),
        }
    })
}

/// The primary key, each template field written by `part`, given the field's number.
fn key_with<E: Entity>(
    mut part: impl FnMut(usize, PartContext, &mut String) -> Result<(), KeyError>,
) -> Result<Key<E>, KeyError> {
    let schema = E::SCHEMA;
    let partition = render_key(&schema.partition_key, &mut part)?;
    let sort = match &schema.sort_key {
        Some(template) => Some(render_key(template, &mut part)?),
        None => None,
    };
    Key::from_rendered(partition, sort)
}

/// Writes the item's secondary index key attributes into `attributes`, leaving out those of
/// sparse indexes whose rule does not hold. An index keyed by the item's own attributes
/// (`gsi2pk = author`) needs nothing written: the attributes are its keys.
pub(crate) fn write_index_keys<E: Entity>(item: &E, attributes: &mut Item) -> Result<(), KeyError> {
    for index in E::SCHEMA.indexes {
        if !rule_holds(item, index) {
            continue;
        }
        let keys = [
            (&index.partition_key, Some(index.index.partition_key)),
            (&index.sort_key, index.index.sort_key),
        ];
        for (template, attribute) in keys {
            if let (Some(template), Some(attribute)) = (template, attribute) {
                let key = template.render_numbered(usize::MAX, |_, number, context, out| {
                    render_field(item, number, context, out)
                })?;
                attributes.insert(attribute.into(), AttributeValue::S(key));
            }
        }
    }
    Ok(())
}

/// Whether the index's rule holds for the item (an index without one holds every item).
fn rule_holds<E: Entity>(item: &E, index: &EntityIndex) -> bool {
    let Some(rule) = &index.rule else {
        return true;
    };
    let argument = |position: usize| -> Option<&dyn Any> {
        let name = rule.inputs.get(position)?;
        item.key_input(E::SCHEMA.field_number(name)?)
    };
    // `None` only if an input is missing or of another type, which the derive rules out; the
    // item is then left out of the index, as the update path does.
    (rule.evaluate)(&argument).unwrap_or(false)
}

/// Renders template field `number` of the item: its value through its field schema's key
/// part.
fn render_field<E: Entity>(
    item: &E,
    number: usize,
    context: PartContext,
    out: &mut String,
) -> Result<(), KeyError> {
    let value = item.key_input(number);
    let key_part = E::SCHEMA
        .fields
        .get(number)
        .and_then(|field| field.key_part);
    match (value, key_part) {
        (Some(value), Some(key_part)) => (key_part.render)(value, context, out),
        _ => Err(missing(context.field)),
    }
}

/// A primary key template as a key: borrowed for a constant template, which costs nothing.
fn render_key(
    template: &KeyTemplate,
    mut part: impl FnMut(usize, PartContext, &mut String) -> Result<(), KeyError>,
) -> Result<Cow<'static, str>, KeyError> {
    if let Some(text) = template.constant_text() {
        return Ok(Cow::Borrowed(text));
    }
    template
        .render_numbered(usize::MAX, |_, number, context, out| {
            part(number, context, out)
        })
        .map(Cow::Owned)
}

/// The position of field `number` among the primary key's fields with repeats left out: the
/// argument of a key constructor that holds it. Fields are compared by number, as the
/// templates carry them, not by name.
fn argument_position(schema: &EntitySchema, number: usize) -> Option<usize> {
    let numbers = || (schema.primary_key_templates()).flat_map(KeyTemplate::field_numbers);
    let mut distinct = 0;
    for (index, field) in numbers().enumerate() {
        if numbers().take(index).any(|earlier| earlier == field) {
            continue;
        }
        if field == number {
            return Some(distinct);
        }
        distinct += 1;
    }
    None
}

/// A template field the entity does not hand out: the derive rules it out.
fn missing(field: &'static str) -> KeyError {
    KeyError::Unrepresentable {
        field,
        reason: "the entity has no key value for it".to_owned(),
    }
}
