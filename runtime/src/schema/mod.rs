//! Static descriptions of tables, indexes and entities, filled in by the derives: a table with
//! its key attributes, secondary indexes and stream; the index slots a template names; an
//! entity with its templates on each index; its fields and their roles; and which indexes each
//! field feeds.

// One concept a file: `table.rs`, `index.rs` (the slots), `entity.rs`, `field.rs` and
// `field_indexes.rs`. What a user reads of a schema is public here; what only the derives
// fill in is not, and generated code reaches it through `__private`.

pub(crate) mod entity;
pub(crate) mod field;
pub(crate) mod field_indexes;
pub mod index;
pub(crate) mod item_keys;
pub(crate) mod primary_key;
mod reserved;
pub(crate) mod space;
pub(crate) mod table;

pub use crate::index_projection::IndexProjection;
pub use entity::{schema_of, Entity, EntitySchema};
pub use table::{
    IndexKind, IndexSchema, KeyAttribute, ScalarType, StreamViewType, Table, TableSchema,
};

// The rules compile errors name: public (so an error names them by a path a user can read)
// but undocumented; they are no API to write against.
#[doc(hidden)]
pub use crate::design_check::{
    HasNoSortKey, HasSortKey, IndexSortKeyAbsent, IndexSortKeyDeclared, WithSortKey, WithoutSortKey,
};
#[doc(hidden)]
pub use entity::{Unversioned, Versioned};
#[doc(hidden)]
pub use table::{DeclaresIndex, ExpiringTable, NoStream};

// Derive data: reached by generated code through `__private`, and by this crate here.
pub(crate) use crate::const_text::str_eq;
pub(crate) use crate::index_projection::{ProjectionKind, ProjectsAll, ProjectsKeys, ProjectsSome};
pub(crate) use crate::key::AnyValue;
pub(crate) use entity::{EntityIndex, IndexRule};
pub(crate) use field::{FieldSchema, TtlField, UniqueSchema};
pub(crate) use field_indexes::index_bit;
