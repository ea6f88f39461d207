//! An update that creates its item where none is stored (an upsert): DynamoDB's
//! `SET latest = if_not_exists(latest, 0) + 1` on an item that may not exist yet, with every
//! guarantee a put that creates keeps.

use super::{apply, Update};
use crate::error::update::UpdateError;
use crate::error::Error;
use crate::expr::state::UpdateComplete;
use crate::schema::Entity;
use std::marker::PhantomData;

/// How many times an upsert goes round when another writer creates or deletes the item
/// between its update and its creation; each round is one update and one creation.
const ROUNDS: usize = 3;

/// An [`Update`] that creates its item from an initial value where none is stored; see
/// [`Update::or_create`].
#[must_use = "an operation does nothing until it is sent"]
pub struct OrCreate<'db, E: Entity, S> {
    update: Update<'db, E, S>,
    /// The item to create: the initial value's, with the update applied to it.
    created: Result<E, Error>,
}

impl<'db, E: Entity, S> Update<'db, E, S> {
    /// Creates the item where none is stored, or only an expired one: `initial` with this
    /// update applied to it (an increment adds to its value, a `set` replaces it), written as
    /// a put that creates writes it ([`Put::only_if_absent`](crate::op::put::Put::only_if_absent)):
    /// its index keys under its sparse rules, `created_at` and `updated_at` stamped, version 1,
    /// its unique values claimed, its expiry. Where an item is stored, this is the update as
    /// it is, with its conditions. `initial` has the update's key, and names every field, so
    /// the new item lacks none.
    ///
    /// AWS's atomic counter: `db.update(Counter::key("docs")?).increment(Counter::LATEST, 1)
    /// .or_create(&Counter { id: "docs".into(), latest: 0 })`, whose first send creates the
    /// counter at 1.
    ///
    /// It costs one request where the item is stored; where it is not, two: the update
    /// (refused, [`Error::NotFound`]) and the creation, a transaction of the one put (twice a
    /// put's capacity; its client request token makes a resend after a lost response apply
    /// once), which returns the item it wrote. A writer that creates the item between the
    /// update and the creation makes the creation fail, and the update is sent again (at most
    /// three rounds; after that, the creation's error).
    /// [`expect_version`](Update::expect_version) cannot create (no item is at that
    /// version): [`UpdateError::ConditionedCreation`] when sent.
    pub fn or_create(self, initial: &E) -> OrCreate<'db, E, S> {
        let created = create_from::<E>(initial, &self);
        OrCreate {
            update: self,
            created,
        }
    }
}

/// `initial` with `update`'s actions applied, checked to have the update's key.
fn create_from<E: Entity>(initial: &E, update: &Update<'_, E, impl Sized>) -> Result<E, Error> {
    let not_applicable = |reason: String| -> Error {
        UpdateError::NotApplicableToNewItem {
            entity: E::SCHEMA.name,
            reason,
        }
        .into()
    };
    if update.parts.expected_version.is_some() {
        return Err(UpdateError::ConditionedCreation {
            entity: E::SCHEMA.name,
            condition: "expect_version",
        }
        .into());
    }
    let key = initial.primary_key()?;
    if key.text() != update.parts.key.text() {
        return Err(not_applicable(format!(
            "the initial value's key is {}, the update's {}",
            key.text(),
            update.parts.key.text()
        )));
    }
    let mut item = crate::item::encode(initial)?;
    apply::apply_actions(&mut item, &update.parts.actions).map_err(not_applicable)?;
    Ok(crate::item::decode::<E>(item)?)
}

impl<E: Entity, S> OrCreate<'_, E, S>
where
    E: UpdateComplete<S>,
{
    /// Sends the update, and creates the item where none is stored; returns the item as it
    /// is after (`ALL_NEW`, or as created).
    pub async fn send(self) -> Result<E, Error> {
        let created = self.created?;
        let db = self.update.parts.db;
        let mut round = 0;
        loop {
            round += 1;
            let update = Update {
                parts: self.update.parts.clone(),
                state: PhantomData::<fn() -> S>,
            };
            match update.send().await {
                Err(Error::NotFound { .. }) => {}
                updated => return updated,
            }
            // One clock read for the creation, so that the item it returns is the one it
            // wrote, stamps included, with no read after it that could fail.
            let now = db.now();
            let frozen = db.clone().with_clock(move || now);
            let put = frozen.put(&created).only_if_absent();
            let Some(written) = put.encoded() else {
                // It does not encode: sending says why.
                return put.send().await.map(|()| created);
            };
            let sent = if E::SCHEMA.unique.is_empty() {
                // One write in a transaction: its client request token makes a resend after a
                // lost response apply once, where a plain conditional put, resent by the SDK,
                // could not tell its own new item from another upsert's identical one. (With
                // unique values, the put is a transaction already.)
                match put.transact_op() {
                    Ok(op) => frozen.transaction().push(op).send().await,
                    Err(error) => Err(error),
                }
            } else {
                put.send().await
            };
            let exists = match &sent {
                Err(Error::ConditionFailed { .. } | Error::VersionConflict { .. }) => true,
                Err(Error::TransactionCanceled(canceled)) => canceled.failed_condition(0).is_some(),
                _ => false,
            };
            match sent {
                Ok(()) => return Ok(crate::item::decode(written)?),
                // Created by another writer since the update found none: update it.
                Err(_) if exists && round < ROUNDS => {}
                Err(error) => return Err(error),
            }
        }
    }
}
