//! The reads: `GetItem`, `Query`, `Scan` and `TransactGetItems`, built here from what the
//! operations and the library's jobs plan, and sent here, each in its span, with its capacity
//! recorded. A read is on one of two clients: the SDK resends a user's read as it is, under
//! the `Db`'s policy; a job that resends its reads itself (a sweep's pages, rides through
//! throttling) takes the client without the SDK's retries, so that every attempt is one its
//! loop counts.
//!
//! An operation builds its request with a `*_request` function (the value its `params()` and
//! `explain()` print) and sends it with the matching `send_*` one, naming whose read it is
//! for the span: an entity's name, a collection's, or a library record's kind.

use super::{sent, Db, SetSome};
use crate::error::Error;
use crate::expr::Placeholders;
use crate::item::Item;
use crate::rate::Limiter;
use crate::retry::RetryPolicy;
use crate::trace::Operation;
use aws_sdk_dynamodb::error::{BuildError, SdkError};
use aws_sdk_dynamodb::operation::get_item::builders::GetItemFluentBuilder;
use aws_sdk_dynamodb::operation::get_item::GetItemOutput;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::operation::query::{QueryError, QueryOutput};
use aws_sdk_dynamodb::operation::scan::builders::ScanFluentBuilder;
use aws_sdk_dynamodb::operation::scan::ScanOutput;
use aws_sdk_dynamodb::operation::transact_get_items::builders::TransactGetItemsFluentBuilder;
use aws_sdk_dynamodb::operation::transact_get_items::TransactGetItemsOutput;
use aws_sdk_dynamodb::types::{Get, Select, TransactGetItem};
use aws_smithy_async::future::pagination_stream::PaginationStream;
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use futures::FutureExt;
use std::future::Future;

/// Who sends a read again when it is throttled or its answer is lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResentBy {
    /// The SDK, set to the `Db`'s policy: the read is sent as it is.
    Sdk,
    /// The caller's own loop (a long job's), on the client without the SDK's retries.
    Caller,
}

/// A page of a `Query`, as an operation plans it.
pub(crate) struct QueryPage {
    pub(crate) index_name: Option<&'static str>,
    pub(crate) key_condition: String,
    pub(crate) filter: Option<String>,
    pub(crate) projection: Option<String>,
    pub(crate) placeholders: Placeholders,
    pub(crate) limit: Option<i32>,
    /// `Select: COUNT`: the count of matching items, without them.
    pub(crate) count: bool,
    pub(crate) descending: bool,
    pub(crate) consistent: bool,
    /// `ExclusiveStartKey`: the page starts after this key.
    pub(crate) start: Option<Item>,
}

/// A `Scan`, as an operation or a job plans it: every page's request but for its segment and
/// start, which [`Db::scan_request`] adds.
#[derive(Clone)]
pub(crate) struct ScanRequest {
    pub(crate) filter: Option<String>,
    pub(crate) projection: Option<String>,
    pub(crate) placeholders: Placeholders,
    pub(crate) limit: Option<i32>,
    pub(crate) consistent: bool,
    /// `TotalSegments`, for a scan of more than one segment.
    pub(crate) total_segments: Option<i32>,
    pub(crate) resent_by: ResentBy,
    /// Whether its pages ask for their consumed capacity (when the `Db` tracks it): a user's
    /// scan does, and records it.
    pub(crate) capacity: bool,
}

impl<T: crate::schema::Table> Db<T> {
    fn reading_client(&self, resent_by: ResentBy) -> &aws_sdk_dynamodb::Client {
        match resent_by {
            ResentBy::Sdk => self.retrying_client(),
            ResentBy::Caller => self.unretried_client(),
        }
    }

    /// The `GetItem` of the item at `key`, resent by the SDK, with its consumed capacity
    /// asked for when the `Db` tracks it.
    #[inline]
    pub(crate) fn get_item_request(&self, key: Item, consistent: bool) -> GetItemFluentBuilder {
        self.retrying_client()
            .get_item()
            .table_name(self.table_name())
            .set_key(Some(key))
            .set_some(
                consistent.then_some(true),
                GetItemFluentBuilder::consistent_read,
            )
            .set_some(
                self.return_consumed_capacity(),
                GetItemFluentBuilder::return_consumed_capacity,
            )
    }

    /// The request of one page of `page`, resent by the SDK.
    #[inline]
    pub(crate) fn query_request(&self, page: QueryPage) -> QueryFluentBuilder {
        let (names, values) = page.placeholders.into_maps();
        self.retrying_client()
            .query()
            .table_name(self.table_name())
            .set_some(page.index_name, |builder, name| builder.index_name(name))
            .key_condition_expression(page.key_condition)
            .set_some(page.filter, QueryFluentBuilder::filter_expression)
            .set_some(page.projection, QueryFluentBuilder::projection_expression)
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(values)
            .set_some(
                page.descending.then_some(false),
                QueryFluentBuilder::scan_index_forward,
            )
            .set_some(page.limit, QueryFluentBuilder::limit)
            .set_some(
                page.consistent.then_some(true),
                QueryFluentBuilder::consistent_read,
            )
            .set_some(
                page.count.then_some(Select::Count),
                QueryFluentBuilder::select,
            )
            .set_some(
                self.return_consumed_capacity(),
                QueryFluentBuilder::return_consumed_capacity,
            )
            .set_some(page.start, |builder, start| {
                builder.set_exclusive_start_key(Some(start))
            })
    }

    /// The request of `scan`'s page in `segment` (when it has more than one), starting after
    /// `start`.
    pub(crate) fn scan_request(
        &self,
        scan: &ScanRequest,
        segment: Option<i32>,
        start: Option<Item>,
    ) -> ScanFluentBuilder {
        let (names, values) = scan.placeholders.clone().into_maps();
        self.reading_client(scan.resent_by)
            .scan()
            .table_name(self.table_name())
            .set_filter_expression(scan.filter.clone())
            .set_projection_expression(scan.projection.clone())
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(values)
            .set_limit(scan.limit)
            .set_consistent_read(scan.consistent.then_some(true))
            .set_total_segments(scan.total_segments)
            .set_some(
                segment.filter(|_| scan.total_segments.is_some()),
                ScanFluentBuilder::segment,
            )
            .set_return_consumed_capacity(
                scan.capacity
                    .then(|| self.return_consumed_capacity())
                    .flatten(),
            )
            .set_exclusive_start_key(start)
    }

    /// The `TransactGetItems` of the items at `keys`, resent by the SDK.
    pub(crate) fn transact_get_request(
        &self,
        keys: impl IntoIterator<Item = Item>,
    ) -> Result<TransactGetItemsFluentBuilder, BuildError> {
        let mut request = self.retrying_client().transact_get_items();
        for key in keys {
            let get = Get::builder()
                .table_name(self.table_name())
                .set_key(Some(key))
                .build()?;
            request = request.transact_items(TransactGetItem::builder().get(get).build());
        }
        Ok(request.set_return_consumed_capacity(self.return_consumed_capacity()))
    }

    /// The span of a read of `reader`'s items (an entity's, a collection's, or a library
    /// record kind's).
    fn read_span(
        &self,
        operation: Operation,
        reader: &'static str,
        index: Option<&'static str>,
        key: impl FnOnce() -> Option<String>,
    ) -> tracing::Span {
        crate::trace::span(operation, self.table_name(), reader, key, index)
    }

    /// Sends `request` (from [`get_item_request`](Self::get_item_request)) in its span,
    /// records its capacity, and hands its output to `then`. `key` is the item's key for the
    /// span, when the `Db` records values ([`Db::traced_key`]).
    // Always inlined, as `send::mechanics` explains.
    #[inline(always)]
    pub(crate) fn send_get_item<'a, X: 'a>(
        &'a self,
        request: GetItemFluentBuilder,
        reader: &'static str,
        key: Option<String>,
        then: impl FnOnce(GetItemOutput) -> Result<X, Error> + 'a,
    ) -> impl Future<Output = Result<X, Error>> + 'a {
        let span = self.read_span(Operation::GetItem, reader, None, || key);
        let sent = sent(Ok(request), GetItemFluentBuilder::send, move |output| {
            let output = output?;
            self.record(output.consumed_capacity());
            then(output)
        });
        self.traced(span, sent)
    }

    /// The item at `key` as stored (`GetItem` on the client without the SDK's retries), sent
    /// again under the `Db`'s policy while throttled or lost: for the library's own records
    /// (`reader` names their kind) and for items it reads before deciding how to write them.
    pub(crate) async fn raw_get(
        &self,
        reader: &'static str,
        key: Item,
        consistent: bool,
    ) -> Result<Option<Item>, Error> {
        Ok(self
            .raw_get_under(&self.retry_policy(), reader, key, consistent)
            .await?
            .item)
    }

    /// [`raw_get`](Self::raw_get) under `policy` (a long job's, a stream reader's).
    pub(crate) async fn raw_get_under(
        &self,
        policy: &RetryPolicy,
        reader: &'static str,
        key: Item,
        consistent: bool,
    ) -> Result<GetItemOutput, Error> {
        let span = self.read_span(Operation::GetItem, reader, None, || {
            self.traced_key(|| crate::item::key_text::<T>(&key).to_string())
        });
        let get = self
            .unretried_client()
            .get_item()
            .table_name(self.table_name())
            .set_key(Some(key))
            .set_consistent_read(consistent.then_some(true));
        Ok(self
            .traced(span, policy.reading(|| get.clone().send()))
            .await?)
    }

    /// Sends `request` (a page from [`query_request`](Self::query_request), or the error
    /// that kept it from being built) in its span, records its capacity, and hands its output
    /// to `then`.
    // Always inlined, as `send::mechanics` explains (bench `operations`, group `query`).
    #[inline(always)]
    pub(crate) fn send_query_page<'a, X: 'a>(
        &'a self,
        request: Result<QueryFluentBuilder, Error>,
        reader: &'static str,
        index: Option<&'static str>,
        then: impl FnOnce(QueryOutput) -> Result<X, Error> + 'a,
    ) -> impl Future<Output = Result<X, Error>> + 'a {
        let span = self.read_span(Operation::Query, reader, index, || None);
        let sent = sent(request, QueryFluentBuilder::send, move |output| {
            let output = output?;
            self.record(output.consumed_capacity());
            then(output)
        });
        self.traced(span, sent)
    }

    /// Every page of `request`, through the SDK's paginator, each page's request in a span of
    /// its own.
    pub(crate) fn query_pages(
        &self,
        request: QueryFluentBuilder,
        reader: &'static str,
        index: Option<&'static str>,
    ) -> QueryPages<'_, T> {
        QueryPages {
            db: self,
            pages: request.into_paginator().send(),
            reader,
            index,
        }
    }

    /// Sends a `Scan` page (from [`scan_request`](Self::scan_request)) in its span and
    /// records its capacity. With `resend`, the caller's policy sends it again while
    /// throttled or lost (the request is then on the client without the SDK's retries), each
    /// refusal for throughput lowering the limiter's rate.
    pub(crate) async fn send_scan_page(
        &self,
        page: ScanFluentBuilder,
        reader: &'static str,
        resend: Option<(&RetryPolicy, Option<&Limiter>)>,
    ) -> Result<ScanOutput, Error> {
        let span = self.read_span(Operation::Scan, reader, None, || None);
        let read = async {
            let output = match resend {
                Some((policy, limiter)) => {
                    policy
                        .reading_paced(|| page.clone().send(), limiter)
                        .await?
                }
                None => page.send().await?,
            };
            self.record(
                output
                    .consumed_capacity()
                    .map(std::slice::from_ref)
                    .unwrap_or_default(),
            );
            Ok(output)
        };
        // Boxed: a scan's segments are streams that hold one page's future each.
        self.traced(span, read.boxed()).await
    }

    /// Sends `request` (from [`transact_get_request`](Self::transact_get_request)) in its
    /// span and records its capacity.
    pub(crate) async fn send_transact_get(
        &self,
        request: TransactGetItemsFluentBuilder,
    ) -> Result<TransactGetItemsOutput, Error> {
        let span = self.read_span(Operation::TransactGetItems, "", None, || None);
        self.send_traced(span, request.send().boxed(), |output| {
            output.consumed_capacity()
        })
        .await
    }
}

/// The pages of one query, read in order: what [`Db::query_pages`] returns.
pub(crate) struct QueryPages<'a, T> {
    db: &'a Db<T>,
    pages: PaginationStream<Result<QueryOutput, SdkError<QueryError, HttpResponse>>>,
    reader: &'static str,
    index: Option<&'static str>,
}

impl<T: crate::schema::Table> QueryPages<'_, T> {
    /// The next page, `None` after the last. The caller stops at a page without
    /// `LastEvaluatedKey`, so that the paginator is not asked again: it would send nothing,
    /// but its span would still count as a request.
    pub(crate) async fn next(&mut self) -> Result<Option<QueryOutput>, Error> {
        let db = self.db;
        let span = db.read_span(Operation::Query, self.reader, self.index, || None);
        let pages = &mut self.pages;
        db.traced(span, async move {
            let Some(output) = pages.next().await else {
                return Ok(None);
            };
            let output = output?;
            db.record(output.consumed_capacity());
            Ok(Some(output))
        })
        .await
    }
}
