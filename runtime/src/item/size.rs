//! DynamoDB's size limits and how it counts sizes: an item's (400 KB), a key's (2048 bytes
//! for a partition key, 1024 for a sort key) and an index key attribute's, which must also not
//! be empty.

use crate::codec::Item;
use crate::codec::LimitError;
use crate::key::text::KeyText;
use crate::schema::Entity;
use aws_sdk_dynamodb::types::AttributeValue;

/// DynamoDB's item size limit.
pub const MAX_ITEM_BYTES: usize = 400 * 1024;
/// DynamoDB's limit on the levels of a document: a top-level attribute is the first, and each
/// list or map adds one (a scalar inside 31 maps is at level 32, and allowed).
pub const MAX_NESTING_DEPTH: usize = 32;
pub use crate::key::primary::{MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES};

/// The size of an item as DynamoDB counts it: attribute names plus values.
pub fn item_size(item: &Item) -> usize {
    held_size(item, |_| true)
}

/// The size of the attributes of `item` that `held` keeps (an index entry's, say).
pub(crate) fn held_size(item: &Item, held: impl Fn(&str) -> bool) -> usize {
    item.iter()
        .filter(|(name, _)| held(name))
        .map(|(name, value)| name.len() + value_size(value))
        .sum()
}

/// The size of one attribute value as DynamoDB documents it: strings and binaries by length,
/// numbers by roughly one byte per two significant digits plus one, containers by their
/// contents plus three bytes, and one byte per element.
pub fn value_size(value: &AttributeValue) -> usize {
    match value {
        AttributeValue::S(text) => text.len(),
        AttributeValue::N(number) => number_size(number),
        AttributeValue::B(bytes) => bytes.as_ref().len(),
        AttributeValue::Bool(_) | AttributeValue::Null(_) => 1,
        AttributeValue::Ss(texts) => texts.iter().map(String::len).sum(),
        AttributeValue::Ns(numbers) => numbers.iter().map(|number| number_size(number)).sum(),
        AttributeValue::Bs(items) => items.iter().map(|bytes| bytes.as_ref().len()).sum(),
        AttributeValue::L(values) => {
            3 + values
                .iter()
                .map(|value| 1 + value_size(value))
                .sum::<usize>()
        }
        AttributeValue::M(map) => {
            3 + map
                .iter()
                .map(|(name, value)| 1 + name.len() + value_size(value))
                .sum::<usize>()
        }
        _ => 0,
    }
}

fn number_size(number: &str) -> usize {
    let mantissa = number
        .trim_start_matches('-')
        .split(['e', 'E'])
        .next()
        .unwrap_or_default();
    let digits = || mantissa.bytes().filter(u8::is_ascii_digit);
    let total = digits().count();
    let leading = digits().take_while(|digit| *digit == b'0').count();
    let significant = if leading == total {
        0
    } else {
        let trailing = digits().rev().take_while(|digit| *digit == b'0').count();
        total - leading - trailing
    };
    significant.div_ceil(2) + 1
}

/// Fails when the item is above DynamoDB's 400 KB limit, or one of its attributes nests
/// deeper than its 32 levels.
pub fn check_item_size(item: &Item, key: impl FnOnce() -> KeyText) -> Result<(), LimitError> {
    // One pass over the item (bench `operations`, group `put_item_encode`): its size, and the
    // depth of each list or map.
    let mut size = 0;
    let mut nested = Ok(());
    for (name, value) in item {
        size += name.len() + value_size(value);
        if nested.is_ok() {
            nested = check_nesting(name, value);
        }
    }
    if size > MAX_ITEM_BYTES {
        return Err(LimitError::ItemSize {
            key: key(),
            size,
            max: MAX_ITEM_BYTES,
        });
    }
    nested
}

/// Fails when `value`, held by `holder` (an attribute, or an expression value), nests deeper
/// than DynamoDB's 32 levels. A scalar costs one comparison.
#[inline]
pub(crate) fn check_nesting(holder: &str, value: &AttributeValue) -> Result<(), LimitError> {
    if !matches!(value, AttributeValue::L(_) | AttributeValue::M(_)) {
        return Ok(());
    }
    let depth = nesting_depth(value);
    if depth > MAX_NESTING_DEPTH {
        return Err(LimitError::NestingDepth {
            attribute: holder.to_owned(),
            depth,
            max: MAX_NESTING_DEPTH,
        });
    }
    Ok(())
}

/// The levels of `value`: one for a scalar, one more than its deepest element for a list or
/// a map.
fn nesting_depth(value: &AttributeValue) -> usize {
    let deepest = match value {
        AttributeValue::L(values) => values.iter().map(nesting_depth).max(),
        AttributeValue::M(map) => map.values().map(nesting_depth).max(),
        _ => return 1,
    };
    1 + deepest.unwrap_or(0)
}

/// A key attribute of an index an entity writes, with the size limit of its role: the
/// table's (2048 bytes for a partition key, 1024 for a sort key).
struct IndexKeyAttribute {
    index: &'static str,
    name: &'static str,
    max: usize,
    role: &'static str,
}

/// Calls `visit` with the key attributes of every index `E` writes, until it fails. Plain
/// loops over the static schema: an update runs this for every attribute it sets, and an
/// iterator of nested closures cost it a thousand instructions a request.
fn for_each_index_key<E: Entity>(
    mut visit: impl FnMut(IndexKeyAttribute) -> Result<(), crate::KeyError>,
) -> Result<(), crate::KeyError> {
    for entity_index in E::SCHEMA.indexes {
        let index = entity_index.index;
        for (keys, max, role) in [
            (index.partition_keys, MAX_PARTITION_KEY_BYTES, "partition"),
            (index.sort_keys, MAX_SORT_KEY_BYTES, "sort"),
        ] {
            for key in keys {
                visit(IndexKeyAttribute {
                    index: index.name,
                    name: key.name,
                    max,
                    role,
                })?;
            }
        }
    }
    Ok(())
}

/// Whether DynamoDB takes `value` as index key attribute `key`: a string or binary must be
/// neither empty nor above the limit. (Values of another type keep the item off the index.)
fn check_index_key(key: &IndexKeyAttribute, value: &AttributeValue) -> Result<(), crate::KeyError> {
    let bytes = match value {
        AttributeValue::S(text) => text.as_bytes(),
        AttributeValue::B(blob) => blob.as_ref(),
        _ => return Ok(()),
    };
    if bytes.is_empty() {
        return Err(crate::KeyError::EmptyIndexKey {
            attribute: key.name,
            index: key.index,
        });
    }
    if bytes.len() > key.max {
        return Err(crate::KeyError::TooLong {
            key: String::from_utf8_lossy(bytes).into_owned(),
            size: bytes.len(),
            max: key.max,
            role: key.role,
        });
    }
    Ok(())
}

/// Checks the index key attributes of an item about to be written, which the derive renders
/// or the entity holds, before sending.
pub(crate) fn check_index_keys<E: Entity>(item: &Item) -> Result<(), crate::KeyError> {
    for_each_index_key::<E>(|key| match item.get(key.name) {
        Some(value) => check_index_key(&key, value),
        None => Ok(()),
    })
}

/// Checks `value`, which an update writes to top-level attribute `attribute`, if that keys an
/// index of `E`.
pub(crate) fn check_index_key_write<E: Entity>(
    attribute: &str,
    value: &AttributeValue,
) -> Result<(), crate::KeyError> {
    for_each_index_key::<E>(|key| {
        if key.name == attribute {
            check_index_key(&key, value)
        } else {
            Ok(())
        }
    })
}
