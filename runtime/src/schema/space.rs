//! The entities that share a table, checked pairwise: two whose templates can render the same
//! primary key could replace each other's items, and two that can render the same key of one
//! index would each answer the other's key conditions. A lone entity is checked the first time
//! it renders a key in this process, against those seen before it; the entities of a
//! `Collection` are checked together at compile time, by the same `const fn`. Two schema
//! versions of one entity are one entity, and not checked against each other; two entities
//! under one name and version are refused whatever their keys. The first key
//! also checks that no field of the entity is stored as an attribute the library writes
//! (`reserved.rs`).

use super::reserved::{index_key_over_library_attribute, reserved_attribute};
use crate::const_text::ConstText;
use crate::key::{
    renderings_may_overlap, EntityKeys, KeyError, KeyTemplate, Overlap, OverlappingKey, Rendering,
};
use crate::schema::{str_eq, Entity, EntityIndex, EntitySchema, IndexKind, Table, TableSchema};
use std::any::TypeId;
use std::cell::RefCell;
use std::sync::{Mutex, PoisonError};

/// One entity checked so far. Entities and tables are told apart by their types: the address
/// of a schema constant differs between codegen units and crates, so it is no identity.
struct Checked {
    table: TypeId,
    entity: TypeId,
    schema: &'static EntitySchema,
}

/// Every entity checked so far.
static CHECKED: Mutex<Vec<Checked>> = Mutex::new(Vec::new());

thread_local! {
    /// The entities this thread has seen pass, so that a key costs no lock after the first.
    static PASSED: RefCell<Vec<TypeId>> = const { RefCell::new(Vec::new()) };
}

/// Checks `E` against the other entities of its table seen so far in this process.
pub(crate) fn check<E: Entity>() -> Result<(), KeyError> {
    let entity = TypeId::of::<E>();
    if PASSED.with(|passed| passed.borrow().contains(&entity)) {
        return Ok(());
    }
    let table_type = TypeId::of::<E::Table>();
    let schema: &'static EntitySchema = E::SCHEMA;
    let table: &'static TableSchema = <E::Table as Table>::SCHEMA;
    let mut checked = CHECKED.lock().unwrap_or_else(PoisonError::into_inner);
    if !checked.iter().any(|seen| seen.entity == entity) {
        if let Some(reserved) = reserved_attribute(table, schema)
            .or_else(|| index_key_over_library_attribute(table, schema))
        {
            return Err(reserved);
        }
        // Two schema versions of one entity (the old one declared to write or read its shape
        // during a migration) are one entity: their items are the same items.
        let clash = checked
            .iter()
            .filter(|other| other.table == table_type)
            .filter(|other| {
                !(other.schema.name == schema.name
                    && other.schema.schema_version != schema.schema_version)
            })
            .find_map(|other| overlap(table, schema, other.schema));
        if let Some(overlap) = clash {
            return Err(KeyError::Overlap(Box::new(overlap)));
        }
        checked.push(Checked {
            table: table_type,
            entity,
            schema,
        });
    }
    drop(checked);
    PASSED.with(|passed| passed.borrow_mut().push(entity));
    Ok(())
}

/// Why two entities of one `Collection` cannot share its table: they can render the same key
/// (the message [`KeyError::Overlap`] prints). The derive panics with it in a constant of the
/// user's crate, so that the compile error points at the variant and nothing in this crate.
pub const fn collection_overlap(
    table: &TableSchema,
    a: &EntitySchema,
    b: &EntitySchema,
) -> Option<ConstText> {
    match overlap(table, a, b) {
        Some(overlap) => Some(overlap.message()),
        None => None,
    }
}

/// The first key of `table` that `a` and `b` can both render: the primary key, or the key of
/// an index both write with templates. An index key read from a plain attribute
/// (`gsi2pk = author`) can hold any value, so it is not compared; queries still tell the
/// entities apart by the entity attribute.
const fn overlap(table: &TableSchema, a: &EntitySchema, b: &EntitySchema) -> Option<Overlap> {
    // The stub of an entity whose derive failed has an empty template (a real one never is):
    // its error is already reported.
    if a.partition_key.source.is_empty() || b.partition_key.source.is_empty() {
        return None;
    }
    // Whatever their keys: reads tell entities apart by name (two schema versions of one
    // entity, one name, are not compared).
    if str_eq(a.name, b.name) && a.schema_version == b.schema_version {
        return Some(Overlap {
            table: table.type_name,
            key: OverlappingKey::EntityName,
            entity: primary_keys(a),
            other: primary_keys(b),
        });
    }
    let primary = match (&a.sort_key, &b.sort_key) {
        (Some(left), Some(right)) => may_overlap(a, left, b, right),
        _ => true,
    };
    if primary && may_overlap(a, &a.partition_key, b, &b.partition_key) {
        return Some(Overlap {
            table: table.type_name,
            key: OverlappingKey::Primary,
            entity: primary_keys(a),
            other: primary_keys(b),
        });
    }
    let mut left = 0;
    while left < a.indexes.len() {
        let mut right = 0;
        while right < b.indexes.len() {
            let (x, y) = (&a.indexes[left], &b.indexes[right]);
            if str_eq(x.index.name, y.index.name) {
                if let (Some(entity), Some(other)) = (index_keys(a, x), index_keys(b, y)) {
                    if index_keys_may_meet(a, x, b, y) {
                        return Some(Overlap {
                            table: table.type_name,
                            key: OverlappingKey::Index(x.index.name),
                            entity,
                            other,
                        });
                    }
                }
            }
            right += 1;
        }
        left += 1;
    }
    None
}

const fn primary_keys(schema: &EntitySchema) -> EntityKeys {
    EntityKeys {
        entity: schema.name,
        partition_slot: "",
        partition: schema.partition_key.source,
        sort_slot: "",
        sort: match &schema.sort_key {
            Some(sort) => Some(sort.source),
            None => None,
        },
    }
}

/// The partition template an entity's index entry is written with: its own, or on a local
/// index the table's.
const fn index_partition<'a>(
    schema: &'a EntitySchema,
    index: &'a EntityIndex,
) -> Option<&'a KeyTemplate> {
    match (&index.partition_key, index.index.kind) {
        (Some(template), _) => Some(template),
        (None, IndexKind::Local) => Some(&schema.partition_key),
        (None, IndexKind::Global) => None,
    }
}

/// The entity's templates on `index`, when every key attribute of the index is templated.
const fn index_keys(schema: &EntitySchema, index: &EntityIndex) -> Option<EntityKeys> {
    let Some(partition) = index_partition(schema, index) else {
        return None;
    };
    let sort = match (&index.sort_key, index.index.sort_key) {
        (Some(template), Some(_)) => Some(template.source),
        (None, None) => None,
        // The index has a sort key the entity reads from a plain attribute.
        _ => return None,
    };
    Some(EntityKeys {
        entity: schema.name,
        partition_slot: match index.index.kind {
            IndexKind::Local => "",
            IndexKind::Global => index.index.slot,
        },
        partition: partition.source,
        sort_slot: index.index.slot,
        sort,
    })
}

const fn index_keys_may_meet(
    a: &EntitySchema,
    x: &EntityIndex,
    b: &EntitySchema,
    y: &EntityIndex,
) -> bool {
    let (Some(left), Some(right)) = (index_partition(a, x), index_partition(b, y)) else {
        return false;
    };
    let sort = match (&x.sort_key, &y.sort_key) {
        (Some(left), Some(right)) => may_overlap(a, left, b, right),
        _ => true,
    };
    sort && may_overlap(a, left, b, right)
}

/// Whether `left`, a template of `a`, and `right`, one of `b`, may render the same key, from
/// what each entity's fields write.
const fn may_overlap(
    a: &EntitySchema,
    left: &KeyTemplate,
    b: &EntitySchema,
    right: &KeyTemplate,
) -> bool {
    renderings_may_overlap(
        Rendering {
            template: left,
            fields: a.fields,
        },
        Rendering {
            template: right,
            fields: b.fields,
        },
    )
}
