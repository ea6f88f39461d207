//! `Scan` of one entity's items, optionally in parallel segments, as a stream.

use super::read_options::ReadOptions;
use crate::error::Error;
use crate::expr::condition::{user_node, EntityFilter, Keeps};
use crate::expr::{Condition, Placeholders};
use crate::item::Item;
use crate::rate::Limiter;
use crate::retry::RetryPolicy;
use crate::schema::{Entity, Table};
use crate::send::{ResentBy, ScanRequest};
use crate::wire::{describe, Request};
use crate::Db;
use aws_sdk_dynamodb::operation::scan::builders::ScanFluentBuilder;
use futures::stream::{self, BoxStream, Stream, StreamExt, TryStreamExt};
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
            limit: None,
            read: ReadOptions::new(T::SCHEMA, || self.now()),
            resend: None,
        }
    }
}

/// A `Scan` of one entity; see [`Db::scan`].
#[must_use = "a scan does nothing until its stream is polled"]
pub struct Scan<'db, E: Entity> {
    db: &'db Db<E::Table>,
    filter: Option<Condition<E>>,
    segments: u32,
    limit: Option<u32>,
    read: ReadOptions,
    /// How the library's own jobs resend a page refused or lost (a user's scan leaves that
    /// to the SDK's retries, as its other reads do).
    resend: Option<Resend>,
}

/// How a library job's scan resends its pages, and the job's rate, which a refused page
/// lowers.
#[derive(Clone)]
struct Resend {
    policy: RetryPolicy,
    limiter: Option<Arc<Limiter>>,
}

/// Everything a segment's requests share.
struct Prepared<T> {
    /// Where the capacity of every page is recorded.
    db: Db<T>,
    /// The request of every page, but for its `Segment` and `ExclusiveStartKey`.
    request: ScanRequest,
    total_segments: Option<i32>,
    resend: Option<Resend>,
}

impl<T: Table> Prepared<T> {
    /// The request for `segment`, starting after `start`.
    fn page(&self, segment: Option<i32>, start: Option<Item>) -> ScanFluentBuilder {
        self.db.scan_request(&self.request, segment, start)
    }
}

impl<E: Entity> Scan<'_, E> {
    super::read_options::read_option_setters!();

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

    /// Reads at most `limit` items per request (`Limit`), counted before the filter, so a
    /// page may bring fewer items, or none.
    pub fn limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Sends each page again while it is refused or its response lost, under `policy`, each
    /// refusal for throughput lowering `limiter`'s rate: for the library's long jobs.
    pub(crate) fn resending(mut self, policy: RetryPolicy, limiter: Option<Arc<Limiter>>) -> Self {
        self.resend = Some(Resend { policy, limiter });
        self
    }

    fn prepare(&self) -> Result<Prepared<E::Table>, Error> {
        let segments = super::in_range("TotalSegments", self.segments, MAX_SEGMENTS)?;
        let limit = super::page_limit(self.limit)?;
        let table = <E::Table as Table>::SCHEMA;
        // Other entities share the table; only this entity's items are ever returned.
        let user = user_node(self.filter.as_ref())?;
        let mut placeholders = Placeholders::default();
        let filter = crate::expr::render(
            &mut EntityFilter {
                attribute: table.entity_attribute,
                keeps: Keeps::Entity(E::SCHEMA.name),
                user,
                expiry: self.read.expiry,
            },
            &mut placeholders,
        );
        crate::expr::check_expression("FilterExpression", &filter)?;
        placeholders.check()?;
        // Segment and TotalSegments go together; a one-segment scan sends neither.
        let total_segments = (segments > 1).then_some(segments);
        let request = ScanRequest {
            filter: Some(filter),
            projection: None,
            placeholders,
            limit,
            consistent: self.read.consistent,
            total_segments,
            // A job's pages are resent by its own loop; a user's by the SDK's, set to the policy.
            resent_by: match &self.resend {
                Some(_) => ResentBy::Caller,
                None => ResentBy::Sdk,
            },
            capacity: true,
        };
        Ok(Prepared {
            db: self.db.clone(),
            request,
            total_segments,
            resend: self.resend.clone(),
        })
    }

    /// The first request of each segment (later pages add `ExclusiveStartKey`).
    pub fn params(&self) -> Result<Vec<Request>, Error> {
        let prepared = self.prepare()?;
        let total = prepared.total_segments;
        Ok((0..total.unwrap_or(1))
            .map(|segment| {
                let request = prepared.page(total.map(|_| segment), None);
                describe::request("Scan", request.as_input())
            })
            .collect())
    }

    /// Every item, read to the end (see [`Scan::items`] for errors).
    pub async fn all(self) -> Result<Vec<E>, Error> {
        self.items().try_collect().await
    }

    /// The items, read page by page as the stream is polled, every segment concurrently; in
    /// no particular order across segments.
    ///
    /// An item that cannot be read as `E` is an `Err(Error::Decode(..))` and the stream goes
    /// on. A failed request is an `Err` that ends its segment (other segments go on). An
    /// invalid scan (see [`Error::OutOfRange`]) is a single `Err`.
    pub fn items(self) -> impl Stream<Item = Result<E, Error>> + Send + 'static {
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

/// Where a segment is: `None` once it has read its last page.
type Cursor = Option<Option<Item>>;

/// One segment's items: pages follow `LastEvaluatedKey` until there is none.
fn segment_stream<E: Entity>(
    prepared: Arc<Prepared<E::Table>>,
    segment: Option<i32>,
) -> impl Stream<Item = Result<E, Error>> + Send + 'static {
    let start: Cursor = Some(None);
    stream::unfold(start, move |cursor| {
        let prepared = prepared.clone();
        async move {
            let start_key = cursor?;
            let page = prepared.page(segment, start_key);
            let resend = prepared
                .resend
                .as_ref()
                .map(|resend| (&resend.policy, resend.limiter.as_deref()));
            let page = prepared.db.send_scan_page(page, E::SCHEMA.name, resend);
            Some(match page.await {
                Ok(output) => {
                    // An empty key means the same as none: nothing left to read.
                    let next = output
                        .last_evaluated_key
                        .filter(|key| !key.is_empty())
                        .map(Some);
                    (Ok(output.items.unwrap_or_default()), next)
                }
                Err(error) => (Err(error), None),
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
                // The library's items carry their own entity attribute, which the scan's filter
                // leaves out; these are any written before they did.
                .filter(|item| {
                    crate::library::kind_of_item(<E::Table as Table>::SCHEMA, item).is_none()
                })
                .map(|item| crate::item::decode::<E>(item).map_err(Error::from))
                .chain(error.map(Err)),
        )
    })
}
