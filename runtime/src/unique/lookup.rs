//! Finding an item by a unique value: one read of its sentinel, then one of the item.

use super::sentinel::{sentinel_key, OWNER_PARTITION, OWNER_SORT};
use super::UniqueField;
use crate::error::Error;
use crate::expr::field::{Field, ValueFor};
use crate::expr::field_role::FieldOf;
use crate::item::Item;
use crate::library::UNIQUE_SENTINEL;
use crate::schema::UniqueSchema;
use crate::schema::{Entity, Table};
use crate::Db;
use aws_sdk_dynamodb::types::AttributeValue;
use std::future::{Future, IntoFuture};
use std::marker::PhantomData;
use std::pin::Pin;

impl<T: Table> Db<T> {
    /// The item of `E` whose `#[dynamo(unique)]` field `field` holds `value`, or
    /// [`Error::NotFound`]: `db.get_by_unique(User::EMAIL, "ana@example.com").await`.
    ///
    /// Two reads, each eventually consistent and costing half a unit for a small item: the
    /// sentinel of the value, which names its owner, then the owner. The sentinel carries no
    /// copy of the item, so that a write of the item stays one write of the item plus one per
    /// changed unique value, whatever the item's size. An eventually consistent read may not
    /// see a write that completed just before; [`GetByUnique::consistent`] reads both strongly
    /// consistent (a sign-in right after a sign-up, say).
    pub fn get_by_unique<E, V, F>(
        &self,
        field: Field<E, V, F>,
        value: impl ValueFor<V>,
    ) -> GetByUnique<'_, T, E>
    where
        E: Entity<Table = T>,
        F: UniqueField<E> + FieldOf<E>,
        V: serde::Serialize,
    {
        GetByUnique {
            db: self,
            unique: E::SCHEMA.unique.get(F::UNIQUE),
            value: value
                .to_attribute()
                .map(|value| (field.attribute(), value))
                .map_err(Error::from),
            consistent: false,
            entity: PhantomData,
        }
    }
}

/// A lookup by unique value; see [`Db::get_by_unique`]. Awaiting it sends it.
#[must_use = "a lookup does nothing until it is awaited or sent"]
pub struct GetByUnique<'db, T: Table, E> {
    db: &'db Db<T>,
    unique: Option<&'static UniqueSchema>,
    /// The field's attribute and the value looked up, or why the value has no attribute.
    value: Result<(&'static str, AttributeValue), Error>,
    consistent: bool,
    entity: PhantomData<fn() -> E>,
}

impl<'db, T: Table, E: Entity<Table = T>> GetByUnique<'db, T, E> {
    /// Reads the sentinel and the item strongly consistent: both then reflect every write
    /// that completed before (twice the read units).
    pub fn consistent(mut self) -> Self {
        self.consistent = true;
        self
    }

    /// Sends the lookup: what awaiting it does.
    pub async fn send(self) -> Result<E, Error> {
        let not_found = |key: &Item| Error::NotFound {
            entity: E::SCHEMA.name,
            key: crate::item::key_text::<T>(key),
        };
        let Some(unique) = self.unique else {
            return Err(not_found(&Item::new()));
        };
        let (attribute, value) = self.value?;
        let probe = Item::from([(attribute.to_owned(), value)]);
        let Some(text) = super::sentinel::value_text(unique, &probe) else {
            return Err(not_found(&Item::new()));
        };
        // No item can have claimed a value too long for a sentinel's key.
        let Ok(sentinel_key) = sentinel_key::<E>(unique, &text) else {
            return Err(not_found(&Item::new()));
        };
        let db = self.db;
        let sentinel = db
            .raw_get(
                UNIQUE_SENTINEL.description,
                sentinel_key.clone(),
                self.consistent,
            )
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
        let item = db
            .raw_get(E::SCHEMA.name, owner.clone(), self.consistent)
            .await?
            .ok_or_else(|| not_found(&owner))?;
        // The owner must still hold the value (a sentinel read before a change reached it
        // would otherwise name an item that no longer has it), and not have expired (every
        // read treats an expired item as gone).
        if super::sentinel::value_text(unique, &item).as_deref() != Some(text.as_str())
            || crate::ttl::Expiry::hidden(T::SCHEMA, || db.now()).has_expired(&item)
        {
            return Err(not_found(&owner));
        }
        Ok(crate::item::decode(item)?)
    }
}

impl<'db, T: Table, E: Entity<Table = T> + Send + 'db> IntoFuture for GetByUnique<'db, T, E> {
    type Output = Result<E, Error>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<E, Error>> + Send + 'db>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}
