//! Key conditions from the templates that build the keys: the partition, the sort key parts
//! given in template order, and ranges on the next part.

use super::indexes::QueryIndex;
use crate::error::Error;
use crate::expr::condition::{walk_and_operand, Comparison, Node, Operand};
use crate::expr::field::to_value;
use crate::expr::{AttrPath, Expression, Name, Sink};
use crate::item::EncodeError;
use crate::key::{KeyError, KeyPart, KeyTemplate, PartContext, PrefixFree};
use crate::schema::{Entity, EntitySchema, IndexSchema, Table};
use aws_sdk_dynamodb::types::AttributeValue;
use serde::Serialize;
use std::marker::PhantomData;

/// No sort key part given yet.
#[derive(Debug)]
pub enum Start {}
/// The sort key parts up to field `F` (its marker type) are given.
pub struct After<F>(std::marker::PhantomData<fn() -> F>);
/// The sort key condition is complete (all parts given, or a range given).
#[derive(Debug)]
pub enum Closed {}

#[doc(hidden)]
/// Implemented by the derive on the marker type of each sort key part: the part may follow
/// state `P` ([`Start`] or [`After`] the part before it) of a query on index `I` of entity
/// `E`, which admits parts in template order only.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the next sort key part of index `{I}`",
    label = "a query cannot skip or repeat a sort key part",
    note = "give the parts in template order, each at most once (`After<..>` below names the part this one follows); a range (`between`, `lt`, ...) on a part ends the sort key condition"
)]
pub trait SortKeyPart<E, I, P> {
    /// The state after this part.
    type Next;
    /// Where the part is in its template: [`LastPart`] or [`InnerPart`].
    type Position;
}

#[doc(hidden)]
/// A sort key part that ends its template: a range on it is exact for every key part type.
#[derive(Debug)]
pub enum LastPart {}

#[doc(hidden)]
/// A sort key part that other key text follows: a range on it is exact only for a
/// [`PrefixFree`] key part.
#[derive(Debug)]
pub enum InnerPart {}

#[doc(hidden)]
/// A range (`lt`, `le`, `gt`, `ge`, `between`) on a sort key part of type `V` at this
/// position is exact: it selects the items whose part is in the range, and no other.
#[diagnostic::on_unimplemented(
    message = "a range on this `{V}` sort key part would not be exact: other key text follows it, and one `{V}`'s key text can start another's",
    label = "a range on a part that is not the last of its template",
    note = "values of different lengths sort by the text after them (\"b c#N\" sorts before \"b#N\"), so no key condition can bound them",
    note = "compare the part for equality with `sort(..)`, make the field the last part of the sort key template, or give it a prefix-free key part type (integers, dates, times, UUIDs, ULIDs, `bool`, an enum whose names start no other name)"
)]
pub trait RangeOn<V> {}

impl<V: KeyPart> RangeOn<V> for LastPart {}
// Not recommended: the error is then this trait's, which says what to do, rather than
// `PrefixFree`'s.
#[diagnostic::do_not_recommend]
impl<V: PrefixFree> RangeOn<V> for InnerPart {}

/// A partition of an index, rendered from the partition template; made by the generated
/// `Entity::partition(..)`, `Entity::gsi1(..)`, ... constructors.
pub struct PartitionKey<E, I> {
    /// One value per partition key attribute of the index, in order.
    pub(super) values: Result<PartitionValues, EncodeError>,
    pub(super) index: Option<&'static IndexSchema>,
    pub(super) types: PhantomData<fn() -> (E, I)>,
}

impl<E: Entity, I: QueryIndex> PartitionKey<E, I> {
    /// Used by the derive.
    #[doc(hidden)]
    pub fn new(
        value: Result<String, crate::KeyError>,
        index: Option<&'static IndexSchema>,
    ) -> Self {
        PartitionKey {
            values: value
                .map(|value| PartitionValues::One(AttributeValue::S(value)))
                .map_err(EncodeError::Key),
            index,
            types: PhantomData,
        }
    }

    /// A sharded partition (`{shard(id, 8)}`): every shard's key, in shard order. Used by the
    /// derive.
    #[doc(hidden)]
    pub fn sharded(
        shards: Result<Vec<String>, crate::KeyError>,
        index: Option<&'static IndexSchema>,
    ) -> Self {
        PartitionKey {
            values: shards
                .map(|keys| {
                    PartitionValues::Shards(keys.into_iter().map(AttributeValue::S).collect())
                })
                .map_err(EncodeError::Key),
            index,
            types: PhantomData,
        }
    }

    /// A partition of an index keyed on item attributes as they are (`gsi2pk = author`, or
    /// a multi-attribute key `gsi4pk = [tenant, region]`): their values, in order.
    #[doc(hidden)]
    pub fn attributes(
        values: Result<Vec<AttributeValue>, EncodeError>,
        index: &'static IndexSchema,
    ) -> Self {
        PartitionKey {
            values: values.map(PartitionValues::Many),
            index: Some(index),
            types: PhantomData,
        }
    }

    /// The partition key value: the first (for templates, the only) attribute's value; of a
    /// sharded partition, the first shard's.
    pub fn value(&self) -> Result<&AttributeValue, EncodeError> {
        match self.values.as_ref() {
            Ok(values) => values
                .of_shard(0)
                .first()
                .ok_or_else(|| EMPTY_PARTITION.clone()),
            Err(error) => Err(error.clone()),
        }
    }

    /// How many partition keys the partition is spread over: 1 unless its template has a
    /// shard part.
    pub fn shards(&self) -> usize {
        match &self.values {
            Ok(PartitionValues::Shards(keys)) => keys.len(),
            _ => 1,
        }
    }

    /// The partition's attributes and values (of shard `shard`, for a sharded partition).
    pub(super) fn conditions(&self, shard: usize) -> Result<PartitionCondition<'_>, EncodeError> {
        let values = self.values.as_ref().map_err(Clone::clone)?.of_shard(shard);
        if values.is_empty() {
            return Err(EncodeError::Serialize {
                entity: E::SCHEMA.name,
                message: "the partition key has no attributes".to_owned(),
            });
        }
        Ok(PartitionCondition {
            index: self.index,
            table_partition_key: <E::Table as Table>::SCHEMA.partition_key,
            values,
        })
    }

    pub(super) fn sort_key(&self) -> SortKeyShape {
        sort_key_shape(E::SCHEMA, self.index)
    }
}

/// How `schema`'s items are sorted on the table (`index` is `None`) or on an index: `None`
/// also where the entity does not write the index.
pub(super) fn sort_key_shape(schema: &EntitySchema, index: Option<&IndexSchema>) -> SortKeyShape {
    let (template, attribute) = match index {
        None => (schema.sort_key, false),
        Some(index) => schema
            .indexes
            .iter()
            .find(|entity_index| entity_index.index.slot == index.slot)
            .map(|entity_index| {
                (
                    entity_index.sort_key,
                    !entity_index.sort_attributes.is_empty(),
                )
            })
            .unwrap_or_default(),
    };
    match (template, attribute) {
        (Some(template), _) => SortKeyShape::Template(template),
        (None, true) => SortKeyShape::Attributes,
        (None, false) => SortKeyShape::None,
    }
}

/// The constant text that the sort key of every item of `schemas` starts with on the table or
/// `index`: the longest prefix their templates' leading texts share, empty where one of them
/// sorts on an attribute (any value). Entities that do not write the index are not there to
/// be read, and count for nothing.
pub(super) fn shared_sort_prefix(
    schemas: &[&EntitySchema],
    index: Option<&IndexSchema>,
) -> Option<&'static str> {
    let mut shared: Option<&'static str> = None;
    for schema in schemas {
        let leading = match sort_key_shape(schema, index) {
            SortKeyShape::Template(template) => template.leading_text(),
            SortKeyShape::Attributes => "",
            SortKeyShape::None => continue,
        };
        shared = Some(match shared {
            None => leading,
            Some(so_far) => common_prefix(so_far, leading),
        });
    }
    shared
}

/// The longest prefix of `a` that `b` starts with, ending on a character boundary.
fn common_prefix<'a>(a: &'a str, b: &str) -> &'a str {
    let end = a
        .char_indices()
        .zip(b.chars())
        .find(|((_, left), right)| left != right)
        .map_or_else(|| a.len().min(b.len()), |((at, _), _)| at);
    a.get(..end).unwrap_or_default()
}

/// A partition's values: one for a template (kept inline), one per attribute of a
/// multi-attribute key.
pub(super) enum PartitionValues {
    One(AttributeValue),
    Many(Vec<AttributeValue>),
    /// Each shard's key of a sharded partition, in shard order.
    Shards(Vec<AttributeValue>),
}

impl PartitionValues {
    /// The attributes' values; of a sharded partition, shard `shard`'s key (none past the
    /// last shard).
    pub(super) fn of_shard(&self, shard: usize) -> &[AttributeValue] {
        match self {
            PartitionValues::One(value) => std::slice::from_ref(value),
            PartitionValues::Many(values) => values,
            PartitionValues::Shards(keys) => keys.get(shard..=shard).unwrap_or_default(),
        }
    }
}

/// A partition's attributes with their values.
#[derive(Clone, Copy)]
pub(super) struct PartitionCondition<'a> {
    pub(super) index: Option<&'static IndexSchema>,
    pub(super) table_partition_key: &'static str,
    pub(super) values: &'a [AttributeValue],
}

impl<'a> PartitionCondition<'a> {
    pub(super) fn iter(self) -> impl Iterator<Item = (&'static str, &'a AttributeValue)> {
        let names = self
            .index
            .into_iter()
            .flat_map(|index| index.partition_keys.iter().map(|key| key.name))
            .chain(self.index.is_none().then_some(self.table_partition_key));
        names.zip(self.values)
    }
}

/// A query's key condition: the partition's attributes equal its values, and the sort key
/// condition, if any; joined with `AND`.
pub(super) struct KeyCondition<'a> {
    pub(super) partition: PartitionCondition<'a>,
    pub(super) sort: Option<Node>,
}

impl Expression for KeyCondition<'_> {
    fn walk(&mut self, sink: &mut impl Sink) {
        for (position, (name, value)) in self.partition.iter().enumerate() {
            if position > 0 {
                sink.text(" AND ");
            }
            sink.name(Name::Known(name));
            sink.text(" = ");
            sink.new_value(|| value.clone());
        }
        if let Some(sort) = &mut self.sort {
            sink.text(" AND ");
            walk_and_operand(sort, sink);
        }
    }
}

/// What [`PartitionKey::value`] reports for a partition with no value (never made by the
/// derive).
static EMPTY_PARTITION: EncodeError = EncodeError::Serialize {
    entity: "partition",
    message: String::new(),
};

/// How the queried index's sort key is made.
pub(super) enum SortKeyShape {
    Template(KeyTemplate),
    Attributes,
    None,
}

/// A range bound given to a query: rendered into key text for templates (after the parts
/// given before it), or encoded as its attribute value for sort keys that are plain
/// attributes.
pub(super) struct OwnedPart {
    pub(super) part: Box<dyn SortValue>,
}

/// A range bound's value, kept until the query knows which form it needs.
pub(super) trait SortValue: KeyPart + Send + Sync {
    fn attribute(&self) -> Result<AttributeValue, EncodeError>;
}

impl<T: KeyPart + Serialize + Send + Sync> SortValue for T {
    fn attribute(&self) -> Result<AttributeValue, EncodeError> {
        to_value(self)
    }
}

impl OwnedPart {
    pub(super) fn new<T: KeyPart + Serialize + Send + Sync + 'static>(value: T) -> Self {
        OwnedPart {
            part: Box::new(value),
        }
    }

    pub(super) fn value(&self) -> Result<Operand, EncodeError> {
        self.part.attribute().map(Operand::Value)
    }
}

impl KeyPart for OwnedPart {
    fn render_part(&self, context: PartContext, out: &mut String) -> Result<(), crate::KeyError> {
        self.part.render_part(context, out)
    }
}

/// The sort key parts given so far, kept in the form the query sends (so that paging does
/// not write them again).
#[derive(Default)]
pub(super) struct SortParts {
    pub(super) count: usize,
    /// For a templated sort key: the key text the parts make, with the constant text after
    /// the last one.
    pub(super) text: String,
    /// For sort keys that are attributes: the parts' values.
    pub(super) values: Vec<AttributeValue>,
    /// The first part that could not be written, reported when the request is built (boxed:
    /// the query is held while its request is out).
    pub(super) error: Option<Box<EncodeError>>,
}

/// The range on the next sort key part.
pub(super) enum Range {
    /// The part starts with this (`begins_with`).
    Prefix(super::prefix::Prefix),
    Between(OwnedPart, OwnedPart),
    Lt(OwnedPart),
    Le(OwnedPart),
    Gt(OwnedPart),
    Ge(OwnedPart),
}

/// The character above every other, which no key holds ([`crate::key::PartContext`]'s string
/// parts refuse it), used to bound "everything after".
pub(super) const HIGHEST: char = crate::key::HIGHEST_CHARACTER;

/// The greatest string below `text` that a key can be (keys never contain U+10FFFF): one
/// condition on the sort key is all DynamoDB allows, so `< x` within a prefix becomes
/// `BETWEEN prefix AND just_below(x)`.
pub(super) fn just_below(text: &str) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    match chars.pop() {
        None => String::new(),
        Some('\0') => chars.into_iter().collect(),
        Some(last) => {
            let mut code = u32::from(last) - 1;
            // Skip the surrogate range, which is not a char.
            if (0xD800..=0xDFFF).contains(&code) {
                code = 0xD7FF;
            }
            chars.extend(char::from_u32(code));
            chars.push(HIGHEST);
            chars.into_iter().collect()
        }
    }
}

/// `BETWEEN` bounds on sort key `attribute` for `range` on part number `given` of
/// `template`, after `prefix` (the key text of the parts given). Out of line: most queries
/// have no range, and its code would only crowd theirs.
#[inline(never)]
pub(super) fn range_condition(
    template: &KeyTemplate,
    attribute: &'static str,
    given: usize,
    prefix: String,
    range: &Range,
) -> Result<Node, Error> {
    let value = |text: String| Operand::Value(AttributeValue::S(text));
    let upper_all = format!("{prefix}{HIGHEST}");
    // The least key whose next part is `part`: the key itself when the part ends the
    // template; otherwise every such key starts with it (the part and the text after it).
    let least = |part: &OwnedPart| -> Result<String, Error> {
        let mut text = prefix.clone();
        template.push_field(given, &mut text, |context, out| {
            part.render_part(context, out)
        })?;
        Ok(text)
    };
    let last = template.ends_with_field(given);
    // The greatest key whose next part is `part` (keys never hold U+10FFFF).
    let greatest = |part: &OwnedPart| -> Result<String, Error> {
        let least = least(part)?;
        Ok(if last {
            least
        } else {
            format!("{least}{HIGHEST}")
        })
    };
    // The least key above those: the next string after the key, or the bound above them.
    let above = |part: &OwnedPart| -> Result<String, Error> {
        let greatest = greatest(part)?;
        Ok(if last {
            format!("{greatest}\0")
        } else {
            greatest
        })
    };
    let (low, high) = match range {
        Range::Prefix(part) => {
            let mut text = prefix;
            let context = template.field_context(given).ok_or(KeyError::Empty {
                template: template.source,
            })?;
            part.write(context, &mut text)?;
            // An empty prefix is every key, which `begins_with` cannot be asked (its value
            // cannot be empty).
            if text.is_empty() {
                return Ok(Node::Compare(
                    Operand::Path(AttrPath::attribute(attribute)),
                    Comparison::Le,
                    value(upper_all),
                ));
            }
            return Ok(Node::BeginsWith(
                AttrPath::attribute(attribute),
                value(text),
            ));
        }
        Range::Between(low, high) => (least(low)?, greatest(high)?),
        Range::Ge(bound) => (least(bound)?, upper_all.clone()),
        Range::Gt(bound) => (above(bound)?, upper_all.clone()),
        Range::Le(bound) => (prefix.clone(), greatest(bound)?),
        Range::Lt(bound) => (prefix.clone(), just_below(&least(bound)?)),
    };
    let path = || Operand::Path(AttrPath::attribute(attribute));
    // An empty range (`between` of a greater and a smaller value, `lt` the least value)
    // selects nothing, which DynamoDB's BETWEEN refuses to be asked: no key is U+10FFFF alone
    // after the prefix.
    if low > high || high.is_empty() {
        return Ok(Node::Between(
            path(),
            value(upper_all.clone()),
            value(upper_all),
        ));
    }
    // Key condition values cannot be empty (DynamoDB refuses them as it does empty keys):
    // with no prefix, everything up to `high` is `<=`.
    if low.is_empty() {
        return Ok(Node::Compare(path(), Comparison::Le, value(high)));
    }
    Ok(Node::Between(path(), value(low), value(high)))
}
