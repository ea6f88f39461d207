//! The items a backfill looks for (an entity's items below its schema version), read a page
//! at a time, and the backfill of each one: shared by the sweep and the distributed worker.

use super::backfill::{BackfillOutcome, Backfilled};
use super::sweep::report::SweepCounts;
use super::throttled_keys::ThrottledKeys;
use crate::error::migration::MigrationError;
use crate::error::Error;
use crate::expr::condition::{Comparison, Node, Operand};
use crate::expr::{AttrPath, Placeholders};
use crate::item::Item;
use crate::rate::{Limiter, Unit};
use crate::retry::RetryPolicy;
use crate::schema::{Entity, Table};
use crate::send::{ResentBy, ScanRequest};
use crate::Db;
use aws_sdk_dynamodb::operation::scan::ScanOutput;
use aws_sdk_dynamodb::types::AttributeValue;

/// The scan filter of a sweep: only entity `E`'s items below its schema version, `_type = E
/// AND (no _sv OR _sv < v)`.
pub(super) struct OldItems {
    /// The entity's name, for the spans of the scan's pages.
    pub(super) entity: &'static str,
    pub(super) expression: String,
    pub(super) placeholders: Placeholders,
}

impl OldItems {
    /// One page of old items of segment `segment.0` of `segment.1`, from after `start_key`.
    /// A read refused for throughput, or without its response, is sent again under the `Db`'s
    /// policy for long jobs; a throttled one lowers the sweep's rate when it has a limiter.
    pub(super) async fn page<T: Table>(
        &self,
        db: &Db<T>,
        page_size: i32,
        (segment, total_segments): (u32, u32),
        start_key: Option<Item>,
        limiter: Option<&Limiter>,
    ) -> Result<ScanOutput, Error> {
        let segmented = total_segments > 1;
        let scan = ScanRequest {
            filter: Some(self.expression.clone()),
            projection: None,
            placeholders: self.placeholders.clone(),
            limit: Some(page_size),
            // Strongly consistent: a scan then sees every write completed before it began,
            // so items the old code wrote just before the sweep are not missed while the
            // table's replicas lag (twice the read units of an eventually consistent scan).
            consistent: true,
            total_segments: i32::try_from(total_segments).ok().filter(|_| segmented),
            resent_by: ResentBy::Caller,
            capacity: false,
        };
        let request = db.scan_request(&scan, i32::try_from(segment).ok(), start_key);
        // A throttled page slows the limiter as a throttled write does. A sweep rides through
        // throttling as its writes do, under the `Db`'s policy for long jobs (the SDK's
        // retries are off: these are all its attempts).
        let resend = (&db.long_job_policy(), limiter);
        db.send_scan_page(request, self.entity, Some(resend)).await
    }

    pub(super) fn of<E: Entity>() -> OldItems {
        let table = <E::Table as Table>::SCHEMA;
        let schema = E::SCHEMA;
        let version = AttributeValue::N(schema.schema_version.to_string());
        let version_path = || AttrPath::attribute(table.schema_version_attribute);
        let filter = Node::And(
            Box::new(Node::Compare(
                Operand::Path(AttrPath::attribute(table.entity_attribute)),
                Comparison::Eq,
                Operand::Value(AttributeValue::S(schema.name.to_owned())),
            )),
            Box::new(Node::Or(
                Box::new(Node::NotExists(version_path())),
                Box::new(Node::Compare(
                    Operand::Path(version_path()),
                    Comparison::Lt,
                    Operand::Value(version),
                )),
            )),
        );
        let mut placeholders = Placeholders::default();
        let expression = filter.to_expression(&mut placeholders);
        OldItems {
            entity: schema.name,
            expression,
            placeholders,
        }
    }
}

/// How one old item of a page ended: backfilled, current or changed (its counts), or failed
/// as an item (the error, with the item), for the caller to count.
pub(super) enum ItemDone {
    Counted(SweepCounts),
    Failed(Item, Error),
}

/// Backfills a page's old `items` with up to `concurrency` writes in flight (each at the
/// limiter's pace, so the rate holds across them), handing each item's end to `done` as it
/// comes. No item is started once `stopped()` says so. Returns how many items ended: fewer
/// than the page's after a stop, and then the page is not done. An error that ends the sweep
/// is returned at once, the writes in flight dropped (a backfill sent again applies as once).
///
/// The caller records the page in its checkpoint only after this returns: the checkpoint
/// never passes an item whose write has not finished.
pub(super) async fn backfill_page<E: Entity>(
    db: &Db<E::Table>,
    items: Vec<Item>,
    (limiter, throttled): (Option<&Limiter>, &ThrottledKeys),
    concurrency: usize,
    stopped: impl Fn() -> bool,
    mut done: impl FnMut(ItemDone),
) -> Result<usize, Error> {
    use futures::StreamExt;
    let started = futures::stream::iter(items)
        .take_while(|_| std::future::ready(!stopped()))
        .map(|raw| async move {
            let mut counts = SweepCounts::default();
            let failure =
                backfill_counted::<E>(db, raw.clone(), limiter, throttled, &mut counts).await;
            (raw, failure, counts)
        })
        .buffer_unordered(concurrency.max(1));
    futures::pin_mut!(started);
    let mut ended = 0;
    while let Some((raw, failure, counts)) = started.next().await {
        ended += 1;
        match failure? {
            Some(error) => done(ItemDone::Failed(raw, error)),
            None => done(ItemDone::Counted(counts)),
        }
    }
    Ok(ended)
}

/// Backfills one old item a sweep read, counting what happened into `counts` and its
/// throttled writes into `throttled`. An item that is itself the problem is returned, to be
/// counted as failed; any other error ends the sweep.
pub(super) async fn backfill_counted<E: Entity>(
    db: &Db<E::Table>,
    raw: Item,
    limiter: Option<&Limiter>,
    throttled: &ThrottledKeys,
    counts: &mut SweepCounts,
) -> Result<Option<Error>, Error> {
    let done = backfill_resending::<E>(db, raw, limiter, throttled).await;
    match done {
        Ok(done) => {
            match done.outcome {
                BackfillOutcome::Written {
                    write_units,
                    after_change,
                } => {
                    counts.backfilled += 1;
                    counts.after_change += u64::from(after_change);
                    counts.write_units += write_units;
                }
                BackfillOutcome::ChangedConcurrently => counts.changed_concurrently += 1,
                BackfillOutcome::Current => counts.already_current += 1,
            }
            Ok(None)
        }
        Err(
            error @ (Error::Decode(_)
            | Error::Key(_)
            | Error::Limit(_)
            | Error::Encode { .. }
            | Error::Migration(MigrationError::KeyChanged { .. })),
        ) => Ok(Some(error)),
        Err(error) => Err(error),
    }
}

/// Backfills one item, at the limiter's pace when the sweep has a rate. Each throttled write
/// comes back unretried, is counted against the partition key it was held back on (its
/// table's, or its index entry's: [`throttled_keys`]), lowers the rate (with a
/// limiter) and is sent again under the `Db`'s policy for long jobs (`Db::long_job_policy`:
/// 24 attempts unless the user set a policy), rather than ending the sweep: the limiter
/// slows at the first throttle, not after the SDK's retries (bench `hot_partition`), and the
/// report names every key throttled, with a rate or without.
async fn backfill_resending<E: Entity>(
    db: &Db<E::Table>,
    raw: Item,
    limiter: Option<&Limiter>,
    throttled: &ThrottledKeys,
) -> Result<Backfilled<E>, Error> {
    let raw = &raw;
    let attempt = || async move {
        if let Some(limiter) = limiter {
            limiter.acquire(1.0).await;
        }
        db.admin().backfill_item_for_sweep::<E>(raw.clone()).await
    };
    let throttled = |error: &Error| {
        for key in throttled_keys::<E>(raw, error) {
            throttled.record(&key);
        }
        if let Some(limiter) = limiter {
            limiter.throttled();
        }
    };
    let done = resent_while_throttled(db.long_job_policy(), attempt, throttled).await?;
    let paid_in_units = limiter.filter(|limiter| limiter.unit() == Unit::WriteUnits);
    if let (Some(limiter), BackfillOutcome::Written { write_units, .. }) =
        (paid_in_units, &done.outcome)
    {
        limiter.settle(1.0, *write_units);
    }
    Ok(done)
}

/// The partition keys DynamoDB held a backfill write of `raw` back on, one for each reason it
/// gave: for a global index, the key of the entry the write puts there (as the current
/// version computes it: an index's hot key, a write-sharded one's shard); for the table, or
/// without a reason, the item's table partition key.
fn throttled_keys<E: Entity>(raw: &Item, error: &Error) -> Vec<String> {
    let table_key = || crate::item::key_text::<E::Table>(raw).partition.1;
    let index_key = |index: &str| {
        let schema = (E::SCHEMA.indexes.iter()).find(|entry| entry.index.name == index)?;
        let entity = crate::item::decode::<E>(raw.clone()).ok()?;
        let mut keys = Item::new();
        entity.write_index_keys(&mut keys).ok()?;
        match keys.remove(schema.index.partition_key)? {
            AttributeValue::S(text) => Some(text),
            AttributeValue::N(number) => Some(number),
            _ => None,
        }
    };
    let mut keys: Vec<String> = Vec::new();
    for throttling in error.throttling() {
        let index = (throttling.on_index())
            .then(|| throttling.resource()?.rsplit_once("/index/"))
            .flatten()
            .map(|(_, index)| index);
        let key = index.and_then(index_key).unwrap_or_else(table_key);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    if keys.is_empty() {
        keys.push(table_key());
    }
    keys
}

/// Sends a sweep's write (the one `send` makes, for each attempt) again while DynamoDB
/// throttles it, `throttled` hearing of each throttle, under `policy` (the `Db`'s for long
/// jobs): a sweep rides through throttling rather than ending at it, its backfills and its
/// own records alike.
pub(super) async fn resent_while_throttled<T, F: std::future::Future<Output = Result<T, Error>>>(
    policy: RetryPolicy,
    send: impl FnMut() -> F,
    throttled: impl FnMut(&Error),
) -> Result<T, Error> {
    policy
        .resending(send, Error::is_throttling, throttled)
        .await
}
