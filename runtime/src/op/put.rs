//! `PutItem`.

use super::condition_failure;
use crate::error::{EncodeError, Error};
use crate::expr::condition::{all, user_node, Node};
use crate::expr::{AttrPath, Condition, Placeholders};
use crate::item::Item;
use crate::schema::{Entity, Table};
use crate::wire::{self, Body, Request};
use crate::Db;
use aws_sdk_dynamodb::types::ReturnValuesOnConditionCheckFailure;
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
        self.condition = Some(match self.condition.take() {
            Some(existing) => existing.and(condition),
            None => condition,
        });
        self
    }

    fn prepare(&self) -> Result<Prepared, Error> {
        let item = self.item.clone()?;
        let table = <E::Table as Table>::SCHEMA;
        let absent = self
            .only_if_absent
            .then(|| Node::NotExists(AttrPath::attribute(table.partition_key)));
        let user = user_node(self.condition.as_ref())?;
        let mut placeholders = Placeholders::default();
        let condition =
            all(absent.into_iter().chain(user)).map(|node| node.to_expression(&mut placeholders));
        Ok(Prepared {
            item,
            condition,
            placeholders,
        })
    }

    /// The request this operation sends.
    pub fn params(&self) -> Result<Request, Error> {
        let prepared = self.prepare()?;
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
                (self.only_if_absent || self.condition.is_some()).then(|| json!("ALL_OLD")),
            )
            .request("PutItem"))
    }

    /// Sends the request.
    pub async fn send(self) -> Result<(), Error> {
        let prepared = self.prepare()?;
        let key = crate::item::key_text::<E::Table>(&prepared.item);
        let conditional = prepared.condition.is_some();
        let result = self
            .db
            .client()
            .put_item()
            .table_name(self.db.table_name())
            .set_item(Some(prepared.item))
            .set_condition_expression(prepared.condition)
            .set_expression_attribute_names(prepared.placeholders.names())
            .set_expression_attribute_values(prepared.placeholders.values())
            .set_return_values_on_condition_check_failure(
                conditional.then_some(ReturnValuesOnConditionCheckFailure::AllOld),
            )
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(error) => match error.as_service_error() {
                Some(aws_sdk_dynamodb::operation::put_item::PutItemError::ConditionalCheckFailedException(failure)) => {
                    Err(condition_failure(E::SCHEMA.name, key, failure.item(), false))
                }
                _ => Err(error.into()),
            },
        }
    }
}
