//! A model's table read into drafts of the Rust declarations: the table with its indexes, and
//! an entity per shape of keys (per facet, when the model has facets), with its fields, key
//! templates, indexes, sample items and the decisions left to the user.

use super::names;
use super::shape::{self, Piece, Position, ShapeId, Template};
use super::values::{kind_of, Kind};
use super::ImportError;
use serde_json::Value;
use singletable_runtime::workbench::format::{Facet, Projection, TableModel};

pub(super) struct TableDraft {
    pub(super) type_name: String,
    pub(super) name: String,
    pub(super) partition_key: String,
    pub(super) sort_key: Option<String>,
    pub(super) indexes: Vec<IndexDraft>,
    pub(super) entities: Vec<EntityDraft>,
    pub(super) capacity: Option<Capacity>,
    /// Decisions and differences that concern the whole table.
    pub(super) notes: Vec<String>,
}

pub(super) struct IndexDraft {
    /// `gsi1`, `lsi1`, ..
    pub(super) slot: String,
    pub(super) name: String,
    /// The partition key attribute and type; `None` for a local index (the table's).
    pub(super) partition: Option<(String, String)>,
    pub(super) sort: Option<(String, String)>,
    pub(super) projection: Projection,
}

/// Provisioned capacity, with auto scaling if the model has it.
pub(super) struct Capacity {
    pub(super) read: u64,
    pub(super) write: u64,
    /// Most read and write units, and the target utilization.
    pub(super) scaling: Option<(u64, u64, u64)>,
}

pub(super) struct EntityDraft {
    pub(super) type_name: String,
    pub(super) facet: Option<String>,
    pub(super) partition: Template,
    pub(super) sort: Option<Template>,
    pub(super) fields: Vec<FieldDraft>,
    /// Each index the entity's items are in: its slot, and how it writes the index's
    /// partition key (none for a local index, which has the table's) and sort key.
    pub(super) indexes: Vec<(String, Option<IndexKey>, Option<IndexKey>)>,
    pub(super) samples: Vec<Sample>,
    pub(super) notes: Vec<String>,
}

/// How an entity writes an index key: a template (an index on the table's keys) or a field.
pub(super) enum IndexKey {
    Template(Template),
    Field(String),
}

pub(super) struct FieldDraft {
    pub(super) rust: String,
    pub(super) attribute: String,
    pub(super) kind: Kind,
    pub(super) optional: bool,
    /// Only in the keys: the samples do not hold it as an attribute.
    pub(super) key_only: bool,
}

pub(super) struct Sample {
    pub(super) item: Value,
    /// Why the test leaves it out.
    pub(super) left_out: Option<String>,
}

/// The model's table as drafts.
pub(super) fn table(model: &TableModel) -> Result<TableDraft, ImportError> {
    let partition_key = model.key_attributes.partition_key.attribute_name.clone();
    let sort_key = model
        .key_attributes
        .sort_key
        .as_ref()
        .map(|key| key.attribute_name.clone());
    for key in [
        Some(&model.key_attributes.partition_key),
        model.key_attributes.sort_key.as_ref(),
    ]
    .into_iter()
    .flatten()
    {
        if key.attribute_type != "S" {
            return Err(ImportError::KeyType {
                table: model.table_name.clone(),
                attribute: key.attribute_name.clone(),
                found: key.attribute_type.clone(),
            });
        }
    }
    let mut notes = Vec::new();
    let items: Vec<(Option<&Facet>, &Value)> = (model.table_facets.iter())
        .flat_map(|facet| facet.table_data.iter().map(move |item| (Some(facet), item)))
        .chain(model.table_data.iter().map(|item| (None, item)))
        .collect();
    let key_of = |item: &Value, attribute: &str| {
        item.get(attribute)
            .and_then(|value| value.get("S"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let mut keyed = Vec::new();
    for (facet, item) in items {
        let partition = key_of(item, &partition_key);
        let sort = sort_key.as_deref().map(|sort_key| key_of(item, sort_key));
        match (partition, sort) {
            (Some(partition), None) => keyed.push((facet, item, partition, None)),
            (Some(partition), Some(Some(sort))) => keyed.push((facet, item, partition, Some(sort))),
            _ => notes.push(format!(
                "left out, for lack of a string key: the sample item {}",
                serde_json::to_string(item).unwrap_or_default()
            )),
        }
    }
    let partition_separator =
        shape::separator(keyed.iter().map(|(_, _, partition, _)| partition.as_str()));
    let sort_separator =
        shape::separator(keyed.iter().filter_map(|(_, _, _, sort)| sort.as_deref()));
    // Groups in the order the model first shows them.
    let mut groups: Vec<(GroupId<'_>, Vec<Member<'_>>)> = Vec::new();
    for (facet, item, partition, sort) in &keyed {
        let pieces = shape::pieces(partition, partition_separator);
        let sort_pieces = sort
            .as_deref()
            .map(|sort| shape::pieces(sort, sort_separator));
        let id = (
            facet.map(|facet| facet.facet_name.as_str()),
            shape::shape_of(&pieces, sort_pieces.as_deref()),
        );
        let entry = (*item, partition.as_str(), sort.as_deref());
        match groups.iter_mut().find(|(known, _)| *known == id) {
            Some((_, members)) => members.push(entry),
            None => groups.push((id, vec![entry])),
        }
    }
    let indexes = indexes(model);
    let mut entities: Vec<EntityDraft> = Vec::new();
    for ((facet_name, id), members) in &groups {
        let facet = model
            .table_facets
            .iter()
            .find(|facet| Some(facet.facet_name.as_str()) == *facet_name);
        let shapes_of_facet = groups
            .iter()
            .filter(|((other, _), _)| other == facet_name)
            .count();
        let type_name = entity_name(facet_name, shapes_of_facet, id, &entities, model);
        let context = Context {
            partition_key: &partition_key,
            sort_key: sort_key.as_deref(),
            separators: (partition_separator, sort_separator),
            facet,
        };
        entities.push(entity(type_name, &context, members, &indexes));
    }
    Ok(TableDraft {
        type_name: table_type_name(&model.table_name, &entities),
        name: model.table_name.clone(),
        partition_key,
        sort_key,
        indexes,
        entities,
        capacity: capacity(model, &mut notes),
        notes,
    })
}

/// What tells one entity's items apart: their facet, if any, and the shape of their keys.
type GroupId<'a> = (Option<&'a str>, ShapeId);

/// One sample item of a group, with its partition and sort key.
type Member<'a> = (&'a Value, &'a str, Option<&'a str>);

struct Context<'a> {
    partition_key: &'a str,
    sort_key: Option<&'a str>,
    separators: (Option<char>, Option<char>),
    facet: Option<&'a Facet>,
}

fn table_type_name(name: &str, entities: &[EntityDraft]) -> String {
    let mut type_name = names::type_name(name);
    if entities.iter().any(|entity| entity.type_name == type_name) {
        type_name.push_str("Table");
    }
    type_name
}

/// The facet's name when it has one shape; else the facet's name and the keys' tags.
fn entity_name(
    facet: &Option<&str>,
    shapes_of_facet: usize,
    id: &ShapeId,
    known: &[EntityDraft],
    model: &TableModel,
) -> String {
    let tags = [
        id.partition.0.as_deref(),
        id.sort.as_ref().and_then(|sort| sort.0.as_deref()),
    ];
    // A tag that repeats the facet's name adds nothing to it (`MEMBER` in facet `Member`).
    let repeats = |tag: &&str| facet.is_some_and(|facet| facet.eq_ignore_ascii_case(tag));
    let tags: String = (tags.into_iter().flatten())
        .filter(|tag| !(shapes_of_facet > 1 && repeats(tag)))
        .map(names::type_name)
        .collect();
    let base = match facet {
        Some(facet) if shapes_of_facet == 1 => names::type_name(facet),
        Some(facet) => format!("{}{tags}", names::type_name(facet)),
        None if tags.is_empty() => "Item".to_owned(),
        None => tags,
    };
    let taken = |name: &str| {
        known.iter().any(|entity| entity.type_name == name)
            || names::type_name(&model.table_name) == name
    };
    let mut name = base.clone();
    let mut number = 2;
    while taken(&name) {
        name = format!("{base}{number}");
        number += 1;
    }
    name
}

fn indexes(model: &TableModel) -> Vec<IndexDraft> {
    let key = |definition: &singletable_runtime::workbench::format::AttributeDefinition| {
        (
            definition.attribute_name.clone(),
            definition.attribute_type.clone(),
        )
    };
    let global = model
        .global_secondary_indexes
        .iter()
        .enumerate()
        .map(|(at, index)| IndexDraft {
            slot: format!("gsi{}", at + 1),
            name: index.index_name.clone(),
            partition: Some(key(&index.key_attributes.partition_key)),
            sort: index.key_attributes.sort_key.as_ref().map(key),
            projection: index.projection.clone(),
        });
    let local = model
        .local_secondary_indexes
        .iter()
        .enumerate()
        .map(|(at, index)| IndexDraft {
            slot: format!("lsi{}", at + 1),
            name: index.index_name.clone(),
            partition: None,
            sort: index.key_attributes.sort_key.as_ref().map(key),
            projection: index.projection.clone(),
        });
    global.chain(local).collect()
}

fn capacity(model: &TableModel, notes: &mut Vec<String>) -> Option<Capacity> {
    if model.billing_mode != "PROVISIONED" {
        return None;
    }
    let settings = model.provisioned_capacity_settings.as_ref()?;
    let units = |path: &[&str]| {
        path.iter()
            .try_fold(settings, |value, key| value.get(key))
            .and_then(Value::as_u64)
    };
    let read = units(&["ProvisionedThroughput", "ReadCapacityUnits"])?;
    let write = units(&["ProvisionedThroughput", "WriteCapacityUnits"])?;
    let scaling = match (
        units(&["AutoScalingRead", "ScalableTargetRequest", "MaxCapacity"]),
        units(&["AutoScalingWrite", "ScalableTargetRequest", "MaxCapacity"]),
        units(&[
            "AutoScalingWrite",
            "ScalingPolicyConfiguration",
            "TargetValue",
        ]),
    ) {
        (Some(max_read), Some(max_write), Some(target)) => {
            for (side, provisioned) in [("Read", read), ("Write", write)] {
                let least = units(&[
                    &format!("AutoScaling{side}"),
                    "ScalableTargetRequest",
                    "MinCapacity",
                ]);
                if least.is_some_and(|least| least != provisioned) {
                    notes.push(format!(
                        "auto scaling of {side} capacity starts at the provisioned {provisioned} units, not \
                         the model's MinCapacity {}: the library scales from the capacity it provisions",
                        least.unwrap_or_default()
                    ));
                }
            }
            Some((max_read.max(read), max_write.max(write), target))
        }
        _ => None,
    };
    Some(Capacity {
        read,
        write,
        scaling,
    })
}

/// The entity of one shape's items.
fn entity(
    type_name: String,
    context: &Context<'_>,
    members: &[Member<'_>],
    indexes: &[IndexDraft],
) -> EntityDraft {
    let items: Vec<&Value> = members.iter().map(|(item, _, _)| *item).collect();
    let mut notes = Vec::new();
    let mut fields: Vec<FieldDraft> = Vec::new();
    let mut undecided: Vec<(String, String)> = Vec::new();
    for attribute in attribute_names(&items, context) {
        let values: Vec<&Value> = items
            .iter()
            .filter_map(|item| item.get(&attribute))
            .collect();
        match kind_of(&values) {
            Ok(kind) => fields.push(FieldDraft {
                rust: unique_name(&names::field(&attribute), &fields),
                optional: values.len() < items.len(),
                attribute,
                kind,
                key_only: false,
            }),
            Err(why) => {
                notes.push(format!(
                    "`{attribute}` needs a decision: {why}; it is not a field yet"
                ));
                undecided.push((attribute, why));
            }
        }
    }
    let alias = context.facet.map(|facet| &facet.key_attribute_alias);
    let partition = template(
        &members
            .iter()
            .map(|(_, partition, _)| *partition)
            .collect::<Vec<_>>(),
        context.separators.0,
        alias.map(|alias| alias.partition_key_alias.as_str()),
        context.partition_key,
        &items,
        &mut fields,
        &mut notes,
    );
    let sort = context.sort_key.map(|sort_key| {
        let keys: Vec<&str> = members.iter().filter_map(|(_, _, sort)| *sort).collect();
        template(
            &keys,
            context.separators.1,
            alias.and_then(|alias| alias.sort_key_alias.as_deref()),
            sort_key,
            &items,
            &mut fields,
            &mut notes,
        )
    });
    let mut entity = EntityDraft {
        type_name,
        facet: context.facet.map(|facet| facet.facet_name.clone()),
        partition,
        sort,
        fields,
        indexes: Vec::new(),
        samples: items
            .iter()
            .map(|item| Sample {
                item: (*item).clone(),
                left_out: undecided
                    .iter()
                    .find(|(attribute, _)| item.get(attribute).is_some())
                    .map(|(attribute, why)| format!("its `{attribute}` needs a decision: {why}")),
            })
            .collect(),
        notes,
    };
    for index in indexes {
        // `None`: the entity's items are not in the index.
        let partition = match &index.partition {
            Some(key) => index_key(&entity, context, key).map(Some),
            None => Some(None),
        };
        let sort = match &index.sort {
            Some(key) => index_key(&entity, context, key).map(Some),
            None => Some(None),
        };
        if let (Some(partition), Some(sort)) = (partition, sort) {
            entity.indexes.push((index.slot.clone(), partition, sort));
        }
    }
    entity
}

/// Every attribute the items hold but the table's keys, in the order they first appear.
fn attribute_names(items: &[&Value], context: &Context<'_>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for item in items {
        for name in item
            .as_object()
            .into_iter()
            .flat_map(|object| object.keys())
        {
            let key = name == context.partition_key || Some(name.as_str()) == context.sort_key;
            if !key && !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    names
}

/// How the entity writes one index key attribute: the template of the table key it is, or the
/// field stored under it (of the index key's type); `None` when its items do not hold it, and
/// are then not in the index.
fn index_key(
    entity: &EntityDraft,
    context: &Context<'_>,
    (attribute, kind): &(String, String),
) -> Option<IndexKey> {
    if attribute == context.partition_key {
        return Some(IndexKey::Template(entity.partition.clone()));
    }
    if Some(attribute.as_str()) == context.sort_key {
        return entity.sort.clone().map(IndexKey::Template);
    }
    let field =
        (entity.fields.iter()).find(|field| field.attribute == *attribute && !field.key_only)?;
    let fits = matches!(
        (kind.as_str(), &field.kind),
        ("S", Kind::String) | ("N", Kind::Integer | Kind::Float)
    );
    fits.then(|| IndexKey::Field(field.rust.clone()))
}

/// The template that renders every one of `keys`, adding the fields it needs.
fn template(
    keys: &[&str],
    separator: Option<char>,
    alias: Option<&str>,
    key_attribute: &str,
    items: &[&Value],
    fields: &mut Vec<FieldDraft>,
    notes: &mut Vec<String>,
) -> Template {
    let split: Vec<Vec<&str>> = keys
        .iter()
        .map(|key| shape::pieces(key, separator))
        .collect();
    let width = split.first().map_or(0, Vec::len);
    let positions: Vec<Position<'_>> = (0..width)
        .map(|at| Position {
            values: split
                .iter()
                .filter_map(|pieces| pieces.get(at).copied())
                .collect(),
        })
        .collect();
    let constants: Vec<Option<&str>> = positions.iter().map(Position::constant).collect();
    let variables = constants
        .iter()
        .filter(|constant| constant.is_none())
        .count();
    let alias_names: Vec<&str> = alias
        .map(|alias| {
            shape::pieces(alias, separator)
                .into_iter()
                .filter(|name| !name.is_empty())
                .collect()
        })
        .unwrap_or_default();
    // An alias names the fields when it names each one, in order.
    if alias.is_some() && alias_names.len() != variables && variables > 0 {
        notes.push(format!(
            "`{key_attribute}`'s alias `{}` names {} part{}, and the key has {variables}: its fields are \
             named from the key",
            alias.unwrap_or_default(),
            alias_names.len(),
            if alias_names.len() == 1 { "" } else { "s" }
        ));
    }
    let alias_names = (alias_names.len() == variables).then_some(alias_names);
    let mut pieces = Vec::new();
    let mut variable = 0;
    for (at, position) in positions.iter().enumerate() {
        if let Some(constant) = constants[at] {
            if at > 0 && items.len() == 1 {
                notes.push(format!(
                    "`{constant}` in `{key_attribute}` is taken as constant text from one sample; make \
                     it a field if it varies"
                ));
            }
            pieces.push(Piece::Constant(constant.to_owned()));
            continue;
        }
        let same = shape::attributes_equal_to(items, &position.values);
        let stored = same.iter().find_map(|attribute| {
            fields
                .iter()
                .find(|field| field.attribute == *attribute && !field.key_only)
        });
        let name = match stored {
            Some(field) => field.rust.clone(),
            None => {
                let wanted = match (
                    &alias_names,
                    at.checked_sub(1).and_then(|before| constants[before]),
                ) {
                    (Some(alias), _) => names::field(alias[variable]),
                    (None, Some(word)) => names::field(word),
                    (None, None) => names::field(key_attribute),
                };
                let clashes = |name: &str| {
                    (fields.iter()).any(|field| field.rust == name || field.attribute == name)
                };
                // A name another key already gave a field: this key's own (`child_suuid` in
                // `child#suuid#..` beside `suuid#{suuid}`).
                let own = (constants.first().copied().flatten())
                    .map(|tag| format!("{}_{wanted}", names::field(tag)))
                    .filter(|own| *own != wanted && !clashes(own));
                let key_field = (fields.iter()).any(|field| field.rust == wanted && field.key_only);
                let name = if let Some(own) = own.filter(|_| clashes(&wanted) && key_field) {
                    own
                } else if clashes(&wanted) {
                    let renamed = unique_name(&format!("{wanted}_key"), fields);
                    if let Some(attribute) =
                        (fields.iter()).find(|field| field.rust == wanted && !field.key_only)
                    {
                        notes.push(format!(
                            "`{key_attribute}` holds a `{wanted}` that is not the item's `{}` attribute \
                             (they differ in the samples): it is the field `{renamed}`, read from the key; \
                             decide whether the key should render the attribute",
                            attribute.attribute
                        ));
                    }
                    renamed
                } else {
                    wanted
                };
                fields.push(FieldDraft {
                    rust: name.clone(),
                    attribute: name.clone(),
                    kind: Kind::String,
                    optional: false,
                    key_only: true,
                });
                name
            }
        };
        variable += 1;
        pieces.push(Piece::Field(name));
    }
    Template { pieces, separator }
}

fn unique_name(wanted: &str, fields: &[FieldDraft]) -> String {
    let taken = |name: &str| {
        fields
            .iter()
            .any(|field| field.rust == name || field.attribute == name)
    };
    let mut name = wanted.to_owned();
    let mut number = 2;
    while taken(&name) {
        name = format!("{wanted}_{number}");
        number += 1;
    }
    name
}
