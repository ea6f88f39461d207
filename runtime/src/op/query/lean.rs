//! Lean indexes (`KEYS_ONLY`, `INCLUDE`): their entries read as whole items fetched by key
//! ("hydration") with `BatchGetItem`, and the rule that `collection` reads whole items.

use super::entry::{IndexEntry, Projection};
use super::*;
use crate::cost::{read_units, write_units, Estimate};
use crate::item::DecodeError;
use crate::retry::RetryPolicy;
use crate::Key;
use std::collections::HashMap;
use std::fmt;

#[doc(hidden)]
/// What a query returns when it returns whole items: entities, which `collection` starts
/// from.
#[diagnostic::on_unimplemented(
    message = "this query reads a lean index, whose items hold only the attributes it projects",
    label = "`collection` reads whole items",
    note = "read the projected attributes with `.select::<P>()` (a `#[derive(singletable::Projection)]` type), or whole items with `.hydrate()`"
)]
pub trait WholeItems {}
impl<E: Entity> WholeItems for E {}

impl<'db, E: Entity, I: QueryIndex, P, T: Projection<E>> Query<'db, E, I, P, IndexEntry<E, T>> {
    /// Reads the whole items the index's entries point to, with `BatchGetItem` (chunks of
    /// [`MAX_GET_KEYS`](crate::op::batch::MAX_GET_KEYS), what DynamoDB leaves unprocessed
    /// resent), in the index's order. One page of the index costs one query plus one read of
    /// each item; see [`Hydrate::explain`]. Items are read as they are now: a global index is
    /// eventually consistent, so an item deleted since is in [`Hydrated::missing`], and one
    /// whose index partition key changed since in [`Hydrated::moved`], never among the
    /// items. (A change of its index sort key within the partition is not checked: it is
    /// still the partition's, perhaps outside a sort key condition.)
    pub fn hydrate(self) -> Hydrate<'db, E, I, P, T> {
        let retry = self.db.retry_policy();
        Hydrate {
            query: self,
            consistent: false,
            retry,
        }
    }
}

/// A query of a lean index whose entries are read as whole items; see [`Query::hydrate`].
#[must_use = "an operation does nothing until it is sent"]
pub struct Hydrate<'db, E: Entity, I, P, T> {
    query: Query<'db, E, I, P, IndexEntry<E, T>>,
    consistent: bool,
    retry: RetryPolicy,
}

/// Whole items read through a lean index, in the index's order.
#[derive(Debug)]
#[non_exhaustive]
pub struct Hydrated<E: Entity> {
    /// The items, in the order of the index.
    pub items: Vec<E>,
    /// Keys the index held whose item the table no longer has: deleted (or, with a TTL,
    /// expired) between the index read and the fetch. Reported, never dropped silently.
    pub missing: Vec<Key<E>>,
    /// Items the index held in the queried partition that are no longer there, as they are
    /// now: their index partition key changed (or a sparse index's rule no longer holds)
    /// between the index read, which may lag the table, and the fetch.
    pub moved: Vec<E>,
    /// Keys DynamoDB still had not processed when the retry policy gave up; read them again.
    pub unprocessed: Vec<Key<E>>,
    /// Entries or items that did not decode.
    pub errors: Vec<DecodeError>,
    /// Where the next page starts; `None` after the last page.
    pub cursor: Option<Cursor>,
}

impl<'db, E: Entity, I: QueryIndex, P, T: Projection<E>> Hydrate<'db, E, I, P, T> {
    /// Reads the items strongly consistently (twice the read cost). The index read stays
    /// eventually consistent on a global index, as DynamoDB allows nothing else.
    pub fn consistent(mut self) -> Self {
        self.consistent = true;
        self
    }

    /// How to resend keys `BatchGetItem` leaves unprocessed; [`RetryPolicy::default`] unless
    /// set.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// The index query's request (the first page).
    pub fn params(&self) -> Result<Request, Error> {
        self.query.params()
    }

    /// One page of the index, starting after `cursor`, with its items.
    pub async fn page(&self, cursor: Option<&Cursor>) -> Result<Hydrated<E>, Error> {
        let page = self.query.page(cursor).await?;
        let keys: Vec<Key<E>> = page.items.into_iter().map(|entry| entry.key).collect();
        let mut hydrated = self.fetch(keys).await?;
        hydrated.errors.splice(0..0, page.errors);
        hydrated.cursor = page.cursor;
        Ok(hydrated)
    }

    /// Every page, with its items.
    pub async fn all(&self) -> Result<Hydrated<E>, Error> {
        let mut all = self.page(None).await?;
        while let Some(cursor) = all.cursor.take() {
            let next = self.page(Some(&cursor)).await?;
            all.items.extend(next.items);
            all.missing.extend(next.missing);
            all.moved.extend(next.moved);
            all.unprocessed.extend(next.unprocessed);
            all.errors.extend(next.errors);
            all.cursor = next.cursor;
        }
        Ok(all)
    }

    /// The whole items of `entries` read earlier from this index (a page the caller kept), in
    /// their order; an entry given twice gives its item once, at its first position.
    pub async fn entries(
        &self,
        entries: impl IntoIterator<Item = IndexEntry<E, T>>,
    ) -> Result<Hydrated<E>, Error> {
        self.fetch(entries.into_iter().map(|entry| entry.key).collect())
            .await
    }

    /// Reads the items of `keys` and puts them in the order of `keys`.
    async fn fetch(&self, keys: Vec<Key<E>>) -> Result<Hydrated<E>, Error> {
        let mut read = self
            .query
            .db
            .batch_get(keys.iter().cloned())
            .retry(self.retry);
        if self.consistent {
            read = read.consistent();
        }
        let output = read.send().await?;
        let mut found: HashMap<Key<E>, E> = HashMap::with_capacity(output.items.len());
        for item in output.items {
            // The item decoded, so its fields render its key (a failure is a typed error).
            found.insert(item.primary_key()?, item);
        }
        let mut hydrated = Hydrated {
            items: Vec::with_capacity(keys.len()),
            missing: Vec::new(),
            moved: Vec::new(),
            unprocessed: output.unprocessed,
            errors: output.errors,
            cursor: None,
        };
        // A key given twice was read once (the batch reads each key once): its item is placed
        // at its first position.
        let mut placed = std::collections::HashSet::with_capacity(keys.len());
        for key in keys {
            match found.remove(&key) {
                Some(item) if !self.in_partition(&item)? => {
                    hydrated.moved.push(item);
                    placed.insert(key);
                }
                Some(item) => {
                    hydrated.items.push(item);
                    placed.insert(key);
                }
                None if placed.contains(&key) || hydrated.unprocessed.contains(&key) => {}
                None => hydrated.missing.push(key),
            }
        }
        Ok(hydrated)
    }

    /// Whether `item`, as it is now, still has the queried index partition key.
    fn in_partition(&self, item: &E) -> Result<bool, Error> {
        let partition = &self.query.partition;
        let (Some(index), Ok(values)) = (partition.index, &partition.values) else {
            return Ok(true);
        };
        let mut attributes = crate::item::encode(item)?;
        crate::schema::item_keys::write_index_keys(item, &mut attributes)?;
        // In any shard of a sharded partition.
        Ok((0..partition.shards()).any(|shard| {
            (index.partition_keys.iter().zip(values.of_shard(shard)))
                .all(|(key, value)| attributes.get(key.name) == Some(value))
        }))
    }

    /// What reading `entries` items like `sample` through this query costs, against the same
    /// query on an index that projects every attribute: DynamoDB's rules, from the sizes of
    /// the item and of its index entry (the keys and the projected attributes).
    pub fn explain(&self, sample: &E, entries: usize) -> Result<LeanCost, Error> {
        let index = self.query.partition.index;
        let table = <E::Table as Table>::SCHEMA;
        let item = crate::item::encode(sample)?;
        let item_bytes = crate::item::item_size(&item);
        let entry_bytes = crate::item::held_size(&item, |name| {
            index.is_none_or(|index| index.holds(table, name))
        });
        let projection = index.map_or(crate::schema::IndexProjection::All, |index| {
            index.projection
        });
        let mut lean = Estimate::default();
        lean.read(
            read_units(entries * entry_bytes, false),
            format!("{projection} index: {entries} entries of {entry_bytes} bytes"),
        );
        lean.read(
            entries as f64 * read_units(item_bytes, self.consistent),
            format!("BatchGetItem: {entries} items of {item_bytes} bytes, each rounded up to 4 KB"),
        );
        lean.write(
            write_units(entry_bytes),
            format!("each write of such an item writes its {entry_bytes}-byte entry"),
        );
        let mut all = Estimate::default();
        all.read(
            read_units(entries * item_bytes, false),
            format!("ALL index: {entries} entries of {item_bytes} bytes"),
        );
        all.write(
            write_units(item_bytes),
            format!("each write of such an item writes its {item_bytes}-byte entry"),
        );
        Ok(LeanCost {
            request: self.params()?,
            lean,
            all,
        })
    }
}

/// A lean index's cost for one query and one item write, against an `ALL` index's; see
/// [`Hydrate::explain`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LeanCost {
    /// The index query's request.
    pub request: Request,
    /// Reading through the lean index and hydrating, and writing one item's entry.
    pub lean: Estimate,
    /// The same on an index that projects every attribute.
    pub all: Estimate,
}

impl fmt::Display for LeanCost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.request)?;
        for (name, estimate) in [
            ("lean index, hydrated", &self.lean),
            ("ALL index", &self.all),
        ] {
            writeln!(
                f,
                "{name}: {} RCU per query, {} WCU per item write",
                estimate.read_units, estimate.write_units
            )?;
            for line in &estimate.lines {
                writeln!(f, "  {line}")?;
            }
        }
        Ok(())
    }
}
