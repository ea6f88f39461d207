//! Converting entities to and from DynamoDB items: the whole item an entity is written as
//! (keys, entity attribute, schema version, expiry), read back and checked, and a raw item's
//! key as text for messages; with DynamoDB's size limits and item equality.

// One concept a file: this one converts entities; `size.rs` the size limits; `from_keys.rs`
// fields read back from keys. `Item`, the serde adapter and the errors are in `crate::codec`.

use crate::key::KeyText;
use crate::schema::{Entity, Table};
use aws_sdk_dynamodb::types::AttributeValue;

mod from_keys;
mod size;

pub(crate) use crate::codec;
pub use crate::codec::{same_item, DecodeError, EncodeError, Item, LimitError};
pub use crate::schema::primary_key::key_text;
use crate::schema::primary_key::value_text;
pub(crate) use size::{check_index_key_write, check_index_keys, check_nesting, held_size};
pub use size::{
    check_item_size, item_size, value_size, MAX_ITEM_BYTES, MAX_NESTING_DEPTH,
    MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES,
};

/// The whole item for `entity`: its serde fields, its primary key, its index keys and the
/// entity attribute.
pub fn encode<E: Entity>(entity: &E) -> Result<Item, EncodeError> {
    let table = <E::Table as Table>::SCHEMA;
    // Room for the primary key, the entity attribute, the schema version and two keys per
    // index, so the map is allocated once.
    let extra = 4 + 2 * E::SCHEMA.indexes.len();
    let mut item = codec::to_item(entity, extra).map_err(|error| EncodeError::Serialize {
        entity: E::SCHEMA.name,
        message: error.to_string(),
    })?;
    if let Some((attribute, _)) = item.iter().find(|(_, value)| holds_empty_set(value)) {
        return Err(EncodeError::Serialize {
            entity: E::SCHEMA.name,
            message: format!(
                "`{attribute}` is or holds an empty set, which DynamoDB cannot store: leave it out \
                 when empty (`#[serde(skip_serializing_if = \"BTreeSet::is_empty\")]`)"
            ),
        });
    }
    if let Some(ttl) = &E::SCHEMA.managed.ttl {
        store_ttl::<E>(ttl, &mut item)?;
    }
    entity.primary_key()?.move_into(&mut item);
    item.insert(
        table.entity_attribute.to_owned(),
        AttributeValue::S(E::SCHEMA.name.to_owned()),
    );
    item.insert(
        table.schema_version_attribute.to_owned(),
        AttributeValue::N(E::SCHEMA.schema_version.to_string()),
    );
    entity.write_index_keys(&mut item)?;
    check_index_keys::<E>(&item)?;
    check_item_size(&item, || key_text::<E::Table>(&item))?;
    Ok(item)
}

/// Reads `item` as `E`, checking the entity attribute first.
pub fn decode<E: Entity>(mut item: Item) -> Result<E, DecodeError> {
    check_entity::<E>(&item)?;
    from_keys::read_fields_from_keys::<E>(&mut item)?;
    let stored = take_key::<E>(&mut item);
    read_ttl::<E>(&mut item).map_err(|error| attribute_error::<E>(stored.clone(), error))?;
    let entity: E = match codec::from_item(item) {
        Ok(entity) => entity,
        Err(error) => return Err(attribute_error::<E>(stored, error)),
    };
    // Keys must round-trip: an item whose fields render another key than the one it is
    // stored under would be copied, not updated, if written back.
    if let Ok(rendered) = entity.primary_key() {
        let matches = stored.partition.1 == rendered.partition()
            && stored.sort.as_ref().map(|(_, sort)| sort.as_str()) == rendered.sort();
        if !matches {
            return Err(DecodeError::KeyMismatch {
                entity: E::SCHEMA.name,
                key: stored,
                rendered: rendered.text(),
            });
        }
    }
    Ok(entity)
}

/// Reads `item`, an item of entity `E` (checked), as `T`: the entity itself, or a struct of
/// some of its attributes (a projection).
pub fn decode_as<E: Entity, T: serde::de::DeserializeOwned>(item: Item) -> Result<T, DecodeError> {
    check_entity::<E>(&item)?;
    decode_fields::<E, T>(item)
}

/// Reads `item`, known to be an item of entity `E` (by its entity attribute, or by its key on
/// an index that does not hold that attribute), as `T`.
pub fn decode_fields<E: Entity, T: serde::de::DeserializeOwned>(
    item: Item,
) -> Result<T, DecodeError> {
    // `T` may read the key attributes too, so they stay in the item; the key is copied for
    // messages.
    let key = key_text::<E::Table>(&item);
    let mut item = item;
    from_keys::read_fields_from_keys::<E>(&mut item)?;
    read_ttl::<E>(&mut item).map_err(|error| attribute_error::<E>(key.clone(), error))?;
    codec::from_item(item).map_err(|error| attribute_error::<E>(key, error))
}

/// Replaces the TTL field as serde wrote it by DynamoDB's form, a number of epoch seconds (or
/// nothing, for no expiry).
fn store_ttl<E: Entity>(ttl: &crate::schema::TtlField, item: &mut Item) -> Result<(), EncodeError> {
    let Some(value) = item.remove(ttl.attribute) else {
        return Ok(());
    };
    let stored = (ttl.stored)(value).map_err(|message| EncodeError::Serialize {
        entity: E::SCHEMA.name,
        message: format!("`{}` (ttl): {message}", ttl.attribute),
    })?;
    if let Some(stored) = stored {
        item.insert(ttl.attribute.to_owned(), stored);
    }
    Ok(())
}

/// The TTL field back in the form serde reads.
fn read_ttl<E: Entity>(item: &mut Item) -> Result<(), codec::CodecError> {
    let Some(ttl) = &E::SCHEMA.managed.ttl else {
        return Ok(());
    };
    if let Some(stored) = item.remove(ttl.attribute) {
        let value = (ttl.read)(stored)
            .map_err(|message| codec::CodecError::at(ttl.attribute.to_owned(), message))?;
        item.insert(ttl.attribute.to_owned(), value);
    }
    Ok(())
}

fn check_entity<E: Entity>(item: &Item) -> Result<(), DecodeError> {
    let table = <E::Table as Table>::SCHEMA;
    let found = match item.get(table.entity_attribute) {
        Some(AttributeValue::S(name)) => Some(name.as_str()),
        _ => None,
    };
    if found != Some(E::SCHEMA.name) {
        return Err(DecodeError::WrongEntity {
            key: key_text::<E::Table>(item),
            attribute: table.entity_attribute,
            expected: E::SCHEMA.name,
            found: found.map(str::to_owned),
        });
    }
    Ok(())
}

/// Takes the primary key attributes out of an item of `E` (its fields never include them,
/// unless a field is stored under the same name), as text for messages.
fn take_key<E: Entity>(item: &mut Item) -> KeyText {
    let schema = <E::Table as Table>::SCHEMA;
    let mut take = |name: &'static str| {
        let value = if E::SCHEMA.fields.iter().any(|field| field.attribute == name) {
            item.get(name).cloned()
        } else {
            item.remove(name)
        };
        (name, value_text(value))
    };
    KeyText {
        partition: take(schema.partition_key),
        sort: schema.sort_key.map(take),
    }
}

fn attribute_error<E: Entity>(key: KeyText, error: codec::CodecError) -> DecodeError {
    DecodeError::Attribute {
        entity: E::SCHEMA.name,
        key,
        attribute: error.path(),
        message: error.message,
    }
}

/// Whether a value is, or holds at any depth, a set with no elements: DynamoDB refuses those.
pub(crate) fn holds_empty_set(value: &AttributeValue) -> bool {
    match value {
        AttributeValue::Ss(set) | AttributeValue::Ns(set) => set.is_empty(),
        AttributeValue::Bs(set) => set.is_empty(),
        AttributeValue::L(list) => list.iter().any(holds_empty_set),
        AttributeValue::M(map) => map.values().any(holds_empty_set),
        _ => false,
    }
}
