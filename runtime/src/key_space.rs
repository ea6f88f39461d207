//! The entities that share a table, checked pairwise the first time each renders a key in this
//! process: two whose primary key templates can render the same key could replace each
//! other's items, so the second of them fails with [`KeyError::Overlap`] instead.

use crate::key::{may_overlap, KeyError};
use crate::schema::{Entity, EntitySchema, Table, TableSchema};
use std::cell::RefCell;
use std::sync::{Mutex, PoisonError};

/// Every entity checked so far, with its table.
static CHECKED: Mutex<Vec<(&'static TableSchema, &'static EntitySchema)>> = Mutex::new(Vec::new());

thread_local! {
    /// The entities this thread has seen pass, so that a key costs no lock after the first.
    static PASSED: RefCell<Vec<*const EntitySchema>> = const { RefCell::new(Vec::new()) };
}

/// Checks `E` against the other entities of its table seen so far in this process.
pub(crate) fn check<E: Entity>() -> Result<(), KeyError> {
    let schema: &'static EntitySchema = E::SCHEMA;
    let pointer: *const EntitySchema = schema;
    if PASSED.with(|passed| passed.borrow().contains(&pointer)) {
        return Ok(());
    }
    let table: &'static TableSchema = <E::Table as Table>::SCHEMA;
    let mut checked = CHECKED.lock().unwrap_or_else(PoisonError::into_inner);
    if !checked.iter().any(|(_, seen)| std::ptr::eq(*seen, schema)) {
        let clash = checked.iter().find(|(other_table, other)| {
            std::ptr::eq(*other_table, table) && may_collide(schema, other)
        });
        if let Some((_, other)) = clash {
            return Err(KeyError::Overlap {
                entity: schema.name,
                templates: templates(schema),
                other: other.name,
                other_templates: templates(other),
                table: table.type_name,
            });
        }
        checked.push((table, schema));
    }
    drop(checked);
    PASSED.with(|passed| passed.borrow_mut().push(pointer));
    Ok(())
}

/// Two entities can render one primary key: both templates may meet.
fn may_collide(a: &EntitySchema, b: &EntitySchema) -> bool {
    let sort = match (&a.sort_key, &b.sort_key) {
        (Some(a), Some(b)) => may_overlap(a, b),
        _ => true,
    };
    sort && may_overlap(&a.partition_key, &b.partition_key)
}

fn templates(schema: &EntitySchema) -> String {
    match &schema.sort_key {
        Some(sort) => format!(
            "pk = {:?}, sk = {:?}",
            schema.partition_key.source, sort.source
        ),
        None => format!("pk = {:?}", schema.partition_key.source),
    }
}
