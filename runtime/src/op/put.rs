//! `PutItem`.

use super::{condition_failure, Expectations};
use crate::error::Error;
use crate::expr::as_read::UserAsRead;
use crate::expr::condition::{render_all, user_node, Comparison, ConditionPart, Node, Operand};
use crate::expr::{AttrPath, Condition, Placeholders};
use crate::item::EncodeError;
use crate::item::Item;
use crate::schema::{Entity, Table};
use crate::send::write::{Change, Write, Written};
use crate::wire::Request;
use crate::Db;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};
use std::future::Future;

/// How many times a put that keeps `created_at` is sent when the stored item keeps changing
/// between its attempts.
const ATTEMPTS: usize = 5;

impl<T: Table> Db<T> {
    /// Writes an item, replacing any item with the same key unless told otherwise.
    pub fn put<'db, E: Entity<Table = T>>(&'db self, entity: &E) -> Put<'db, E> {
        Put {
            db: self,
            item: crate::item::encode(entity),
            only_if_absent: false,
            moving: false,
            created: Created::Unknown,
            condition: None,
            stored_as_read: None,
        }
    }
}

/// The `created_at` a put writes instead of the value's.
enum CreatedAt {
    /// This write's time.
    Now,
    /// The stored item's.
    Stored(AttributeValue),
}

/// What a put knows of the stored item's `created_at`, which decides the one it writes.
#[derive(Debug, Clone, PartialEq)]
enum Created {
    /// Nothing yet: a put that creates (`only_if_absent`, version 0) stamps its own time; one
    /// that may replace learns the stored one first (see [`Put::send_keeping_created_at`]).
    Unknown,
    /// There is no item (or the put is conditioned on there being none): stamped now.
    Absent,
    /// The stored item has this `created_at` (`None`: the attribute is missing), which the
    /// put keeps, conditioned on it.
    Stored(Option<AttributeValue>),
    /// As read by a write conditioned on the whole item as read (which keeps unique values):
    /// this one is kept, or, with no item, the put's own time.
    AsRead(Option<Option<AttributeValue>>),
}

/// A `PutItem` of one entity; see [`Db::put`].
#[must_use = "an operation does nothing until it is sent"]
pub struct Put<'db, E: Entity> {
    db: &'db Db<E::Table>,
    item: Result<Item, EncodeError>,
    only_if_absent: bool,
    /// The put is the new half of a move ([`Db::rekey`]): a creation time is kept, not set.
    moving: bool,
    /// What is known of the stored `created_at`.
    created: Created,
    condition: Option<Condition<E>>,
    /// That the item is as a write with unique values read it (the library's own condition,
    /// kept apart from the user's, which sees an expired item as no item).
    stored_as_read: Option<Node>,
}

struct Prepared {
    item: Item,
    condition: Option<String>,
    placeholders: Placeholders,
    expectations: Expectations,
}

impl<'db, E: Entity> Put<'db, E> {
    /// Writes only if no item has this key; otherwise fails with [`Error::ConditionFailed`]
    /// carrying the existing item.
    pub fn only_if_absent(mut self) -> Self {
        self.only_if_absent = true;
        self
    }

    /// Marks the put as the new half of a move: the entity's `created_at` is kept as it is.
    pub(crate) fn moving(mut self) -> Self {
        self.moving = true;
        self
    }

    /// Writes only if `condition` holds for the item currently at this key.
    pub fn condition(mut self, condition: Condition<E>) -> Self {
        Condition::and_to(&mut self.condition, condition);
        self
    }

    /// The item as it will be written (`None` if it does not encode).
    pub(crate) fn encoded(&self) -> Option<Item> {
        self.written_item().ok()
    }

    /// The item as it will be written, or why it cannot be.
    pub(crate) fn written_item(&self) -> Result<Item, Error> {
        self.prepare().map(|prepared| prepared.item)
    }

    fn prepare(&self) -> Result<Prepared, Error> {
        self.prepare_item(self.item.clone()?)
    }

    /// The `created_at` this put writes, when not the one the value carries: a put that
    /// creates stamps its own time, one that replaces keeps the stored time. A put in a
    /// hand-built transaction cannot learn the stored time, and writes the value's; so does a
    /// put over an item written before the field existed.
    fn created_at_written(&self, creates: bool) -> Option<CreatedAt> {
        if creates {
            return Some(CreatedAt::Now);
        }
        match &self.created() {
            Created::Unknown | Created::Stored(None) | Created::AsRead(Some(None)) => None,
            Created::Absent | Created::AsRead(None) => Some(CreatedAt::Now),
            Created::Stored(Some(stored)) | Created::AsRead(Some(Some(stored))) => {
                Some(CreatedAt::Stored(stored.clone()))
            }
        }
    }

    /// Prepares the request around `item` (the encoded entity, cloned for `params`, moved by
    /// `send`).
    fn prepare_item(&self, mut item: Item) -> Result<Prepared, Error> {
        let table = <E::Table as Table>::SCHEMA;
        let managed = E::SCHEMA.managed;
        // One clock read per write: `created_at` and `updated_at` of a new item are equal, and
        // expiry is judged at the same time.
        let now = self.db.now();
        let expiry = crate::ttl::Expiry::hidden(table, || now);
        // An expired item is absent to a put, as to reads.
        let no_item = || crate::expr::as_read::absent(expiry, table);
        let absent = self.only_if_absent.then(no_item);
        // Optimistic locking: the entity carries the version it was read at; the write
        // expects exactly that version (0: no item yet) and stores the next one.
        let mut expectations = Expectations {
            expiry,
            ..Expectations::default()
        };
        let mut version_check = None;
        if let Some(attribute) = managed.version {
            // A put that creates writes the first version, whatever the value carries (a move
            // keeps counting).
            let expected = if self.only_if_absent && !self.moving {
                0
            } else {
                crate::managed::version_of(item.get(attribute))
            };
            if expected >= managed.version_max {
                return Err(Error::VersionOverflow {
                    entity: E::SCHEMA.name,
                    key: crate::item::key_text::<E::Table>(&item),
                    version: expected,
                });
            }
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
                    // An expired item is at version 0 to a put, as it is absent.
                    crate::expr::as_read::unexpired_and(
                        Node::Compare(
                            Operand::Path(AttrPath::attribute(attribute)),
                            Comparison::Eq,
                            Operand::Value(AttributeValue::N(expected.to_string())),
                        ),
                        expiry,
                    )
                });
                expectations.version = Some((attribute, expected));
            }
        }
        if let Some(timestamp) = managed.updated_at {
            item.insert(timestamp.attribute.to_owned(), (timestamp.at)(now)?);
        }
        let mut created_check = None;
        if let Some(timestamp) = managed.created_at.filter(|_| !self.moving) {
            let attribute = timestamp.attribute;
            let creates = self.only_if_absent
                || expectations
                    .version
                    .is_some_and(|(_, version)| version == 0);
            match self.created_at_written(creates) {
                Some(CreatedAt::Now) => {
                    item.insert(attribute.to_owned(), (timestamp.at)(now)?);
                }
                Some(CreatedAt::Stored(stored)) => {
                    item.insert(attribute.to_owned(), stored);
                }
                None => {}
            }
            created_check = match &self.created() {
                _ if creates => None,
                Created::Unknown | Created::AsRead(_) => None,
                Created::Absent => Some(no_item()),
                Created::Stored(stored) => Some(Node::And(
                    Box::new(crate::expr::as_read::present(expiry, table)),
                    Box::new(match stored {
                        Some(value) => Node::Compare(
                            Operand::Path(AttrPath::attribute(attribute)),
                            Comparison::Eq,
                            Operand::Value(value.clone()),
                        ),
                        None => Node::NotExists(AttrPath::attribute(attribute)),
                    }),
                )),
            };
        }
        let user = user_node(self.condition.as_ref())?;
        let mut user = user.map(|user| crate::expr::as_read::user_as_read(user, expiry));
        let mut placeholders = Placeholders::default();
        let mut built = [absent, version_check, created_check];
        let parts = (built.iter_mut().flatten().map(ConditionPart::Owned))
            .chain(user.iter_mut().flat_map(UserAsRead::parts))
            .chain(self.stored_as_read.iter().map(ConditionPart::Shared));
        let condition = render_all(parts, &mut placeholders);
        Ok(Prepared {
            item,
            condition,
            placeholders,
            expectations,
        })
    }

    pub(crate) fn transact_op(&self) -> Result<super::transact::TransactOp, Error> {
        let prepared = self.prepare()?;
        let estimate = crate::cost::put_estimate::<E::Table>(&prepared.item);
        let write = self.write(prepared, None);
        Ok(super::transact::TransactOp::of(
            super::transact::WriteKind::Put,
            E::SCHEMA.name,
            self.db.table_name(),
            (
                write.key(<E::Table as Table>::SCHEMA),
                write.key_text::<E::Table>(),
            ),
            write,
            estimate,
        ))
    }

    /// The request and its estimated capacity (see [`crate::cost`]). For an entity with unique
    /// values, the transaction of a new item and its sentinels, each write counted twice (a
    /// changed value of an existing item adds the release of the old one).
    pub fn explain(&self) -> Result<crate::cost::Explain, Error> {
        if !E::SCHEMA.unique.is_empty() {
            return self.with_sentinels(None)?.explain();
        }
        Ok(crate::cost::Explain {
            request: self.params()?,
            estimate: self.transact_op()?.estimate,
        })
    }

    /// The request this operation sends: for an entity with unique values, the transaction
    /// of a new item and its sentinels.
    pub fn params(&self) -> Result<Request, Error> {
        if !E::SCHEMA.unique.is_empty() {
            return self.with_sentinels(None)?.params();
        }
        self.db.write_params(self.write(self.prepare()?, None))
    }

    /// The transaction this put is when the item is as `stored` says.
    fn with_sentinels(
        &self,
        stored: Option<&Item>,
    ) -> Result<super::transact::Transaction<'db, E::Table>, Error> {
        use crate::unique::SentinelWrite;
        crate::unique::transaction::<E>(self.db, self.attempt(stored)?, stored, &[])
    }

    /// Sends the request. For an entity with unique values, it is a transaction of the item
    /// and its sentinels (see [`crate::unique`]), after a consistent read of the item.
    pub fn send(self) -> impl Future<Output = Result<(), Error>> + 'db {
        crate::unique::plain_or_with_sentinels(
            self,
            |_| Ok(()),
            |put, finish| put.send_with(None, finish),
        )
    }

    /// Sends the request; returns the item this one replaced, if any (`ALL_OLD`).
    pub fn send_returning_old(self) -> impl Future<Output = Result<Option<E>, Error>> + 'db {
        crate::unique::plain_or_with_sentinels(self, super::decode_old, |put, finish| {
            put.send_with(Some(ReturnValue::AllOld), finish)
        })
    }

    /// The write asking for `returning`, with what explains a failed condition.
    fn request(mut self, returning: Option<ReturnValue>) -> Result<(Write, Sent), Error> {
        let item = std::mem::replace(&mut self.item, Ok(Item::new()))?;
        let prepared = self.prepare_item(item)?;
        let sent = Sent::of::<E>(&prepared);
        Ok((self.write(prepared, returning), sent))
    }

    /// Whether this put must learn the stored `created_at` before it writes: it has one to
    /// keep, and may replace an item.
    fn keeps_created_at(&self) -> bool {
        E::SCHEMA.managed.created_at.is_some()
            && !self.moving
            && !self.only_if_absent
            && self.created == Created::Unknown
    }

    /// What this put's request assumes of the stored `created_at`.
    fn created(&self) -> Created {
        if self.keeps_created_at() {
            self.first_created()
        } else {
            self.created.clone()
        }
    }

    /// What the first request of a put that keeps `created_at` assumes: no item, or, for a
    /// versioned put (which replaces), the time the value carries.
    fn first_created(&self) -> Created {
        if E::SCHEMA.managed.version.is_none() {
            return Created::Absent;
        }
        let carried = E::SCHEMA.managed.created_at.and_then(|timestamp| {
            let item = self.item.as_ref().ok()?;
            item.get(timestamp.attribute).cloned()
        });
        Created::Stored(carried)
    }

    /// Sends the request, asking for `returning`, and `finish`es the attributes returned.
    async fn send_with<T: 'db>(
        self,
        returning: Option<ReturnValue>,
        finish: impl FnOnce(Option<crate::Item>) -> Result<T, Error> + Send + 'db,
    ) -> Result<T, Error> {
        if self.keeps_created_at() {
            return finish(self.send_keeping_created_at(returning).await?);
        }
        self.send_once(returning, finish).await
    }

    /// Sends a put that may replace an item whose `created_at` it keeps: first as a creation
    /// (stamped now, if there is no item), then, told the stored item by the failed condition,
    /// keeping its time (if it is still the same); a versioned put, which knows it replaces,
    /// starts with the time the value carries. A condition failure with the stored time as
    /// expected is the caller's own condition failing.
    async fn send_keeping_created_at(
        self,
        returning: Option<ReturnValue>,
    ) -> Result<Option<Item>, Error> {
        let Some(timestamp) = E::SCHEMA.managed.created_at else {
            return self.send_once(returning, Ok).await;
        };
        let attribute = timestamp.attribute;
        let mut created = self.first_created();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let put = Put {
                db: self.db,
                item: self.item.clone(),
                only_if_absent: false,
                moving: false,
                created: created.clone(),
                condition: self.condition.clone(),
                stored_as_read: self.stored_as_read.clone(),
            };
            let sent = put.send_once(returning.clone(), Ok).await;
            let stored = match &sent {
                Err(Error::ConditionFailed { current, .. }) if attempts < ATTEMPTS => {
                    current.as_deref().map(|item| item.get(attribute).cloned())
                }
                _ => return sent,
            };
            created = match (created, stored) {
                // There is an item now: keep its time.
                (Created::Absent, Some(stored)) => Created::Stored(stored),
                // The item is gone: create it.
                (Created::Stored(_), None) => Created::Absent,
                // Its time moved on: keep the new one.
                (Created::Stored(expected), Some(stored)) if expected != stored => {
                    Created::Stored(stored)
                }
                // As expected: the caller's condition failed.
                _ => return sent,
            };
        }
    }

    /// Sends the request once, asking for `returning`, and `finish`es the attributes
    /// returned.
    async fn send_once<T: 'db>(
        self,
        returning: Option<ReturnValue>,
        finish: impl FnOnce(Option<crate::Item>) -> Result<T, Error> + Send + 'db,
    ) -> Result<T, Error> {
        let db = self.db;
        let (write, sent) = self.request(returning)?;
        match db.write(write).await? {
            // An expired item it replaced is none, as it is to reads.
            Written::Applied { attributes, .. } => {
                let expiry = sent.expectations.expiry;
                finish(attributes.filter(|old| !expiry.has_expired(old)))
            }
            Written::ConditionFailed { current, .. } => {
                let ours = sent
                    .written
                    .as_ref()
                    .zip(current.as_ref())
                    .is_some_and(|(written, found)| crate::item::same_item(written, found));
                if ours {
                    // This put is what is there: it took effect (its earlier attempt's
                    // response was lost). The item it replaced is not known any more.
                    return finish(None);
                }
                Err(condition_failure(
                    E::SCHEMA.name,
                    sent.key,
                    current.as_ref(),
                    sent.expectations,
                ))
            }
        }
    }

    /// The write of `prepared`, asking for `returning`.
    fn write(&self, prepared: Prepared, returning: Option<ReturnValue>) -> Write {
        Write::rendered(
            E::SCHEMA.name,
            Change::Put(prepared.item),
            prepared.condition,
            prepared.placeholders,
        )
        .returning(returning)
        .capacity_when_tracked()
    }
}

/// What a sent put keeps to explain a failed condition.
struct Sent {
    key: crate::key::KeyText,
    expectations: Expectations,
    /// The item written, when a lost response could make its own write fail its condition.
    written: Option<Item>,
}

impl Sent {
    fn of<E: Entity>(prepared: &Prepared) -> Self {
        // A conditional put whose response was lost is resent by the SDK and then fails its
        // condition on its own first write. When every write of the entity is unique (a new
        // version, or a fresh `updated_at`), finding exactly this item proves it is ours; a
        // plain item could also be someone else's identical write, so that stays a failure.
        let managed = E::SCHEMA.managed;
        let unique = managed.version.is_some() || managed.updated_at.is_some();
        let conditional = prepared.condition.is_some();
        Sent {
            key: crate::item::key_text::<E::Table>(&prepared.item),
            expectations: prepared.expectations,
            written: (conditional && unique).then(|| prepared.item.clone()),
        }
    }
}

impl<E: Entity> crate::send::write::sealed::Sealed for Put<'_, E> {}
impl<E: Entity + crate::unique::NoUniqueValues> super::transact::TransactWrite for Put<'_, E> {
    fn transact_op(&self) -> Result<super::transact::TransactOp, Error> {
        self.transact_op()
    }
}

impl<'db, E: Entity> crate::unique::SentinelWrite<'db, E> for Put<'db, E> {
    fn db(&self) -> &'db Db<E::Table> {
        self.db
    }

    fn key(&self) -> Result<Item, Error> {
        Ok(crate::unique::key_of::<E>(
            self.item.as_ref().map_err(Clone::clone)?,
        ))
    }

    fn attempt(&self, stored: Option<&Item>) -> Result<crate::unique::Attempt, Error> {
        let expiry = crate::ttl::Expiry::hidden(<E::Table as Table>::SCHEMA, || self.db.now());
        let put = Put {
            db: self.db,
            item: self.item.clone(),
            only_if_absent: self.only_if_absent,
            moving: self.moving,
            created: Created::AsRead(stored.map(|stored| {
                E::SCHEMA
                    .managed
                    .created_at
                    .and_then(|timestamp| stored.get(timestamp.attribute).cloned())
            })),
            condition: self.condition.clone(),
            stored_as_read: Some(crate::expr::as_read::as_read::<E>(stored, expiry)),
        };
        let op = put.transact_op()?;
        // The item as written, from the write itself rather than a second preparation.
        let new = op.write.item().cloned();
        Ok(crate::unique::Attempt { op, new })
    }

    fn failed(&self, reason: &super::transact::CancellationReason, now: Option<&Item>) -> Error {
        let expectations = self
            .prepare()
            .map(|prepared| prepared.expectations)
            .unwrap_or_default();
        condition_failure(E::SCHEMA.name, reason.key.clone(), now, expectations)
    }
}
