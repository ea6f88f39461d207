//! Finding an item by a unique value: one read of its sentinel, then one of the item.

use super::sentinel::{sentinel_key, OWNER_PARTITION, OWNER_SORT};
use super::UniqueField;
use crate::error::Error;
use crate::expr::field::{Field, ValueFor};
use crate::expr::field_role::FieldOf;
use crate::item::Item;
use crate::library::UNIQUE_SENTINEL;
use crate::schema::{Entity, Table};
use crate::Db;

impl<T: Table> Db<T> {
    /// The item of `E` whose `#[dynamo(unique)]` field `field` holds `value`, or
    /// [`Error::NotFound`].
    ///
    /// Two reads, each eventually consistent and costing half a unit for a small item: the
    /// sentinel of the value, which names its owner, then the owner. The sentinel carries no
    /// copy of the item, so that a write of the item stays one write of the item plus one per
    /// changed unique value, whatever the item's size.
    pub async fn get_by_unique<E, V, F>(
        &self,
        field: Field<E, V, F>,
        value: impl ValueFor<V>,
    ) -> Result<E, Error>
    where
        E: Entity<Table = T>,
        F: UniqueField<E> + FieldOf<E>,
        V: serde::Serialize,
    {
        let not_found = |key: &Item| Error::NotFound {
            entity: E::SCHEMA.name,
            key: crate::item::key_text::<T>(key),
        };
        let Some(unique) = E::SCHEMA.unique.get(F::UNIQUE) else {
            return Err(not_found(&Item::new()));
        };
        let value = value.to_attribute()?;
        let probe = Item::from([(field.attribute().to_owned(), value)]);
        let Some(text) = super::sentinel::value_text(unique, &probe) else {
            return Err(not_found(&Item::new()));
        };
        // No item can have claimed a value too long for a sentinel's key.
        let Ok(sentinel_key) = sentinel_key::<E>(unique, &text) else {
            return Err(not_found(&Item::new()));
        };
        let sentinel = self
            .raw_get(UNIQUE_SENTINEL.description, sentinel_key.clone(), false)
            .await?
            .ok_or_else(|| not_found(&sentinel_key))?;
        let schema = T::SCHEMA;
        let mut owner = Item::new();
        if let Some(partition) = sentinel.get(OWNER_PARTITION) {
            owner.insert(schema.partition_key.to_owned(), partition.clone());
        }
        if let (Some(sort), Some(value)) = (schema.sort_key, sentinel.get(OWNER_SORT)) {
            owner.insert(sort.to_owned(), value.clone());
        }
        let item = self
            .raw_get(E::SCHEMA.name, owner.clone(), false)
            .await?
            .ok_or_else(|| not_found(&owner))?;
        // The owner must still hold the value (a sentinel read before a change reached it
        // would otherwise name an item that no longer has it), and not have expired (every
        // read treats an expired item as gone).
        if super::sentinel::value_text(unique, &item).as_deref() != Some(text.as_str())
            || crate::ttl::Expiry::hidden(T::SCHEMA, || self.now()).has_expired(&item)
        {
            return Err(not_found(&owner));
        }
        Ok(crate::item::decode(item)?)
    }
}
