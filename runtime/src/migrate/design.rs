//! The single-table design as a readable table: each entity's key templates on the table and
//! every index, i.e. the access patterns the table serves.

use crate::key::KeyTemplate;
use crate::schema::{EntitySchema, TableSchema};
use std::fmt;

/// One access pattern: an entity's keys on the table or on one index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesignRow {
    /// The entity.
    pub entity: &'static str,
    /// Its schema version.
    pub schema_version: u32,
    /// The index name, or `None` for the table itself.
    pub index: Option<&'static str>,
    /// The partition key attribute.
    pub partition_attribute: &'static str,
    /// The partition key template (a local index's is the table's), or `{field}` for an index
    /// that reads an item attribute as is.
    pub partition_template: String,
    /// The sort key attribute, if any.
    pub sort_attribute: Option<&'static str>,
    /// The sort key template (or `{field}`), if any.
    pub sort_template: Option<String>,
    /// The sparse index rule, if the entity is indexed only when it holds.
    pub rule: Option<&'static str>,
}

/// A table's entities and their keys on every index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Design {
    /// The table name.
    pub table: String,
    /// The declaration.
    pub schema: &'static TableSchema,
    /// One row per entity and index it has keys on, entities in the order given.
    pub rows: Vec<DesignRow>,
    /// Declared indexes none of the entities writes keys for.
    pub unused_indexes: Vec<&'static str>,
}

impl Design {
    /// The design of `schema` with `entities`, for table `table`.
    pub fn new(
        table: &str,
        schema: &'static TableSchema,
        entities: &[&'static EntitySchema],
    ) -> Self {
        let rows: Vec<DesignRow> = (entities.iter())
            .flat_map(|entity| {
                let spelling = Spelling {
                    template: |template: &KeyTemplate| template.source.to_owned(),
                    by_attribute: false,
                };
                entity_rows(schema, entity, spelling)
            })
            .collect();
        let unused_indexes = schema
            .indexes
            .iter()
            .filter(|index| !rows.iter().any(|row| row.index == Some(index.name)))
            .map(|index| index.name)
            .collect();
        Design {
            table: table.to_owned(),
            schema,
            rows,
            unused_indexes,
        }
    }
}

/// How [`entity_rows`] spells keys.
pub(crate) struct Spelling<S> {
    /// A template: as written, for the design's table, or in one spelling, for the record a
    /// plan compares ([`super::plan`]).
    pub(crate) template: S,
    /// Whether an index key read from an attribute as is shows the attribute (which a field's
    /// rename in Rust keeps) rather than the field.
    pub(crate) by_attribute: bool,
}

/// `entity`'s rows, spelled as `spelling` says.
pub(crate) fn entity_rows(
    schema: &'static TableSchema,
    entity: &'static EntitySchema,
    spelling: Spelling<impl Fn(&KeyTemplate) -> String>,
) -> Vec<DesignRow> {
    let spell = spelling.template;
    let mut rows = vec![DesignRow {
        entity: entity.name,
        schema_version: entity.schema_version,
        index: None,
        partition_attribute: schema.partition_key,
        partition_template: spell(&entity.partition_key),
        sort_attribute: schema.sort_key,
        sort_template: entity.sort_key.as_ref().map(&spell),
        rule: None,
    }];
    for entity_index in entity.indexes {
        let index = entity_index.index;
        // An index key read from an item attribute as is shows as that field alone.
        let as_is = |attribute: &str| {
            let field = (entity.fields.iter())
                .find(|field| field.attribute == attribute)
                .filter(|_| !spelling.by_attribute)
                .map_or(attribute, |field| field.name);
            format!("{{{field}}}")
        };
        let as_are = |attributes: &[&str]| {
            attributes
                .iter()
                .map(|attribute| as_is(attribute))
                .collect::<Vec<_>>()
                .join(", ")
        };
        // A local index shares the table's partition key, so it has no template of its own.
        let partition_template = match &entity_index.partition_key {
            Some(template) => spell(template),
            None if !entity_index.partition_attributes.is_empty() => {
                as_are(entity_index.partition_attributes)
            }
            None => spell(&entity.partition_key),
        };
        let sort_template = match &entity_index.sort_key {
            Some(template) => Some(spell(template)),
            None if !entity_index.sort_attributes.is_empty() => {
                Some(as_are(entity_index.sort_attributes))
            }
            None => None,
        };
        rows.push(DesignRow {
            entity: entity.name,
            schema_version: entity.schema_version,
            index: Some(index.name),
            partition_attribute: index.partition_key,
            partition_template,
            sort_attribute: index.sort_key,
            sort_template,
            rule: entity_index.rule.map(|rule| rule.source),
        });
    }
    rows
}

impl fmt::Display for Design {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let schema = self.schema;
        writeln!(
            f,
            "table {} ({}): key {}{}; entity in `{}`, schema version in `{}`",
            self.table,
            schema.type_name,
            schema.partition_key,
            schema
                .sort_key
                .map(|sk| format!(" + {sk}"))
                .unwrap_or_default(),
            schema.entity_attribute,
            schema.schema_version_attribute,
        )?;
        let header = [
            "ENTITY",
            "VERSION",
            "INDEX",
            "PARTITION KEY",
            "SORT KEY",
            "ONLY WHEN",
        ];
        let cells: Vec<[String; 6]> = self
            .rows
            .iter()
            .map(|row| {
                [
                    row.entity.to_owned(),
                    format!("v{}", row.schema_version),
                    row.index.unwrap_or("(table)").to_owned(),
                    format!("{} = {}", row.partition_attribute, row.partition_template),
                    match (row.sort_attribute, &row.sort_template) {
                        (Some(attribute), Some(template)) => format!("{attribute} = {template}"),
                        _ => String::new(),
                    },
                    row.rule.unwrap_or_default().to_owned(),
                ]
            })
            .collect();
        let mut widths = header.map(str::len);
        for row in &cells {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let line = |f: &mut fmt::Formatter<'_>, row: &[&str]| {
            let text: Vec<String> = row
                .iter()
                .zip(widths)
                .map(|(cell, width)| format!("{cell:<width$}"))
                .collect();
            writeln!(f, "{}", text.join("  ").trim_end())
        };
        line(f, &header)?;
        for row in &cells {
            let row: Vec<&str> = row.iter().map(String::as_str).collect();
            line(f, &row)?;
        }
        for index in &self.unused_indexes {
            writeln!(
                f,
                "(index {index} is declared but no entity has keys on it)"
            )?;
        }
        Ok(())
    }
}
