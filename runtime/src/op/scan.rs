//! `Scan` of one entity's items, optionally in parallel segments, as a stream.

use crate::error::Error;
use crate::expr::condition::{user_node, EntityFilter};
use crate::expr::{Condition, Placeholders};
use crate::item::Item;
use crate::schema::{Entity, Table};
use crate::wire::{Body, Request};
use crate::Db;
use aws_sdk_dynamodb::types::AttributeValue;
use futures::stream::{self, BoxStream, Stream, StreamExt};
use futures::FutureExt;
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;

/// DynamoDB's limit on `TotalSegments`.
pub const MAX_SEGMENTS: u32 = 1_000_000;

impl<T: Table> Db<T> {
    /// Reads every item of entity `E` in the table.
    ///
    /// A scan reads the whole table (and is billed for it) whatever the filter: the filter,
    /// which always includes "is an `E`", only decides what comes back.
    pub fn scan<E: Entity<Table = T>>(&self) -> Scan<'_, E> {
        Scan {
            db: self,
            filter: None,
            segments: 1,
            page_size: None,
            consistent: false,
        }
    }
}

/// A `Scan` of one entity; see [`Db::scan`].
#[must_use = "a scan does nothing until its stream is polled"]
pub struct Scan<'db, E: Entity> {
    db: &'db Db<E::Table>,
    filter: Option<Condition<E>>,
    segments: u32,
    page_size: Option<u32>,
    consistent: bool,
}

/// Everything a segment's requests share.
struct Prepared {
    client: aws_sdk_dynamodb::Client,
    table: String,
    filter: String,
    names: Option<HashMap<String, String>>,
    values: Option<HashMap<String, AttributeValue>>,
    placeholders: Placeholders,
    total_segments: Option<i32>,
    limit: Option<i32>,
    consistent: bool,
}

impl<E: Entity> Scan<'_, E> {
    /// Returns only items for which `condition` also holds (a `FilterExpression`: filtered
    /// out items are still read and billed). Several filters are joined with `AND`.
    pub fn filter(mut self, condition: Condition<E>) -> Self {
        Condition::and_to(&mut self.filter, condition);
        self
    }

    /// Scans in `segments` parallel segments (`Segment`/`TotalSegments`), whose items the
    /// stream interleaves; 1 (the default) is a plain sequential scan. At most
    /// [`MAX_SEGMENTS`].
    pub fn segments(mut self, segments: u32) -> Self {
        self.segments = segments;
        self
    }

    /// Reads at most `items` items per request (`Limit`), counted before the filter, so a
    /// page may bring fewer items, or none.
    pub fn page_size(mut self, items: u32) -> Self {
        self.page_size = Some(items);
        self
    }

    /// Asks for strongly consistent reads (twice the read cost).
    pub fn consistent(mut self, consistent: bool) -> Self {
        self.consistent = consistent;
        self
    }

    fn prepare(&self) -> Result<Prepared, Error> {
        let segments = in_range("TotalSegments", self.segments, MAX_SEGMENTS)?;
        let limit = self
            .page_size
            .map(|items| in_range("Limit", items, i32::MAX.unsigned_abs()))
            .transpose()?;
        let table = <E::Table as Table>::SCHEMA;
        // Other entities share the table; only this entity's items are ever returned.
        let user = user_node(self.filter.as_ref())?;
        let mut placeholders = Placeholders::default();
        let filter = crate::expr::render(
            &mut EntityFilter {
                attribute: table.entity_attribute,
                entity: Some(E::SCHEMA.name),
                user,
            },
            &mut placeholders,
        );
        crate::expr::check_expression("FilterExpression", &filter)?;
        Ok(Prepared {
            client: self.db.client().clone(),
            table: self.db.table_name().to_owned(),
            filter,
            names: placeholders.names(),
            values: placeholders.values(),
            placeholders,
            // Segment and TotalSegments go together; a one-segment scan sends neither.
            total_segments: (segments > 1).then_some(segments),
            limit,
            consistent: self.consistent,
        })
    }

    /// The first request of each segment (later pages add `ExclusiveStartKey`).
    pub fn params(&self) -> Result<Vec<Request>, Error> {
        let prepared = self.prepare()?;
        let segments = prepared.total_segments.unwrap_or(1);
        Ok((0..segments)
            .map(|segment| {
                Body::default()
                    .field("TableName", json!(prepared.table))
                    .field("FilterExpression", json!(prepared.filter))
                    .field(
                        "ExpressionAttributeNames",
                        prepared.placeholders.names_json(),
                    )
                    .field(
                        "ExpressionAttributeValues",
                        prepared.placeholders.values_json(),
                    )
                    .field("Limit", prepared.limit.map(|limit| json!(limit)))
                    .field("ConsistentRead", prepared.consistent.then_some(json!(true)))
                    .field("Segment", prepared.total_segments.map(|_| json!(segment)))
                    .field(
                        "TotalSegments",
                        prepared.total_segments.map(|total| json!(total)),
                    )
                    .request("Scan")
            })
            .collect())
    }

    /// The items, read page by page as the stream is polled, every segment concurrently; in
    /// no particular order across segments.
    ///
    /// An item that cannot be read as `E` is an `Err(Error::Decode(..))` and the stream goes
    /// on. A failed request is an `Err` that ends its segment (other segments go on). An
    /// invalid scan (see [`Error::OutOfRange`]) is a single `Err`.
    pub fn into_stream(self) -> impl Stream<Item = Result<E, Error>> + Send + 'static {
        let segments: Vec<BoxStream<'static, Result<E, Error>>> = match self.prepare() {
            Ok(prepared) => {
                let total = prepared.total_segments;
                let prepared = Arc::new(prepared);
                (0..total.unwrap_or(1))
                    .map(|segment| {
                        segment_stream::<E>(prepared.clone(), total.map(|_| segment)).boxed()
                    })
                    .collect()
            }
            Err(error) => vec![stream::once(async { Err(error) }).boxed()],
        };
        stream::select_all(segments)
    }
}

fn in_range(parameter: &'static str, value: u32, max: u32) -> Result<i32, Error> {
    match i32::try_from(value) {
        Ok(value) if (1..).contains(&value) && value.unsigned_abs() <= max => Ok(value),
        _ => Err(Error::OutOfRange {
            parameter,
            value: value.into(),
            min: 1,
            max: max.into(),
        }),
    }
}

/// Where a segment is: `None` once it has read its last page.
type Cursor = Option<Option<Item>>;

/// One segment's items: pages follow `LastEvaluatedKey` until there is none.
fn segment_stream<E: Entity>(
    prepared: Arc<Prepared>,
    segment: Option<i32>,
) -> impl Stream<Item = Result<E, Error>> + Send + 'static {
    let start: Cursor = Some(None);
    stream::unfold(start, move |cursor| {
        let prepared = prepared.clone();
        async move {
            let start_key = cursor?;
            let result = prepared
                .client
                .scan()
                .table_name(&prepared.table)
                .filter_expression(&prepared.filter)
                .set_expression_attribute_names(prepared.names.clone())
                .set_expression_attribute_values(prepared.values.clone())
                .set_limit(prepared.limit)
                .set_consistent_read(prepared.consistent.then_some(true))
                .set_segment(segment)
                .set_total_segments(prepared.total_segments)
                .set_exclusive_start_key(start_key)
                .send()
                .boxed()
                .await;
            Some(match result {
                Ok(output) => {
                    // An empty key means the same as none: nothing left to read.
                    let next = output
                        .last_evaluated_key
                        .filter(|key| !key.is_empty())
                        .map(Some);
                    (Ok(output.items.unwrap_or_default()), next)
                }
                Err(error) => (Err(Error::from(error)), None),
            })
        }
    })
    .flat_map(|page: Result<Vec<Item>, Error>| {
        let (items, error) = match page {
            Ok(items) => (items, None),
            Err(error) => (Vec::new(), Some(error)),
        };
        stream::iter(
            items
                .into_iter()
                .map(|item| crate::item::decode::<E>(item).map_err(Error::from))
                .chain(error.map(Err)),
        )
    })
}
