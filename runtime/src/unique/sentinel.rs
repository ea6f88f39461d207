//! Sentinel items: their keys, and the transaction writes that claim and release them.

use crate::cost::Estimate;
use crate::error::write_kind::WriteKind;
use crate::expr::as_read::attribute_as_read;
use crate::expr::condition::{AttributeType, Comparison, Node, Operand};
use crate::expr::AttrPath;
use crate::item::{Item, LimitError, MAX_PARTITION_KEY_BYTES};
use crate::key::KeyText;
use crate::library::UNIQUE_SENTINEL;
use crate::schema::{Entity, Table, UniqueSchema};
use crate::send::write::TransactOp;
use crate::send::write::Write;
use aws_sdk_dynamodb::types::AttributeValue;

/// The entity attribute of sentinels, which transaction reasons name.
pub(crate) const SENTINEL_ENTITY: &str = UNIQUE_SENTINEL.tag();
/// The start of a sentinel's partition key.
const SENTINEL_PARTITION: &str = UNIQUE_SENTINEL.partition_prefix();
/// Attributes of a sentinel: its owner's key, and the value.
pub(crate) const OWNER_PARTITION: &str = "owner_pk";
pub(crate) const OWNER_SORT: &str = "owner_sk";
pub(crate) const VALUE: &str = "value";

/// The value of `unique` in `item` as text, or `None` when the item has none (an absent or
/// `NULL` attribute: an `Option` field is unique only when present). One scalar attribute
/// gives its own text; several give a JSON array of theirs, so that no two combinations read
/// alike. The derive admits only types of one canonical encoding; a document value (a custom
/// key part serde writes as a map) is written canonically too, its entries and set members
/// sorted, so that equal values always key the same sentinel.
pub(crate) fn value_text(unique: &UniqueSchema, item: &Item) -> Option<String> {
    let mut parts = Vec::with_capacity(unique.attributes.len());
    for attribute in unique.attributes {
        let text = match item.get(*attribute)? {
            AttributeValue::Null(_) => return None,
            AttributeValue::S(text) | AttributeValue::N(text) => text.clone(),
            other => match canonical(other) {
                serde_json::Value::String(text) => text,
                document => document.to_string(),
            },
        };
        parts.push(text);
    }
    match parts.as_slice() {
        [one] => Some(one.clone()),
        _ => serde_json::to_string(&parts).ok(),
    }
}

/// `value` as JSON with one form per value: maps by sorted key, sets sorted.
fn canonical(value: &AttributeValue) -> serde_json::Value {
    use serde_json::Value;
    let hex = |bytes: &aws_smithy_types::Blob| -> String {
        bytes
            .as_ref()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    };
    let sorted = |mut texts: Vec<String>| {
        texts.sort_unstable();
        Value::from(texts)
    };
    match value {
        AttributeValue::S(text) | AttributeValue::N(text) => Value::from(text.as_str()),
        AttributeValue::Bool(flag) => Value::from(flag.to_string()),
        AttributeValue::B(bytes) => Value::from(hex(bytes)),
        AttributeValue::L(items) => Value::from(items.iter().map(canonical).collect::<Vec<_>>()),
        AttributeValue::M(entries) => Value::Object(
            entries
                .iter()
                .map(|(name, value)| (name.clone(), canonical(value)))
                .collect::<std::collections::BTreeMap<_, _>>()
                .into_iter()
                .collect(),
        ),
        AttributeValue::Ss(texts) | AttributeValue::Ns(texts) => sorted(texts.clone()),
        AttributeValue::Bs(blobs) => sorted(blobs.iter().map(hex).collect()),
        // `NULL`, and variants a later SDK adds.
        _ => Value::Null,
    }
}

/// The key of the sentinel of `value` of `unique`, an entity `E` value, or
/// [`LimitError::UniqueValueSize`] when the value is too long for a partition key (2048
/// bytes), which DynamoDB refuses: no sentinel of such a value can exist, so none is claimed,
/// released or looked up.
pub(crate) fn sentinel_key<E: Entity>(
    unique: &UniqueSchema,
    value: &str,
) -> Result<Item, LimitError> {
    let table = <E::Table as Table>::SCHEMA;
    let mut partition = format!("{SENTINEL_PARTITION}{}#{}#", E::SCHEMA.name, unique.name);
    let max = MAX_PARTITION_KEY_BYTES.saturating_sub(partition.len());
    if value.len() > max {
        return Err(LimitError::UniqueValueSize {
            entity: E::SCHEMA.name,
            field: unique.name,
            size: value.len(),
            max,
        });
    }
    partition.push_str(value);
    let mut key = Item::from([(table.partition_key.to_owned(), AttributeValue::S(partition))]);
    if let Some(sort) = table.sort_key {
        key.insert(sort.to_owned(), AttributeValue::S("_UNIQUE".to_owned()));
    }
    Ok(key)
}

/// The owner attributes of a sentinel pointing at `owner` (an item's key attributes).
fn owner_attributes<E: Entity>(owner: &Item) -> Item {
    let table = <E::Table as Table>::SCHEMA;
    let mut attributes = Item::new();
    if let Some(value) = owner.get(table.partition_key) {
        attributes.insert(OWNER_PARTITION.to_owned(), value.clone());
    }
    if let Some(value) = table.sort_key.and_then(|sort| owner.get(sort)) {
        attributes.insert(OWNER_SORT.to_owned(), value.clone());
    }
    attributes
}

/// `owner_pk = :pk [AND owner_sk = :sk]`: the sentinel points at `owner`.
fn owned_by<E: Entity>(owner: &Item) -> Node {
    let table = <E::Table as Table>::SCHEMA;
    let same = |attribute: &'static str, key: Option<&'static str>| {
        let value = key.and_then(|key| owner.get(key)).cloned()?;
        Some(Node::Compare(
            Operand::Path(AttrPath::attribute(attribute)),
            Comparison::Eq,
            Operand::Value(value),
        ))
    };
    let partition = same(OWNER_PARTITION, Some(table.partition_key));
    let sort = same(OWNER_SORT, table.sort_key);
    partition
        .into_iter()
        .chain(sort)
        .reduce(|all, next| Node::And(Box::new(all), Box::new(next)))
        .unwrap_or_else(|| Node::Exists(AttrPath::attribute(OWNER_PARTITION)))
}

fn or(a: Node, b: Node) -> Node {
    Node::Or(Box::new(a), Box::new(b))
}

/// The key attributes of an item of `E`.
pub(crate) fn key_of<E: Entity>(item: &Item) -> Item {
    let table = <E::Table as Table>::SCHEMA;
    item.iter()
        .filter(|(name, _)| *name == table.partition_key || Some(name.as_str()) == table.sort_key)
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect()
}

/// A sentinel's put: its key, the item, and the condition that the value is free or already
/// the writer's.
pub(crate) struct ClaimOp {
    pub(crate) key: Item,
    pub(crate) item: Item,
    pub(crate) condition: Node,
    pub(crate) value: String,
}

/// The claim of `unique`'s value in `new` (an item of `E`) for `new`'s key: the sentinel must be
/// free, or already `new`'s, or `moving_from`'s (the old key of a move). `None` when `new`
/// has no such value; [`LimitError::UniqueValueSize`] when it is too long to be claimed.
fn claim<E: Entity>(
    unique: &UniqueSchema,
    new: &Item,
    moving_from: Option<&Item>,
    now: i64,
) -> Result<Option<ClaimOp>, LimitError> {
    let table = <E::Table as Table>::SCHEMA;
    let Some(value) = value_text(unique, new) else {
        return Ok(None);
    };
    let key = sentinel_key::<E>(unique, &value)?;
    let owner = key_of::<E>(new);
    let free = Node::NotExists(AttrPath::attribute(table.partition_key));
    let mut condition = or(free, owned_by::<E>(&owner));
    // Only a move has an old key to name; an update's is the same key, named once.
    if let Some(old) = moving_from.map(key_of::<E>).filter(|old| *old != owner) {
        condition = or(condition, owned_by::<E>(&old));
    }
    let mut item = key.clone();
    // A sentinel expires with its item, so that DynamoDB's time to live frees the value too,
    // and an expired one DynamoDB has not deleted yet is free already.
    if let Some(ttl) = table.ttl_attribute {
        if let Some(expires) = new.get(ttl) {
            item.insert(ttl.to_owned(), expires.clone());
        }
        let now = AttributeValue::N(now.to_string());
        condition = or(
            condition,
            Node::Compare(
                Operand::Path(AttrPath::attribute(ttl)),
                Comparison::Lt,
                Operand::Value(now),
            ),
        );
    }
    item.extend(owner_attributes::<E>(&owner));
    item.insert(
        table.entity_attribute.to_owned(),
        UNIQUE_SENTINEL.entity_attribute(""),
    );
    item.insert(VALUE.to_owned(), AttributeValue::S(value.clone()));
    Ok(Some(ClaimOp {
        key,
        item,
        condition,
        value,
    }))
}

/// A claim sweep's claim of `unique`'s value in `item`, as the sweep read it: the value, and
/// the transaction's two operations, a check that the item still holds the value with the
/// expiry read, then the sentinel's put (see [`claim`]). Checked, so that a claim made from a
/// read a writer has since overtaken (the value changed, the item gone or given another
/// expiry) never leaves a sentinel the item does not back. `None` when `item` has no such
/// value, and [`LimitError::UniqueValueSize`] when it is too long to be claimed.
pub(crate) fn sweep_claim<E: Entity>(
    db: &crate::Db<E::Table>,
    unique: &UniqueSchema,
    item: &Item,
) -> Result<Option<(String, [TransactOp; 2])>, LimitError> {
    let table = <E::Table as Table>::SCHEMA;
    let Some(claim) = claim::<E>(unique, item, None, crate::ttl::epoch_seconds(db.now()))? else {
        return Ok(None);
    };
    // `item` is encoded from the entity the scan decoded, which writes no `None`: one stored
    // as NULL (by an older writer) is absent here too.
    let as_read = |attribute: &'static str| match item.get(attribute) {
        Some(_) => attribute_as_read(item, attribute),
        None => or(
            Node::NotExists(AttrPath::attribute(attribute)),
            Node::Type(AttrPath::attribute(attribute), AttributeType::Null),
        ),
    };
    let holds = unique
        .attributes
        .iter()
        .copied()
        .chain(table.ttl_attribute)
        .map(as_read)
        .fold(
            Node::Exists(AttrPath::attribute(table.partition_key)),
            |all, next| Node::And(Box::new(all), Box::new(next)),
        );
    let key = key_of::<E>(item);
    let key_text = crate::item::key_text::<E::Table>(&key);
    let mut estimate = Estimate::default();
    estimate.write(
        1.0,
        format!(
            "check that the item holds {} {:?}",
            unique.name, claim.value
        ),
    );
    let check = TransactOp::check(
        E::SCHEMA.name,
        db.table_name(),
        (key, key_text),
        holds,
        estimate,
    );
    let write = Write::put(UNIQUE_SENTINEL.description, claim.item).condition(&claim.condition);
    let what = format!("claim of unique {} {:?}", unique.name, claim.value);
    let put = op::<E>(WriteKind::Put, db.table_name(), claim.key, write, what);
    Ok(Some((claim.value, [check, put])))
}

/// The writes that keep the sentinels of an item of `E` right when it goes from `old` (as
/// stored, or `None`) to `new` (as written, or `None` for a delete): claim each value `new`
/// has, for `new`'s key (free, or already `old`'s or `new`'s), and release each value of
/// `old` that `new` does not keep (if still `old`'s; a missing sentinel, as before a
/// migration wrote them, is no obstacle), but those in `foreign`: sentinels found to be
/// another item's (the value of an expired item, claimed again). A value of `new` too long
/// to be claimed is [`LimitError::UniqueValueSize`].
pub(crate) fn sentinel_ops<E: Entity>(
    db: &crate::Db<E::Table>,
    old: Option<&Item>,
    new: Option<&Item>,
    foreign: &[Item],
) -> Result<Vec<TransactOp>, LimitError> {
    let table = <E::Table as Table>::SCHEMA;
    let table_name = db.table_name();
    let now = crate::ttl::epoch_seconds(db.now());
    let mut ops = Vec::new();
    for unique in E::SCHEMA.unique {
        let after = new.and_then(|item| value_text(unique, item));
        let claim = match new {
            Some(new) => claim::<E>(unique, new, old, now)?,
            None => None,
        };
        if let Some(claim) = claim {
            let write =
                Write::put(UNIQUE_SENTINEL.description, claim.item).condition(&claim.condition);
            ops.push(op::<E>(
                WriteKind::Put,
                table_name,
                claim.key,
                write,
                format!("claim of unique {} {:?}", unique.name, claim.value),
            ));
        }
        let before = old.and_then(|item| value_text(unique, item));
        if let (Some(value), Some(old)) = (&before, old) {
            if after.as_ref() == Some(value) {
                continue;
            }
            // A value too long for a sentinel has none to release.
            let Ok(key) = sentinel_key::<E>(unique, value) else {
                continue;
            };
            if foreign.contains(&key) {
                continue;
            }
            let free = Node::NotExists(AttrPath::attribute(table.partition_key));
            let condition = or(free, owned_by::<E>(&key_of::<E>(old)));
            let write =
                Write::delete(UNIQUE_SENTINEL.description, key.clone()).condition(&condition);
            ops.push(op::<E>(
                WriteKind::Delete,
                table_name,
                key,
                write,
                format!("release of unique {} {value:?}", unique.name),
            ));
        }
    }
    Ok(ops)
}

/// The releases of `replaced`'s values, an expired item a move writes over (a put over one
/// reads it and releases them in [`sentinel_ops`]): each that neither item of the move holds
/// (`moving`, whose sentinels the move's own writes keep) nor `foreign` names, if still
/// `replaced`'s, so that no sentinel is left naming the moved item for a value it lacks.
pub(crate) fn replaced_releases<E: Entity>(
    db: &crate::Db<E::Table>,
    replaced: &Item,
    moving: [&Item; 2],
    foreign: &[Item],
) -> Result<Vec<TransactOp>, LimitError> {
    let mut kept = foreign.to_vec();
    for unique in E::SCHEMA.unique {
        let values = moving.iter().filter_map(|item| value_text(unique, item));
        kept.extend(values.filter_map(|value| sentinel_key::<E>(unique, &value).ok()));
    }
    sentinel_ops::<E>(db, Some(replaced), None, &kept)
}

/// The transaction op of a sentinel's `write` at `key`, costing what `what` says.
fn op<E: Entity>(
    kind: WriteKind,
    table_name: &str,
    key: Item,
    write: Write,
    what: String,
) -> TransactOp {
    let mut estimate = Estimate::default();
    estimate.write(1.0, what);
    let key_text = crate::item::key_text::<E::Table>(&key);
    TransactOp::of(
        kind,
        SENTINEL_ENTITY,
        table_name,
        (key, key_text),
        write,
        estimate,
    )
}

/// The unique value a failed claim was for, and the sentinel's owner, from the key of the
/// claim and the sentinel DynamoDB returned.
pub(crate) fn claimed<E: Entity>(
    key: &Item,
    current: Option<&Item>,
) -> Option<(&'static str, String, Option<KeyText>)> {
    let table = <E::Table as Table>::SCHEMA;
    let Some(AttributeValue::S(partition)) = key.get(table.partition_key) else {
        return None;
    };
    let rest = partition.strip_prefix(SENTINEL_PARTITION)?;
    let rest = rest.strip_prefix(E::SCHEMA.name)?.strip_prefix('#')?;
    let (unique, value) = E::SCHEMA.unique.iter().find_map(|unique| {
        let value = rest.strip_prefix(unique.name)?.strip_prefix('#')?;
        Some((unique, value.to_owned()))
    })?;
    Some((unique.name, value, current.map(owner_of::<E>)))
}

/// The key of the item a sentinel names.
pub(crate) fn owner_of<E: Entity>(sentinel: &Item) -> KeyText {
    let table = <E::Table as Table>::SCHEMA;
    let text = |name: &str| match sentinel.get(name) {
        Some(AttributeValue::S(text)) => text.clone(),
        _ => String::new(),
    };
    KeyText {
        partition: (table.partition_key, text(OWNER_PARTITION)),
        sort: table.sort_key.map(|sort| (sort, text(OWNER_SORT))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(value: AttributeValue) -> Option<String> {
        let unique = UniqueSchema {
            name: "external",
            attributes: &["external"],
        };
        value_text(&unique, &Item::from([("external".to_owned(), value)]))
    }

    #[test]
    fn a_document_value_has_one_text_whatever_the_order_of_its_entries() {
        let entries = [("region", "eu"), ("provider", "okta"), ("subject", "42")];
        let map = |order: &[usize]| {
            AttributeValue::M(
                order
                    .iter()
                    .map(|&n| {
                        (
                            entries[n].0.to_owned(),
                            AttributeValue::S(entries[n].1.to_owned()),
                        )
                    })
                    .collect(),
            )
        };
        let expected = r#"{"provider":"okta","region":"eu","subject":"42"}"#;
        for order in [[0, 1, 2], [2, 1, 0], [1, 0, 2]] {
            assert_eq!(text(map(&order)).as_deref(), Some(expected));
        }
        let set = |members: &[&str]| {
            AttributeValue::Ss(members.iter().map(|m| (*m).to_owned()).collect())
        };
        assert_eq!(text(set(&["b", "a"])), text(set(&["a", "b"])));
        assert_eq!(text(AttributeValue::Bool(true)).as_deref(), Some("true"));
        assert_eq!(text(AttributeValue::Null(true)), None);
    }
}
