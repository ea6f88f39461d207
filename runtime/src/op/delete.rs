//! `DeleteItem`.

use super::{condition_failure, Expectations};
use crate::error::Error;
use crate::expr::as_read::UserAsRead;
use crate::expr::condition::{render_all, user_node, ConditionPart};
use crate::expr::{Condition, Placeholders};
use crate::schema::{Entity, Table};
use crate::send::write::{Change, Write, Written};
use crate::wire::Request;
use crate::{Db, Key};
use aws_sdk_dynamodb::types::ReturnValue;
use std::future::Future;

impl<T: Table> Db<T> {
    /// Deletes the item with this key (succeeding if there is none, unless told otherwise).
    pub fn delete<E: Entity<Table = T>>(&self, key: Key<E>) -> Delete<'_, E> {
        Delete {
            db: self,
            key,
            only_if_exists: false,
            expiry: crate::ttl::Expiry::hidden(T::SCHEMA, || self.now()),
            condition: None,
            stored_as_read: None,
        }
    }
}

/// A `DeleteItem` of one entity; see [`Db::delete`].
#[must_use = "an operation does nothing until it is sent"]
pub struct Delete<'db, E: Entity> {
    db: &'db Db<E::Table>,
    key: Key<E>,
    only_if_exists: bool,
    /// An expired item is absent to the delete, as to reads: `only_if_exists` needs a live one.
    expiry: crate::ttl::Expiry,
    condition: Option<Condition<E>>,
    /// That the item is as a write with unique values read it (see `Put`'s).
    stored_as_read: Option<crate::expr::condition::Node>,
}

impl<'db, E: Entity> Delete<'db, E> {
    /// Fails with [`Error::NotFound`] if there is no item to delete.
    pub fn only_if_exists(mut self) -> Self {
        self.only_if_exists = true;
        self
    }

    /// Deletes only if `condition` holds for the current item.
    pub fn condition(mut self, condition: Condition<E>) -> Self {
        Condition::and_to(&mut self.condition, condition);
        self
    }

    /// The expiry this delete judges the item by.
    pub(crate) fn expiry(&self) -> crate::ttl::Expiry {
        self.expiry
    }

    /// What the delete's condition requires, to explain its failure.
    fn expectations(&self) -> Expectations {
        Expectations {
            requires_existing: self.only_if_exists,
            version: None,
            version_max: None,
            expiry: self.expiry,
        }
    }

    fn expression(&self) -> Result<(Option<String>, Placeholders), Error> {
        let table = <E::Table as Table>::SCHEMA;
        let mut exists = self
            .only_if_exists
            .then(|| crate::expr::as_read::present(self.expiry, table));
        // The user's condition sees an expired item as no item.
        let user = user_node(self.condition.as_ref())?;
        let mut user = user.map(|user| crate::expr::as_read::user_as_read(user, self.expiry));
        let mut placeholders = Placeholders::default();
        let parts = (exists.iter_mut().map(ConditionPart::Owned))
            .chain(user.iter_mut().flat_map(UserAsRead::parts))
            .chain(self.stored_as_read.iter().map(ConditionPart::Shared));
        let text = render_all(parts, &mut placeholders);
        Ok((text, placeholders))
    }

    pub(crate) fn transact_op(&self) -> Result<super::transact::TransactOp, Error> {
        Ok(super::transact::TransactOp::of(
            super::transact::WriteKind::Delete,
            E::SCHEMA.name,
            self.db.table_name(),
            (self.key.to_attributes(), self.key.text()),
            self.write(None)?,
            delete_estimate::<E>(),
        ))
    }

    /// The request and its estimated capacity (see [`crate::cost`]).
    pub fn explain(&self) -> Result<crate::cost::Explain, Error> {
        Ok(crate::cost::Explain {
            request: self.params()?,
            estimate: delete_estimate::<E>(),
        })
    }

    /// The request this operation sends.
    pub fn params(&self) -> Result<Request, Error> {
        self.db.write_params(self.write(None)?)
    }

    /// Sends the request. For an entity with unique values, it is a transaction that also
    /// releases the item's sentinels (see [`crate::unique`]), after a consistent read of it.
    pub fn send(self) -> impl Future<Output = Result<(), Error>> + 'db {
        crate::unique::plain_or_with_sentinels(
            self,
            |_| Ok(()),
            |delete, finish| delete.send_with(None, finish),
        )
    }

    /// Sends the request; returns the item it deleted, if there was one (`ALL_OLD`).
    pub fn send_returning_old(self) -> impl Future<Output = Result<Option<E>, Error>> + 'db {
        crate::unique::plain_or_with_sentinels(self, super::decode_old, |delete, finish| {
            delete.send_with(Some(ReturnValue::AllOld), finish)
        })
    }

    /// The write, asking for `returning`.
    fn write(&self, returning: Option<ReturnValue>) -> Result<Write, Error> {
        let (condition, placeholders) = self.expression()?;
        let change = Change::Delete {
            key: self.key.to_attributes(),
        };
        Ok(
            Write::rendered(E::SCHEMA.name, change, condition, placeholders)
                .returning(returning)
                .capacity_when_tracked(),
        )
    }

    /// Sends the request, asking for `returning`, and `finish`es the attributes returned.
    async fn send_with<T: 'db>(
        self,
        returning: Option<ReturnValue>,
        finish: impl FnOnce(Option<crate::Item>) -> Result<T, Error> + Send + 'db,
    ) -> Result<T, Error> {
        match self.db.write(self.write(returning)?).await? {
            // An expired item it deleted is none, as it is to reads.
            Written::Applied { attributes, .. } => {
                finish(attributes.filter(|old| !self.expiry.has_expired(old)))
            }
            Written::ConditionFailed { current, .. } => Err(condition_failure(
                E::SCHEMA.name,
                self.key.text(),
                current.as_ref(),
                self.expectations(),
            )),
        }
    }
}

/// A delete writes the table and removes the item's index entries, if it has them.
fn delete_estimate<E: Entity>() -> crate::cost::Estimate {
    use crate::cost::{write_units, ASSUMED_ITEM_BYTES};
    let units = write_units(ASSUMED_ITEM_BYTES);
    let mut estimate = crate::cost::Estimate::default();
    estimate.write(
        units,
        format!("table delete (assuming at most {ASSUMED_ITEM_BYTES} bytes)"),
    );
    for index in E::SCHEMA.indexes {
        estimate.write(
            units,
            format!("{} entry deleted, if the item has one", index.index.name),
        );
    }
    estimate
}

impl<E: Entity> crate::send::write::sealed::Sealed for Delete<'_, E> {}
impl<E: Entity + crate::unique::NoUniqueValues> super::transact::TransactWrite for Delete<'_, E> {
    fn transact_op(&self) -> Result<super::transact::TransactOp, Error> {
        self.transact_op()
    }
}

impl<'db, E: Entity> crate::unique::SentinelWrite<'db, E> for Delete<'db, E> {
    fn db(&self) -> &'db Db<E::Table> {
        self.db
    }

    fn key(&self) -> Result<crate::Item, Error> {
        Ok(self.key.to_attributes())
    }

    fn attempt(&self, stored: Option<&crate::Item>) -> Result<crate::unique::Attempt, Error> {
        let delete = Delete {
            db: self.db,
            key: self.key.clone(),
            only_if_exists: self.only_if_exists,
            expiry: self.expiry,
            condition: self.condition.clone(),
            stored_as_read: Some(crate::expr::as_read::as_read::<E>(stored, self.expiry)),
        };
        Ok(crate::unique::Attempt {
            op: delete.transact_op()?,
            new: None,
        })
    }

    fn failed(
        &self,
        reason: &super::transact::CancellationReason,
        now: Option<&crate::Item>,
    ) -> Error {
        condition_failure(E::SCHEMA.name, reason.key.clone(), now, self.expectations())
    }
}
