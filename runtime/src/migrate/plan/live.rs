//! The live table, as `DescribeTable` reports it, compared with the declaration.

use super::*;

/// A snapshot of the live table, as `DescribeTable` reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveTable {
    /// The table name.
    pub name: String,
    /// `ACTIVE`, `CREATING`, `UPDATING`, ...
    pub status: String,
    /// Partition key attribute.
    pub partition_key: Option<String>,
    /// Sort key attribute.
    pub sort_key: Option<String>,
    /// Attribute definitions: name and type (`S`, `N`, `B`).
    pub attributes: Vec<(String, String)>,
    /// Global secondary indexes.
    pub global_indexes: Vec<LiveIndex>,
    /// Local secondary indexes.
    pub local_indexes: Vec<LiveIndex>,
    /// DynamoDB's item count (refreshed about every six hours, so approximate).
    pub item_count: Option<i64>,
    /// Read and write capacity units, when the table is billed by provisioned capacity (a new
    /// index then needs its own, and gets the table's).
    pub provisioned: Option<(i64, i64)>,
    /// Which table this is, not only its name: its `TableId` (else its ARN and creation time),
    /// so that a table deleted and created again, or another environment's, is told apart.
    pub identity: Option<String>,
    /// The time-to-live attribute and its status (`ENABLED`, `ENABLING`, `DISABLING`), when
    /// time to live is not disabled (`DescribeTimeToLive`).
    pub ttl: Option<(String, String)>,
    /// The stream's view type, when the table has a stream enabled.
    pub stream: Option<String>,
    /// The ARN of the table's latest stream.
    pub stream_arn: Option<String>,
    /// Whether deletion protection is on (`None`: the endpoint does not say).
    pub deletion_protection: Option<bool>,
    /// How the table is encrypted at rest: `AWS owned key` (DynamoDB's default), or `KMS`
    /// with the key's ARN when the description names it.
    pub encryption: String,
    /// Whether point-in-time recovery is on (`DescribeContinuousBackups`, which a plan reads;
    /// `None`: not read, or the endpoint does not know it).
    pub point_in_time_recovery: Option<bool>,
    /// The on-demand maximum throughput: read and write request units a second (`-1`: none).
    pub on_demand_maximum: Option<(i64, i64)>,
    /// The warm throughput: read and write units a second the table is ready for.
    pub warm_throughput: Option<(i64, i64)>,
}

/// A secondary index of the live table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveIndex {
    /// The index name.
    pub name: String,
    /// Partition key attribute.
    pub partition_key: Option<String>,
    /// Sort key attribute.
    pub sort_key: Option<String>,
    /// `CREATING`, `ACTIVE`, `UPDATING`, `DELETING` (global indexes only).
    pub status: Option<String>,
    /// Whether DynamoDB is still copying existing items into a new global index.
    pub backfilling: bool,
    /// DynamoDB's item count of the index (approximate).
    pub item_count: Option<i64>,
    /// `ALL`, `KEYS_ONLY`, or `INCLUDE` with its attributes (`INCLUDE [status, title]`),
    /// written as [`IndexProjection`](crate::schema::IndexProjection) displays.
    pub projection: Option<String>,
}

impl LiveIndex {
    /// Whether the index serves queries: `ACTIVE` and done backfilling (local indexes, which
    /// have no status, always are).
    pub fn is_active(&self) -> bool {
        self.status
            .as_deref()
            .is_none_or(|status| status == "ACTIVE")
            && !self.backfilling
    }
}

/// The partition and sort key attributes, each list joined with ", " (multi-attribute keys
/// have up to four of each).
pub(super) fn key_attributes(elements: &[KeySchemaElement]) -> (Option<String>, Option<String>) {
    let find = |kind: KeyType| {
        let names: Vec<&str> = elements
            .iter()
            .filter(|element| *element.key_type() == kind)
            .map(|element| element.attribute_name())
            .collect();
        (!names.is_empty()).then(|| names.join(", "))
    };
    (find(KeyType::Hash), find(KeyType::Range))
}

/// An index's declared key attributes, joined as [`key_attributes`] joins the live ones.
pub(super) fn declared_keys(index: &IndexSchema) -> (String, Option<String>) {
    let join = |keys: &[crate::schema::KeyAttribute]| {
        keys.iter()
            .map(|key| key.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let sort = join(index.sort_keys);
    (
        join(index.partition_keys),
        (!sort.is_empty()).then_some(sort),
    )
}

impl LiveIndex {
    fn from_global(index: &GlobalSecondaryIndexDescription) -> Self {
        let (partition_key, sort_key) = key_attributes(index.key_schema());
        LiveIndex {
            name: index.index_name().unwrap_or_default().to_owned(),
            partition_key,
            sort_key,
            status: index
                .index_status()
                .map(|status| status.as_str().to_owned()),
            backfilling: index.backfilling().unwrap_or(false),
            item_count: index.item_count(),
            projection: index.projection().and_then(projection_text),
        }
    }

    fn from_local(index: &LocalSecondaryIndexDescription) -> Self {
        let (partition_key, sort_key) = key_attributes(index.key_schema());
        LiveIndex {
            name: index.index_name().unwrap_or_default().to_owned(),
            partition_key,
            sort_key,
            status: None,
            backfilling: false,
            item_count: index.item_count(),
            projection: index.projection().and_then(projection_text),
        }
    }
}

impl LiveTable {
    /// Reads the table's description; `None` when it does not exist.
    ///
    /// Each of its two reads is sent again while throttled or after a lost response, under
    /// [`RetryPolicy::default`](crate::RetryPolicy::default) (there is no `Db` to take a
    /// policy from; plans, applies' polls, sweeps and coverage read it under their `Db`'s), in
    /// a span of its own. A read is safe to send twice.
    pub async fn describe(
        client: &aws_sdk_dynamodb::Client,
        table_name: &str,
    ) -> Result<Option<LiveTable>, Error> {
        Ok(Self::of(
            crate::send::describe_with_ttl(client, table_name).await?,
        ))
    }

    /// The table of `db`, read under its policy.
    pub(crate) async fn of_db<T: crate::Table>(
        db: &crate::Db<T>,
    ) -> Result<Option<LiveTable>, Error> {
        Ok(Self::of(db.describe_with_ttl(db.retry_policy()).await?))
    }

    /// The table of `db`, read as a long job reads (a sweep's, coverage's): under the `Db`'s
    /// policy for long jobs, riding through throttling unless the user set a policy.
    pub(crate) async fn of_long_job<T: crate::Table>(
        db: &crate::Db<T>,
    ) -> Result<Option<LiveTable>, Error> {
        Ok(Self::of(db.describe_with_ttl(db.long_job_policy()).await?))
    }

    /// The snapshot of a description and its time to live.
    fn of(described: crate::send::Described) -> Option<LiveTable> {
        let (table, ttl) = described?;
        let mut live = LiveTable::from_description(&table);
        live.ttl = ttl.as_ref().and_then(|description| {
            let status = description.time_to_live_status()?.as_str();
            let attribute = description.attribute_name()?;
            (status != "DISABLED").then(|| (attribute.to_owned(), status.to_owned()))
        });
        Some(live)
    }

    /// The snapshot of a `DescribeTable` answer.
    pub fn from_description(table: &TableDescription) -> LiveTable {
        let (partition_key, sort_key) = key_attributes(table.key_schema());
        let billing = table
            .billing_mode_summary()
            .and_then(|summary| summary.billing_mode());
        let throughput = table.provisioned_throughput();
        let units = throughput.map(|throughput| {
            (
                throughput.read_capacity_units().unwrap_or_default(),
                throughput.write_capacity_units().unwrap_or_default(),
            )
        });
        // Tables older than the billing summary are provisioned; their summary is absent.
        let provisioned = match billing {
            Some(BillingMode::PayPerRequest) => None,
            Some(_) => units,
            None => units.filter(|(read, write)| *read > 0 || *write > 0),
        };
        // DynamoDB gives every table a new id when it is created; without one, the ARN and the
        // creation time tell tables apart (unless made within one tick of the engine's clock).
        let identity = table
            .table_id()
            .map(|id| format!("table id {id}"))
            .or_else(|| {
                let (arn, created) = table.table_arn().zip(table.creation_date_time())?;
                Some(format!(
                    "{arn} created at {}.{:09}",
                    created.secs(),
                    created.subsec_nanos()
                ))
            });
        LiveTable {
            identity,
            name: table.table_name().unwrap_or_default().to_owned(),
            status: table
                .table_status()
                .map(|status| status.as_str().to_owned())
                .unwrap_or_default(),
            partition_key,
            sort_key,
            attributes: table
                .attribute_definitions()
                .iter()
                .map(|definition| {
                    (
                        definition.attribute_name().to_owned(),
                        definition.attribute_type().as_str().to_owned(),
                    )
                })
                .collect(),
            global_indexes: table
                .global_secondary_indexes()
                .iter()
                .map(LiveIndex::from_global)
                .collect(),
            local_indexes: table
                .local_secondary_indexes()
                .iter()
                .map(LiveIndex::from_local)
                .collect(),
            item_count: table.item_count(),
            provisioned,
            ttl: None,
            stream: table
                .stream_specification()
                .filter(|stream| stream.stream_enabled())
                .and_then(|stream| stream.stream_view_type())
                .map(|view| view.as_str().to_owned()),
            stream_arn: table.latest_stream_arn().map(str::to_owned),
            deletion_protection: table.deletion_protection_enabled(),
            encryption: encryption_text(table.sse_description()),
            point_in_time_recovery: None,
            on_demand_maximum: table.on_demand_throughput().map(|maximum| {
                (
                    maximum.max_read_request_units().unwrap_or(-1),
                    maximum.max_write_request_units().unwrap_or(-1),
                )
            }),
            warm_throughput: table.warm_throughput().map(|warm| {
                (
                    warm.read_units_per_second().unwrap_or_default(),
                    warm.write_units_per_second().unwrap_or_default(),
                )
            }),
        }
    }

    /// The global index with this name.
    pub fn global_index(&self, name: &str) -> Option<&LiveIndex> {
        self.global_indexes.iter().find(|index| index.name == name)
    }

    /// The type of an attribute definition (`S`, `N`, `B`).
    pub fn attribute_type(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(attribute, _)| attribute == name)
            .map(|(_, kind)| kind.as_str())
    }
}

/// How a table is encrypted at rest, from its `SSEDescription`: without one, or with it off,
/// DynamoDB's own key.
fn encryption_text(description: Option<&aws_sdk_dynamodb::types::SseDescription>) -> String {
    use aws_sdk_dynamodb::types::{SseStatus, SseType};
    let kms = description.filter(|description| {
        matches!(
            description.status(),
            Some(SseStatus::Enabled | SseStatus::Enabling | SseStatus::Updating)
        ) && description.sse_type() == Some(&SseType::Kms)
    });
    match kms.map(|description| description.kms_master_key_arn()) {
        None => "AWS owned key".to_owned(),
        Some(None) => "KMS".to_owned(),
        Some(Some(arn)) => format!("KMS {arn}"),
    }
}

/// A live projection in the text [`IndexProjection`](crate::schema::IndexProjection) displays,
/// so that the declared one compares with it.
fn projection_text(projection: &aws_sdk_dynamodb::types::Projection) -> Option<String> {
    let kind = projection.projection_type()?.as_str();
    let mut attributes = projection.non_key_attributes().to_vec();
    attributes.sort_unstable();
    Some(if attributes.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind} [{}]", attributes.join(", "))
    })
}
