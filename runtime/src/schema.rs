//! Static descriptions of tables, indexes and entities, filled in by the derives.

use crate::item::Item;
pub(crate) use crate::key::same_name;
use crate::key::{KeyError, KeyTemplate, PartContext, PartError};
use crate::Key;

pub use crate::index_projection::{
    IndexProjection, ProjectionKind, ProjectsAll, ProjectsKeys, ProjectsSome,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::any::Any;

/// A DynamoDB table declared with `#[derive(singletable::Table)]`.
pub trait Table: Send + Sync + 'static {
    /// The table's key attributes and indexes.
    const SCHEMA: &'static TableSchema;
    /// The table's stream view as a type ([`crate::stream::NewAndOldImages`], ...), or
    /// `NoStream` when it declares none, so that reading a stream does not compile.
    type Stream;
}

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

/// How an entity's TTL field is stored; referenced by generated schemas.
#[derive(Debug, Clone, Copy)]
pub struct TtlField {
    /// The attribute (the table's TTL attribute).
    pub attribute: &'static str,
    /// The stored form of the value serde writes.
    pub stored: fn(
        aws_sdk_dynamodb::types::AttributeValue,
    ) -> Result<Option<aws_sdk_dynamodb::types::AttributeValue>, String>,
    /// The value serde reads, from the stored form.
    pub read: fn(
        aws_sdk_dynamodb::types::AttributeValue,
    ) -> Result<aws_sdk_dynamodb::types::AttributeValue, String>,
}

impl PartialEq for TtlField {
    fn eq(&self, other: &Self) -> bool {
        self.attribute == other.attribute
    }
}

impl Eq for TtlField {}

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
        if matches!(self.projection, IndexProjection::All)
            || str_eq(table.partition_key, name)
            || matches!(table.sort_key, Some(sort) if str_eq(sort, name))
        {
            return true;
        }
        let mut position = 0;
        while position < self.partition_keys.len() {
            if str_eq(self.partition_keys[position].name, name) {
                return true;
            }
            position += 1;
        }
        position = 0;
        while position < self.sort_keys.len() {
            if str_eq(self.sort_keys[position].name, name) {
                return true;
            }
            position += 1;
        }
        match self.projection {
            IndexProjection::Include(attributes) => {
                position = 0;
                while position < attributes.len() {
                    if str_eq(attributes[position], name) {
                        return true;
                    }
                    position += 1;
                }
                false
            }
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

/// Field types that can be an index key attribute read directly from the item
/// (`gsi2pk = author`), by the DynamoDB type serde writes them as.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an index key attribute",
    label = "index keys are strings, numbers or binary",
    note = "use a key template (`gsi2pk = \"MEMBER#{{author}}\"`) for other types"
)]
pub trait ScalarAttribute {
    /// The DynamoDB type.
    const TYPE: ScalarType;
}

macro_rules! scalar_attributes {
    ($kind:ident: $($ty:ty),*) => {$( impl ScalarAttribute for $ty { const TYPE: ScalarType = ScalarType::$kind; } )*};
}
scalar_attributes!(String: String);

/// An optional index key attribute: `None` is no attribute, so the item is not in the index
/// (a sparse index without a rule).
impl<T: ScalarAttribute> ScalarAttribute for Option<T> {
    const TYPE: ScalarType = T::TYPE;
}
scalar_attributes!(Number: u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, f32, f64);
#[cfg(feature = "chrono")]
scalar_attributes!(String: chrono::DateTime<chrono::Utc>, chrono::NaiveDate);
#[cfg(feature = "uuid")]
scalar_attributes!(String: uuid::Uuid);
#[cfg(feature = "ulid")]
scalar_attributes!(String: ulid::Ulid);

/// An entity with a `#[dynamo(version)]` field: what optimistic locking
/// ([`Update::expect_version`](crate::op::update::Update::expect_version)) needs, so that on
/// any other entity it does not compile instead of checking nothing. Implemented by the
/// `Entity` derive.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no version attribute, so `expect_version` would check nothing",
    label = "`expect_version` needs an entity with a `#[dynamo(version)]` field",
    note = "add `#[dynamo(version)] version: u64` to `{Self}` (every write then increments it), or guard the update with `.condition(..)` on the fields you read"
)]
pub trait Versioned: Entity {}

/// A table with a TTL attribute (`ttl = ".."`): what choosing whether reads show expired items
/// needs, so that on a table whose items never expire the choice does not compile instead of
/// changing nothing. Implemented by the `Table` derive.
#[diagnostic::on_unimplemented(
    message = "`{Self}` declares no TTL attribute, so none of its items expires and this choice would change nothing",
    label = "`include_expired` and `hide_expired` need a table with `ttl = \"..\"`",
    note = "declare `ttl = \"expires_at\"` on `{Self}` and `#[dynamo(ttl)]` on the entity's field, or leave the call out"
)]
pub trait ExpiringTable: Table {}

/// The schema of entity `E`: [`Entity::SCHEMA`] under a name no field path can shadow (the
/// derive gives a field `schema` the path `E::SCHEMA`), for migration plans and coverage:
/// `db.table_migration(&[schema_of::<Comment>()])`.
pub const fn schema_of<E: Entity>() -> &'static EntitySchema {
    E::SCHEMA
}

/// An item type stored in a table, declared with `#[derive(singletable::Entity)]`.
pub trait Entity: Serialize + DeserializeOwned + Send + Sync + 'static {
    /// The table the entity lives in.
    type Table: Table;
    /// The entity's key templates.
    const SCHEMA: &'static EntitySchema;
    /// The state an update starts in (see [`crate::expr::state`]).
    #[doc(hidden)]
    type UpdateState;

    /// Renders this item's primary key.
    fn primary_key(&self) -> Result<Key<Self>, KeyError>;

    /// Writes this item's secondary index key attributes into `item`, leaving out those of
    /// sparse indexes whose rule does not hold.
    fn write_index_keys(&self, item: &mut Item) -> Result<(), KeyError>;
}

/// An entity's key templates on the table and its indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntitySchema {
    /// The value of the table's entity attribute for this entity.
    pub name: &'static str,
    /// Partition key template.
    pub partition_key: KeyTemplate,
    /// Sort key template (exactly when the table has a sort key).
    pub sort_key: Option<KeyTemplate>,
    /// The indexes this entity writes keys for.
    pub indexes: &'static [EntityIndex],
    /// Every field, in declaration order (typed paths index into it).
    pub fields: &'static [FieldSchema],
    /// Fields the library maintains.
    pub managed: ManagedFields,
    /// Values no two items of the entity share (`#[dynamo(unique)]`, `unique(a, b)`), each
    /// kept by a sentinel item written in the same transaction as the item.
    pub unique: &'static [UniqueSchema],
    /// The entity's schema version (`#[dynamo(schema_version = N)]`, default 1), written into
    /// every item so that migrations can find items an older version wrote.
    pub schema_version: u32,
}

/// Fields maintained by the library, `#[dynamo(version)]`, `#[dynamo(created_at)]` and
/// `#[dynamo(updated_at)]`, and the field stored in DynamoDB's own form, `#[dynamo(ttl)]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ManagedFields {
    /// The optimistic-locking version attribute.
    pub version: Option<&'static str>,
    /// The largest version the version field's type holds (0 without one).
    pub version_max: u64,
    /// Set when the item is created.
    pub created_at: Option<ManagedTimestamp>,
    /// Set on every put and update.
    pub updated_at: Option<ManagedTimestamp>,
    /// The expiry time DynamoDB's time to live reads (`#[dynamo(ttl)]`).
    pub ttl: Option<TtlField>,
}

/// A timestamp attribute and how to write a time in the field's own type.
#[derive(Debug, Clone, Copy)]
pub struct ManagedTimestamp {
    /// The attribute.
    pub attribute: &'static str,
    /// A time as the field's attribute value.
    pub at: fn(
        std::time::SystemTime,
    ) -> Result<aws_sdk_dynamodb::types::AttributeValue, crate::EncodeError>,
}

impl PartialEq for ManagedTimestamp {
    fn eq(&self, other: &Self) -> bool {
        self.attribute == other.attribute
    }
}

impl Eq for ManagedTimestamp {}

impl EntitySchema {
    /// The field with this Rust name.
    pub fn field(&self, name: &str) -> Option<&'static FieldSchema> {
        self.fields.iter().find(|field| same_name(field.name, name))
    }

    /// The fields of the primary key templates.
    pub fn primary_key_fields(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.partition_key
            .fields()
            .chain(self.sort_key.iter().flat_map(|template| template.fields()))
    }
}

/// A value no two items of an entity share: one field, or several together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UniqueSchema {
    /// Its name in messages and sentinel keys: the field's name, or the fields' names joined
    /// by `+`.
    pub name: &'static str,
    /// The attributes that make up the value, in order.
    pub attributes: &'static [&'static str],
}

/// One field of an entity.
#[derive(Debug, Clone, Copy)]
pub struct FieldSchema {
    /// The Rust field name.
    pub name: &'static str,
    /// The attribute name (after serde's renames).
    pub attribute: &'static str,
    /// How to render and parse it, for fields used in key templates.
    pub key_part: Option<KeyPartFns>,
}

impl PartialEq for FieldSchema {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.attribute == other.attribute
    }
}

impl Eq for FieldSchema {}

/// Whether `template` has a field `field`, at compile time.
const fn template_reads(template: &Option<KeyTemplate>, field: &str) -> bool {
    let Some(template) = template else {
        return false;
    };
    let mut position = 0;
    while position < template.segments.len() {
        if let crate::key::Segment::Field { name, .. } = template.segments[position] {
            if str_eq(name, field) {
                return true;
            }
        }
        position += 1;
    }
    false
}

/// Whether `names` holds `name`, at compile time.
const fn contains_text(names: &[&str], name: &str) -> bool {
    let mut position = 0;
    while position < names.len() {
        if str_eq(names[position], name) {
            return true;
        }
        position += 1;
    }
    false
}

pub use crate::key::AnyValue;

/// Type-erased [`KeyPart`](crate::KeyPart) functions of a field, so index keys can be
/// recomputed from the values an update carries.
#[derive(Debug, Clone, Copy)]
pub struct KeyPartFns {
    /// Renders a value (of the field's type) into a key.
    pub render: fn(&dyn Any, PartContext, &mut String) -> Result<(), KeyError>,
    /// Parses the field's key text into a value of the field's type.
    pub parse: fn(&str, Option<u8>) -> Result<AnyValue, PartError>,
}

/// How a rule reads its arguments: input number `n` of [`IndexRule::inputs`] as `argument(n)`.
pub type RuleArguments<'a> = dyn Fn(usize) -> Option<&'a dyn Any> + 'a;

/// A sparse index rule: the fields it reads and the function deciding whether an item is
/// indexed, called with those fields' values in order.
#[derive(Debug, Clone, Copy)]
pub struct IndexRule {
    /// The rule as written, e.g. `Ticket::is_open(status)`.
    pub source: &'static str,
    /// The fields it reads.
    pub inputs: &'static [&'static str],
    /// Evaluates it, reading input number `n` (in [`IndexRule::inputs`]) as `argument(n)`;
    /// `None` if an argument is missing or of another type (cannot happen for generated
    /// schemas). Arguments are read through a function so that none is collected first.
    pub evaluate: for<'a> fn(&'a RuleArguments<'a>) -> Option<bool>,
}

impl PartialEq for IndexRule {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source && self.inputs == other.inputs
    }
}

impl Eq for IndexRule {}

/// An entity's templates on one secondary index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntityIndex {
    /// The index.
    pub index: &'static IndexSchema,
    /// Partition key template (`None` on a local index, which shares the table's, or when
    /// the index reads an attribute of the item directly).
    pub partition_key: Option<KeyTemplate>,
    /// Sort key template, if the index has a templated sort key.
    pub sort_key: Option<KeyTemplate>,
    /// The item attributes the index uses as its partition key as they are
    /// (`gsi2pk = author`, or `gsi4pk = [tenant, region]`); empty for a template.
    pub partition_attributes: &'static [&'static str],
    /// The item attributes the index uses as its sort key as they are; empty for a template.
    pub sort_attributes: &'static [&'static str],
    /// The rule that decides whether an item is indexed (`None`: always).
    pub rule: Option<IndexRule>,
}

/// The indexes of entity `E` that its field `F` (a marker type) is an input of, worked out at
/// compile time: bit `i` stands for `E::SCHEMA.indexes[i]`. An update tells from these which indexes
/// it changes without reading templates.
pub(crate) struct FieldIndexes<E, F>(std::marker::PhantomData<fn() -> (E, F)>);

impl<E: Entity, F: crate::expr::field_role::FieldOf<E>> FieldIndexes<E, F> {
    pub(crate) const MASK: u64 = E::SCHEMA.index_mask(F::INDEX);
}

/// The bit of the index at `position` in a [`FieldIndexes`] mask (none past 64 indexes,
/// which [`FieldIndexes`] refuses to compile).
pub(crate) const fn index_bit(position: usize) -> u64 {
    match 1u64.checked_shl(position as u32) {
        Some(bit) => bit,
        None => 0,
    }
}

impl EntitySchema {
    /// Bit `i` is set when field number `field` is an input of `indexes[i]` (one of its key
    /// templates, or its rule). Only evaluated at compile time ([`FieldIndexes`]): an entity
    /// with more than 64 indexes (DynamoDB allows 25), or a field number past its fields,
    /// fails to compile rather than leave an index unmaintained.
    const fn index_mask(&self, field: usize) -> u64 {
        assert!(self.indexes.len() <= 64, "an entity has at most 64 indexes");
        assert!(field < self.fields.len(), "no such field");
        let name = self.fields[field].name;
        let mut mask = 0;
        let mut position = 0;
        while position < self.indexes.len() {
            if self.indexes[position].reads(name) {
                mask |= index_bit(position);
            }
            position += 1;
        }
        mask
    }
}

impl EntityIndex {
    /// Whether `field` is one of [`EntityIndex::inputs`], at compile time.
    const fn reads(&self, field: &str) -> bool {
        let rule_inputs: &[&str] = match &self.rule {
            Some(rule) => rule.inputs,
            None => &[],
        };
        template_reads(&self.partition_key, field)
            || template_reads(&self.sort_key, field)
            || contains_text(rule_inputs, field)
    }

    /// Every field the index keys and the rule read.
    pub fn inputs(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.partition_key
            .iter()
            .chain(&self.sort_key)
            .flat_map(|template| template.fields())
            .chain(
                self.rule
                    .iter()
                    .flat_map(|rule| rule.inputs.iter().copied()),
            )
    }
}

/// Index markers: the type-level names of index slots, used by the derives to check that a
/// table declares the indexes an entity uses.
pub mod index {
    /// A secondary index slot.
    pub trait IndexSlot: 'static {
        /// Global or local.
        const KIND: super::IndexKind;
    }

    macro_rules! slots {
        ($kind:ident: $($slot:ident),*) => {$(
            #[doc = concat!("The `", stringify!($slot), "` index slot.")]
            #[allow(non_camel_case_types)]
            #[derive(Debug, Clone, Copy)]
            pub enum $slot {}
            impl IndexSlot for $slot {
                const KIND: super::IndexKind = super::IndexKind::$kind;
            }
        )*};
    }

    slots!(Global: gsi1, gsi2, gsi3, gsi4, gsi5, gsi6, gsi7, gsi8, gsi9, gsi10,
        gsi11, gsi12, gsi13, gsi14, gsi15, gsi16, gsi17, gsi18, gsi19, gsi20);
    slots!(Local: lsi1, lsi2, lsi3, lsi4, lsi5);
}

#[doc(hidden)]
/// Implemented by the `Table` derive for each index the table declares.
#[diagnostic::on_unimplemented(
    message = "table `{Self}` does not declare index `{I}`",
    label = "this template uses index `{I}`, which `{Self}` does not declare",
    note = "declare it on the table, e.g. `#[dynamo(gsi1(name = \"GSI1\", pk = \"GSI1PK\", sk = \"GSI1SK\"))]`"
)]
pub trait DeclaresIndex<I: index::IndexSlot>: Table {
    /// The index.
    const INDEX: &'static IndexSchema;
    /// [`WithSortKey`] or [`WithoutSortKey`].
    type SortKey;
    /// [`ProjectsAll`], [`ProjectsKeys`] or [`ProjectsSome`].
    type Projection: ProjectionKind;
}

pub use crate::design_check::{
    HasNoSortKey, HasSortKey, IndexSortKeyAbsent, IndexSortKeyDeclared, WithSortKey, WithoutSortKey,
};

#[doc(hidden)]
/// Byte-wise string equality usable in constants (the derive checks attribute names with it).
pub const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut position = 0;
    while position < a.len() {
        if a[position] != b[position] {
            return false;
        }
        position += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::Segment;

    const fn template(source: &'static str, segments: &'static [Segment]) -> KeyTemplate {
        KeyTemplate { source, segments }
    }

    const fn field(name: &'static str) -> FieldSchema {
        FieldSchema {
            name,
            attribute: name,
            key_part: None,
        }
    }

    const fn index(slot: &'static str) -> IndexSchema {
        IndexSchema {
            slot,
            name: slot,
            kind: IndexKind::Global,
            partition_key: slot,
            sort_key: None,
            partition_keys: &[],
            sort_keys: &[],
            projection: IndexProjection::All,
        }
    }

    static GSI1: IndexSchema = index("gsi1");
    static GSI2: IndexSchema = index("gsi2");

    /// Tickets: `id` and `team` feed GSI1 through its templates, `status` through its rule,
    /// `owner` feeds GSI2, `title` nothing.
    const TICKET: EntitySchema = EntitySchema {
        name: "Ticket",
        partition_key: template(
            "T#{id}",
            &[
                Segment::Literal("T#"),
                Segment::Field {
                    name: "id",
                    width: None,
                },
            ],
        ),
        sort_key: None,
        indexes: &[
            EntityIndex {
                index: &GSI1,
                partition_key: Some(template(
                    "TEAM#{team}",
                    &[
                        Segment::Literal("TEAM#"),
                        Segment::Field {
                            name: "team",
                            width: None,
                        },
                    ],
                )),
                sort_key: Some(template(
                    "{id}",
                    &[Segment::Field {
                        name: "id",
                        width: None,
                    }],
                )),
                partition_attributes: &[],
                sort_attributes: &[],
                rule: Some(IndexRule {
                    source: "is_open(status)",
                    inputs: &["status"],
                    evaluate: |_| Some(true),
                }),
            },
            EntityIndex {
                index: &GSI2,
                partition_key: Some(template(
                    "U#{owner}",
                    &[
                        Segment::Literal("U#"),
                        Segment::Field {
                            name: "owner",
                            width: None,
                        },
                    ],
                )),
                sort_key: None,
                partition_attributes: &[],
                sort_attributes: &[],
                rule: None,
            },
        ],
        fields: &[
            field("id"),
            field("team"),
            field("status"),
            field("owner"),
            field("title"),
        ],
        managed: ManagedFields {
            version: None,
            version_max: 0,
            created_at: None,
            updated_at: None,
            ttl: None,
        },
        unique: &[],
        schema_version: 1,
    };

    #[test]
    fn index_masks_name_the_indexes_a_field_feeds_at_compile_time() {
        const MASKS: [u64; 5] = [
            TICKET.index_mask(0),
            TICKET.index_mask(1),
            TICKET.index_mask(2),
            TICKET.index_mask(3),
            TICKET.index_mask(4),
        ];
        assert_eq!(MASKS, [0b01, 0b01, 0b01, 0b10, 0]);
        for (position, index) in TICKET.indexes.iter().enumerate() {
            for (number, field) in TICKET.fields.iter().enumerate() {
                let feeds = index.inputs().any(|input| input == field.name);
                assert_eq!(TICKET.index_mask(number) & index_bit(position) != 0, feeds);
            }
        }
    }
}
