//! The table as a [NoSQL Workbench](https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/workbench.html)
//! data model (format 3.0), to open in the Workbench's data modeler ("Import data model") and
//! see the design the code declares: its keys, every index with its projection, one facet per
//! entity with its key templates as the facet's key aliases (`TICKET#{id}` shows as
//! `TICKET#id`), the attributes with their types, sample items encoded exactly as a put writes
//! them (index keys, the entity and schema version attributes and managed fields included),
//! and the billing of the table's infrastructure code.
//!
//! The command line prints it with `workbench` (sample values from `--samples FILE`).
//! docs/workbench.md says how to open it, and what the format cannot state.

#[doc(hidden)]
pub mod format;
mod probe;

pub use crate::error::workbench::WorkbenchError;

use crate::admin::Admin;
use crate::op::table::CreateTable;
use crate::schema::{Entity, EntitySchema, IndexKind, IndexSchema, Table};
use crate::Item;
use format::{
    AttributeDefinition, Facet, KeyAttributeAlias, KeyAttributes, Metadata, Model, Projection,
    SecondaryIndex, TableModel,
};
use serde_json::Value;

impl<'db, T: Table> Admin<'db, T> {
    /// The table as a NoSQL Workbench data model: add entities and sample values, then
    /// [`to_json`](WorkbenchModel::to_json). See [`workbench`](crate::workbench).
    pub fn workbench_model(&self) -> WorkbenchModel<'db, T> {
        WorkbenchModel {
            admin: *self,
            facets: Vec::new(),
            billing: None,
        }
    }
}

/// A NoSQL Workbench data model of the table, being assembled: from
/// [`Admin::workbench_model`].
#[must_use = "a model does nothing until it is written with `to_json`"]
pub struct WorkbenchModel<'db, T> {
    admin: Admin<'db, T>,
    facets: Vec<FacetExport>,
    billing: Option<(String, Option<Value>)>,
}

/// One entity's facet, as it is assembled.
struct FacetExport {
    /// The entity, told apart by type as the library tells entities apart.
    entity: std::any::TypeId,
    schema: &'static EntitySchema,
    /// Attribute types as the entity's type reads them.
    probed: Vec<(&'static str, &'static str)>,
    samples: Vec<Item>,
}

impl<'db, T: Table> WorkbenchModel<'db, T> {
    /// Gives entity `E` a facet (once; [`sample`](Self::sample) gives one too).
    pub fn entity<E: Entity<Table = T>>(mut self) -> Self {
        self.facet::<E>();
        self
    }

    /// Adds `value` to its entity's facet, encoded as [`Db::put`](crate::Db::put) writes it.
    ///
    /// # Errors
    ///
    /// [`WorkbenchError::Sample`] when a put would refuse it.
    pub fn sample<E: Entity<Table = T>>(mut self, value: &E) -> Result<Self, WorkbenchError> {
        let item =
            self.admin
                .db
                .put(value)
                .written_item()
                .map_err(|error| WorkbenchError::Sample {
                    entity: E::SCHEMA.name,
                    source: Box::new(error),
                })?;
        self.facet::<E>().samples.push(item);
        Ok(self)
    }

    /// States the billing of the table's infrastructure code: on demand, or provisioned with
    /// its auto scaling (the table's `ProvisionedCapacitySettings`). On demand without it.
    pub fn infrastructure(mut self, create: &CreateTable) -> Self {
        self.billing = Some(create.workbench_billing());
        self
    }

    /// The model as the Workbench's JSON.
    ///
    /// # Errors
    ///
    /// [`WorkbenchError::MultiAttributeKey`] for an index the format cannot state;
    /// [`WorkbenchError::AttributeType`] for an attribute two entities store with two types.
    pub fn to_json(&self) -> Result<String, WorkbenchError> {
        let model = self.model()?;
        // A model of strings, numbers and maps always serializes.
        Ok(serde_json::to_string_pretty(&model).unwrap_or_default())
    }

    fn facet<E: Entity<Table = T>>(&mut self) -> &mut FacetExport {
        let at = match self
            .facets
            .iter()
            .position(|facet| facet.entity == std::any::TypeId::of::<E>())
        {
            Some(at) => at,
            None => {
                self.facets.push(FacetExport {
                    entity: std::any::TypeId::of::<E>(),
                    schema: E::SCHEMA,
                    probed: probe::attribute_types::<E>(),
                    samples: Vec::new(),
                });
                self.facets.len() - 1
            }
        };
        &mut self.facets[at]
    }

    fn model(&self) -> Result<Model, WorkbenchError> {
        let schema = T::SCHEMA;
        let table_name = self.admin.db.table_name().to_owned();
        let keys = [Some(schema.partition_key), schema.sort_key];
        let is_table_key = |name: &str| keys.contains(&Some(name));
        let types = Types::of(schema, &self.facets)?;
        let mut facets = Vec::new();
        for facet in &self.facets {
            let entity = facet.schema;
            let mut attributes = Vec::new();
            let names = (entity.fields.iter().map(|field| field.attribute))
                .chain(facet.samples.iter().flat_map(|item| sorted_names(item)))
                .chain([schema.entity_attribute, schema.schema_version_attribute]);
            for name in names {
                if !is_table_key(name) && !attributes.iter().any(|known| known == name) {
                    attributes.push(name.to_owned());
                }
            }
            facets.push(Facet {
                facet_name: entity.name.to_owned(),
                key_attribute_alias: KeyAttributeAlias {
                    partition_key_alias: alias(entity.partition_key.segments),
                    sort_key_alias: entity.sort_key.map(|key| alias(key.segments)),
                },
                table_data: facet.samples.iter().map(crate::wire::item).collect(),
                non_key_attributes: attributes,
                data_access: format::data_access(),
            });
        }
        let (global, local): (Vec<_>, Vec<_>) =
            (schema.indexes.iter()).partition(|index| index.kind == IndexKind::Global);
        // The table's own `CreateTable` (on demand) unless the infrastructure's was given.
        let (billing_mode, capacity) = match &self.billing {
            Some(billing) => billing.clone(),
            None => self.admin.create_table().workbench_billing(),
        };
        let table = TableModel {
            table_name: table_name.clone(),
            key_attributes: KeyAttributes {
                partition_key: string_attribute(schema.partition_key),
                sort_key: schema.sort_key.map(string_attribute),
            },
            non_key_attributes: (types.attributes.iter())
                .filter(|(name, _, _)| !is_table_key(name))
                .map(|(name, kind, _)| AttributeDefinition {
                    attribute_name: name.clone(),
                    attribute_type: (*kind).to_owned(),
                })
                .collect(),
            table_facets: facets,
            global_secondary_indexes: global.into_iter().map(index).collect::<Result<_, _>>()?,
            local_secondary_indexes: local.into_iter().map(index).collect::<Result<_, _>>()?,
            table_data: Vec::new(),
            data_access: format::data_access(),
            billing_mode,
            provisioned_capacity_settings: capacity,
        };
        Ok(Model {
            model_name: table_name,
            model_metadata: Metadata {
                author: String::new(),
                date_created: String::new(),
                date_last_modified: String::new(),
                description: format!("Exported by singletable from `{}`", schema.type_name),
                aws_service: "Amazon DynamoDB".to_owned(),
                version: "3.0".to_owned(),
            },
            data_model: vec![table],
        })
    }
}

/// The type of every attribute of the table: its keys', its indexes' keys', the library's, and
/// each entity's (from its samples first, as stored, then from its type), in that order.
struct Types {
    /// (attribute, type, the entity that gave it its type).
    attributes: Vec<(String, &'static str, &'static str)>,
}

impl Types {
    fn of(
        schema: &crate::schema::TableSchema,
        facets: &[FacetExport],
    ) -> Result<Self, WorkbenchError> {
        let mut types = Types {
            attributes: Vec::new(),
        };
        for index in schema.indexes {
            for key in index.partition_keys.iter().chain(index.sort_keys) {
                types.add(key.name, key.kind.code(), "");
            }
        }
        types.add(schema.entity_attribute, "S", "");
        types.add(schema.schema_version_attribute, "N", "");
        for facet in facets {
            let entity = facet.schema.name;
            for item in &facet.samples {
                for name in sorted_names(item) {
                    types.check(name, stored_type(&item[name]), entity)?;
                }
            }
            for (name, kind) in &facet.probed {
                if !facet.samples.iter().any(|item| item.contains_key(*name)) {
                    types.check(name, kind, entity)?;
                }
            }
        }
        Ok(types)
    }

    fn add(&mut self, name: &str, kind: &'static str, entity: &'static str) {
        if !self.attributes.iter().any(|(known, _, _)| known == name) {
            self.attributes.push((name.to_owned(), kind, entity));
        }
    }

    /// Adds `name` as `kind`, or checks it against the type it has. The library's attributes
    /// (no entity) are typed by the table.
    fn check(
        &mut self,
        name: &str,
        kind: &'static str,
        entity: &'static str,
    ) -> Result<(), WorkbenchError> {
        match self.attributes.iter().find(|(known, _, _)| known == name) {
            Some((_, first, first_entity)) if *first != kind && !first_entity.is_empty() => {
                Err(WorkbenchError::AttributeType {
                    attribute: name.to_owned(),
                    first,
                    first_entity,
                    second: kind,
                    second_entity: entity,
                })
            }
            Some(_) => Ok(()),
            None => {
                self.add(name, kind, entity);
                Ok(())
            }
        }
    }
}

/// The Workbench's alias of a key template: its constant text, and each field by its name
/// (`TICKET#{id}` is `TICKET#id`; a shard of `id`, `TEAM#{team}#{shard(id, 8)}`, is
/// `TEAM#team#shard`).
fn alias(segments: &[crate::key::Segment]) -> String {
    segments
        .iter()
        .map(|segment| match segment {
            crate::key::Segment::Literal(text) => *text,
            crate::key::Segment::Field { name, .. } => name,
            crate::key::Segment::Shard { .. } => "shard",
        })
        .collect()
}

fn string_attribute(name: &str) -> AttributeDefinition {
    AttributeDefinition {
        attribute_name: name.to_owned(),
        attribute_type: "S".to_owned(),
    }
}

/// An index as the format states it: one partition key attribute and at most one sort key
/// attribute.
fn index(index: &IndexSchema) -> Result<SecondaryIndex, WorkbenchError> {
    let single = |keys: &[crate::schema::KeyAttribute]| match keys {
        [key] => Ok(Some(AttributeDefinition {
            attribute_name: key.name.to_owned(),
            attribute_type: key.kind.code().to_owned(),
        })),
        [] => Ok(None),
        several => Err(WorkbenchError::MultiAttributeKey {
            index: index.name,
            attributes: several
                .iter()
                .map(|key| key.name)
                .collect::<Vec<_>>()
                .join(", "),
        }),
    };
    let partition_key =
        single(index.partition_keys)?.unwrap_or_else(|| string_attribute(index.partition_key));
    Ok(SecondaryIndex {
        index_name: index.name.to_owned(),
        key_attributes: KeyAttributes {
            partition_key,
            sort_key: single(index.sort_keys)?,
        },
        projection: Projection {
            projection_type: index.projection.projection_type().to_owned(),
            non_key_attributes: (index.projection.non_key_attributes().iter())
                .map(|name| (*name).to_owned())
                .collect(),
        },
    })
}

/// An item's attribute names in order, so that a model is the same from run to run.
fn sorted_names(item: &Item) -> Vec<&str> {
    let mut names: Vec<&str> = item.keys().map(String::as_str).collect();
    names.sort_unstable();
    names
}

/// The DynamoDB type of a stored value.
fn stored_type(value: &aws_sdk_dynamodb::types::AttributeValue) -> &'static str {
    use aws_sdk_dynamodb::types::AttributeValue as V;
    match value {
        V::S(_) => "S",
        V::N(_) => "N",
        V::B(_) => "B",
        V::Bool(_) => "BOOL",
        V::Null(_) => "NULL",
        V::M(_) => "M",
        V::L(_) => "L",
        V::Ss(_) => "SS",
        V::Ns(_) => "NS",
        V::Bs(_) => "BS",
        _ => "S",
    }
}
