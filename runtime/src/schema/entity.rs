//! An entity: the trait its derive implements (and `Versioned`, for one with a version field),
//! its schema (key templates, fields, indexes, schema version) and its templates and rule on
//! each secondary index.

use super::field::{FieldSchema, ManagedFields, UniqueSchema};
use super::table::{IndexSchema, Table};
// From its own file: `crate::item` imports the schema, and that would be a circle of three.
use crate::codec::Item;
use crate::key::{KeyError, KeyTemplate};
use crate::Key;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::any::Any;

/// The schema of entity `E`: [`Entity::SCHEMA`] under a name no field path can shadow (the
/// derive gives a field `schema` the path `E::SCHEMA`), for migration plans and coverage:
/// `db.admin().table_migration(&[schema_of::<Comment>()])`.
pub const fn schema_of<E: Entity>() -> &'static EntitySchema {
    E::SCHEMA
}

/// An item type stored in a table, declared with `#[derive(singletable::Entity)]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an entity",
    label = "not a `#[derive(singletable::Entity)]` type",
    note = "derive it with `#[derive(singletable::Entity, serde::Serialize, serde::Deserialize)]` and `#[dynamo(table = .., pk = \"..\")]`"
)]
pub trait Entity: Serialize + DeserializeOwned + Send + Sync + 'static {
    /// The table the entity lives in.
    type Table: Table;
    /// The entity's key templates.
    const SCHEMA: &'static EntitySchema;
    /// The state an update starts in (see [`crate::expr::state`]).
    #[doc(hidden)]
    type UpdateState;
    /// What decides whether a transaction the caller assembles takes an update: `Self` for
    /// an entity with unique values, `unique::AnyUpdate` for one without (see
    /// `unique::InTransaction`).
    #[doc(hidden)]
    type TransactionRule;

    /// Field number `field` of [`EntitySchema::fields`], if a key template or an index rule
    /// reads it: the one function the derive writes for keys, which the library's generic
    /// code renders every key from.
    #[doc(hidden)]
    fn key_input(&self, field: usize) -> Option<&dyn Any>;

    /// Renders this item's primary key.
    fn primary_key(&self) -> Result<Key<Self>, KeyError> {
        super::item_keys::primary_key(self)
    }

    /// Writes this item's secondary index key attributes into `item`, leaving out those of
    /// sparse indexes whose rule does not hold.
    fn write_index_keys(&self, item: &mut Item) -> Result<(), KeyError> {
        super::item_keys::write_index_keys(self, item)
    }
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

impl EntitySchema {
    /// The field with this Rust name.
    pub fn field(&self, name: &str) -> Option<&'static FieldSchema> {
        self.fields.get(self.field_number(name)?)
    }

    /// The number of the field with this Rust name in [`EntitySchema::fields`] (declaration
    /// order), as [`Entity::key_input`] takes it.
    pub(crate) fn field_number(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|field| field.name == name)
    }

    /// The fields of the primary key templates.
    pub fn primary_key_fields(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.primary_key_templates().flat_map(KeyTemplate::fields)
    }

    /// The partition key template, then the sort key template if there is one.
    pub(crate) fn primary_key_templates(&self) -> impl Iterator<Item = &KeyTemplate> + '_ {
        std::iter::once(&self.partition_key).chain(&self.sort_key)
    }
}

#[doc(hidden)]
/// How a rule reads its arguments: input number `n` of [`IndexRule::inputs`] as `argument(n)`.
pub type RuleArguments<'a> = dyn Fn(usize) -> Option<&'a dyn Any> + 'a;

#[doc(hidden)]
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

#[doc(hidden)]
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

impl EntityIndex {
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

#[doc(hidden)]
/// An entity with a `#[dynamo(version)]` field: what optimistic locking
/// ([`Update::expect_version`](crate::op::update::Update::expect_version)) needs, so that on
/// any other entity it does not compile instead of checking nothing. Implemented by the
/// `Entity` derive.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no version attribute, so `expect_version` would check nothing",
    label = "`expect_version` needs an entity with a `#[dynamo(version)]` field",
    note = "add `#[dynamo(version)] version: u64` to `{Self}` (every write then increments it), or guard the update with `.condition(..)` on the fields you read"
)]
pub trait Versioned {}

#[doc(hidden)]
/// An entity without a `#[dynamo(version)]` field: what a batch put needs, since
/// `BatchWriteItem` carries no condition to check a version with. Implemented by the `Entity`
/// derive. Neither marker has `Entity` as a supertrait: its impl would then repeat each error of
/// the entity's `Entity` impl (a missing serde derive is one error, not two).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has a version field, which a batch write cannot check",
    label = "a batch put carries no condition, so it would overwrite whatever version is stored",
    note = "put `{Self}` with `db.put(..)`, which checks its version and increments it, or in a `db.transaction()`; deleting it in a batch is fine"
)]
pub trait Unversioned {}
