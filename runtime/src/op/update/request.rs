//! Preparing an update's request (checks, index maintenance, the version and timestamps,
//! the condition, the SDK request) and sending it.

use super::condition::UpdateCondition;
use super::estimate::{estimate_index_write, estimate_table_write};
use super::index_keys::Values;
use super::index_keys::{index_actions, index_inputs_missing};
use super::known::{Known, KnownValues};
use super::response::Sent;
use crate::error::update::UpdateError;
use crate::error::Error;
use crate::expr::condition::{user_node, Node};
use crate::expr::field::{into_value, to_value};
use crate::expr::update::{self, Action, SetValue};
use crate::expr::{AttrPath, Condition, Placeholders};
use crate::item::EncodeError;
use crate::schema::{index_bit, Entity, Table};
use crate::send::write::{Change, Resend, Write};
use crate::wire::Request;
use crate::{Db, Key};
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};
use serde::Serialize;

/// A field changed relative to its current value (by `ADD`, an increment, an append, ...).
#[derive(Clone)]
pub(super) struct RelativeChange {
    pub(super) field: &'static str,
    /// The operation's name, for messages.
    pub(super) operation: &'static str,
    /// The indexes the field is an input of ([`FieldIndexes`](crate::expr::field_role::FieldIndexes)).
    pub(super) indexes: u64,
}

pub(super) struct Parts<'db, E: Entity> {
    pub(super) db: &'db Db<E::Table>,
    pub(super) key: Key<E>,
    pub(super) actions: Vec<Action>,
    /// Fields set to known values, and current values supplied by the caller.
    pub(super) known: Vec<Known>,
    /// Fields changed relative to their current value.
    pub(super) relative: Vec<RelativeChange>,
    /// The indexes whose inputs the update changes (given values are current, not changed),
    /// as [`FieldIndexes`](crate::expr::field_role::FieldIndexes) bits: each one's keys are rewritten.
    pub(super) changed: u64,
    pub(super) condition: Option<Condition<E>>,
    pub(super) expected_version: Option<u64>,
    /// The path and value of [`Update::advance`](super::Update::advance), if given.
    pub(super) guard: Option<(AttrPath, AttributeValue)>,
    /// An expired item is absent to the update, as to reads: it needs a live one.
    pub(super) expiry: crate::ttl::Expiry,
    pub(super) error: Option<EncodeError>,
}

impl<E: Entity> Clone for Parts<'_, E> {
    fn clone(&self) -> Self {
        Parts {
            db: self.db,
            key: self.key.clone(),
            actions: self.actions.clone(),
            known: self.known.clone(),
            relative: self.relative.clone(),
            changed: self.changed,
            condition: self.condition.clone(),
            expected_version: self.expected_version,
            guard: self.guard.clone(),
            expiry: self.expiry,
            error: self.error.clone(),
        }
    }
}

pub(super) struct Prepared {
    pub(super) update: String,
    pub(super) condition: String,
    pub(super) placeholders: Placeholders,
    pub(super) estimate: crate::cost::Estimate,
}

impl<'db, E: Entity> Parts<'db, E> {
    /// Keeps the new value of `field` if an index key is made from it (`indexes` is not
    /// empty): it is needed again to recompute the key; other values are already encoded in
    /// the actions.
    pub(super) fn know<T: Send + Sync + 'static>(
        &mut self,
        field: &'static str,
        indexes: u64,
        value: T,
    ) {
        if indexes != 0 {
            self.changed |= indexes;
            self.known.push(Known {
                field,
                value: std::sync::Arc::new(value),
                current: None,
            });
        }
    }

    /// Notes that `field` changes by `operation`, relative to its current value.
    pub(super) fn change_relative(
        &mut self,
        field: &'static str,
        operation: &'static str,
        indexes: u64,
    ) {
        self.changed |= indexes;
        self.relative.push(RelativeChange {
            field,
            operation,
            indexes,
        });
    }

    /// Encodes a value the update keeps no copy of (see [`into_value`]).
    pub(super) fn encode_owned<V: Serialize + 'static>(
        &mut self,
        value: V,
    ) -> Option<AttributeValue> {
        self.keep_error(into_value(value))
    }

    pub(super) fn encode<V: Serialize + ?Sized>(&mut self, value: &V) -> Option<AttributeValue> {
        self.keep_error(to_value(value))
    }

    /// The value, or `None` with the first error kept for `send` to report.
    pub(super) fn keep_error(
        &mut self,
        encoded: Result<AttributeValue, EncodeError>,
    ) -> Option<AttributeValue> {
        match encoded {
            Ok(value) => Some(value),
            Err(error) => {
                self.error.get_or_insert(error);
                None
            }
        }
    }

    pub(super) fn prepare(&self) -> Result<Prepared, Error> {
        self.prepare_as_read(None)
    }

    /// The request, also conditioned on the item being as `stored` says it was read (a write
    /// that keeps unique values); `None` adds nothing.
    pub(super) fn prepare_as_read(&self, stored: Option<&crate::Item>) -> Result<Prepared, Error> {
        let as_read = stored.map(crate::expr::as_read::unchanged_since_read::<E>);
        let condition =
            user_node(self.condition.as_ref()).map(|user| match (user.cloned(), as_read) {
                (Some(user), Some(as_read)) => Some(Node::And(Box::new(user), Box::new(as_read))),
                (user, as_read) => user.or(as_read),
            });
        let inputs = Inputs {
            actions: self.actions.clone(),
            known: KnownValues::Copied(&self.known),
            condition,
        };
        self.prepare_inputs(inputs, true)
    }

    /// Prepares the request from `inputs`: the update's own, copied for `params` and
    /// `explain` (which can be called again), moved by `send`.
    pub(super) fn prepare_inputs(
        &self,
        inputs: Inputs<'_>,
        explain: bool,
    ) -> Result<Prepared, Error> {
        if let Some(error) = &self.error {
            return Err(error.clone().into());
        }
        let Inputs {
            mut actions,
            known,
            condition,
        } = inputs;
        let schema = E::SCHEMA;
        let table = <E::Table as Table>::SCHEMA;
        if actions.is_empty() {
            return Err(UpdateError::Empty {
                entity: schema.name,
            }
            .into());
        }
        // The values an update writes can alone break the 400 KB item limit.
        let written: usize = actions.iter().map(action_size).sum();
        if written > crate::item::MAX_ITEM_BYTES {
            return Err(crate::LimitError::ItemSize {
                key: self.key.text(),
                size: written,
                max: crate::item::MAX_ITEM_BYTES,
            }
            .into());
        }
        let values = Values {
            known: known.as_slice(),
            key: &self.key,
        };
        let mut estimate = crate::cost::Estimate::default();
        if explain {
            estimate_table_write(&mut estimate);
        }
        for (position, index) in schema.indexes.iter().enumerate() {
            let bit = index_bit(position);
            if self.changed & bit == 0 {
                continue;
            }
            if let Some(change) = self
                .relative
                .iter()
                .find(|change| change.indexes & bit != 0)
            {
                return Err(UpdateError::RelativeIndexInput {
                    entity: schema.name,
                    field: change.field,
                    index: index.index.slot,
                    operation: change.operation,
                }
                .into());
            }
            let mut missing: Vec<&str> = Vec::new();
            for input in index.inputs() {
                if !values.has(input) && !missing.contains(&input) {
                    missing.push(input);
                }
            }
            if !missing.is_empty() {
                let changes = |name: &&str| {
                    known
                        .as_slice()
                        .iter()
                        .any(|known| known.field == *name && known.current.is_none())
                        || self.relative.iter().any(|change| change.field == *name)
                };
                return Err(index_inputs_missing(schema.name, index, &missing, changes).into());
            }
            let removes = index_actions::<E>(index, table, &values, &mut actions)?;
            if explain {
                estimate_index_write(&mut estimate, index.index.name, removes);
            }
        }
        let managed = schema.managed;
        if let Some(attribute) = managed.version {
            if let Some(expected) = self.expected_version.filter(|v| *v >= managed.version_max) {
                return Err(Error::VersionOverflow {
                    entity: schema.name,
                    key: self.key.text(),
                    version: expected,
                });
            }
            // From zero where another tool wrote the item without it, as a put counts it.
            actions.push(Action::Set(
                AttrPath::attribute(attribute),
                SetValue::CountUp(AttributeValue::N("1".to_owned())),
            ));
        }
        if let Some(timestamp) = managed.updated_at {
            actions.push(Action::Set(
                AttrPath::attribute(timestamp.attribute),
                SetValue::Value((timestamp.at)(self.db.now())?),
            ));
        }
        if let Some(action) = actions.iter().find(|action| operand_is_empty_set(action)) {
            return Err(UpdateError::EmptySet {
                entity: schema.name,
                action: action.to_string(),
            }
            .into());
        }
        // Index keys, the plain attributes that key an index included, as a put checks them.
        for action in &actions {
            if let Action::Set(path, SetValue::Value(value) | SetValue::IfNotExists(value)) = action
            {
                if let Some(attribute) = path.top_level() {
                    crate::item::check_index_key_write::<E>(attribute, value)?;
                }
            }
        }
        // Checked on the whole list, the library's own actions included, before anything is sent.
        if let Some((first, second)) = update::overlapping(&actions) {
            return Err(UpdateError::OverlappingPaths {
                entity: schema.name,
                first: first.to_string(),
                second: second.to_string(),
            }
            .into());
        }
        let mut condition = UpdateCondition {
            partition_key: table.partition_key,
            version: managed.version.zip(self.expected_version),
            // Without an expected version, the condition itself keeps the count in range.
            version_max: managed
                .version
                .filter(|_| self.expected_version.is_none())
                .map(|attribute| (attribute, managed.version_max)),
            known,
            expiry: table
                .ttl_attribute
                .map(|attribute| (attribute, self.expiry.now)),
            user: condition?,
        };
        let ([update, condition], placeholders) =
            crate::expr::shape::render([&mut update::Actions::new(actions), &mut condition]);
        Ok(Prepared {
            update,
            condition,
            placeholders,
            estimate,
        })
    }

    /// The request `send` sends (`ALL_NEW`).
    pub(super) fn params(&self) -> Result<Request, Error> {
        self.db
            .write_params(self.write(self.prepare()?, ReturnValue::AllNew))
    }

    /// Sends the request, asking for `returning`, and `finish`es the attributes returned.
    pub(super) async fn send<T>(
        self,
        returning: ReturnValue,
        finish: impl FnOnce(&Sent<'db, E>, crate::Item) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let (write, sent) = self.request(returning)?;
        let written = sent.db.write(write).await?;
        finish(&sent, sent.returned(written)?)
    }

    /// The write for `returning`, resent after a lost response only where that is safe, and
    /// what its response is read with.
    fn request(mut self, returning: ReturnValue) -> Result<(Write, Sent<'db, E>), Error> {
        let actions = std::mem::take(&mut self.actions);
        // An update that adds, appends or removes by position applies twice if resent after
        // its response was lost, as counting the version up does, whatever the other actions
        // do. With a version to condition on, a second application fails; a guarded update is
        // resent by the library, which tells its own lost attempt after a resend; any other is
        // never resent blindly.
        let repeats = E::SCHEMA.managed.version.is_some() || actions.iter().any(Action::repeats);
        let resend = match (&self.guard, self.expected_version) {
            (_, Some(_)) => Resend::Safe,
            (Some(_), None) => Resend::Guarded,
            (None, None) if repeats => Resend::Never,
            (None, None) => Resend::Safe,
        };
        let mut known = std::mem::take(&mut self.known);
        let inputs = Inputs {
            actions,
            known: KnownValues::Moved(&mut known),
            condition: self.condition.take().map(Condition::into_node).transpose(),
        };
        let write = self
            .write(self.prepare_inputs(inputs, false)?, returning.clone())
            .resend(resend);
        // Only this is kept while the request is out.
        let sent = Sent {
            db: self.db,
            key: self.key,
            expected_version: self.expected_version,
            expiry: self.expiry,
            guard: self.guard.map(|guard| (guard, returning)),
        };
        Ok((write, sent))
    }

    /// The write of `prepared`, asking for `returning`.
    pub(super) fn write(&self, prepared: Prepared, returning: ReturnValue) -> Write {
        Write::rendered(
            E::SCHEMA.name,
            Change::Update {
                key: self.key.to_attributes(),
                expression: prepared.update,
            },
            Some(prepared.condition),
            prepared.placeholders,
        )
        .returning(Some(returning))
        .capacity_when_tracked()
    }
}

/// What a request is made from: the update's actions, known values and condition.
pub(super) struct Inputs<'a> {
    pub(super) actions: Vec<Action>,
    pub(super) known: KnownValues<'a>,
    pub(super) condition: Result<Option<Node>, EncodeError>,
}

/// The bytes an action writes: its path's names and its value.
pub(super) fn action_size(action: &Action) -> usize {
    let value = match action {
        Action::Set(_, SetValue::Value(value))
        | Action::Set(_, SetValue::IfNotExists(value))
        | Action::Set(_, SetValue::Plus(value))
        | Action::Set(_, SetValue::Minus(value))
        | Action::Set(_, SetValue::Append(value))
        | Action::Set(_, SetValue::Prepend(value))
        | Action::Set(_, SetValue::CountUp(value))
        | Action::Add(_, value)
        | Action::Delete(_, value) => crate::item::value_size(value),
        Action::Remove(_) => 0,
    };
    let path = match action {
        Action::Set(path, _)
        | Action::Add(path, _)
        | Action::Delete(path, _)
        | Action::Remove(path) => path,
    };
    value + path.root().len()
}

/// Whether DynamoDB would refuse the action's operand as an empty set: `ADD` or `DELETE` of no
/// elements (serde writes an empty Rust set as an empty list), or any value holding one.
pub(super) fn operand_is_empty_set(action: &Action) -> bool {
    match action {
        Action::Add(_, AttributeValue::L(elements))
        | Action::Delete(_, AttributeValue::L(elements)) => elements.is_empty(),
        Action::Add(_, value) | Action::Delete(_, value) => crate::item::holds_empty_set(value),
        Action::Set(_, value) => match value {
            SetValue::Value(value)
            | SetValue::IfNotExists(value)
            | SetValue::Append(value)
            | SetValue::Prepend(value) => crate::item::holds_empty_set(value),
            SetValue::Plus(_) | SetValue::Minus(_) | SetValue::CountUp(_) => false,
        },
        Action::Remove(_) => false,
    }
}
