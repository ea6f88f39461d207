//! Backfilling one item an older schema version wrote: a conditional `UpdateItem` that adds
//! the index key attributes and the schema version, and only if nothing it depends on changed
//! since the item was read.

use super::schema_version::item_schema_version;
use crate::error::migration::MigrationError;
use crate::error::Error;
use crate::expr::condition::{Comparison, Node, Operand};
use crate::expr::update::{self, Action, SetValue};
use crate::expr::{AttrPath, Placeholders};
use crate::item::{self, Item};
use crate::schema::{Entity, IndexKind, Table};
use crate::send::write::{Change, Resend, Write, Written};
use crate::wire::Request;
use crate::Admin;
use crate::{Db, Key};
use aws_sdk_dynamodb::types::AttributeValue;

/// How often one item is re-derived from its current state after concurrent writers changed
/// it, before it is left to them (they keep changing it, so the next sweep or read handles it).
const MAX_ATTEMPTS: usize = 3;

/// What backfilling one item did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BackfillOutcome {
    /// The item already had the entity's schema version (or a newer one): nothing written.
    Current,
    /// The index key attributes and the schema version were written.
    Written {
        /// Write capacity units consumed, as DynamoDB reported them, or estimated from the
        /// item's size and the indexes written when the engine reports none.
        write_units: f64,
        /// Whether a concurrent writer changed the item first, so the keys were computed
        /// again from the item as that writer left it (and the write conditioned on that).
        after_change: bool,
    },
    /// A concurrent writer changed or deleted the item and it no longer needs this backfill
    /// (the writer wrote the new shape), or kept changing it; nothing was written, so that
    /// writer's data stands.
    ChangedConcurrently,
}

/// The result of backfilling one item: the entity as last read, and what was done.
#[derive(Debug, Clone, PartialEq)]
pub struct Backfilled<E> {
    /// The entity as last read (`None` when a concurrent writer deleted it).
    pub entity: Option<E>,
    /// What was done.
    pub outcome: BackfillOutcome,
}

/// A ready backfill `UpdateItem`.
pub(super) struct BackfillRequest {
    key: Item,
    update: String,
    condition: String,
    placeholders: Placeholders,
    estimated_units: f64,
    /// The item as the write leaves it.
    after: Item,
}

/// An item read from the table: current, or old with the write that brings it up to date.
pub(super) enum Prepared<E> {
    Current(E),
    // Boxed: the request, with the item as it leaves it, is most of the value's size.
    Old(E, Box<BackfillRequest>),
}

/// DynamoDB's write unit: 1 KB.
const WRITE_UNIT_BYTES: usize = 1024;

/// Decides whether `raw` needs a backfill and builds the conditional update if it does.
pub(super) fn prepare<E: Entity>(raw: &Item) -> Result<Prepared<E>, Error> {
    let table = <E::Table as Table>::SCHEMA;
    let schema = E::SCHEMA;
    let version = item_schema_version(raw, table);
    let entity: E = item::decode(raw.clone())?;
    if version.is_some_and(|version| version >= schema.schema_version) {
        return Ok(Prepared::Current(entity));
    }
    let key = entity.primary_key()?;
    let stored = item::key_text::<E::Table>(raw);
    if key.text() != stored {
        return Err(MigrationError::KeyChanged {
            entity: schema.name,
            stored,
            rendered: key.text(),
        }
        .into());
    }
    let mut computed = Item::new();
    entity.write_index_keys(&mut computed)?;

    let mut actions = Vec::new();
    let mut indexes_written = 0usize;
    let mut handled: Vec<&str> = Vec::new();
    for entity_index in schema.indexes {
        let index = entity_index.index;
        let partition = match index.kind {
            // Only key attributes rendered from a template: an index that reads an item
            // attribute as is (`gsi2pk = author`) has nothing to backfill, and that attribute is
            // the entity's data, never to be touched.
            IndexKind::Global => entity_index.partition_key.map(|_| index.partition_key),
            // A local index shares the table's partition key, which is in the key already.
            IndexKind::Local => None,
        };
        let sort = index.sort_key.filter(|_| entity_index.sort_key.is_some());
        let mut wrote = false;
        for attribute in partition.into_iter().chain(sort) {
            let is_data = schema
                .fields
                .iter()
                .any(|field| field.attribute == attribute);
            if attribute == table.partition_key
                || Some(attribute) == table.sort_key
                || is_data
                || handled.contains(&attribute)
            {
                continue;
            }
            handled.push(attribute);
            match computed.get(attribute) {
                Some(value) => {
                    wrote = true;
                    actions.push(Action::Set(
                        AttrPath::attribute(attribute),
                        SetValue::Value(value.clone()),
                    ));
                }
                // A sparse index whose rule fails: the item must not carry its keys.
                None if raw.contains_key(attribute) => {
                    actions.push(Action::Remove(AttrPath::attribute(attribute)))
                }
                None => {}
            }
        }
        indexes_written += usize::from(wrote);
    }
    let version_value = AttributeValue::N(schema.schema_version.to_string());
    actions.push(Action::Set(
        AttrPath::attribute(table.schema_version_attribute),
        SetValue::Value(version_value.clone()),
    ));

    // The item must still exist, still be this entity, still be old, and every field the
    // index keys (and sparse rules) derive from must still hold the value read: otherwise a
    // concurrent writer changed it and these keys could be stale.
    let path = AttrPath::attribute;
    let mut conditions = vec![
        Node::Exists(path(table.partition_key)),
        Node::Compare(
            Operand::Path(path(table.entity_attribute)),
            Comparison::Eq,
            Operand::Value(AttributeValue::S(schema.name.to_owned())),
        ),
        Node::Or(
            Box::new(Node::NotExists(path(table.schema_version_attribute))),
            Box::new(Node::Compare(
                Operand::Path(path(table.schema_version_attribute)),
                Comparison::Lt,
                Operand::Value(version_value),
            )),
        ),
    ];
    let key_fields: Vec<&str> = schema.primary_key_fields().collect();
    let mut inputs: Vec<&str> = Vec::new();
    for input in schema.indexes.iter().flat_map(|index| index.inputs()) {
        if !inputs.contains(&input) && !key_fields.contains(&input) {
            inputs.push(input);
        }
    }
    for input in inputs {
        let Some(field) = schema.field(input) else {
            continue;
        };
        conditions.push(match raw.get(field.attribute) {
            Some(value) => Node::Compare(
                Operand::Path(path(field.attribute)),
                Comparison::Eq,
                Operand::Value(value.clone()),
            ),
            None => Node::NotExists(path(field.attribute)),
        });
    }
    let condition = conditions
        .into_iter()
        .reduce(|left, right| Node::And(Box::new(left), Box::new(right)))
        .unwrap_or_else(|| Node::Exists(path(table.partition_key)));

    let mut placeholders = Placeholders::default();
    // The item as the write leaves it (it sets and removes top-level attributes only): how a
    // write sent again after a lost response tells its own first attempt from a concurrent
    // writer's change.
    let mut after = raw.clone();
    for action in &actions {
        match action {
            Action::Set(path, SetValue::Value(value)) => {
                after.insert(path.root().to_owned(), value.clone());
            }
            Action::Remove(path) => {
                after.remove(path.root());
            }
            _ => {}
        }
    }
    let update = update::render(actions, &mut placeholders);
    let condition = condition.to_expression(&mut placeholders);

    let item_units = item::item_size(&after).div_ceil(WRITE_UNIT_BYTES).max(1);
    // Cast: unit counts are small integers, exactly representable.
    let estimated_units = (item_units * (1 + indexes_written)) as f64;
    Ok(Prepared::Old(
        entity,
        Box::new(BackfillRequest {
            key: key.to_attributes(),
            update,
            condition,
            placeholders,
            estimated_units,
            after,
        }),
    ))
}

impl BackfillRequest {
    /// The write of a backfill of `E`.
    fn write(self, entity: &'static str) -> Write {
        Write::rendered(
            entity,
            Change::Update {
                key: self.key,
                expression: self.update,
            },
            Some(self.condition),
            self.placeholders,
        )
    }
}

/// What one conditional write did.
enum Sent {
    Written(f64),
    /// The condition failed; the item as it is now (`None`: deleted).
    Changed(Option<Item>),
}

async fn send<E: Entity>(
    db: &Db<E::Table>,
    mut request: BackfillRequest,
    resend: Resend,
) -> Result<Sent, Error> {
    let estimated_units = request.estimated_units;
    let after = std::mem::take(&mut request.after);
    Ok(
        match db
            .write(request.write(E::SCHEMA.name).resend(resend))
            .await?
        {
            Written::Applied { units, .. } => Sent::Written(units.unwrap_or(estimated_units)),
            // The item is exactly as this write leaves it: an earlier attempt applied and its
            // response was lost, and the attempt after it was resent, by the write path or,
            // after a throttle, by the sweep (a concurrent writer that left the very same item
            // comes to the same end).
            Written::ConditionFailed {
                current: Some(current),
                ..
            } if current == after => Sent::Written(estimated_units),
            Written::ConditionFailed { current, .. } => Sent::Changed(current),
        },
    )
}

impl<T: Table> Db<T> {
    /// Lazy backfill on read (opt in per call site): reads the item like
    /// [`Db::get`](crate::Db::get) and, if an older schema version wrote it, backfills it with
    /// [`Admin::backfill_item`](crate::Admin::backfill_item), so frequently read items reach the
    /// new shape without waiting for the sweep.
    ///
    /// The read is what matters to the caller: when the backfill write itself fails (e.g.
    /// throttling), the entity is still returned and the failure is logged (`tracing`, warn,
    /// target `singletable`: the entity and the error's kind, and its key and message only
    /// with [`Db::trace_values`]); the sweep will handle the item.
    pub async fn get_and_backfill<E: Entity<Table = T>>(&self, key: Key<E>) -> Result<E, Error> {
        let request = self.get_item_request(key.to_attributes(), false);
        let traced = self.traced_key(|| key.text().to_string());
        let output = self
            .send_get_item(request, E::SCHEMA.name, traced, Ok)
            .await?;
        let Some(raw) = output.item else {
            return Err(Error::NotFound {
                entity: E::SCHEMA.name,
                key: key.text(),
            });
        };
        let table = T::SCHEMA;
        let old = item_schema_version(&raw, table)
            .is_some_and(|version| version < E::SCHEMA.schema_version);
        if !old {
            return Ok(item::decode(raw)?);
        }
        let read: E = item::decode(raw.clone())?;
        match self.admin().backfill_item::<E>(raw).await {
            Ok(Backfilled {
                entity: Some(entity),
                ..
            }) => Ok(entity),
            // Deleted since the read: the caller still gets what it read, as with any read
            // that races a delete.
            Ok(Backfilled { entity: None, .. }) => Ok(read),
            Err(error) => {
                // The key and the error's text (which can quote values) only where the `Db`
                // records values, as its spans do.
                let key = self.traced_key(|| key.text().to_string());
                let message = self.traced_key(|| error.to_string());
                tracing::warn!(
                    target: "singletable",
                    entity = E::SCHEMA.name,
                    error.type = error.kind(),
                    key,
                    error.message = message,
                    "lazy backfill failed; the item keeps its old shape until the sweep"
                );
                Ok(read)
            }
        }
    }
}

impl<'db, T: Table> Admin<'db, T> {
    /// Backfills one item read from the table (e.g. by your own query or scan): if an older
    /// schema version of `E` wrote it, writes the index key attributes the current version
    /// computes, and the current schema version, with a conditional `UpdateItem` that holds
    /// only while the item still exists, is still old, and still has the values read in every
    /// field those keys derive from. Nothing else is written, so no concurrent write is lost.
    ///
    /// When a concurrent writer changed the item first, the keys are computed again from the
    /// item as the failed condition returned it (never from stale data) and the write is
    /// conditioned on that state, a few times at most.
    ///
    /// Fails with [`Error::Decode`] for an item that is not an `E`, and with
    /// [`MigrationError::KeyChanged`] when the stored primary key is not the one `E`'s
    /// templates render (a key change needs a copy to new keys, not a backfill).
    pub async fn backfill_item<E: Entity<Table = T>>(
        &self,
        item: Item,
    ) -> Result<Backfilled<E>, Error> {
        self.backfill_item_as::<E>(item, Resend::Safe).await
    }

    /// [`Admin::backfill_item`](crate::Admin::backfill_item) for a sweep: a throttled write
    /// comes back at once, for the sweep to count against its key, slow down (with a rate)
    /// and send again.
    pub(crate) async fn backfill_item_for_sweep<E: Entity<Table = T>>(
        &self,
        item: Item,
    ) -> Result<Backfilled<E>, Error> {
        self.backfill_item_as::<E>(item, Resend::Paced).await
    }

    async fn backfill_item_as<E: Entity<Table = T>>(
        &self,
        item: Item,
        resend: Resend,
    ) -> Result<Backfilled<E>, Error> {
        let mut current = item;
        let mut after_change = false;
        for _ in 0..MAX_ATTEMPTS {
            let prepared = match prepare::<E>(&current) {
                Ok(prepared) => prepared,
                // A concurrent writer left something this backfill cannot handle; its
                // write stands.
                Err(_) if after_change => {
                    return Ok(Backfilled {
                        entity: None,
                        outcome: BackfillOutcome::ChangedConcurrently,
                    })
                }
                Err(error) => return Err(error),
            };
            let (entity, request) = match prepared {
                Prepared::Current(entity) => {
                    return Ok(Backfilled {
                        entity: Some(entity),
                        outcome: if after_change {
                            BackfillOutcome::ChangedConcurrently
                        } else {
                            BackfillOutcome::Current
                        },
                    })
                }
                Prepared::Old(entity, request) => (entity, request),
            };
            match send::<E>(self.db, *request, resend).await? {
                Sent::Written(write_units) => {
                    return Ok(Backfilled {
                        entity: Some(entity),
                        outcome: BackfillOutcome::Written {
                            write_units,
                            after_change,
                        },
                    })
                }
                Sent::Changed(None) => {
                    return Ok(Backfilled {
                        entity: None,
                        outcome: BackfillOutcome::ChangedConcurrently,
                    })
                }
                Sent::Changed(Some(now)) => {
                    current = now;
                    after_change = true;
                }
            }
        }
        let entity = item::decode(current).ok();
        Ok(Backfilled {
            entity,
            outcome: BackfillOutcome::ChangedConcurrently,
        })
    }

    /// The conditional `UpdateItem` [`Admin::backfill_item`](crate::Admin::backfill_item) would
    /// send first for `item`, or `None` when the item is already at `E`'s schema version.
    pub fn backfill_params<E: Entity<Table = T>>(
        &self,
        item: &Item,
    ) -> Result<Option<Request>, Error> {
        Ok(match prepare::<E>(item)? {
            Prepared::Current(_) => None,
            Prepared::Old(_, request) => Some(self.db.write_params(request.write(E::SCHEMA.name))?),
        })
    }
}
