//! Coverage: how many of an entity's items are still below its schema version, and whether a
//! sweep covered the whole table. A migration is done only when both say so.

use super::checkpoint::Checkpoint;
use super::marker::CompletedMigration;
use super::schema_version::item_schema_version;
use crate::error::migration::MigrationError;
use crate::error::Error;
use crate::expr::condition::{Comparison, Node, Operand};
use crate::expr::{AttrPath, Placeholders};
use crate::item;
use crate::key::KeyText;
use crate::schema::{EntitySchema, Table};
use crate::send::{ResentBy, ScanRequest};
use crate::Admin;
use crate::Db;
use aws_sdk_dynamodb::types::AttributeValue;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// Keys of items still behind that a coverage report lists.
const MAX_SAMPLES: usize = 10;

/// Whether a sweep covered the whole table; serialized as `{"state": "partial", ..}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum RecordedSweep {
    /// The checkpoint says every segment read its last page.
    Complete,
    /// The migration is marked complete in the table (an earlier verification found it done).
    RecordedInTable,
    /// The checkpoint says the sweep has not finished.
    Partial {
        /// Segments finished.
        segments_done: u32,
        /// Segments in all.
        total_segments: u32,
    },
    /// No usable record of a sweep.
    NotRecorded {
        /// Why (no checkpoint given, no file, another sweep's file).
        reason: String,
    },
}

impl fmt::Display for RecordedSweep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordedSweep::Complete => write!(f, "a sweep covered the whole table"),
            RecordedSweep::RecordedInTable => {
                write!(f, "the migration is marked complete in the table")
            }
            RecordedSweep::Partial {
                segments_done,
                total_segments,
            } => write!(
                f,
                "the sweep has finished {segments_done} of {total_segments} segments"
            ),
            RecordedSweep::NotRecorded { reason } => write!(f, "no finished sweep: {reason}"),
        }
    }
}

/// How far an entity's migration to its current schema version is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Coverage {
    /// The table.
    pub table: String,
    /// The entity.
    pub entity: &'static str,
    /// Its current schema version.
    pub schema_version: u32,
    /// Items of the entity in the table.
    pub items: u64,
    /// Of those, items below the schema version (they lack what the new version adds).
    pub behind: u64,
    /// Items by the schema version they record (0: none recorded; items with an unreadable
    /// version count as behind and are not listed here).
    pub by_version: BTreeMap<u32, u64>,
    /// Keys of some items behind (at most 10).
    pub samples: Vec<KeyText>,
    /// Whether a sweep covered the whole table.
    pub sweep: RecordedSweep,
    /// The completion record in the table, if the migration was marked complete
    /// (`marked_complete` when serialized).
    #[serde(rename = "marked_complete")]
    pub marker: Option<CompletedMigration>,
}

impl Coverage {
    /// Done: no item is behind, and a sweep covered the whole table (or an earlier
    /// verification recorded completion), so no old item can be hiding. Only then may the old
    /// read path be removed.
    pub fn is_done(&self) -> bool {
        self.behind == 0
            && matches!(
                self.sweep,
                RecordedSweep::Complete | RecordedSweep::RecordedInTable
            )
    }

    /// The share of items at the schema version, in percent (100 for no items).
    pub fn percent(&self) -> f64 {
        if self.items == 0 {
            return 100.0;
        }
        // Casts: item counts far below 2^53, exactly representable.
        (self.items - self.behind.min(self.items)) as f64 * 100.0 / self.items as f64
    }
}

impl fmt::Display for Coverage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} on {}: {} of {} items at schema version {} ({:.1}%), {} behind",
            self.entity,
            self.table,
            self.items - self.behind.min(self.items),
            self.items,
            self.schema_version,
            self.percent(),
            self.behind
        )?;
        let versions: Vec<String> = self
            .by_version
            .iter()
            .map(|(version, count)| match version {
                0 => format!("no version: {count}"),
                version => format!("v{version}: {count}"),
            })
            .collect();
        if !versions.is_empty() {
            writeln!(f, "  by version: {}", versions.join(", "))?;
        }
        for key in &self.samples {
            writeln!(f, "  behind: {key}")?;
        }
        writeln!(f, "  sweep: {}", self.sweep)?;
        if let Some(marker) = &self.marker {
            writeln!(f, "  marked complete at {}", marker.completed_at)?;
        }
        if self.is_done() {
            writeln!(
                f,
                "  done: every item is at version {}; the old read path can go",
                self.schema_version
            )
        } else {
            writeln!(f, "  not done: keep the old read path")
        }
    }
}

/// Counts an entity's items by schema version; see [`Admin::coverage`](crate::Admin::coverage).
#[must_use = "a coverage check does nothing until `send` is awaited"]
pub struct Verify<'db, T> {
    db: &'db Db<T>,
    entity: &'static EntitySchema,
    checkpoint: Option<PathBuf>,
    distributed: Option<String>,
    segments: u32,
}

impl<'db, T: Table> Admin<'db, T> {
    /// Checks how far `entity`'s migration to its current schema version is: a strongly
    /// consistent scan counts its items by recorded schema version, and the sweep's
    /// checkpoint (see [`Verify::checkpoint`]) or the table's completion record says whether
    /// a sweep covered the whole table.
    pub fn coverage(&self, entity: &'static EntitySchema) -> Verify<'db, T> {
        Verify {
            db: self.db,
            entity,
            checkpoint: None,
            distributed: None,
            segments: 1,
        }
    }
}

impl<T: Table> Verify<'_, T> {
    /// The sweep's checkpoint file, which records whether it covered the whole table.
    pub fn checkpoint(mut self, path: impl Into<PathBuf>) -> Self {
        self.checkpoint = Some(path.into());
        self
    }

    /// The distributed sweep whose state in the table records whether it covered the whole
    /// table (see [`Sweep::distributed`](super::Sweep::distributed)); it counts only if it is
    /// a sweep of this entity to its current schema version.
    pub fn distributed(mut self, name: impl Into<String>) -> Self {
        self.distributed = Some(name.into());
        self
    }

    /// Scans in `segments` parallel segments (default 1).
    pub fn segments(mut self, segments: u32) -> Self {
        self.segments = segments;
        self
    }

    /// Runs the count.
    pub async fn send(self) -> Result<Coverage, Error> {
        let table = T::SCHEMA;
        let entity = self.entity;
        if !(1..=1_000_000).contains(&self.segments) {
            return Err(MigrationError::InvalidOption {
                option: "segments",
                message: format!("must be between 1 and 1000000, not {}", self.segments),
            }
            .into());
        }
        let mut placeholders = Placeholders::default();
        let filter = Node::Compare(
            Operand::Path(AttrPath::attribute(table.entity_attribute)),
            Comparison::Eq,
            Operand::Value(AttributeValue::S(entity.name.to_owned())),
        )
        .to_expression(&mut placeholders);
        // Only what the count needs comes back: the version and the key.
        let projection = std::iter::once(table.schema_version_attribute)
            .chain(std::iter::once(table.partition_key))
            .chain(table.sort_key)
            .map(|name| placeholders.name(name))
            .collect::<Vec<_>>()
            .join(", ");
        let segmented = self.segments > 1;
        let this = &self;
        let scans = (0..self.segments).map(|segment| {
            let placeholders = &placeholders;
            let filter = &filter;
            let projection = &projection;
            async move {
                let mut tally = Tally::default();
                let mut start_key = None;
                loop {
                    // A page is a read: refused for throughput or lost, it is sent again.
                    let scan = ScanRequest {
                        filter: Some(filter.clone()),
                        projection: Some(projection.clone()),
                        placeholders: placeholders.clone(),
                        limit: None,
                        consistent: true,
                        total_segments: segmented
                            .then(|| i32::try_from(this.segments).ok())
                            .flatten(),
                        resent_by: ResentBy::Caller,
                        capacity: false,
                    };
                    let page = this
                        .db
                        .scan_request(&scan, i32::try_from(segment).ok(), start_key);
                    // A long job's read: it rides through throttling as a sweep does.
                    let policy = this.db.long_job_policy();
                    let output = this
                        .db
                        .send_scan_page(page, entity.name, Some((&policy, None)))
                        .await?;
                    for item in output.items() {
                        tally.items += 1;
                        let version = item_schema_version(item, table);
                        if let Some(version) = version {
                            *tally.by_version.entry(version).or_default() += 1;
                        }
                        if version.is_none_or(|version| version < entity.schema_version) {
                            tally.behind += 1;
                            if tally.samples.len() < MAX_SAMPLES {
                                tally.samples.push(item::key_text::<T>(item));
                            }
                        }
                    }
                    match output.last_evaluated_key.filter(|key| !key.is_empty()) {
                        Some(key) => start_key = Some(key),
                        None => return Ok::<Tally, Error>(tally),
                    }
                }
            }
        });
        let tallies = futures::future::try_join_all(scans).await?;
        let mut total = Tally::default();
        for tally in tallies {
            total.items += tally.items;
            total.behind += tally.behind;
            for (version, count) in tally.by_version {
                *total.by_version.entry(version).or_default() += count;
            }
            total.samples.extend(
                tally
                    .samples
                    .into_iter()
                    .take(MAX_SAMPLES - total.samples.len().min(MAX_SAMPLES)),
            );
        }
        let marker = self.db.admin().migration_marker(entity).record().await?;
        let sweep = self.sweep_coverage(marker.as_ref()).await?;
        Ok(Coverage {
            table: self.db.table_name().to_owned(),
            entity: entity.name,
            schema_version: entity.schema_version,
            items: total.items,
            behind: total.behind,
            by_version: total.by_version,
            samples: total.samples,
            sweep,
            marker,
        })
    }

    async fn sweep_coverage(
        &self,
        marker: Option<&CompletedMigration>,
    ) -> Result<RecordedSweep, Error> {
        if let Some(name) = &self.distributed {
            return self.distributed_coverage(name, marker).await;
        }
        let from_checkpoint = match &self.checkpoint {
            None => RecordedSweep::NotRecorded {
                reason: "no checkpoint given".to_owned(),
            },
            Some(path) => match Checkpoint::load(path)? {
                None => RecordedSweep::NotRecorded {
                    reason: format!("no checkpoint at {}", path.display()),
                },
                Some(checkpoint) => {
                    if checkpoint.table != self.db.table_name()
                        || checkpoint.entity != self.entity.name
                        || checkpoint.schema_version != self.entity.schema_version
                    {
                        RecordedSweep::NotRecorded {
                            reason: format!(
                                "{} is a sweep of {} to version {} on {}",
                                path.display(),
                                checkpoint.entity,
                                checkpoint.schema_version,
                                checkpoint.table
                            ),
                        }
                    } else if let Some(foreign) = checkpoint.foreign_to(
                        super::plan::LiveTable::of_long_job(self.db)
                            .await?
                            .and_then(|live| live.identity)
                            .as_deref(),
                    ) {
                        RecordedSweep::NotRecorded {
                            reason: format!("{}: {foreign}", path.display()),
                        }
                    } else if checkpoint.is_complete() {
                        RecordedSweep::Complete
                    } else {
                        RecordedSweep::Partial {
                            segments_done: checkpoint.segments_done(),
                            total_segments: checkpoint.total_segments,
                        }
                    }
                }
            },
        };
        Ok(match (from_checkpoint, marker) {
            (RecordedSweep::Complete, _) => RecordedSweep::Complete,
            (_, Some(_)) => RecordedSweep::RecordedInTable,
            (other, None) => other,
        })
    }
}

impl<T: Table> Verify<'_, T> {
    /// What the table records of distributed sweep `name`.
    async fn distributed_coverage(
        &self,
        name: &str,
        marker: Option<&CompletedMigration>,
    ) -> Result<RecordedSweep, Error> {
        let (plan, status) = super::distributed::read_status(self.db, name, 0).await?;
        let coverage = match plan {
            None => RecordedSweep::NotRecorded {
                reason: format!("no distributed sweep {name:?} in the table"),
            },
            Some(plan)
                if plan.entity != self.entity.name
                    || plan.schema_version != self.entity.schema_version =>
            {
                RecordedSweep::NotRecorded {
                    reason: format!(
                        "the distributed sweep {name:?} is of {} to version {}",
                        plan.entity, plan.schema_version
                    ),
                }
            }
            Some(_) if status.is_done() => RecordedSweep::Complete,
            Some(_) => RecordedSweep::Partial {
                segments_done: u32::try_from(status.segments.iter().filter(|s| s.done).count())
                    .unwrap_or(u32::MAX),
                total_segments: u32::try_from(status.segments.len()).unwrap_or(u32::MAX),
            },
        };
        Ok(match (coverage, marker) {
            (RecordedSweep::Complete, _) => RecordedSweep::Complete,
            (_, Some(_)) => RecordedSweep::RecordedInTable,
            (other, None) => other,
        })
    }
}

/// One segment's counts.
#[derive(Default)]
struct Tally {
    items: u64,
    behind: u64,
    by_version: BTreeMap<u32, u64>,
    samples: Vec<KeyText>,
}
