//! `Query` on the table or an index, with key conditions built from the same templates that
//! build the keys, so a query can never ask for a key shape the writes do not produce.
//!
//! The partition key comes from a generated constructor that takes every field of the
//! partition template (`Ticket::gsi1(&team_id)`); sort key parts are given in template order
//! (`.sort(Ticket::STATUS, &Status::Open)`), giving `begins_with` on the rendered prefix, or
//! equality once all are given; a range (`between`, `lt`, ...) on the next part ends the
//! condition. Skipping a part, or a consistent read on a global index, does not compile.

mod cursor;

pub use cursor::{Cursor, CursorError, CursorKey};

use super::SetSome;
use crate::error::{DecodeError, EncodeError, Error};
use crate::expr::condition::{
    all, user_node, walk_and_operand, Comparison, EntityFilter, Node, Operand,
};
use crate::expr::field::{to_value, FieldPath};
use crate::expr::path::Projection;
use crate::expr::{AttrPath, Condition, Expression, Name, Placeholders, Sink};
use crate::item::Item;
use crate::key::{KeyError, KeyPart, KeyTemplate, PartContext};
use crate::schema::{index, Entity, IndexSchema, Table};
use crate::wire::{describe, Request};
use crate::Db;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::types::{AttributeValue, Select};
use cursor::{Fingerprint, Position};
use futures::{Stream, StreamExt};
use serde::Serialize;
use std::future::Future;
use std::marker::PhantomData;

/// Marks the table's own key as the queried "index".
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy)]
pub enum primary {}

/// An index a query can target: the table's primary key, a GSI or an LSI.
pub trait QueryIndex: 'static {}
impl QueryIndex for primary {}
impl<I: index::IndexSlot> QueryIndex for I {}

/// Indexes that support strongly consistent reads.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is a global secondary index: DynamoDB rejects ConsistentRead on global secondary indexes",
    label = "global secondary indexes are eventually consistent",
    note = "read from the table or a local secondary index for strong consistency, or drop `.consistent()`"
)]
pub trait ConsistentIndex {}
impl ConsistentIndex for primary {}
macro_rules! consistent_local_indexes {
    ($($slot:ident),*) => {$( impl ConsistentIndex for index::$slot {} )*};
}
consistent_local_indexes!(lsi1, lsi2, lsi3, lsi4, lsi5);

/// How many sort key parts a query has given so far.
#[derive(Debug)]
pub enum Parts<const N: usize> {}
/// The sort key condition is complete (all parts given, or a range given).
#[derive(Debug)]
pub enum Closed {}

/// Implemented by the derive on each sort key part's field path: the part may follow state
/// `P` of a query on index `I` of entity `E`, which admits parts in template order only.
///
/// It is implemented on the field (not the entity) so that the field a call names decides
/// which part it is, and a misplaced part is reported as such.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a sort key part of this index",
    label = "not part of the index's sort key template"
)]
pub trait SortKeyPart<E, I, P> {
    /// The state after this part.
    type Next;
}

/// A partition of an index, rendered from the partition template; made by the generated
/// `Entity::partition(..)`, `Entity::gsi1(..)`, ... constructors.
pub struct PartitionKey<E, I> {
    /// One value per partition key attribute of the index, in order.
    values: Result<PartitionValues, EncodeError>,
    index: Option<&'static IndexSchema>,
    types: PhantomData<fn() -> (E, I)>,
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

    /// The partition key value: the first (for templates, the only) attribute's value.
    pub fn value(&self) -> Result<&AttributeValue, &EncodeError> {
        match self.values.as_ref() {
            Ok(values) => values.as_slice().first().ok_or(&EMPTY_PARTITION),
            Err(error) => Err(error),
        }
    }

    /// The partition's attributes and values.
    fn conditions(&self) -> Result<PartitionCondition<'_>, EncodeError> {
        let values = self.values.as_ref().map_err(Clone::clone)?.as_slice();
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

    fn sort_key(&self) -> SortKeyShape {
        let (template, attribute) = match self.index {
            None => (E::SCHEMA.sort_key, false),
            Some(index) => E::SCHEMA
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
}

/// A partition's values: one for a template (kept inline), one per attribute of a
/// multi-attribute key.
enum PartitionValues {
    One(AttributeValue),
    Many(Vec<AttributeValue>),
}

impl PartitionValues {
    fn as_slice(&self) -> &[AttributeValue] {
        match self {
            PartitionValues::One(value) => std::slice::from_ref(value),
            PartitionValues::Many(values) => values,
        }
    }
}

/// A partition's attributes with their values.
#[derive(Clone, Copy)]
struct PartitionCondition<'a> {
    index: Option<&'static IndexSchema>,
    table_partition_key: &'static str,
    values: &'a [AttributeValue],
}

impl<'a> PartitionCondition<'a> {
    fn iter(self) -> impl Iterator<Item = (&'static str, &'a AttributeValue)> {
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
struct KeyCondition<'a> {
    partition: PartitionCondition<'a>,
    sort: Option<Node>,
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
enum SortKeyShape {
    Template(KeyTemplate),
    Attributes,
    None,
}

/// A range bound given to a query: rendered into key text for templates (after the parts
/// given before it), or encoded as its attribute value for sort keys that are plain
/// attributes.
struct OwnedPart {
    part: Box<dyn SortValue>,
}

/// A range bound's value, kept until the query knows which form it needs.
trait SortValue: KeyPart + Send + Sync {
    fn attribute(&self) -> Result<AttributeValue, EncodeError>;
}

impl<T: KeyPart + Serialize + Send + Sync> SortValue for T {
    fn attribute(&self) -> Result<AttributeValue, EncodeError> {
        to_value(self)
    }
}

impl OwnedPart {
    fn new<T: KeyPart + Serialize + Send + Sync + 'static>(value: T) -> Self {
        OwnedPart {
            part: Box::new(value),
        }
    }

    fn value(&self) -> Result<Operand, EncodeError> {
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
struct SortParts {
    count: usize,
    /// For a templated sort key: the key text the parts make, with the constant text after
    /// the last one.
    text: String,
    /// For sort keys that are attributes: the parts' values.
    values: Vec<AttributeValue>,
    /// The first part that could not be written, reported when the request is built (boxed:
    /// the query is held while its request is out).
    error: Option<Box<EncodeError>>,
}

/// The range on the next sort key part.
enum Range {
    Between(OwnedPart, OwnedPart),
    Lt(OwnedPart),
    Le(OwnedPart),
    Gt(OwnedPart),
    Ge(OwnedPart),
}

/// The character above every other in DynamoDB's byte order (U+10FFFF encodes as F4 8F BF BF,
/// above any UTF-8 sequence for a lower code point), used to bound "everything after".
const HIGHEST: char = '\u{10FFFF}';

impl<T: Table> Db<T> {
    /// A query on one partition of the table or an index.
    pub fn query<E: Entity<Table = T>, I: QueryIndex>(
        &self,
        partition: PartitionKey<E, I>,
    ) -> Query<'_, E, I, Parts<0>> {
        Query {
            db: self,
            partition,
            sort: SortParts::default(),
            range: None,
            descending: false,
            limit: None,
            filter: None,
            consistent: false,
            projection: Vec::new(),
            state: PhantomData,
        }
    }
}

/// A `Query` of one entity; see [`Db::query`].
#[must_use = "an operation does nothing until it is sent"]
pub struct Query<'db, E: Entity, I, P, D = E> {
    db: &'db Db<E::Table>,
    partition: PartitionKey<E, I>,
    sort: SortParts,
    range: Option<Range>,
    descending: bool,
    limit: Option<i32>,
    filter: Option<Condition<E>>,
    consistent: bool,
    /// Attributes to return (`ProjectionExpression`); empty for whole items.
    projection: Vec<AttrPath>,
    state: PhantomData<fn() -> (P, D)>,
}

impl<'db, E: Entity, I: QueryIndex, P, D: Decode> Query<'db, E, I, P, D> {
    fn next<Q, C>(self, range: Option<Range>) -> Query<'db, E, I, Q, C> {
        Query {
            db: self.db,
            partition: self.partition,
            sort: self.sort,
            range: range.or(self.range),
            descending: self.descending,
            limit: self.limit,
            filter: self.filter,
            consistent: self.consistent,
            projection: self.projection,
            state: PhantomData,
        }
    }

    /// The next sort key part equals `value`.
    pub fn sort<Path>(self, _field: Path, value: Path::Value) -> Query<'db, E, I, Path::Next, D>
    where
        Path: SortKeyPart<E, I, P> + FieldPath<Entity = E>,
        Path::Value: KeyPart + Serialize + Send + Sync + 'static,
    {
        let mut query = self;
        query.push_sort_part(&value);
        query.next(None)
    }

    /// Writes the next sort key part in the form the query sends: into the key text for a
    /// templated sort key, as an attribute value for sort keys that are attributes.
    fn push_sort_part<V: KeyPart + Serialize>(&mut self, value: &V) {
        let position = self.sort.count;
        self.sort.count += 1;
        if self.sort.error.is_some() {
            return;
        }
        let written = match self.partition.sort_key() {
            SortKeyShape::Template(template) => {
                let text = &mut self.sort.text;
                if position == 0 {
                    text.reserve(template.source.len() + 16);
                    text.push_str(template.leading_text());
                }
                template
                    .push_field(position, text, |context, out| {
                        value.render_part(context, out)
                    })
                    .map_err(EncodeError::Key)
            }
            SortKeyShape::Attributes => {
                to_value(value).map(|attribute| self.sort.values.push(attribute))
            }
            // The typestate admits only parts of the index's sort key.
            SortKeyShape::None => Ok(()),
        };
        if let Err(error) = written {
            self.sort.error = Some(Box::new(error));
        }
    }

    /// The next sort key part is between `low` and `high`, inclusive.
    pub fn between<Path>(
        self,
        _field: Path,
        low: Path::Value,
        high: Path::Value,
    ) -> Query<'db, E, I, Closed, D>
    where
        Path: SortKeyPart<E, I, P> + FieldPath<Entity = E>,
        Path::Value: KeyPart + Serialize + Send + Sync + 'static,
    {
        self.next(Some(Range::Between(
            OwnedPart::new(low),
            OwnedPart::new(high),
        )))
    }

    /// The next sort key part is below `value`.
    pub fn lt<Path>(self, _field: Path, value: Path::Value) -> Query<'db, E, I, Closed, D>
    where
        Path: SortKeyPart<E, I, P> + FieldPath<Entity = E>,
        Path::Value: KeyPart + Serialize + Send + Sync + 'static,
    {
        self.next(Some(Range::Lt(OwnedPart::new(value))))
    }

    /// The next sort key part is at most `value`.
    pub fn le<Path>(self, _field: Path, value: Path::Value) -> Query<'db, E, I, Closed, D>
    where
        Path: SortKeyPart<E, I, P> + FieldPath<Entity = E>,
        Path::Value: KeyPart + Serialize + Send + Sync + 'static,
    {
        self.next(Some(Range::Le(OwnedPart::new(value))))
    }

    /// The next sort key part is above `value`.
    pub fn gt<Path>(self, _field: Path, value: Path::Value) -> Query<'db, E, I, Closed, D>
    where
        Path: SortKeyPart<E, I, P> + FieldPath<Entity = E>,
        Path::Value: KeyPart + Serialize + Send + Sync + 'static,
    {
        self.next(Some(Range::Gt(OwnedPart::new(value))))
    }

    /// The next sort key part is at least `value`.
    pub fn ge<Path>(self, _field: Path, value: Path::Value) -> Query<'db, E, I, Closed, D>
    where
        Path: SortKeyPart<E, I, P> + FieldPath<Entity = E>,
        Path::Value: KeyPart + Serialize + Send + Sync + 'static,
    {
        self.next(Some(Range::Ge(OwnedPart::new(value))))
    }

    /// Returns every item of the partition as collection `C` (an enum with one variant per
    /// entity, `#[derive(singletable::Collection)]`), decided by the entity attribute. Items
    /// of entities `C` does not know are reported in [`Page::errors`], never dropped.
    pub fn collection<C: Collection<Table = E::Table> + Decode>(self) -> Query<'db, E, I, P, C> {
        self.next(None)
    }

    /// Returns only the attributes of `fields` (`ProjectionExpression`), decoded as `T`: a
    /// struct with those fields (serde names). The entity attribute is always read too, so
    /// items of other entities are still told apart.
    ///
    /// ```ignore
    /// #[derive(serde::Deserialize)]
    /// struct Title { id: String, title: String }
    /// let titles = db.query(Ticket::gsi1(&7)).project::<Title>(&[Ticket::ID.path(), Ticket::TITLE.path()]);
    /// ```
    pub fn project<T: serde::de::DeserializeOwned>(
        mut self,
        fields: &[AttrPath],
    ) -> Query<'db, E, I, P, Projected<E, T>> {
        let table = <E::Table as Table>::SCHEMA;
        self.projection = fields.to_vec();
        self.projection
            .push(AttrPath::attribute(table.entity_attribute));
        self.next(None)
    }

    /// Highest sort key first (`ScanIndexForward = false`): newest first for time-ordered keys.
    pub fn descending(mut self) -> Self {
        self.descending = true;
        self
    }

    /// At most `limit` items are evaluated per request (DynamoDB applies it before filters).
    pub fn limit(mut self, limit: u32) -> Self {
        self.limit = Some(i32::try_from(limit).unwrap_or(i32::MAX));
        self
    }

    /// Keeps only items for which `filter` holds (evaluated by DynamoDB after the key
    /// condition; filtered items still cost reads).
    pub fn filter(mut self, filter: Condition<E>) -> Self {
        Condition::and_to(&mut self.filter, filter);
        self
    }

    /// A strongly consistent read; only the table and local indexes support it.
    pub fn consistent(mut self) -> Self
    where
        I: ConsistentIndex,
    {
        self.consistent = true;
        self
    }

    fn prepare(&self, count: bool) -> Result<Prepared, Error> {
        let table = <E::Table as Table>::SCHEMA;
        let sort_attribute = match self.partition.index {
            Some(index) => index.sort_key,
            None => table.sort_key,
        };
        let partition = self.partition.conditions()?;
        if let Some(error) = &self.sort.error {
            return Err((**error).clone().into());
        }
        let sort = match (
            self.partition.sort_key(),
            sort_attribute,
            self.partition.index,
        ) {
            (SortKeyShape::Template(template), Some(attribute), _) => {
                self.sort_condition(&template, attribute)?
            }
            (SortKeyShape::Attributes, _, Some(index)) => {
                self.attribute_sort_condition(index.sort_keys)?
            }
            _ => None,
        };
        let mut key_condition = KeyCondition { partition, sort };
        // One entity's query keeps only its items; a collection's decodes (or reports) all.
        let mut filter = EntityFilter {
            attribute: table.entity_attribute,
            entity: D::ONLY_ENTITY,
            user: user_node(self.filter.as_ref())?,
        };
        let ([key_condition, filter, projection], placeholders) = crate::expr::shape::render([
            &mut key_condition,
            &mut filter,
            &mut Projection(&self.projection),
        ]);
        // An empty expression is left out of the request.
        let filter = (!filter.is_empty()).then_some(filter);
        let projection = (!projection.is_empty()).then_some(projection);
        crate::expr::check_expression("KeyConditionExpression", &key_condition)?;
        for (kind, text) in [
            ("FilterExpression", &filter),
            ("ProjectionExpression", &projection),
        ] {
            if let Some(text) = text {
                crate::expr::check_expression(kind, text)?;
            }
        }
        Ok(Prepared {
            index_name: self.partition.index.map(|index| index.name),
            key_condition,
            filter,
            projection,
            placeholders,
            count,
        })
    }

    /// The sort key condition on a sort key that is a plain attribute: compared as the value it
    /// is (numbers numerically). Out of line, as [`range_condition`].
    ///
    /// With several sort attributes (a multi-attribute key), the given parts are equalities
    /// on the first attributes, left to right, and a range applies to the next one.
    #[inline(never)]
    fn attribute_sort_condition(
        &self,
        attributes: &[crate::schema::KeyAttribute],
    ) -> Result<Option<Node>, Error> {
        let path = |position: usize| {
            attributes
                .get(position)
                .map(|key| Operand::Path(AttrPath::attribute(key.name)))
                .ok_or_else(|| EncodeError::Serialize {
                    entity: E::SCHEMA.name,
                    message: format!("the index has no sort key attribute number {position}"),
                })
        };
        let mut conditions = Vec::new();
        for (position, value) in self.sort.values.iter().enumerate() {
            conditions.push(Node::Compare(
                path(position)?,
                Comparison::Eq,
                Operand::Value(value.clone()),
            ));
        }
        let next = self.sort.count;
        let compare = |comparison, part: &OwnedPart| -> Result<Node, Error> {
            Ok(Node::Compare(path(next)?, comparison, part.value()?))
        };
        conditions.extend(match &self.range {
            Some(Range::Between(low, high)) => {
                Some(Node::Between(path(next)?, low.value()?, high.value()?))
            }
            Some(Range::Lt(bound)) => Some(compare(Comparison::Lt, bound)?),
            Some(Range::Le(bound)) => Some(compare(Comparison::Le, bound)?),
            Some(Range::Gt(bound)) => Some(compare(Comparison::Gt, bound)?),
            Some(Range::Ge(bound)) => Some(compare(Comparison::Ge, bound)?),
            None => None,
        });
        Ok(all(conditions))
    }

    /// The sort key condition from the parts given so far.
    fn sort_condition(
        &self,
        template: &KeyTemplate,
        attribute: &'static str,
    ) -> Result<Option<Node>, Error> {
        let path = || Operand::Path(AttrPath::attribute(attribute));
        let value = |text: String| Operand::Value(AttributeValue::S(text));
        let given = self.sort.count;
        // The key text of the parts given, with the constant text after the last one.
        let prefix = if given == 0 {
            template.leading_text().to_owned()
        } else {
            self.sort.text.clone()
        };
        let Some(range) = &self.range else {
            if given == template.fields().count() {
                if prefix.is_empty() {
                    return Err(KeyError::Empty {
                        template: template.source,
                    }
                    .into());
                }
                return Ok(Some(Node::Compare(path(), Comparison::Eq, value(prefix))));
            }
            // The constant text before the first part always constrains the query, so one
            // entity's query never reaches another's items.
            return Ok((!prefix.is_empty())
                .then(|| Node::BeginsWith(AttrPath::attribute(attribute), value(prefix))));
        };
        range_condition(template, attribute, given, prefix, range).map(Some)
    }

    /// The request this operation sends (the first page).
    pub fn params(&self) -> Result<Request, Error> {
        let request = self.prepare(false)?.builder(self, None);
        Ok(describe::request("Query", request.as_input()))
    }

    /// One page, starting after `cursor` (from the previous page), or the first page.
    ///
    /// The request is built when this is called; the future sends it, and holds the SDK's
    /// future in place (see `op::sent`), so awaiting it costs what awaiting a hand-written
    /// request does.
    // Plain `#[inline]` (see `op::sent`): it is inlined, and forcing it made LLVM copy the
    // future once more (measured: one 7 KB copy per page).
    #[inline]
    pub fn page(
        &self,
        cursor: Option<&Cursor>,
    ) -> impl Future<Output = Result<Page<D>, Error>> + 'db
    where
        D: 'db,
    {
        let request = self.page_request(cursor);
        let (db, index) = (self.db, self.partition.index);
        let seal = self.seal();
        let span = self.span();
        let sent = super::sent(request, QueryFluentBuilder::send, move |output| {
            let output = output?;
            db.record(output.consumed_capacity());
            Ok(Page::from_output(output, index, seal?))
        });
        db.traced(span, sent)
    }

    /// The request for the page after `cursor`.
    #[inline(never)]
    fn page_request(&self, cursor: Option<&Cursor>) -> Result<QueryFluentBuilder, Error> {
        let prepared = self.prepare(false)?;
        let start = cursor.map(|cursor| self.start_key(cursor)).transpose()?;
        Ok(prepared.builder(self, start))
    }

    /// The span of one page's request.
    fn span(&self) -> tracing::Span {
        Self::page_span(self.db, self.partition.index)
    }

    fn page_span(db: &Db<E::Table>, index: Option<&IndexSchema>) -> tracing::Span {
        crate::trace::span(
            crate::trace::Operation::Query,
            db.table_name(),
            D::NAME,
            || None,
            index.map(|index| index.name),
        )
    }

    /// What identifies this query to a sealed cursor: its first page's request, and what it
    /// decodes.
    fn fingerprint(&self) -> Result<Fingerprint, Error> {
        Ok(Fingerprint::of(&self.params()?, D::ENTITIES))
    }

    /// The key and fingerprint that seal this query's cursors, when the `Db` has a key.
    fn seal(&self) -> Result<Option<(std::sync::Arc<CursorKey>, Fingerprint)>, Error> {
        match self.db.cursor_key() {
            Some(key) => Ok(Some((key.clone(), self.fingerprint()?))),
            None => Ok(None),
        }
    }

    /// The `ExclusiveStartKey` for this query, if `cursor` belongs to it.
    fn start_key(&self, cursor: &Cursor) -> Result<Item, Error> {
        let Position {
            index: found_index,
            key,
        } = cursor.open(self.db.cursor_key(), || self.fingerprint())?;
        let table = <E::Table as Table>::SCHEMA;
        let invalid = |reason: String| Error::Cursor(CursorError { reason });
        let index = self.partition.index;
        if found_index.as_deref() != index.map(|index| index.name) {
            return Err(invalid(format!(
                "it belongs to index {:?}, not {:?}",
                found_index,
                index.map(|index| index.name)
            )));
        }
        let mut expected: Vec<&str> = vec![table.partition_key];
        expected.extend(table.sort_key);
        if let Some(index) = index {
            expected.extend(index.key_attributes().map(|key| key.name));
        }
        expected.sort_unstable();
        expected.dedup();
        let mut found: Vec<&str> = key.keys().map(String::as_str).collect();
        found.sort_unstable();
        if found != expected {
            return Err(invalid(format!(
                "its key attributes {found:?} are not this query's {expected:?}"
            )));
        }
        if self
            .partition
            .conditions()?
            .iter()
            .all(|(name, value)| key.get(name) == Some(value))
        {
            Ok(key)
        } else {
            Err(invalid("it belongs to another partition".to_owned()))
        }
    }

    /// Every page, following `LastEvaluatedKey` through the SDK's paginator.
    pub fn pages(self) -> impl Stream<Item = Result<Page<D>, Error>> + 'db
    where
        E: 'db,
        I: 'db,
        P: 'db,
        D: 'db,
    {
        let index = self.partition.index;
        let db = self.db;
        let pages = match (self.prepare(false), self.seal()) {
            (Ok(prepared), Ok(seal)) => {
                Ok((prepared.builder(&self, None).into_paginator().send(), seal))
            }
            (Err(error), _) | (_, Err(error)) => Err(error),
        };
        futures::stream::unfold(Some(pages), move |state| async move {
            match state? {
                Err(error) => Some((Err(error), None)),
                Ok((mut pages, seal)) => {
                    let span = Self::page_span(db, index);
                    let next = db.traced(span, async {
                        let Some(output) = pages.next().await else {
                            return Ok(None);
                        };
                        let output = output?;
                        db.record(output.consumed_capacity());
                        Ok(Some(Page::from_output(output, index, seal.clone())))
                    });
                    match next.await.transpose()? {
                        // The last page: stop without asking the paginator, which would
                        // send nothing but still count as a request in its span.
                        Ok(page) if page.cursor.is_none() => Some((Ok(page), None)),
                        Ok(page) => Some((Ok(page), Some(Ok((pages, seal))))),
                        Err(error) => Some((Err(error), None)),
                    }
                }
            }
        })
    }

    /// Every matching item, page after page; an item that does not decode is an `Err` in the
    /// stream (the rest still arrive).
    pub fn items(self) -> impl Stream<Item = Result<D, Error>> + 'db
    where
        E: 'db,
        I: 'db,
        P: 'db,
        D: 'db,
    {
        self.pages().flat_map(|page| {
            let results: Vec<Result<D, Error>> = match page {
                Ok(page) => page
                    .items
                    .into_iter()
                    .map(Ok)
                    .chain(
                        page.errors
                            .into_iter()
                            .map(|error| Err(Error::Decode(error))),
                    )
                    .collect(),
                Err(error) => vec![Err(error)],
            };
            futures::stream::iter(results)
        })
    }

    /// All matching items (every page).
    pub async fn all(self) -> Result<Vec<D>, Error>
    where
        E: 'db,
        I: 'db,
        P: 'db,
        D: 'db,
    {
        let items = self.items();
        futures::pin_mut!(items);
        let mut all = Vec::new();
        while let Some(item) = items.next().await {
            all.push(item?);
        }
        Ok(all)
    }

    /// The number of matching items (`Select = COUNT`, every page).
    pub async fn count(&self) -> Result<u64, Error> {
        let prepared = self.prepare(true)?;
        let mut pages = prepared.builder(self, None).into_paginator().send();
        let mut total = 0u64;
        loop {
            let span = Self::page_span(self.db, self.partition.index);
            let next = self.db.traced(span, async {
                let output = pages.next().await.transpose()?;
                if let Some(output) = &output {
                    self.db.record(output.consumed_capacity());
                }
                Ok(output)
            });
            let Some(output) = next.await? else {
                break;
            };
            total += u64::try_from(output.count).unwrap_or_default();
            if output.last_evaluated_key.is_none() {
                break;
            }
        }
        Ok(total)
    }
}

/// The greatest string below `text` that a key can be (keys never contain U+10FFFF): one
/// condition on the sort key is all DynamoDB allows, so `< x` within a prefix becomes
/// `BETWEEN prefix AND just_below(x)`.
fn just_below(text: &str) -> String {
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
fn range_condition(
    template: &KeyTemplate,
    attribute: &'static str,
    given: usize,
    prefix: String,
    range: &Range,
) -> Result<Node, Error> {
    let value = |text: String| Operand::Value(AttributeValue::S(text));
    let upper_all = format!("{prefix}{HIGHEST}");
    // A key whose next part equals `part` starts with `with(part)`.
    let with = |part: &OwnedPart| -> Result<String, Error> {
        let mut text = prefix.clone();
        template.push_field(given, &mut text, |context, out| {
            part.render_part(context, out)
        })?;
        Ok(text)
    };
    // Everything after the keys that start with `with(part)` is below
    // `with(part) + HIGHEST`.
    let (low, high) = match range {
        Range::Between(low, high) => (with(low)?, format!("{}{HIGHEST}", with(high)?)),
        Range::Ge(bound) => (with(bound)?, upper_all),
        Range::Gt(bound) => (format!("{}{HIGHEST}", with(bound)?), upper_all),
        Range::Le(bound) => (prefix.clone(), format!("{}{HIGHEST}", with(bound)?)),
        Range::Lt(bound) => (prefix.clone(), just_below(&with(bound)?)),
    };
    Ok(Node::Between(
        Operand::Path(AttrPath::attribute(attribute)),
        value(low),
        value(high),
    ))
}

/// Items of entity `E` read with a projection, decoded as `T` (see [`Query::project`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Projected<E, T> {
    /// The projected attributes.
    pub value: T,
    entity: PhantomData<fn() -> E>,
}

impl<E: Entity, T: serde::de::DeserializeOwned> Decode for Projected<E, T> {
    const ONLY_ENTITY: Option<&'static str> = Some(E::SCHEMA.name);
    const ENTITIES: &'static [&'static str] = &[E::SCHEMA.name];
    const NAME: &'static str = E::SCHEMA.name;

    fn decode(item: Item) -> Result<Self, DecodeError> {
        crate::item::decode_as::<E, T>(item).map(|value| Projected {
            value,
            entity: PhantomData,
        })
    }
}

/// What a query's items decode into: one entity, or a [`Collection`] of several.
pub trait Decode: Sized {
    /// The only entity to read (the query filters on it), or `None` for a collection.
    const ONLY_ENTITY: Option<&'static str>;
    /// Every entity it decodes (what a sealed cursor is bound to).
    const ENTITIES: &'static [&'static str];
    /// The entity's name, or the collection's type name (for tracing).
    const NAME: &'static str;

    /// Decodes one item.
    fn decode(item: Item) -> Result<Self, DecodeError>;
}

impl<E: Entity> Decode for E {
    const ONLY_ENTITY: Option<&'static str> = Some(E::SCHEMA.name);
    const ENTITIES: &'static [&'static str] = &[E::SCHEMA.name];
    const NAME: &'static str = E::SCHEMA.name;

    fn decode(item: Item) -> Result<Self, DecodeError> {
        crate::item::decode(item)
    }
}

/// Several entities sharing partitions (an item collection), as one enum; implemented by
/// `#[derive(singletable::Collection)]`.
pub trait Collection: Sized {
    /// The table the entities live in.
    type Table: Table;
    /// The entities, by the entity attribute's value.
    const ENTITIES: &'static [&'static str];

    /// Decodes an item into the variant its entity attribute names.
    fn decode_item(item: Item) -> Result<Self, DecodeError>;
}

struct Prepared {
    index_name: Option<&'static str>,
    key_condition: String,
    filter: Option<String>,
    projection: Option<String>,
    placeholders: Placeholders,
    count: bool,
}

impl Prepared {
    fn builder<E: Entity, I, P, D>(
        self,
        query: &Query<'_, E, I, P, D>,
        start: Option<Item>,
    ) -> QueryFluentBuilder {
        let (names, values) = self.placeholders.into_maps();
        query
            .db
            .client()
            .query()
            .table_name(query.db.table_name())
            .set_some(self.index_name, |builder, name| builder.index_name(name))
            .key_condition_expression(self.key_condition)
            .set_some(self.filter, QueryFluentBuilder::filter_expression)
            .set_some(self.projection, QueryFluentBuilder::projection_expression)
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(values)
            .set_some(
                query.descending.then_some(false),
                QueryFluentBuilder::scan_index_forward,
            )
            .set_some(query.limit, QueryFluentBuilder::limit)
            .set_some(
                query.consistent.then_some(true),
                QueryFluentBuilder::consistent_read,
            )
            .set_some(
                self.count.then_some(Select::Count),
                QueryFluentBuilder::select,
            )
            .set_some(
                query.db.return_consumed_capacity(),
                QueryFluentBuilder::return_consumed_capacity,
            )
            .set_some(start, |builder, start| {
                builder.set_exclusive_start_key(Some(start))
            })
    }
}

/// One page of a query.
#[derive(Debug)]
pub struct Page<E> {
    /// The items of this page that decoded.
    pub items: Vec<E>,
    /// Items of this page that are this entity's but did not decode (never dropped silently).
    pub errors: Vec<DecodeError>,
    /// Where the next page starts; `None` on the last page.
    pub cursor: Option<Cursor>,
}

impl<D: Decode> Page<D> {
    /// Decodes a response's items, keeping the ones that fail as errors.
    fn from_output(
        output: aws_sdk_dynamodb::operation::query::QueryOutput,
        index: Option<&'static IndexSchema>,
        seal: Option<(std::sync::Arc<CursorKey>, Fingerprint)>,
    ) -> Self {
        let mut items = Vec::new();
        let mut errors = Vec::new();
        for item in output.items.unwrap_or_default() {
            match D::decode(item) {
                Ok(entity) => items.push(entity),
                Err(error) => errors.push(error),
            }
        }
        Page {
            items,
            errors,
            cursor: output.last_evaluated_key.map(|key| {
                let index = index.map(|index| index.name.to_owned());
                Cursor::new(Position { index, key }, seal)
            }),
        }
    }
}
