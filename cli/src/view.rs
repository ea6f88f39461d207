//! What the command line prints of the runtime's values beyond their own serde and `Display`:
//! the computed fields scripts read in `--json` output (`done`, `percent`, `up_to_date`, ...),
//! the design reshaped as access patterns, and the text of a distributed sweep's status, its
//! workers and a claim sweep's report, which only the command line shows.

use serde::Serialize;
use singletable_runtime::migrate::{
    Coverage, Design, DesignRow, DistributedStatus, Plan, SweepCounts, WorkerReport,
};
use singletable_runtime::schema::IndexKind;
use singletable_runtime::unique::ClaimReport;
use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// A plan with what is asked of it first: whether the table exists, its status and size, and
/// whether there is anything to do.
#[derive(Serialize)]
pub(crate) struct PlanView<'a> {
    #[serde(flatten)]
    plan: &'a Plan,
    exists: bool,
    status: Option<&'a str>,
    item_count: Option<i64>,
    up_to_date: bool,
}

impl<'a> PlanView<'a> {
    pub(crate) fn new(plan: &'a Plan) -> Self {
        PlanView {
            plan,
            exists: plan.live.is_some(),
            status: plan.live.as_ref().map(|live| live.status.as_str()),
            item_count: plan.live.as_ref().and_then(|live| live.item_count),
            up_to_date: plan.is_up_to_date(),
        }
    }
}

/// What `apply` did, and how long it took.
#[derive(Serialize)]
pub(crate) struct AppliedView<'a> {
    pub(crate) applied: PlanView<'a>,
    pub(crate) elapsed_seconds: f64,
}

/// A coverage report with its verdict and share done.
#[derive(Serialize)]
pub(crate) struct CoverageView<'a> {
    #[serde(flatten)]
    coverage: &'a Coverage,
    percent: f64,
    done: bool,
}

impl<'a> CoverageView<'a> {
    pub(crate) fn new(coverage: &'a Coverage) -> Self {
        CoverageView {
            coverage,
            percent: coverage.percent(),
            done: coverage.is_done(),
        }
    }
}

/// A distributed sweep's segments, with whether all are done and their counts added up; as
/// text, one line per segment.
#[derive(Serialize)]
pub(crate) struct StatusView<'a> {
    #[serde(flatten)]
    status: &'a DistributedStatus,
    done: bool,
    counts: SweepCounts,
}

impl<'a> StatusView<'a> {
    pub(crate) fn new(status: &'a DistributedStatus) -> Self {
        StatusView {
            status,
            done: status.is_done(),
            counts: status.counts(),
        }
    }
}

impl fmt::Display for StatusView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let segments = &self.status.segments;
        let done = segments.iter().filter(|segment| segment.done).count();
        writeln!(
            f,
            "sweep {}: {done} of {} segments done, {} backfilled of {} old items",
            self.status.name,
            segments.len(),
            self.counts.backfilled,
            self.counts.old
        )?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| {
                u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
            });
        for segment in segments {
            let state = if segment.done {
                "done".to_owned()
            } else {
                match (&segment.owner, segment.lease_expires_ms) {
                    (Some(owner), Some(at)) if at >= now => {
                        format!("held by {owner}, {} ms left", at - now)
                    }
                    (Some(owner), _) => format!("free (lease of {owner} expired)"),
                    _ => "free".to_owned(),
                }
            };
            let rate = segment
                .rate
                .map(|rate| format!(", at {rate:.1}/s"))
                .unwrap_or_default();
            writeln!(
                f,
                "  segment {:>4}: {state}; {} examined, {} backfilled, {} failed{rate}",
                segment.segment,
                segment.counts.examined,
                segment.counts.backfilled,
                segment.counts.failed
            )?;
        }
        Ok(())
    }
}

/// A worker's report as one line of text.
pub(crate) struct WorkerText<'a>(pub(crate) &'a WorkerReport);

impl fmt::Display for WorkerText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let report = self.0;
        writeln!(
            f,
            "worker {}: {} segments finished, {} leases lost to other workers; {} backfilled, \
             {} changed concurrently, {} failed",
            report.worker,
            report.finished.len(),
            report.leases_lost,
            report.counts.backfilled,
            report.counts.changed_concurrently,
            report.counts.failed
        )?;
        // DynamoDB names no key when it throttles; the worker knows which it wrote.
        for (key, writes) in &report.throttled_keys {
            writeln!(f, "  partition key {key:?}: {writes} writes throttled")?;
        }
        Ok(())
    }
}

/// The design as `describe --json` prints it: the declaration's keys and indexes, then each
/// access pattern with its keys as attribute and template.
#[derive(Serialize)]
pub(crate) struct DesignView<'a> {
    table: &'a str,
    declaration: &'static str,
    partition_key: &'static str,
    sort_key: Option<&'static str>,
    entity_attribute: &'static str,
    schema_version_attribute: &'static str,
    indexes: Vec<IndexView>,
    access_patterns: Vec<AccessPattern<'a>>,
    unused_indexes: &'a [&'static str],
}

#[derive(Serialize)]
struct IndexView {
    name: &'static str,
    kind: &'static str,
    partition_key: &'static str,
    sort_key: Option<&'static str>,
}

#[derive(Serialize)]
struct AccessPattern<'a> {
    entity: &'static str,
    schema_version: u32,
    index: Option<&'static str>,
    partition_key: KeyView<'a>,
    sort_key: Option<KeyView<'a>>,
    only_when: Option<&'static str>,
}

#[derive(Serialize)]
struct KeyView<'a> {
    attribute: &'static str,
    template: Option<&'a str>,
}

impl<'a> DesignView<'a> {
    pub(crate) fn new(design: &'a Design) -> Self {
        let schema = design.schema;
        let pattern = |row: &'a DesignRow| AccessPattern {
            entity: row.entity,
            schema_version: row.schema_version,
            index: row.index,
            partition_key: KeyView {
                attribute: row.partition_attribute,
                template: Some(&row.partition_template),
            },
            sort_key: row.sort_attribute.map(|attribute| KeyView {
                attribute,
                template: row.sort_template.as_deref(),
            }),
            only_when: row.rule,
        };
        DesignView {
            table: &design.table,
            declaration: schema.type_name,
            partition_key: schema.partition_key,
            sort_key: schema.sort_key,
            entity_attribute: schema.entity_attribute,
            schema_version_attribute: schema.schema_version_attribute,
            indexes: schema
                .indexes
                .iter()
                .map(|index| IndexView {
                    name: index.name,
                    kind: match index.kind {
                        IndexKind::Global => "global",
                        IndexKind::Local => "local",
                    },
                    partition_key: index.partition_key,
                    sort_key: index.sort_key,
                })
                .collect(),
            access_patterns: design.rows.iter().map(pattern).collect(),
            unused_indexes: &design.unused_indexes,
        }
    }
}

/// A claim sweep's report, for people: what was claimed, and each value two items share.
pub(crate) struct ClaimText<'a>(pub(crate) &'a ClaimReport);

impl fmt::Display for ClaimText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let report = self.0;
        writeln!(
            f,
            "claimed {} values of {} items ({} left to writers that changed them meanwhile)",
            report.claimed, report.items, report.changed
        )?;
        if report.duplicates.is_empty() {
            return writeln!(f, "no value is shared");
        }
        writeln!(
            f,
            "{} values are shared; fix those items, then claim again:",
            report.duplicates.len()
        )?;
        for duplicate in &report.duplicates {
            let holder = duplicate
                .holder
                .as_ref()
                .map_or_else(|| "an item".to_owned(), ToString::to_string);
            // The value as an error's text shows one: only with `--show-values`.
            let value = if singletable_runtime::error::values_shown() {
                format!("{:?}", duplicate.value)
            } else {
                "‹hidden›".to_owned()
            };
            writeln!(
                f,
                "  {} {value}: claimed for {holder}, also held by {}",
                duplicate.field, duplicate.item
            )?;
        }
        Ok(())
    }
}
