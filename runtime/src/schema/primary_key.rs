//! What the primary key of an entity's item knows of the schema: rendering it (after the
//! table's key space is checked), reading it from attributes, writing it into an item, and
//! its text for messages.

use crate::codec::{DecodeError, Item};
use crate::key::primary::Key;
use crate::key::text::KeyText;
use crate::key::KeyError;
use crate::schema::{Entity, EntitySchema, Table};
use aws_sdk_dynamodb::types::AttributeValue;
use std::borrow::Cow;
use std::fmt;

impl<E: Entity> Key<E> {
    /// A key from rendered templates; checks DynamoDB's key size limits.
    #[doc(hidden)]
    pub fn from_rendered(
        partition: Cow<'static, str>,
        sort: Option<Cow<'static, str>>,
    ) -> Result<Self, KeyError> {
        super::space::check::<E>()?;
        Key::checked(partition, sort)
    }

    /// The key of an item whose key attributes fit `E`'s templates: a stream record's keys,
    /// or an index entry's.
    pub(crate) fn read(keys: &Item) -> Result<Key<E>, DecodeError> {
        let key = || key_text::<E::Table>(keys);
        let (partition, sort) =
            fitting_key::<E::Table>(E::SCHEMA, keys).ok_or_else(|| DecodeError::KeyShape {
                entity: E::SCHEMA.name,
                key: key(),
            })?;
        Key::from_rendered(partition.into(), sort.map(Into::into)).map_err(|error| {
            DecodeError::Attribute {
                entity: E::SCHEMA.name,
                key: key(),
                attribute: <E::Table as Table>::SCHEMA.partition_key.to_owned(),
                message: error.to_string(),
            }
        })
    }

    /// The key as DynamoDB attributes.
    pub fn to_attributes(&self) -> Item {
        let schema = <E::Table as Table>::SCHEMA;
        let mut item = Item::with_capacity(2);
        item.insert(
            schema.partition_key.to_owned(),
            AttributeValue::S(self.partition().to_owned()),
        );
        if let (Some(name), Some(sort)) = (schema.sort_key, self.sort()) {
            item.insert(name.to_owned(), AttributeValue::S(sort.to_string()));
        }
        item
    }

    /// Moves the key's attributes into `item`.
    pub(crate) fn move_into(self, item: &mut Item) {
        let schema = <E::Table as Table>::SCHEMA;
        let (partition, sort) = self.into_parts();
        item.insert(
            schema.partition_key.to_owned(),
            AttributeValue::S(partition.into_owned()),
        );
        if let (Some(name), Some(sort)) = (schema.sort_key, sort) {
            item.insert(name.to_owned(), AttributeValue::S(sort.into_owned()));
        }
    }

    /// The key for messages.
    pub fn text(&self) -> KeyText {
        let schema = <E::Table as Table>::SCHEMA;
        KeyText {
            partition: (schema.partition_key, self.partition().to_owned()),
            sort: schema.sort_key.zip(self.sort().map(str::to_owned)),
        }
    }
}

impl<E: Entity> fmt::Debug for Key<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key<{}>({})", E::SCHEMA.name, self.text())
    }
}

impl<E: Entity> fmt::Display for Key<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.text(), f)
    }
}

/// The partition and sort key texts of `keys`, when they fit `entity`'s templates.
pub(crate) fn fitting_key<T: Table>(
    entity: &EntitySchema,
    keys: &Item,
) -> Option<(String, Option<String>)> {
    let text = |name: &str| match keys.get(name) {
        Some(AttributeValue::S(text)) => Some(text.clone()),
        _ => None,
    };
    let schema = T::SCHEMA;
    let partition = text(schema.partition_key)?;
    entity.partition_key.split(&partition).ok()?;
    let sort = match (schema.sort_key, &entity.sort_key) {
        (Some(name), Some(template)) => {
            let sort = text(name)?;
            template.split(&sort).ok()?;
            Some(sort)
        }
        _ => None,
    };
    Some((partition, sort))
}

/// A key attribute's value for messages; missing or non-string parts are shown as such.
pub(crate) fn value_text(value: Option<AttributeValue>) -> String {
    match value {
        Some(AttributeValue::S(value)) | Some(AttributeValue::N(value)) => value,
        Some(other) => format!("{other:?}"),
        None => "<missing>".to_owned(),
    }
}

/// The key attributes `key` names, as a request takes them: the table's keys are strings.
#[doc(hidden)]
pub fn key_attributes(key: &KeyText) -> Item {
    let (partition, value) = &key.partition;
    let mut attributes = Item::with_capacity(2);
    attributes.insert((*partition).to_owned(), AttributeValue::S(value.clone()));
    if let Some((sort, value)) = &key.sort {
        attributes.insert((*sort).to_owned(), AttributeValue::S(value.clone()));
    }
    attributes
}

/// The primary key of a raw item, for messages; missing or non-string parts are shown as such.
pub fn key_text<T: Table>(item: &Item) -> KeyText {
    let schema = T::SCHEMA;
    let text = |name: &str| value_text(item.get(name).cloned());
    KeyText {
        partition: (schema.partition_key, text(schema.partition_key)),
        sort: schema.sort_key.map(|name| (name, text(name))),
    }
}
