//! Fields that an item keeps only in its keys: many tables written by other tools store an
//! id in `PK = c#12345` and nowhere else. A field that a key template renders and the item
//! lacks is read from that key, as the exact inverse of rendering it.

use super::{DecodeError, Item};
use crate::key::{KeyTemplate, PartContext};
use crate::schema::{Entity, FieldSchema, Table};
use aws_sdk_dynamodb::types::AttributeValue;

/// Adds to `item` each field of `E` it lacks that one of its key attributes renders: the
/// primary key's first, then the index keys the item holds.
pub(crate) fn read_fields_from_keys<E: Entity>(item: &mut Item) -> Result<(), DecodeError> {
    for field in E::SCHEMA.fields {
        if field.from_key.is_none() || item.contains_key(field.attribute) {
            continue;
        }
        let read = key_templates::<E>()
            .filter(|(_, template)| template.writes_text_of(field.name))
            .find_map(|(attribute, template)| match item.get(attribute) {
                Some(AttributeValue::S(key)) => Some(read_field(field, attribute, template, key)),
                _ => None,
            });
        match read {
            Some(Ok(value)) => {
                item.insert(field.attribute.to_owned(), value);
            }
            Some(Err((attribute, template, reason))) => {
                return Err(DecodeError::FieldFromKey {
                    entity: E::SCHEMA.name,
                    key: super::key_text::<E::Table>(item),
                    field: field.name,
                    attribute,
                    template: template.source,
                    reason,
                })
            }
            // No key the item holds renders it: serde reports it missing.
            None => {}
        }
    }
    Ok(())
}

/// Each key attribute of `E`'s items with the template it is written by.
fn key_templates<E: Entity>() -> impl Iterator<Item = (&'static str, &'static KeyTemplate)> {
    let table = <E::Table as Table>::SCHEMA;
    let schema = E::SCHEMA;
    let primary = std::iter::once((table.partition_key, &schema.partition_key))
        .chain(table.sort_key.zip(schema.sort_key.as_ref()));
    let indexes = schema.indexes.iter().flat_map(|index| {
        let partition = index
            .partition_key
            .as_ref()
            .map(|template| (index.index.partition_key, template));
        let sort = index.index.sort_key.zip(index.sort_key.as_ref());
        partition.into_iter().chain(sort)
    });
    primary.chain(indexes)
}

type Unread = (&'static str, &'static KeyTemplate, String);

/// `field`'s value from `key`, written by `template` into `attribute`: only text that the
/// value renders back exactly, so that no other value could have written the key.
fn read_field(
    field: &FieldSchema,
    attribute: &'static str,
    template: &'static KeyTemplate,
    key: &str,
) -> Result<AttributeValue, Unread> {
    let unread = |reason: String| (attribute, template, reason);
    let (Some(from_key), Some(part)) = (field.from_key, field.key_part) else {
        return Err(unread(
            "the field's type is not read from key text".to_owned(),
        ));
    };
    let (text, width) = match template.field_text(key, field.name) {
        Ok(Some(found)) => found,
        Ok(None) => return Err(unread("the template does not render it".to_owned())),
        Err(error) => return Err(unread(error.to_string())),
    };
    let expected =
        |error: crate::key::PartError| unread(format!("{text:?} is not {}", error.expected));
    let value = (part.parse)(text, width).map_err(expected)?;
    let context = PartContext {
        field: field.name,
        width,
        template: template.source,
        segments: template.segments,
    };
    let mut rendered = String::with_capacity(text.len());
    (part.render)(&*value, context, &mut rendered).map_err(|error| unread(error.to_string()))?;
    if rendered != text {
        return Err(unread(format!(
            "{text:?} reads as a value that renders {rendered:?}"
        )));
    }
    from_key(text, width).map_err(expected)
}
