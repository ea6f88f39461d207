//! Queries of a sharded partition (`{shard(id, 8)}`): one request per shard, sent together,
//! and their items merged in sort key order, as one partition would return them.
//!
//! A merged page holds only items that no shard can still precede: a shard that has more to
//! read bounds the page at the last key it evaluated, and the items of other shards past that
//! bound wait for the next page. The cursor holds each shard's position, so a page never
//! repeats or skips an item. Items with equal sort keys come in shard order (reversed when
//! descending), and within one shard in DynamoDB's order.

use super::page::Page;
use super::read::{index_name, start_key_attributes};
use super::*;
use crate::cursor::ShardPosition;
use futures::TryStreamExt;
use std::cmp::Ordering;
use std::str::FromStr;

/// The most shard requests a merged page keeps in flight.
const SHARDS_IN_FLIGHT: usize = 32;

impl<'db, E: Entity, I: QueryIndex, P, D: Decode> Query<'db, E, I, P, D> {
    /// Whether the partition is spread over several keys, each read on its own.
    pub(super) fn is_sharded(&self) -> bool {
        self.partition.shards() > 1
    }

    /// Each shard's position: from `cursor`, or every shard at its start.
    fn shard_positions(&self, cursor: Option<&Cursor>) -> Result<Vec<ShardPosition>, Error> {
        let shards = self.partition.shards();
        let Some(cursor) = cursor else {
            return Ok(vec![ShardPosition::Start; shards]);
        };
        let invalid = |reason: String| Error::Cursor(CursorError { reason });
        let position = self.open_cursor(cursor)?;
        let Some(positions) = position.shards else {
            return Err(invalid(format!(
                "it holds one partition key's position, and this query merges {shards} shards"
            )));
        };
        if positions.len() != shards {
            return Err(invalid(format!(
                "it holds {} shards' positions, and this query merges {shards}",
                positions.len()
            )));
        }
        positions
            .into_iter()
            .enumerate()
            .map(|(shard, position)| match position {
                ShardPosition::After(key) => self.check_start(key, shard).map(ShardPosition::After),
                other => Ok(other),
            })
            .collect()
    }

    /// One merged page of at most `limit` items (a shard request's own limit, and the page's),
    /// after `cursor`.
    pub(super) fn merged_page(
        &self,
        cursor: Option<&Cursor>,
        limit: Option<i32>,
    ) -> impl Future<Output = Result<Page<D>, Error>> + 'db
    where
        D: 'db,
    {
        // The page's size: the one asked for, else the query's limit.
        let limit = match limit {
            Some(limit) => Ok(Some(limit)),
            None => crate::op::page_limit(self.limit),
        };
        let planned = limit.and_then(|limit| Ok((self.plan_merge(cursor, limit)?, limit)));
        let db = self.db;
        let index = self.partition.index;
        async move {
            let ((requests, mut positions, order, seal), limit) = planned?;
            let reads: Vec<ShardRead> = futures::stream::iter(requests)
                .map(|(shard, request)| {
                    db.send_query_page(request, D::NAME, index_name(index), move |output| {
                        Ok(ShardRead {
                            shard,
                            items: output.items.unwrap_or_default(),
                            last_evaluated: output.last_evaluated_key,
                        })
                    })
                })
                .buffer_unordered(SHARDS_IN_FLIGHT)
                .try_collect()
                .await?;
            let limit = limit.and_then(|limit| usize::try_from(limit).ok());
            let items = merge(reads, &mut positions, &order, limit);
            let cursor = positions
                .iter()
                .any(|position| *position != ShardPosition::Done)
                .then(|| {
                    let position = Position {
                        index: index.map(|index| index.name.to_owned()),
                        key: Item::new(),
                        shards: Some(positions),
                    };
                    Cursor::new(position, seal)
                });
            Ok(Page::from_items(<E::Table as Table>::SCHEMA, items, cursor))
        }
    }

    /// What a merged page sends and how it merges: each unfinished shard's request, every
    /// shard's position, the order and the cursor's seal.
    #[allow(clippy::type_complexity)]
    fn plan_merge(
        &self,
        cursor: Option<&Cursor>,
        limit: Option<i32>,
    ) -> Result<
        (
            Vec<(usize, Result<QueryFluentBuilder, Error>)>,
            Vec<ShardPosition>,
            MergeOrder,
            Option<(std::sync::Arc<CursorKey>, Fingerprint)>,
        ),
        Error,
    > {
        let positions = self.shard_positions(cursor)?;
        let mut requests = Vec::new();
        for (shard, position) in positions.iter().enumerate() {
            let start = match position {
                ShardPosition::Done => continue,
                ShardPosition::Start => None,
                ShardPosition::After(key) => Some(key.clone()),
            };
            let request = self
                .prepare_at(false, self.read.expiry, shard)
                .map(|prepared| prepared.builder(self, start))
                .map(|request| request.set_limit(limit));
            requests.push((shard, request));
        }
        let table = <E::Table as Table>::SCHEMA;
        let sort_attributes = match self.partition.index {
            Some(index) => index.sort_keys.iter().map(|key| key.name).collect(),
            None => table.sort_key.into_iter().collect(),
        };
        let order = MergeOrder {
            sort_attributes,
            key_attributes: start_key_attributes(table, self.partition.index),
            descending: self.descending,
        };
        Ok((requests, positions, order, self.seal()?))
    }

    /// Every merged page, each after the one before.
    pub(super) fn merged_pages(self) -> impl Stream<Item = Result<Page<D>, Error>> + 'db
    where
        E: 'db,
        I: 'db,
        P: 'db,
        D: 'db,
    {
        futures::stream::unfold(Some((self, None)), |state| async move {
            let (query, cursor): (Self, Option<Cursor>) = state?;
            match query.merged_page(cursor.as_ref(), None).await {
                Ok(page) => {
                    let next = page.cursor.clone().map(|cursor| (query, Some(cursor)));
                    Some((Ok(page), next))
                }
                Err(error) => Some((Err(error), None)),
            }
        })
    }

    /// The number of matching items in every shard, counted together.
    pub(super) async fn merged_count(&self) -> Result<u64, Error> {
        let index = index_name(self.partition.index);
        let requests = (0..self.partition.shards())
            .map(|shard| {
                self.prepare_at(true, self.read.expiry, shard)
                    .map(|prepared| prepared.builder(self, None))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let counts: Vec<u64> = futures::stream::iter(requests)
            .map(|request| async move {
                let mut pages = self.db.query_pages(request, D::NAME, index);
                let mut total = 0u64;
                while let Some(output) = pages.next().await? {
                    total += u64::try_from(output.count).unwrap_or_default();
                    if output.last_evaluated_key.is_none() {
                        break;
                    }
                }
                Ok::<u64, Error>(total)
            })
            .buffer_unordered(SHARDS_IN_FLIGHT)
            .try_collect()
            .await?;
        Ok(counts.into_iter().sum())
    }
}

/// What one shard's request returned.
pub(super) struct ShardRead {
    pub(super) shard: usize,
    pub(super) items: Vec<Item>,
    pub(super) last_evaluated: Option<Item>,
}

/// How merged items are ordered, and what a shard's start key holds.
pub(super) struct MergeOrder {
    /// The sort key attributes of the table or index read, in order (none: no order).
    pub(super) sort_attributes: Vec<&'static str>,
    /// The attributes of an `ExclusiveStartKey`.
    pub(super) key_attributes: Vec<&'static str>,
    pub(super) descending: bool,
}

impl MergeOrder {
    /// The order of an item of `shard` against one of `other_shard`, as the page returns them.
    fn compare(&self, item: &Item, shard: usize, other: &Item, other_shard: usize) -> Ordering {
        let ascending = (self.sort_attributes.iter())
            .map(|name| compare_values(item.get(*name), other.get(*name)))
            .find(|ordering| ordering.is_ne())
            .unwrap_or(Ordering::Equal)
            .then(shard.cmp(&other_shard));
        if self.descending {
            ascending.reverse()
        } else {
            ascending
        }
    }

    /// The start key after `item`: its key attributes.
    fn start_key(&self, item: &Item) -> Item {
        (self.key_attributes.iter())
            .filter_map(|name| Some(((*name).to_owned(), item.get(*name)?.clone())))
            .collect()
    }
}

/// Merges the shards' `reads` in `order`: the items no unread item can precede, at most
/// `limit` of them; moves each shard's position past what the page takes.
pub(super) fn merge(
    reads: Vec<ShardRead>,
    positions: &mut [ShardPosition],
    order: &MergeOrder,
    limit: Option<usize>,
) -> Vec<Item> {
    // The page ends where the first shard with more to read stopped evaluating.
    let bound = (reads.iter())
        .filter_map(|read| Some((read.last_evaluated.as_ref()?, read.shard)))
        .min_by(|(a, a_shard), (b, b_shard)| order.compare(a, *a_shard, b, *b_shard))
        .map(|(key, shard)| (key.clone(), shard));
    let mut tagged: Vec<(usize, usize, Item)> = Vec::new();
    let mut read_counts = vec![0usize; positions.len()];
    let mut last_keys: Vec<Option<Item>> = vec![None; positions.len()];
    for read in reads {
        if let Some(count) = read_counts.get_mut(read.shard) {
            *count = read.items.len();
        }
        if let Some(last) = last_keys.get_mut(read.shard) {
            *last = read.last_evaluated;
        }
        let shard = read.shard;
        tagged
            .extend((read.items.into_iter().enumerate()).map(|(place, item)| (shard, place, item)));
    }
    // Stable, so that one shard's items keep DynamoDB's order among equal sort keys.
    tagged.sort_by(|(a_shard, a_place, a), (b_shard, b_place, b)| {
        order
            .compare(a, *a_shard, b, *b_shard)
            .then(a_place.cmp(b_place))
    });
    let within_bound = |shard: usize, item: &Item| match &bound {
        Some((bound, bound_shard)) => order.compare(item, shard, bound, *bound_shard).is_le(),
        None => true,
    };
    let mut taken = vec![0usize; positions.len()];
    let mut last_taken: Vec<Option<Item>> = vec![None; positions.len()];
    let mut page = Vec::new();
    for (shard, _, item) in tagged {
        if limit.is_some_and(|limit| page.len() >= limit) || !within_bound(shard, &item) {
            break;
        }
        if let Some(count) = taken.get_mut(shard) {
            *count += 1;
        }
        if let Some(last) = last_taken.get_mut(shard) {
            *last = Some(order.start_key(&item));
        }
        page.push(item);
    }
    for (shard, position) in positions.iter_mut().enumerate() {
        let (Some(read), Some(took)) = (read_counts.get(shard), taken.get(shard)) else {
            continue;
        };
        if *position == ShardPosition::Done {
            continue;
        }
        let evaluated = last_keys.get_mut(shard).and_then(Option::take);
        *position = if took == read {
            // Every item the shard returned is on the page: it goes on where it stopped
            // evaluating (past items its filter left out), or it is done.
            match evaluated {
                Some(key) => ShardPosition::After(key),
                None => ShardPosition::Done,
            }
        } else {
            match last_taken.get_mut(shard).and_then(Option::take) {
                Some(key) => ShardPosition::After(key),
                // Nothing of the shard is on the page: it reads the same items again.
                None => std::mem::replace(position, ShardPosition::Start),
            }
        };
    }
    page
}

/// DynamoDB's order of key values: strings and binary byte-wise, numbers by value; a missing
/// value first.
fn compare_values(a: Option<&AttributeValue>, b: Option<&AttributeValue>) -> Ordering {
    match (a, b) {
        (Some(AttributeValue::S(a)), Some(AttributeValue::S(b))) => a.as_bytes().cmp(b.as_bytes()),
        (Some(AttributeValue::B(a)), Some(AttributeValue::B(b))) => a.as_ref().cmp(b.as_ref()),
        (Some(AttributeValue::N(a)), Some(AttributeValue::N(b))) => {
            match (
                bigdecimal::BigDecimal::from_str(a),
                bigdecimal::BigDecimal::from_str(b),
            ) {
                (Ok(a), Ok(b)) => a.cmp(&b),
                _ => a.cmp(b),
            }
        }
        (a, b) => rank(a).cmp(&rank(b)),
    }
}

/// Values of different types (never one key attribute's) in a fixed order.
fn rank(value: Option<&AttributeValue>) -> u8 {
    match value {
        None => 0,
        Some(AttributeValue::N(_)) => 1,
        Some(AttributeValue::S(_)) => 2,
        Some(AttributeValue::B(_)) => 3,
        Some(_) => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn item(shard: usize, sort: &str) -> Item {
        Item::from([
            ("PK".to_owned(), AttributeValue::S(format!("P#{shard}"))),
            ("SK".to_owned(), AttributeValue::S(sort.to_owned())),
        ])
    }

    /// A shard as DynamoDB serves it: its items in order, `limit` evaluated per request, and
    /// `hidden` items evaluated but filtered out.
    fn serve(
        items: &[(String, bool)],
        shard: usize,
        position: &ShardPosition,
        limit: usize,
        order: &MergeOrder,
    ) -> ShardRead {
        let start = match position {
            ShardPosition::Start => 0,
            ShardPosition::After(key) => items
                .iter()
                .position(|(sort, _)| &item(shard, sort) == key)
                .map_or(items.len(), |at| at + 1),
            ShardPosition::Done => items.len(),
        };
        let evaluated: Vec<&(String, bool)> = items.iter().skip(start).take(limit).collect();
        let more = start + evaluated.len() < items.len();
        ShardRead {
            shard,
            items: (evaluated.iter())
                .filter(|(_, hidden)| !hidden)
                .map(|(sort, _)| item(shard, sort))
                .collect(),
            last_evaluated: evaluated
                .last()
                .filter(|_| more)
                .map(|(sort, _)| order.start_key(&item(shard, sort))),
        }
    }

    proptest! {
        /// Page after page, a merged query returns every visible item of every shard once, in
        /// the order one partition would, whatever the page size, direction and filter.
        #[test]
        fn pages_merge_every_shard_in_order_once(
            shards in prop::collection::vec(
                prop::collection::vec(("[a-d]{1,3}", prop::bool::weighted(0.2)), 0..12),
                2..5,
            ),
            limit in 1usize..6,
            descending in any::<bool>(),
        ) {
            let order = MergeOrder {
                sort_attributes: vec!["SK"],
                key_attributes: vec!["PK", "SK"],
                descending,
            };
            let shards: Vec<Vec<(String, bool)>> = shards
                .into_iter()
                .map(|mut items| {
                    items.sort_by(|a, b| a.0.cmp(&b.0));
                    items.dedup_by(|a, b| a.0 == b.0);
                    if descending {
                        items.reverse();
                    }
                    items
                })
                .collect();
            let mut expected: Vec<Item> = (shards.iter().enumerate())
                .flat_map(|(shard, items)| {
                    (items.iter().filter(|(_, hidden)| !hidden)).map(move |(sort, _)| item(shard, sort))
                })
                .collect();
            expected.sort_by(|a, b| {
                let shard = |item: &Item| match item.get("PK") {
                    Some(AttributeValue::S(pk)) => pk.clone(),
                    _ => String::new(),
                };
                let ascending = compare_values(a.get("SK"), b.get("SK")).then(shard(a).cmp(&shard(b)));
                if descending { ascending.reverse() } else { ascending }
            });
            let mut positions = vec![ShardPosition::Start; shards.len()];
            let mut read = Vec::new();
            let mut pages = 0;
            while positions.iter().any(|position| *position != ShardPosition::Done) {
                pages += 1;
                prop_assert!(pages < 200, "the merged query makes no progress");
                let reads = (shards.iter().enumerate())
                    .filter(|(shard, _)| positions[*shard] != ShardPosition::Done)
                    .map(|(shard, items)| serve(items, shard, &positions[shard], limit, &order))
                    .collect();
                let page = merge(reads, &mut positions, &order, Some(limit));
                prop_assert!(page.len() <= limit);
                read.extend(page);
            }
            prop_assert_eq!(read, expected);
        }
    }

    #[test]
    fn numbers_merge_by_value_and_strings_byte_wise() {
        let n = |text: &str| AttributeValue::N(text.to_owned());
        assert_eq!(
            compare_values(Some(&n("9")), Some(&n("10"))),
            Ordering::Less
        );
        assert_eq!(
            compare_values(Some(&n("-1.5")), Some(&n("-1.25"))),
            Ordering::Less
        );
        assert_eq!(
            compare_values(Some(&n("1e2")), Some(&n("100"))),
            Ordering::Equal
        );
        let s = |text: &str| AttributeValue::S(text.to_owned());
        assert_eq!(compare_values(Some(&s("Z")), Some(&s("a"))), Ordering::Less);
        assert_eq!(compare_values(None, Some(&s("a"))), Ordering::Less);
    }
}
