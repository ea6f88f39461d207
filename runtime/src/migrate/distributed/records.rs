//! The items a distributed sweep keeps in the table: its plan, and one lease and checkpoint
//! per segment, all under `PK = "_SWEEP#<name>"`.

use super::{DistributedStatus, SegmentStatus};
use crate::error::migration::MigrationError;
use crate::error::Error;
use crate::item::Item;
use crate::library::{read_record, LibraryRecord, RecordKind, DISTRIBUTED_SWEEP};
use crate::migrate::sweep::SweepCounts;
use crate::op::batch::{read_records, MAX_GET_KEYS};
use crate::schema::Table;
use crate::Db;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A distributed sweep's plan, as the table keeps it: what every worker of the sweep must
/// agree on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SweepPlan {
    /// The entity swept.
    pub(crate) entity: String,
    /// The schema version it is swept to.
    pub(crate) schema_version: u32,
    /// The number of segments.
    pub(crate) segments: u32,
}

impl LibraryRecord for SweepPlan {
    const KIND: &'static RecordKind = &DISTRIBUTED_SWEEP;
}
/// The plan item of sweep `name`, if a worker wrote it, and its segments as the table records
/// them (`default_segments` of them when there is no plan yet).
pub(crate) async fn read_status<T: Table>(
    db: &Db<T>,
    name: &str,
    default_segments: u32,
) -> Result<(Option<SweepPlan>, DistributedStatus), Error> {
    // Read by workers as they go, so resent as their writes are: while throttled, after a
    // lost response, and what DynamoDB leaves unprocessed.
    let resending = db.long_job_policy();
    let key = library_key::<T>(name, "PLAN".to_owned());
    let read = db.raw_get_under(&resending, DISTRIBUTED_SWEEP.description, key, true);
    let plan = match read.await?.item {
        Some(item) => Some(read_record::<T, SweepPlan>(item)?),
        None => None,
    };
    let segments = plan
        .as_ref()
        .map(|plan| plan.segments)
        .filter(|segments| *segments > 0)
        .unwrap_or(default_segments);
    let keys: Vec<Item> = (0..segments)
        .map(|n| library_key::<T>(name, segment_sort(n)))
        .collect();
    let mut found: HashMap<u32, SegmentStatus> = HashMap::new();
    for chunk in keys.chunks(MAX_GET_KEYS) {
        let read = read_records(
            db,
            DISTRIBUTED_SWEEP.description,
            chunk.to_vec(),
            &resending,
        )
        .await;
        if let Some(error) = read.error {
            return Err(error);
        }
        if !read.left.is_empty() {
            return Err(MigrationError::Unprocessed {
                sweep: name.to_owned(),
                unread: read.left.len(),
                requests: read.requests,
            }
            .into());
        }
        for item in read.items {
            let status = segment_status::<T>(item)?;
            found.insert(status.segment, status);
        }
    }
    let status = DistributedStatus {
        name: name.to_owned(),
        segments: (0..segments)
            .map(|segment| {
                found.remove(&segment).unwrap_or(SegmentStatus {
                    segment,
                    owner: None,
                    lease_expires_ms: None,
                    lease: 0,
                    done: false,
                    counts: SweepCounts::default(),
                    rate: None,
                })
            })
            .collect(),
    };
    Ok((plan, status))
}

/// The key of one of sweep `name`'s items.
pub(super) fn library_key<T: Table>(name: &str, sort: String) -> Item {
    crate::library::record_key(T::SCHEMA, &DISTRIBUTED_SWEEP, name, sort)
}

pub(super) fn segment_sort(segment: u32) -> String {
    format!("SEGMENT#{segment:07}")
}

/// A segment's status from its lease item; `None` for an item that is not one.
pub(super) fn segment_status<T: Table>(item: Item) -> Result<SegmentStatus, Error> {
    let stored = read_record::<T, SegmentItem>(item)?;
    Ok(SegmentStatus {
        segment: stored.segment,
        owner: stored.owner,
        lease_expires_ms: stored.lease_expires,
        lease: stored.lease,
        done: stored.done,
        rate: stored.write_rate,
        counts: SweepCounts {
            examined: stored.examined,
            old: stored.old,
            backfilled: stored.backfilled,
            after_change: stored.after_change,
            changed_concurrently: stored.changed_concurrently,
            already_current: stored.already_current,
            failed: stored.failed,
            write_units: 0.0,
        },
    })
}

/// A segment's lease and checkpoint, as the table keeps it (a claim writes the lease; each
/// checkpoint sets the counts to their totals).
#[derive(Debug, Deserialize, Serialize)]
pub(super) struct SegmentItem {
    segment: u32,
    #[serde(default)]
    owner: Option<String>,
    /// When the lease expires, in milliseconds since the Unix epoch.
    #[serde(default)]
    lease_expires: Option<u64>,
    /// The fencing token.
    #[serde(default)]
    lease: u64,
    #[serde(default)]
    done: bool,
    #[serde(default)]
    write_rate: Option<f64>,
    #[serde(default)]
    examined: u64,
    #[serde(default)]
    old: u64,
    #[serde(default)]
    backfilled: u64,
    #[serde(default)]
    after_change: u64,
    #[serde(default)]
    changed_concurrently: u64,
    #[serde(default)]
    already_current: u64,
    #[serde(default)]
    failed: u64,
}

impl LibraryRecord for SegmentItem {
    const KIND: &'static RecordKind = &DISTRIBUTED_SWEEP;
}
