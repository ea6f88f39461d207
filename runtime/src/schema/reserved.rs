//! The attributes the library writes into an entity's items, which no field of the entity may
//! be stored as: the table's key attributes, the index key attributes the entity's templates
//! write, the entity and schema version attributes, and the table's TTL attribute (but for the
//! `#[dynamo(ttl)]` field). Such a field would lose its value to the key the library writes
//! over it, or would put items into an index, or expire them, under its own value.
//!
//! Nor may a template of the entity write an index key into an attribute the table gives
//! another role (an index keyed on the entity attribute, or on a table key inverted).
//!
//! Checked when an entity first renders a key (`space.rs`), not by the derive: constant
//! evaluation of these comparisons cost a tenth of a crate's check (bench-compile, 30
//! entities), where at run time they cost once per entity and process.

use crate::key::KeyError;
use crate::schema::table::TableAttribute;
use crate::schema::{EntitySchema, TableSchema};

/// The first field of `entity` stored as an attribute the library writes, as the error that
/// names it.
pub(crate) fn reserved_attribute(table: &TableSchema, entity: &EntitySchema) -> Option<KeyError> {
    entity.fields.iter().find_map(|field| {
        let (role, hint) = role_of(table, entity, field.attribute)?;
        Some(KeyError::ReservedAttribute {
            entity: entity.name,
            field: field.name,
            attribute: field.attribute,
            role,
            table: table.type_name,
            hint,
        })
    })
}

/// The first index key `entity` writes from a template into an attribute the table gives
/// another role, as the error that names both. An index keyed on a table key attribute (an
/// inverted index, GSI overloading) is written by the entity's own template for that key,
/// which writes the same text: that is the table's key serving the index, and allowed, but
/// for a sparse rule, which would leave the item's key out.
pub(crate) fn index_key_over_library_attribute(
    table: &TableSchema,
    entity: &EntitySchema,
) -> Option<KeyError> {
    entity.indexes.iter().find_map(|keyed| {
        let index = keyed.index;
        let written = [
            ("pk", keyed.partition_key.as_ref(), index.partition_keys),
            ("sk", keyed.sort_key.as_ref(), index.sort_keys),
        ];
        written
            .into_iter()
            .filter_map(|(key, template, attributes)| Some((key, template?, attributes)))
            .flat_map(|(key, template, attributes)| {
                attributes
                    .iter()
                    .map(move |attribute| (key, template, attribute))
            })
            .find_map(|(key, template, attribute)| {
                let kind = table.attribute(attribute.name)?;
                let own = match kind {
                    TableAttribute::PartitionKey => Some(&entity.partition_key),
                    TableAttribute::SortKey => entity.sort_key.as_ref(),
                    _ => None,
                };
                let serves = own.is_some_and(|own| own.source == template.source);
                if serves && keyed.rule.is_none() {
                    return None;
                }
                Some(KeyError::IndexKeyOverLibraryAttribute {
                    entity: entity.name,
                    index: index.slot,
                    key,
                    attribute: attribute.name,
                    role: role(kind),
                    table: table.type_name,
                    own_template: own.map(|own| own.source),
                })
            })
    })
}

/// What an attribute the table's declaration names is to the library.
fn role(kind: TableAttribute) -> &'static str {
    match kind {
        TableAttribute::PartitionKey => "the partition key attribute",
        TableAttribute::SortKey => "the sort key attribute",
        TableAttribute::Entity => "the attribute that records each item's entity",
        TableAttribute::SchemaVersion => "the attribute that records each item's schema version",
        TableAttribute::Expiry => "the TTL attribute",
    }
}

/// What `attribute` is to the library in `entity`'s items, if it writes it, and a hint.
fn role_of(
    table: &TableSchema,
    entity: &EntitySchema,
    attribute: &str,
) -> Option<(String, &'static str)> {
    if let Some(kind) = table.attribute(attribute) {
        if let TableAttribute::Expiry = kind {
            let is_the_expiry =
                (entity.managed.ttl.as_ref()).is_some_and(|ttl| ttl.attribute == attribute);
            return (!is_the_expiry).then(|| {
                (
                    role(kind).to_owned(),
                    ", or mark it `#[dynamo(ttl)]` if it is the expiry time",
                )
            });
        }
        return Some((role(kind).to_owned(), ""));
    }
    // An index key is the library's only where the entity writes it from a template; one an
    // index reads as it is (`gsi3pk = author`) is the items' own, and other entities may hold
    // an attribute of that name.
    entity
        .indexes
        .iter()
        .find(|keyed| {
            let index = keyed.index;
            (keyed.partition_key.is_some()
                && index.partition_keys.iter().any(|key| key.name == attribute))
                || (keyed.sort_key.is_some()
                    && index.sort_keys.iter().any(|key| key.name == attribute))
        })
        .map(|keyed| {
            (
                format!("a key attribute of index `{}`", keyed.index.slot),
                "",
            )
        })
}
