//! The primary key of one item of an entity: the rendered texts, and DynamoDB's limits on
//! them. What needs the entity's schema (rendering, reading and writing attributes, the text
//! for messages) is implemented in `crate::schema::primary_key`, above the schema.

use crate::key::KeyError;
use std::borrow::Cow;
use std::marker::PhantomData;

/// DynamoDB's partition key size limit.
pub const MAX_PARTITION_KEY_BYTES: usize = 2048;
/// DynamoDB's sort key size limit.
pub const MAX_SORT_KEY_BYTES: usize = 1024;

/// The rendered primary key of an item of entity `E`, built by the generated `E::key(..)` or
/// [`Entity::primary_key`](crate::Entity::primary_key).
pub struct Key<E> {
    /// Borrowed for a constant template (`sk = "TICKET"`): most sort keys of a single table
    /// cost no allocation.
    partition: Cow<'static, str>,
    sort: Option<Cow<'static, str>>,
    entity: PhantomData<fn() -> E>,
}

impl<E> Key<E> {
    /// A key from texts already checked against `E`'s key space.
    pub(crate) fn checked(
        partition: Cow<'static, str>,
        sort: Option<Cow<'static, str>>,
    ) -> Result<Self, KeyError> {
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

    /// The partition key value.
    pub fn partition(&self) -> &str {
        &self.partition
    }

    /// The sort key value, if the table has a sort key.
    pub fn sort(&self) -> Option<&str> {
        self.sort.as_deref()
    }

    /// The key's texts, taken apart.
    pub(crate) fn into_parts(self) -> (Cow<'static, str>, Option<Cow<'static, str>>) {
        (self.partition, self.sort)
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
