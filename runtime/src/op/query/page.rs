//! One page of a query's results.

use super::decode::Decode;
use crate::cursor::{Cursor, CursorKey, Fingerprint, Position};
use crate::item::DecodeError;
use crate::schema::{IndexSchema, TableSchema};

/// The most requests [`Query::full_page`](super::Query::full_page) sends for one page.
pub const FULL_PAGE_REQUESTS: u32 = 32;

/// One page of a query.
#[derive(Debug)]
pub struct Page<E> {
    /// The items of this page that decoded.
    pub items: Vec<E>,
    /// Items of this page that are this entity's but did not decode (never dropped silently).
    pub errors: Vec<DecodeError>,
    /// Where the next page starts; `None` on the last page.
    pub cursor: Option<Cursor>,
}

impl<D: Decode> Page<D> {
    /// Decodes a response's items, keeping the ones that fail as errors; the library's own
    /// items (an append pointer in a collection's partition) are no one's, and left out.
    pub(super) fn from_output(
        table: &TableSchema,
        output: aws_sdk_dynamodb::operation::query::QueryOutput,
        index: Option<&'static IndexSchema>,
        seal: Option<(std::sync::Arc<CursorKey>, Fingerprint)>,
    ) -> Self {
        let cursor = output.last_evaluated_key.map(|key| {
            let index = index.map(|index| index.name.to_owned());
            Cursor::new(
                Position {
                    index,
                    key,
                    shards: None,
                },
                seal,
            )
        });
        Self::from_items(table, output.items.unwrap_or_default(), cursor)
    }

    /// Decodes `items`, as [`Page::from_output`] does, into a page that goes on at `cursor`.
    pub(super) fn from_items(
        table: &TableSchema,
        items_read: Vec<crate::item::Item>,
        cursor: Option<Cursor>,
    ) -> Self {
        let mut items = Vec::new();
        let mut errors = Vec::new();
        for item in items_read {
            if !D::belongs(&item) || crate::library::kind_of_item(table, &item).is_some() {
                continue;
            }
            match D::decode(item) {
                Ok(entity) => items.push(entity),
                Err(error) => errors.push(error),
            }
        }
        Page {
            items,
            errors,
            cursor,
        }
    }
}
