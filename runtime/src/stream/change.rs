//! Typed changes: a [`RawRecord`] decoded into an entity, or into a collection of entities,
//! with the same entity detection and key checks as reads.

use super::record::{EventName, RawRecord};
use super::view::{DeclaredStream, StreamView, ViewOf};
use crate::error::stream::StreamError;
use crate::item::{key_text, DecodeError, Item};
use crate::op::query::Collection;
use crate::schema::{Entity, EntitySchema, Table};
use crate::Key;

/// What stream records decode into: one entity (its keys are a [`Key<E>`]) or a
/// [`Collection`] (its keys are a [`CollectionKey`]).
#[diagnostic::on_unimplemented(
    message = "stream records cannot be decoded as `{Self}`",
    label = "expected an entity or a `#[derive(singletable::Collection)]` enum",
    note = "decode records as the entity they hold, or as a collection of the entities of the table"
)]
pub trait StreamTarget: Sized {
    /// The table the records come from.
    type Table: Table;
    /// The typed key of a record.
    type Key;

    /// Decodes an image (an item).
    fn decode_image(item: Item) -> Result<Self, DecodeError>;

    /// Decodes a record's key attributes; keys carry no entity attribute, so the entity is the
    /// one whose key templates they fit.
    fn decode_key(keys: &Item) -> Result<Self::Key, DecodeError>;
}

impl<E: Entity> StreamTarget for E {
    type Table = E::Table;
    type Key = Key<E>;

    fn decode_image(item: Item) -> Result<Self, DecodeError> {
        crate::item::decode(item)
    }

    fn decode_key(keys: &Item) -> Result<Key<E>, DecodeError> {
        Key::read(keys)
    }
}

pub use crate::key::CollectionKey;

/// The key of a collection's record; used by `#[derive(Collection)]`.
#[doc(hidden)]
pub fn collection_key<C: Collection>(
    keys: &Item,
    entities: &[&'static EntitySchema],
) -> Result<CollectionKey, DecodeError> {
    let key = key_text::<C::Table>(keys);
    // The templates of a collection's entities are checked disjoint, so at most one fits.
    match entities
        .iter()
        .find(|entity| crate::schema::primary_key::fitting_key::<C::Table>(entity, keys).is_some())
    {
        Some(entity) => Ok(CollectionKey {
            entity: entity.name,
            key,
        }),
        None => Err(DecodeError::KeyShape {
            entity: std::any::type_name::<C>(),
            key,
        }),
    }
}

/// One change to an item, with the images the table's stream view carries: `T` where the view
/// has the image, `()` where it does not (see [`StreamView`]).
pub enum Change<T, V: StreamView> {
    /// A new item.
    Insert {
        /// The item written.
        new: V::New<T>,
    },
    /// A changed item.
    Modify {
        /// The item before.
        old: V::Old<T>,
        /// The item after.
        new: V::New<T>,
    },
    /// A deleted item.
    Remove {
        /// The item deleted.
        old: V::Old<T>,
        /// Whether DynamoDB's time to live deleted it, rather than a request.
        expired: bool,
    },
}

impl<T, V: StreamView> std::fmt::Debug for Change<T, V>
where
    V::New<T>: std::fmt::Debug,
    V::Old<T>: std::fmt::Debug,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Change::Insert { new } => f.debug_struct("Insert").field("new", new).finish(),
            Change::Modify { old, new } => f
                .debug_struct("Modify")
                .field("old", old)
                .field("new", new)
                .finish(),
            Change::Remove { old, expired } => f
                .debug_struct("Remove")
                .field("old", old)
                .field("expired", expired)
                .finish(),
        }
    }
}

impl<T, V: StreamView> PartialEq for Change<T, V>
where
    V::New<T>: PartialEq,
    V::Old<T>: PartialEq,
{
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Change::Insert { new: a }, Change::Insert { new: b }) => a == b,
            (Change::Modify { old: a, new: b }, Change::Modify { old: c, new: d }) => {
                a == c && b == d
            }
            (Change::Remove { old: a, expired: b }, Change::Remove { old: c, expired: d }) => {
                a == c && b == d
            }
            _ => false,
        }
    }
}

/// A typed stream record of table `T`'s stream: the change, its typed key, and where it is in
/// the stream.
pub struct StreamRecord<T: StreamTarget, V: StreamView> {
    /// What happened.
    pub change: Change<T, V>,
    /// The item's key, typed.
    pub key: T::Key,
    /// The record's position in its shard; increases with every record of the shard.
    pub sequence_number: String,
    /// The record's unique id.
    pub event_id: String,
}

impl<T: StreamTarget, V: StreamView> std::fmt::Debug for StreamRecord<T, V>
where
    Change<T, V>: std::fmt::Debug,
    T::Key: std::fmt::Debug,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamRecord")
            .field("change", &self.change)
            .field("key", &self.key)
            .field("sequence_number", &self.sequence_number)
            .field("event_id", &self.event_id)
            .finish()
    }
}

/// A typed record of the stream of the table of `T`.
pub type Record<T> = StreamRecord<T, ViewOf<<T as StreamTarget>::Table>>;

/// Decodes `record` as a change of `T`, with the images of the table's stream view.
pub fn decode<T>(record: RawRecord) -> Result<Record<T>, StreamError>
where
    T: StreamTarget,
    ViewOf<T::Table>: DeclaredStream,
{
    let RawRecord {
        event_id,
        event,
        sequence_number,
        keys,
        new_image,
        old_image,
        by_ttl,
    } = record;
    let key_of = |keys: &Item| key_text::<T::Table>(keys);
    let failed = |image: &'static str, keys: &Item, source: DecodeError| StreamError::Decode {
        sequence_number: sequence_number.clone(),
        key: key_of(keys),
        image,
        source: Box::new(source),
    };
    if keys.is_empty() {
        return Err(StreamError::Malformed {
            sequence_number,
            reason: "the record has no keys".to_owned(),
        });
    }
    let key = T::decode_key(&keys).map_err(|source| failed("keys", &keys, source))?;
    let image = |name: &'static str, image: Option<Item>| {
        let item = image.ok_or_else(|| StreamError::Malformed {
            sequence_number: sequence_number.clone(),
            reason: format!(
                "the stream view {} carries the {name}, which the record lacks",
                <ViewOf<T::Table> as DeclaredStream>::TYPE
            ),
        })?;
        T::decode_image(item).map_err(|source| failed(name, &keys, source))
    };
    type View<T> = ViewOf<<T as StreamTarget>::Table>;
    let change = match event {
        EventName::Insert => Change::Insert {
            new: View::<T>::new_image(|| image("new image", new_image))?,
        },
        EventName::Modify => Change::Modify {
            old: View::<T>::old_image(|| image("old image", old_image))?,
            new: View::<T>::new_image(|| image("new image", new_image))?,
        },
        EventName::Remove => Change::Remove {
            old: View::<T>::old_image(|| image("old image", old_image))?,
            expired: by_ttl,
        },
    };
    Ok(StreamRecord {
        change,
        key,
        sequence_number,
        event_id,
    })
}
