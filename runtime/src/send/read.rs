//! The reads: `GetItem`, `Query`, `Scan` and `TransactGetItems`, built here from what the
//! operations and the library's jobs plan. A read is on one of two clients: the SDK resends
//! a user's read as it is, under the `Db`'s policy; a job that resends its reads itself (a
//! sweep's pages, rides through throttling) takes the client without the SDK's retries, so
//! that every attempt is one its loop counts.

use super::{Db, SetSome};
use crate::expr::Placeholders;
use crate::item::Item;
use aws_sdk_dynamodb::error::BuildError;
use aws_sdk_dynamodb::operation::get_item::builders::GetItemFluentBuilder;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::operation::scan::builders::ScanFluentBuilder;
use aws_sdk_dynamodb::operation::transact_get_items::builders::TransactGetItemsFluentBuilder;
use aws_sdk_dynamodb::types::{Get, Select, TransactGetItem};

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
}
