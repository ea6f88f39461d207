//! `Query` on the table or an index, with key conditions built from the same templates that
//! build the keys, so a query can never ask for a key shape the writes do not produce.
//!
//! The partition key comes from a generated constructor that takes every field of the
//! partition template (`Ticket::gsi1(7)`: a template's parts by value, or by reference for
//! `Copy` types, and `&str` or `String` for a `String`; an index keyed on a plain attribute,
//! `Review::gsi3(&author)`, takes the attribute's value by reference); sort key parts are
//! given in template order (`.sort(Ticket::STATUS, Status::Open)`), giving `begins_with` on
//! the rendered prefix, or equality once all are given; a range (`between`, `lt`, ...) or a
//! prefix of the next part (`begins_with`: text of a string part, a [`Truncated`] time of a
//! time part) ends the condition. Skipping a part, or a consistent read on a global index,
//! does not compile.
//!
//! Every key condition is exact: it selects the items whose parts satisfy it, in the values'
//! own order (text order for strings and enums, numeric order for integers, time order for
//! times and dates). A range is exact on the last part of a template for every key part type;
//! on a part that other key text follows, values of different lengths sort by the text after
//! them (`"b c#N"` before `"b#N"`), so a range there compiles only for a
//! [`PrefixFree`](crate::key::PrefixFree) type (integers, times, dates, UUIDs, ULIDs, `bool`,
//! enums whose names start no other name; see [`RangeOn`]). Give a string the last place in
//! its template to range over it, or compare it for equality.

pub(crate) mod collection_table;
pub(crate) mod decode;
pub(crate) mod entry;
pub(crate) mod indexes;
pub(crate) mod key_condition;
mod lean;
mod merge;
mod page;
mod prefix;
mod read;
mod request;
mod select;

// The type-level rules of queries (index markers, key-condition states) are public, so that
// compile errors name them by a path a user can read, but undocumented; decoding is derive
// support, reached through `__private`.
#[doc(hidden)]
pub use collection_table::InTable;
pub use decode::Collection;
pub(crate) use decode::Decode;
#[doc(hidden)]
pub use entry::Unselected;
pub use entry::{IndexEntry, Projection};
pub use indexes::primary;
#[doc(hidden)]
pub use indexes::{ConsistentIndex, IndexOf, QueryIndex, ReadsAs};
pub use key_condition::PartitionKey;
use key_condition::{
    range_condition, shared_sort_prefix, KeyCondition, OwnedPart, Range, SortKeyShape, SortParts,
};
// The states of a key condition are documented: compile errors and signatures print them.
pub use key_condition::{After, Closed, Start};
#[doc(hidden)]
pub use key_condition::{InnerPart, LastPart, RangeOn, SortKeyPart};
#[doc(hidden)]
pub use lean::WholeItems;
pub use lean::{Hydrate, Hydrated, LeanCost};
pub use page::{Page, FULL_PAGE_REQUESTS};
pub use prefix::Truncated;
#[doc(hidden)]
pub use prefix::{CalendarPart, PartPrefix, TimestampPart};

pub use crate::cursor::{Cursor, CursorError, CursorKey};

use super::read_options::ReadOptions;
use crate::cursor::{Fingerprint, Position};
use crate::error::Error;
use crate::expr::condition::{all, user_node, Comparison, EntityFilter, Keeps, Node, Operand};
use crate::expr::field::to_value;
use crate::expr::path::Projection as ProjectionExpression;
use crate::expr::{AttrPath, Condition, Field, Placeholders};
use crate::item::EncodeError;
use crate::item::Item;
use crate::key::{KeyError, KeyPart, KeyTemplate};
use crate::schema::{Entity, IndexSchema, Table};
use crate::wire::{describe, Request};
use crate::Db;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::types::AttributeValue;
use futures::{Stream, StreamExt};
use serde::Serialize;
use std::future::Future;
use std::marker::PhantomData;

impl<T: Table> Db<T> {
    /// A query on one partition of the table or an index.
    ///
    /// Its items are `E`s, except on an index that projects only some attributes, whose items
    /// are [`IndexEntry`] values: see [`Query::select`] and [`Query::hydrate`].
    pub fn query<E: Entity<Table = T>, I: IndexOf<T>>(
        &self,
        partition: PartitionKey<E, I>,
    ) -> Query<'_, E, I, Start, I::Entry<E>> {
        Query {
            db: self,
            partition,
            sort: SortParts::default(),
            range: None,
            descending: false,
            limit: None,
            filter: None,
            projection: Vec::new(),
            read: ReadOptions::new(T::SCHEMA, || self.now()),
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
    limit: Option<u32>,
    filter: Option<Condition<E>>,
    /// Attributes to return (`ProjectionExpression`); empty for whole items.
    projection: Vec<AttrPath>,
    read: ReadOptions,
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
            projection: self.projection,
            read: self.read,
            state: PhantomData,
        }
    }

    /// The next sort key part equals `value`.
    pub fn sort<T, F>(self, _field: Field<E, T, F>, value: T) -> Query<'db, E, I, F::Next, D>
    where
        F: SortKeyPart<E, I, P>,
        T: KeyPart + Serialize + Send + Sync + 'static,
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

    /// The next sort key part starts with `prefix`: text for a `String` part
    /// (`.begins_with(DeviceState::STATE, "WARN")`), or a [`Truncated`] time for a time part
    /// (`Truncated::day(&at)`: the times of `at`'s day). Ends the condition, as a range does,
    /// and is exact in any position: a string prefix holding a separator of the template (which
    /// would run into the next part) is [`KeyError::Separator`]
    /// when sent. Other part types have no prefix that is a range of their values (a compile
    /// error).
    pub fn begins_with<T, F>(
        self,
        _field: Field<E, T, F>,
        prefix: impl PartPrefix<T>,
    ) -> Query<'db, E, I, Closed, D>
    where
        F: SortKeyPart<E, I, P>,
    {
        self.next(Some(Range::Prefix(prefix.into_prefix())))
    }

    /// The next sort key part is between `low` and `high`, inclusive.
    pub fn between<T, F>(
        self,
        _field: Field<E, T, F>,
        low: T,
        high: T,
    ) -> Query<'db, E, I, Closed, D>
    where
        F: SortKeyPart<E, I, P>,
        T: KeyPart + Serialize + Send + Sync + 'static,
        F::Position: RangeOn<T>,
    {
        self.next(Some(Range::Between(
            OwnedPart::new(low),
            OwnedPart::new(high),
        )))
    }

    /// The next sort key part is below `value`.
    pub fn lt<T, F>(self, _field: Field<E, T, F>, value: T) -> Query<'db, E, I, Closed, D>
    where
        F: SortKeyPart<E, I, P>,
        T: KeyPart + Serialize + Send + Sync + 'static,
        F::Position: RangeOn<T>,
    {
        self.next(Some(Range::Lt(OwnedPart::new(value))))
    }

    /// The next sort key part is at most `value`.
    pub fn le<T, F>(self, _field: Field<E, T, F>, value: T) -> Query<'db, E, I, Closed, D>
    where
        F: SortKeyPart<E, I, P>,
        T: KeyPart + Serialize + Send + Sync + 'static,
        F::Position: RangeOn<T>,
    {
        self.next(Some(Range::Le(OwnedPart::new(value))))
    }

    /// The next sort key part is above `value`.
    pub fn gt<T, F>(self, _field: Field<E, T, F>, value: T) -> Query<'db, E, I, Closed, D>
    where
        F: SortKeyPart<E, I, P>,
        T: KeyPart + Serialize + Send + Sync + 'static,
        F::Position: RangeOn<T>,
    {
        self.next(Some(Range::Gt(OwnedPart::new(value))))
    }

    /// The next sort key part is at least `value`.
    pub fn ge<T, F>(self, _field: Field<E, T, F>, value: T) -> Query<'db, E, I, Closed, D>
    where
        F: SortKeyPart<E, I, P>,
        T: KeyPart + Serialize + Send + Sync + 'static,
        F::Position: RangeOn<T>,
    {
        self.next(Some(Range::Ge(OwnedPart::new(value))))
    }

    /// Returns the items of the partition as collection `C` (an enum with one variant per
    /// entity, `#[derive(singletable::Collection)]`), decided by the entity attribute. Items
    /// of entities `C` does not know are reported in [`Page::errors`], never dropped.
    ///
    /// With no sort key part given, the key condition is the longest constant text that the
    /// sort keys of all of `C`'s entities start with on the queried table or index, and none
    /// where they share none: an order `o#{id}` with its lines `p#{sku}` and shipments
    /// `sh#{id}` reads the whole partition, a document `DOC#{doc}` with its comments
    /// `DOC#{doc}#CMT#{id}` reads `begins_with(SK, "DOC#")`. Sort key parts or a range given
    /// before `collection()` narrow the query by the starting entity's template, as they
    /// would for that entity alone.
    pub fn collection<C: Collection<Table = E::Table> + Decode>(self) -> Query<'db, E, I, P, C>
    where
        D: WholeItems,
    {
        self.next(None)
    }

    /// Highest sort key first (`ScanIndexForward = false`): newest first for time-ordered keys.
    pub fn descending(mut self) -> Self {
        self.descending = true;
        self
    }

    /// At most `limit` items are evaluated per request (DynamoDB applies it before filters,
    /// so a filtered page can come back short, even empty, with a cursor: for pages of `n`
    /// items, [`full_page`](Self::full_page)). DynamoDB takes 1 to `i32::MAX`; anything else
    /// is [`Error::OutOfRange`] when sent.
    pub fn limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Keeps only items for which `filter` holds (evaluated by DynamoDB after the key
    /// condition; filtered items still cost reads).
    pub fn filter(mut self, filter: Condition<E>) -> Self {
        Condition::and_to(&mut self.filter, filter);
        self
    }

    super::read_options::read_option_setters!(I: ConsistentIndex);
}
