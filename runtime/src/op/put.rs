//! `PutItem`.

use super::{condition_failure, Expectations};
use crate::error::{EncodeError, Error};
use crate::expr::condition::{render_all, user_node, Comparison, Node, Operand};
use crate::expr::{AttrPath, Condition, Placeholders};
use crate::item::Item;
use crate::schema::{Entity, Table};
use crate::wire::{self, Body, Request};
use crate::Db;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue, ReturnValuesOnConditionCheckFailure};
use futures::FutureExt;
use serde_json::json;

impl<T: Table> Db<T> {
    /// Writes an item, replacing any item with the same key unless told otherwise.
    pub fn put<'db, E: Entity<Table = T>>(&'db self, entity: &E) -> Put<'db, E> {
        Put {
            db: self,
            item: crate::item::encode(entity),
            only_if_absent: false,
            condition: None,
        }
    }
}

/// A `PutItem` of one entity; see [`Db::put`].
#[must_use = "an operation does nothing until it is sent"]
pub struct Put<'db, E: Entity> {
    db: &'db Db<E::Table>,
    item: Result<Item, EncodeError>,
    only_if_absent: bool,
    condition: Option<Condition<E>>,
}

struct Prepared {
    item: Item,
    condition: Option<String>,
    placeholders: Placeholders,
    expectations: Expectations,
}

impl<E: Entity> Put<'_, E> {
    /// Writes only if no item has this key; otherwise fails with [`Error::ConditionFailed`]
    /// carrying the existing item.
    pub fn only_if_absent(mut self) -> Self {
        self.only_if_absent = true;
        self
    }

    /// Writes only if `condition` holds for the item currently at this key.
    pub fn condition(mut self, condition: Condition<E>) -> Self {
        Condition::and_to(&mut self.condition, condition);
        self
    }

    fn prepare(&self) -> Result<Prepared, Error> {
        self.prepare_item(self.item.clone()?)
    }

    /// Prepares the request around `item` (the encoded entity, cloned for `params`, moved by
    /// `send`).
    fn prepare_item(&self, mut item: Item) -> Result<Prepared, Error> {
        let table = <E::Table as Table>::SCHEMA;
        let managed = E::SCHEMA.managed;
        let no_item = || Node::NotExists(AttrPath::attribute(table.partition_key));
        let absent = self.only_if_absent.then(no_item);
        // Optimistic locking: the entity carries the version it was read at; the write
        // expects exactly that version (0: no item yet) and stores the next one.
        let mut expectations = Expectations::default();
        let mut version_check = None;
        if let Some(attribute) = managed.version {
            let expected = crate::managed::version_of(item.get(attribute));
            item.insert(
                attribute.to_owned(),
                AttributeValue::N((expected + 1).to_string()),
            );
            // `only_if_absent` already says what the write expects: no item, whatever
            // version the entity carries.
            if !self.only_if_absent {
                version_check = Some(if expected == 0 {
                    no_item()
                } else {
                    Node::Compare(
                        Operand::Path(AttrPath::attribute(attribute)),
                        Comparison::Eq,
                        Operand::Value(AttributeValue::N(expected.to_string())),
                    )
                });
                expectations.version = Some((attribute, expected));
            }
        }
        let creates = self.only_if_absent
            || expectations
                .version
                .is_some_and(|(_, version)| version == 0);
        if let Some(timestamp) = managed.updated_at {
            item.insert(timestamp.attribute.to_owned(), (timestamp.now)()?);
        }
        if let Some(timestamp) = managed.created_at.filter(|_| creates) {
            item.insert(timestamp.attribute.to_owned(), (timestamp.now)()?);
        }
        let user = user_node(self.condition.as_ref())?;
        let mut placeholders = Placeholders::default();
        let condition = render_all(
            absent.into_iter().chain(version_check).chain(user),
            &mut placeholders,
        );
        if let Some(condition) = &condition {
            crate::expr::check_expression("ConditionExpression", condition)?;
        }
        Ok(Prepared {
            item,
            condition,
            placeholders,
            expectations,
        })
    }

    pub(crate) fn transact_op(&self) -> Result<super::transact::TransactOp, Error> {
        let prepared = self.prepare()?;
        let table = <E::Table as Table>::SCHEMA;
        let key: Item = prepared
            .item
            .iter()
            .filter(|(name, _)| {
                *name == table.partition_key || Some(name.as_str()) == table.sort_key
            })
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        Ok(super::transact::TransactOp {
            kind: super::transact::WriteKind::Put,
            entity: E::SCHEMA.name,
            table_name: self.db.table_name().to_owned(),
            key_text: crate::item::key_text::<E::Table>(&prepared.item),
            key,
            update: None,
            estimate: crate::cost::put_estimate::<E::Table>(&prepared.item),
            item: Some(prepared.item),
            condition: prepared.condition,
            placeholders: prepared.placeholders,
        })
    }

    /// The request and its estimated capacity (see [`crate::cost`]).
    pub fn explain(&self) -> Result<crate::cost::Explain, Error> {
        Ok(crate::cost::Explain {
            request: self.params()?,
            estimate: self.transact_op()?.estimate,
        })
    }

    /// The request this operation sends.
    pub fn params(&self) -> Result<Request, Error> {
        let prepared = self.prepare()?;
        let conditional = prepared.condition.is_some();
        Ok(Body::default()
            .field("TableName", json!(self.db.table_name()))
            .field("Item", wire::item(&prepared.item))
            .field(
                "ConditionExpression",
                prepared.condition.map(|text| json!(text)),
            )
            .field(
                "ExpressionAttributeNames",
                prepared.placeholders.names_json(),
            )
            .field(
                "ExpressionAttributeValues",
                prepared.placeholders.values_json(),
            )
            .field(
                "ReturnValuesOnConditionCheckFailure",
                conditional.then(|| json!("ALL_OLD")),
            )
            .request("PutItem"))
    }

    /// Sends the request.
    pub async fn send(self) -> Result<(), Error> {
        self.send_with(None).await.map(|_| ())
    }

    /// Sends the request; returns the item this one replaced, if any (`ALL_OLD`).
    pub async fn send_returning_old(self) -> Result<Option<E>, Error> {
        match self.send_with(Some(ReturnValue::AllOld)).await? {
            Some(item) if !item.is_empty() => Ok(Some(crate::item::decode(item)?)),
            _ => Ok(None),
        }
    }

    async fn send_with(
        mut self,
        returning: Option<ReturnValue>,
    ) -> Result<Option<crate::Item>, Error> {
        let item = std::mem::replace(&mut self.item, Ok(Item::new()))?;
        let prepared = self.prepare_item(item)?;
        let (names, values) = prepared.placeholders.into_maps();
        let key = crate::item::key_text::<E::Table>(&prepared.item);
        let conditional = prepared.condition.is_some();
        let expectations = prepared.expectations;
        // A conditional put whose response was lost is resent by the SDK and then fails its
        // condition on its own first write. When every write of the entity is unique (a new
        // version, or a fresh `updated_at`), finding exactly this item proves it is ours; a
        // plain item could also be someone else's identical write, so that stays a failure.
        let managed = E::SCHEMA.managed;
        let unique = managed.version.is_some() || managed.updated_at.is_some();
        let written = (conditional && unique).then(|| prepared.item.clone());
        let result = self
            .db
            .client()
            .put_item()
            .table_name(self.db.table_name())
            .set_item(Some(prepared.item))
            .set_condition_expression(prepared.condition)
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(values)
            .set_return_values_on_condition_check_failure(
                conditional.then_some(ReturnValuesOnConditionCheckFailure::AllOld),
            )
            .set_return_consumed_capacity(self.db.return_consumed_capacity())
            .set_return_values(returning)
            .send()
            .boxed()
            .await;
        match result {
            Ok(output) => {
                self.db.record(output.consumed_capacity());
                Ok(output.attributes)
            }
            Err(error) => match error.as_service_error() {
                Some(aws_sdk_dynamodb::operation::put_item::PutItemError::ConditionalCheckFailedException(failure)) => {
                    if written.is_some() && failure.item() == written.as_ref() {
                        // This put is what is there: it took effect (its earlier attempt's
                        // response was lost). The item it replaced is not known any more.
                        return Ok(None);
                    }
                    Err(condition_failure(E::SCHEMA.name, key, failure.item(), expectations))
                }
                _ => Err(error.into()),
            },
        }
    }
}
