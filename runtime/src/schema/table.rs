//! A table: the trait its derive implements, its key attributes, its secondary indexes and
//! their key attributes, and its stream view, as the static data the `Table` derive emits.

use super::index::IndexSlot;
use crate::const_text::{listed, str_eq};
use crate::index_projection::{IndexProjection, ProjectionKind};
use serde::Serialize;

/// A DynamoDB table declared with `#[derive(singletable::Table)]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a table",
    label = "not a `#[derive(singletable::Table)]` type",
    note = "an entity's `table = ..` names a unit struct with `#[derive(singletable::Table)]` and `#[dynamo(name = \"..\", pk = \"..\")]`"
)]
pub trait Table: Send + Sync + 'static {
    /// The table's key attributes and indexes.
    const SCHEMA: &'static TableSchema;
    /// The table's stream view as a type ([`crate::stream::NewAndOldImages`], ...), or
    /// `NoStream` when it declares none, so that reading a stream does not compile.
    type Stream;
}

#[doc(hidden)]
/// The `Stream` of a table that declares no stream: it is no
/// [`DeclaredStream`](crate::stream::DeclaredStream), so decoding its records does not compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoStream {}

/// A table's key attributes and indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableSchema {
    /// The Rust type name, for messages.
    pub type_name: &'static str,
    /// The default table name (a [`Db`](crate::Db) can override it).
    pub name: &'static str,
    /// Partition key attribute name.
    pub partition_key: &'static str,
    /// Sort key attribute name, if the table has one.
    pub sort_key: Option<&'static str>,
    /// The attribute that records which entity an item is.
    pub entity_attribute: &'static str,
    /// The attribute that records which schema version of its entity wrote an item.
    pub schema_version_attribute: &'static str,
    /// Secondary indexes.
    pub indexes: &'static [IndexSchema],
    /// The attribute DynamoDB's time to live reads (`ttl = "expires_at"`), if any.
    pub ttl_attribute: Option<&'static str>,
    /// The stream view (`stream = "new_and_old_images"`), if the table has a stream.
    pub stream: Option<StreamViewType>,
}

/// An attribute a table's declaration names outside its indexes, by what it is: each item's
/// keys, the entity and schema version the library records, and the expiry DynamoDB reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TableAttribute {
    PartitionKey,
    SortKey,
    Entity,
    SchemaVersion,
    Expiry,
}

impl TableSchema {
    /// What attribute `name` is to the table, if its declaration names it outside its
    /// indexes (whose key attributes [`IndexSchema::is_key_attribute`] tells).
    pub(crate) const fn attribute(&self, name: &str) -> Option<TableAttribute> {
        if str_eq(self.partition_key, name) {
            Some(TableAttribute::PartitionKey)
        } else if matches!(self.sort_key, Some(sort) if str_eq(sort, name)) {
            Some(TableAttribute::SortKey)
        } else if str_eq(self.entity_attribute, name) {
            Some(TableAttribute::Entity)
        } else if str_eq(self.schema_version_attribute, name) {
            Some(TableAttribute::SchemaVersion)
        } else if matches!(self.ttl_attribute, Some(ttl) if str_eq(ttl, name)) {
            Some(TableAttribute::Expiry)
        } else {
            None
        }
    }
}

/// What each stream record carries besides the keys: DynamoDB's `StreamViewType` (and
/// serialized by its name there, `NEW_AND_OLD_IMAGES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum StreamViewType {
    /// The item after and before the change.
    NewAndOldImages,
    /// The item after the change.
    NewImage,
    /// The item before the change.
    OldImage,
    /// Only the key attributes.
    KeysOnly,
}

impl StreamViewType {
    /// DynamoDB's name for it (`NEW_AND_OLD_IMAGES`).
    pub fn as_str(self) -> &'static str {
        match self {
            StreamViewType::NewAndOldImages => "NEW_AND_OLD_IMAGES",
            StreamViewType::NewImage => "NEW_IMAGE",
            StreamViewType::OldImage => "OLD_IMAGE",
            StreamViewType::KeysOnly => "KEYS_ONLY",
        }
    }

    pub(crate) fn sdk(self) -> aws_sdk_dynamodb::types::StreamViewType {
        aws_sdk_dynamodb::types::StreamViewType::from(self.as_str())
    }
}

impl std::fmt::Display for StreamViewType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[doc(hidden)]
/// A table with a TTL attribute (`ttl = ".."`): what choosing whether reads show expired items
/// needs, so that on a table whose items never expire the choice does not compile instead of
/// changing nothing. Implemented by the `Table` derive.
#[diagnostic::on_unimplemented(
    message = "`{Self}` declares no TTL attribute, so none of its items expires and this choice would change nothing",
    label = "`include_expired` and `hide_expired` need a table with `ttl = \"..\"`",
    note = "declare `ttl = \"expires_at\"` on `{Self}` and `#[dynamo(ttl)]` on the entity's field, or leave the call out"
)]
pub trait ExpiringTable: Table {}

/// Whether an index is global or local.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexKind {
    /// A global secondary index: its own partition key; eventually consistent reads only.
    Global,
    /// A local secondary index: the table's partition key, another sort key.
    Local,
}

/// A secondary index of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexSchema {
    /// How entity templates refer to it (`gsi1`, `lsi1`).
    pub slot: &'static str,
    /// The index name in DynamoDB (`GSI1`).
    pub name: &'static str,
    /// Global or local.
    pub kind: IndexKind,
    /// Partition key attribute (for a local index, the table's).
    pub partition_key: &'static str,
    /// Sort key attribute, if any.
    pub sort_key: Option<&'static str>,
    /// Every partition key attribute with its type, in order: one, or up to four for a
    /// multi-attribute key (`partition_key` is the first).
    pub partition_keys: &'static [KeyAttribute],
    /// Every sort key attribute with its type, in order: none, one, or up to four.
    pub sort_keys: &'static [KeyAttribute],
    /// What the index holds besides the keys.
    pub projection: IndexProjection,
}

impl IndexSchema {
    /// Every key attribute, partition then sort.
    pub fn key_attributes(&self) -> impl Iterator<Item = &'static KeyAttribute> {
        self.partition_keys.iter().chain(self.sort_keys)
    }

    /// Whether a read of the index returns attribute `name` of the items it holds: every
    /// attribute of an `ALL` index; otherwise the table's and the index's key attributes, and
    /// an `INCLUDE` index's listed ones.
    pub const fn holds(&self, table: &TableSchema, name: &str) -> bool {
        matches!(self.projection, IndexProjection::All)
            || str_eq(table.partition_key, name)
            || matches!(table.sort_key, Some(sort) if str_eq(sort, name))
            || self.is_key_attribute(name)
            || self.includes(name)
    }

    /// Whether `name` is one of the index's key attributes.
    pub(crate) const fn is_key_attribute(&self, name: &str) -> bool {
        let mut position = 0;
        while position < self.partition_keys.len() + self.sort_keys.len() {
            let key = if position < self.partition_keys.len() {
                &self.partition_keys[position]
            } else {
                &self.sort_keys[position - self.partition_keys.len()]
            };
            if str_eq(key.name, name) {
                return true;
            }
            position += 1;
        }
        false
    }

    /// Whether the table lists `name` in the index's `INCLUDE` projection.
    pub(crate) const fn includes(&self, name: &str) -> bool {
        match self.projection {
            IndexProjection::Include(attributes) => listed(attributes, name),
            _ => false,
        }
    }
}

/// One key attribute of an index and its DynamoDB type (templates render strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyAttribute {
    /// The attribute name.
    pub name: &'static str,
    /// Its type.
    pub kind: ScalarType,
}

/// A key attribute's DynamoDB type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarType {
    /// `S`
    String,
    /// `N`
    Number,
    /// `B`
    Binary,
}

impl ScalarType {
    /// DynamoDB's code for it.
    pub fn code(self) -> &'static str {
        match self {
            ScalarType::String => "S",
            ScalarType::Number => "N",
            ScalarType::Binary => "B",
        }
    }
}

#[doc(hidden)]
/// Implemented by the `Table` derive for each index the table declares.
#[diagnostic::on_unimplemented(
    message = "table `{Self}` does not declare index `{I}`",
    label = "this template uses index `{I}`, which `{Self}` does not declare",
    note = "declare it on the table, e.g. `#[dynamo(gsi1(name = \"GSI1\", pk = \"GSI1PK\", sk = \"GSI1SK\"))]`"
)]
pub trait DeclaresIndex<I: IndexSlot>: Table {
    /// The index.
    const INDEX: &'static IndexSchema;
    /// [`WithSortKey`](super::WithSortKey) or [`WithoutSortKey`](super::WithoutSortKey).
    type SortKey;
    /// [`ProjectsAll`](super::ProjectsAll), [`ProjectsKeys`](super::ProjectsKeys) or
    /// [`ProjectsSome`](super::ProjectsSome).
    type Projection: ProjectionKind;
}
