//! The primary key of one item of an entity.

use super::text::KeyText;
use crate::item::{key_text, DecodeError, Item, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES};
use crate::key::KeyError;
use crate::schema::{Entity, EntitySchema, Table};
use aws_sdk_dynamodb::types::AttributeValue;
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

/// The rendered primary key of an item of entity `E`, built by the generated `E::key(..)` or
/// [`Entity::primary_key`].
pub struct Key<E> {
    /// Borrowed for a constant template (`sk = "TICKET"`): most sort keys of a single table
    /// cost no allocation.
    partition: Cow<'static, str>,
    sort: Option<Cow<'static, str>>,
    entity: PhantomData<fn() -> E>,
}

impl<E: Entity> Key<E> {
    /// A key from rendered templates; checks DynamoDB's key size limits.
    #[doc(hidden)]
    pub fn from_rendered(
        partition: Cow<'static, str>,
        sort: Option<Cow<'static, str>>,
    ) -> Result<Self, KeyError> {
        super::space::check::<E>()?;
        check_length(&partition, MAX_PARTITION_KEY_BYTES, "partition")?;
        if let Some(sort) = &sort {
            check_length(sort, MAX_SORT_KEY_BYTES, "sort")?;
        }
        Ok(Key {
            partition,
            sort,
            entity: PhantomData,
        })
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

    /// The partition key value.
    pub fn partition(&self) -> &str {
        &self.partition
    }

    /// The sort key value, if the table has a sort key.
    pub fn sort(&self) -> Option<&str> {
        self.sort.as_deref()
    }

    /// The key as DynamoDB attributes.
    pub fn to_attributes(&self) -> Item {
        let schema = <E::Table as Table>::SCHEMA;
        let mut item = Item::with_capacity(2);
        item.insert(
            schema.partition_key.to_owned(),
            AttributeValue::S(self.partition.to_string()),
        );
        if let (Some(name), Some(sort)) = (schema.sort_key, &self.sort) {
            item.insert(name.to_owned(), AttributeValue::S(sort.to_string()));
        }
        item
    }

    /// Moves the key's attributes into `item`.
    pub(crate) fn move_into(self, item: &mut Item) {
        let schema = <E::Table as Table>::SCHEMA;
        item.insert(
            schema.partition_key.to_owned(),
            AttributeValue::S(self.partition.into_owned()),
        );
        if let (Some(name), Some(sort)) = (schema.sort_key, self.sort) {
            item.insert(name.to_owned(), AttributeValue::S(sort.into_owned()));
        }
    }

    /// The key for messages.
    pub fn text(&self) -> KeyText {
        let schema = <E::Table as Table>::SCHEMA;
        KeyText {
            partition: (schema.partition_key, self.partition.to_string()),
            sort: schema.sort_key.zip(self.sort.as_deref().map(str::to_owned)),
        }
    }
}

fn check_length(key: &str, max: usize, role: &'static str) -> Result<(), KeyError> {
    if key.len() > max {
        return Err(KeyError::TooLong {
            key: key.to_owned(),
            size: key.len(),
            max,
            role,
        });
    }
    Ok(())
}

impl<E> Clone for Key<E> {
    fn clone(&self) -> Self {
        Key {
            partition: self.partition.clone(),
            sort: self.sort.clone(),
            entity: PhantomData,
        }
    }
}

impl<E> PartialEq for Key<E> {
    fn eq(&self, other: &Self) -> bool {
        self.partition == other.partition && self.sort == other.sort
    }
}

impl<E> Eq for Key<E> {}

impl<E> std::hash::Hash for Key<E> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.partition.hash(state);
        self.sort.hash(state);
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
