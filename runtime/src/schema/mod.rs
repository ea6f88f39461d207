//! Static descriptions of tables, indexes and entities, filled in by the derives: a table with
//! its key attributes, secondary indexes and stream; the index slots a template names; an
//! entity with its templates on each index; its fields and their roles; and which indexes each
//! field feeds.

// One concept a file: `table.rs`, `index.rs` (the slots), `entity.rs`, `field.rs` and
// `field_indexes.rs`. Everything is re-exported here, under the paths the derives emit.

pub(crate) mod entity;
pub(crate) mod field;
pub(crate) mod field_indexes;
pub mod index;
pub(crate) mod table;

pub(crate) use crate::key::same_name;
pub use entity::{
    schema_of, Entity, EntityIndex, EntitySchema, IndexRule, RuleArguments, Versioned,
};
pub use field::{
    FieldSchema, KeyPartFns, ManagedFields, ManagedTimestamp, ScalarAttribute, TtlField,
    UniqueSchema,
};
pub(crate) use field_indexes::{index_bit, FieldIndexes};
pub use table::{
    DeclaresIndex, ExpiringTable, IndexKind, IndexSchema, KeyAttribute, NoStream, ScalarType,
    StreamViewType, Table, TableSchema,
};

pub use crate::index_projection::{
    IndexProjection, ProjectionKind, ProjectsAll, ProjectsKeys, ProjectsSome,
};

pub use crate::key::AnyValue;

pub use crate::design_check::{
    HasNoSortKey, HasSortKey, IndexSortKeyAbsent, IndexSortKeyDeclared, WithSortKey, WithoutSortKey,
};

#[doc(hidden)]
pub use crate::const_text::str_eq;
