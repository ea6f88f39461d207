//! A query's request: its key condition, filter and projection rendered once, and the SDK
//! request built from them.

use super::*;
use crate::send::QueryPage;
use crate::ttl::Expiry;

impl<'db, E: Entity, I: QueryIndex, P, D: Decode> Query<'db, E, I, P, D> {
    pub(super) fn prepare(&self, count: bool) -> Result<Prepared, Error> {
        self.prepare_at(count, self.read.expiry, 0)
    }

    /// The request of shard `shard` of the partition (0 of one that is not sharded), hiding
    /// what `expiry` says has expired.
    pub(super) fn prepare_at(
        &self,
        count: bool,
        expiry: Expiry,
        shard: usize,
    ) -> Result<Prepared, Error> {
        let table = <E::Table as Table>::SCHEMA;
        let sort_attribute = match self.partition.index {
            Some(index) => index.sort_key,
            None => table.sort_key,
        };
        let partition = self.partition.conditions(shard)?;
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
        let user = user_node(self.filter.as_ref())?;
        // Only a lean index can lack an attribute a filter reads.
        if let (Some(index), Some(user)) = (self.partition.index, user) {
            if !matches!(index.projection, crate::schema::IndexProjection::All) {
                check_projected::<E>(index, user)?;
            }
        }
        let mut key_condition = KeyCondition { partition, sort };
        // One entity's query keeps only its items; a collection's decodes (or reports) all.
        let mut filter = EntityFilter {
            attribute: table.entity_attribute,
            keeps: match D::ONLY_ENTITY {
                Some(entity) => Keeps::Entity(entity),
                None if D::BY_KEY => Keeps::All,
                None => Keeps::AllButLibrary,
            },
            user,
            expiry,
        };
        let ([key_condition, filter, projection], placeholders) = crate::expr::shape::render([
            &mut key_condition,
            &mut filter,
            &mut ProjectionExpression(&self.projection),
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
        placeholders.check()?;
        Ok(Prepared {
            index_name: self.partition.index.map(|index| index.name),
            key_condition,
            filter,
            projection,
            placeholders,
            limit: crate::op::page_limit(self.limit)?,
            count,
        })
    }

    /// The sort key condition on a sort key that is a plain attribute: compared as the value it
    /// is (numbers numerically). Out of line, as [`range_condition`].
    ///
    /// With several sort attributes (a multi-attribute key), the given parts are equalities
    /// on the first attributes, left to right, and a range applies to the next one.
    #[inline(never)]
    pub(super) fn attribute_sort_condition(
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
            Some(Range::Prefix(part)) => {
                let attribute = attributes.get(next).ok_or_else(|| EncodeError::Serialize {
                    entity: E::SCHEMA.name,
                    message: format!("the index has no sort key attribute number {next}"),
                })?;
                let mut text = String::new();
                part.write(crate::key::PartContext::free(attribute.name), &mut text)?;
                Some(Node::BeginsWith(
                    AttrPath::attribute(attribute.name),
                    Operand::Value(AttributeValue::S(text)),
                ))
            }
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
    pub(super) fn sort_condition(
        &self,
        template: &KeyTemplate,
        attribute: &'static str,
    ) -> Result<Option<Node>, Error> {
        let path = || Operand::Path(AttrPath::attribute(attribute));
        let value = |text: String| Operand::Value(AttributeValue::S(text));
        let given = self.sort.count;
        // A collection with no part given reads what its entities' sort keys share: the
        // whole partition where they share nothing (`o#..`, `p#..`, `sh#..`).
        if given == 0 && self.range.is_none() && D::ONLY_ENTITY.is_none() && !D::BY_KEY {
            if let Some(shared) = shared_sort_prefix(D::SCHEMAS, self.partition.index) {
                return Ok((!shared.is_empty()).then(|| {
                    Node::BeginsWith(AttrPath::attribute(attribute), value(shared.to_owned()))
                }));
            }
        }
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
}

/// Refuses a filter on an attribute a lean index does not hold: every item would fail it.
fn check_projected<E: Entity>(index: &IndexSchema, filter: &Node) -> Result<(), Error>
where
    E::Table: Table,
{
    let table = <E::Table as Table>::SCHEMA;
    let mut missing = None;
    filter.for_each_path(&mut |path| {
        if missing.is_none() && !index.holds(table, path.root()) {
            missing = Some(path.root().to_owned());
        }
    });
    match missing {
        Some(attribute) => Err(Error::NotProjected {
            index: index.name,
            attribute,
            projection: index.projection.to_string(),
        }),
        None => Ok(()),
    }
}

pub(super) struct Prepared {
    pub(super) index_name: Option<&'static str>,
    pub(super) key_condition: String,
    pub(super) filter: Option<String>,
    pub(super) projection: Option<String>,
    pub(super) placeholders: Placeholders,
    pub(super) limit: Option<i32>,
    pub(super) count: bool,
}

impl Prepared {
    /// The request of the page of `query` that starts after `start`.
    pub(super) fn builder<E: Entity, I, P, D>(
        self,
        query: &Query<'_, E, I, P, D>,
        start: Option<Item>,
    ) -> QueryFluentBuilder {
        query.db.query_request(QueryPage {
            index_name: self.index_name,
            key_condition: self.key_condition,
            filter: self.filter,
            projection: self.projection,
            placeholders: self.placeholders,
            limit: self.limit,
            count: self.count,
            descending: query.descending,
            consistent: query.read.consistent,
            start,
        })
    }
}
