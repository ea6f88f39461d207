//! Sending a query: one page, every page, every item, or a count.

use super::page::FULL_PAGE_REQUESTS;
use super::*;
use crate::schema::TableSchema;
use crate::ttl::Expiry;

impl<'db, E: Entity, I: QueryIndex, P, D: Decode> Query<'db, E, I, P, D> {
    /// The request this operation sends (the first page). Of a sharded partition, the first
    /// shard's: a page sends one such request per shard, each with its shard's key.
    pub fn params(&self) -> Result<Request, Error> {
        let request = self.prepare(false)?.builder(self, None);
        Ok(describe::request("Query", request.as_input()))
    }

    /// One page, starting after `cursor` (from the previous page), or the first page.
    ///
    /// The request is built when this is called; the future sends it, and holds the SDK's
    /// future in place (see `send::mechanics`), so awaiting it costs what awaiting a hand-written
    /// request does.
    // Plain `#[inline]`, not `always` (see `send::mechanics`; bench `operations`, group `query`;
    // benches/README.md, "The mechanics behind the ratios").
    #[inline]
    pub fn page(
        &self,
        cursor: Option<&Cursor>,
    ) -> impl Future<Output = Result<Page<D>, Error>> + 'db
    where
        D: 'db,
    {
        if self.is_sharded() {
            // Boxed: the one-key page's future stays as small as it was (bench `operations`).
            return futures::future::Either::Right(Box::pin(self.merged_page(cursor, None)));
        }
        let request = self.page_request(cursor);
        let (db, index) = (self.db, self.partition.index);
        let seal = self.seal();
        futures::future::Either::Left(db.send_query_page(
            request,
            D::NAME,
            index_name(index),
            move |output| {
                Ok(Page::from_output(
                    <E::Table as Table>::SCHEMA,
                    output,
                    index,
                    seal?,
                ))
            },
        ))
    }

    /// One page of `size` items (and items that did not decode), starting after `cursor`:
    /// where [`limit`](Self::limit) bounds what DynamoDB evaluates, so that a filter (the
    /// entity's, the expiry's, yours) leaves pages short or empty, this asks again, each time
    /// for what is missing, until it holds `size` or the query ends. Its cursor resumes after
    /// the last item it read. At most [`FULL_PAGE_REQUESTS`] requests are sent; a page that
    /// reaches the bound comes back short, with its cursor. `limit` is not used.
    ///
    /// # Errors
    ///
    /// [`Error::OutOfRange`] for a `size` of 0 or above `i32::MAX`; a request's error.
    pub async fn full_page(&self, size: u32, cursor: Option<&Cursor>) -> Result<Page<D>, Error>
    where
        D: 'db,
    {
        let size = crate::op::in_range("Limit", size, i32::MAX.unsigned_abs())?;
        let size = usize::try_from(size).unwrap_or(usize::MAX);
        let mut page = Page {
            items: Vec::new(),
            errors: Vec::new(),
            cursor: cursor.cloned(),
        };
        for _ in 0..FULL_PAGE_REQUESTS {
            let missing = size.saturating_sub(page.items.len() + page.errors.len());
            if self.is_sharded() {
                let missing = i32::try_from(missing).unwrap_or(i32::MAX);
                let part = self
                    .merged_page(page.cursor.as_ref(), Some(missing))
                    .await?;
                page.items.extend(part.items);
                page.errors.extend(part.errors);
                page.cursor = part.cursor;
                if page.cursor.is_none() || page.items.len() + page.errors.len() >= size {
                    break;
                }
                continue;
            }
            let request = self
                .page_request(page.cursor.as_ref())
                .map(|request| request.limit(i32::try_from(missing).unwrap_or(i32::MAX)));
            let output = self
                .db
                .send_query_page(request, D::NAME, index_name(self.partition.index), Ok)
                .await?;
            let part = Page::from_output(
                <E::Table as Table>::SCHEMA,
                output,
                self.partition.index,
                self.seal()?,
            );
            page.items.extend(part.items);
            page.errors.extend(part.errors);
            page.cursor = part.cursor;
            if page.cursor.is_none() || page.items.len() + page.errors.len() >= size {
                break;
            }
        }
        Ok(page)
    }

    /// The request for the page after `cursor`.
    #[inline(never)]
    pub(super) fn page_request(
        &self,
        cursor: Option<&Cursor>,
    ) -> Result<QueryFluentBuilder, Error> {
        let prepared = self.prepare(false)?;
        let start = cursor.map(|cursor| self.start_key(cursor)).transpose()?;
        Ok(prepared.builder(self, start))
    }

    /// What identifies this query to a sealed cursor: its first page's request, and what it
    /// decodes.
    pub(super) fn fingerprint(&self) -> Result<Fingerprint, Error> {
        // With the expiry time left out, which changes every second but not the query.
        let timeless = Expiry {
            now: 0,
            ..self.read.expiry
        };
        let request = self.prepare_at(false, timeless, 0)?.builder(self, None);
        let request = describe::request("Query", request.as_input());
        Ok(Fingerprint::of(&request, D::ENTITIES))
    }

    /// The key and fingerprint that seal this query's cursors, when the `Db` has a key.
    pub(super) fn seal(&self) -> Result<Option<(std::sync::Arc<CursorKey>, Fingerprint)>, Error> {
        match self.db.cursor_key() {
            Some(key) => Ok(Some((key.clone(), self.fingerprint()?))),
            None => Ok(None),
        }
    }

    /// The `ExclusiveStartKey` for this query, if `cursor` belongs to it.
    pub(super) fn start_key(&self, cursor: &Cursor) -> Result<Item, Error> {
        let position = self.open_cursor(cursor)?;
        if position.shards.is_some() {
            return Err(invalid_cursor(
                "it holds the shards of a merged query, and this query reads one partition key",
            ));
        }
        self.check_start(position.key, 0)
    }

    /// The position `cursor` holds, if it was made by this query's index (and, sealed, by
    /// this query).
    pub(super) fn open_cursor(&self, cursor: &Cursor) -> Result<Position, Error> {
        let position = match self.db.cursor_key() {
            Some(key) => cursor.open(Some((key, self.fingerprint()?)))?,
            None => cursor.open(None)?,
        };
        let index = self.partition.index;
        if position.index.as_deref() != index.map(|index| index.name) {
            return Err(invalid_cursor(format!(
                "it belongs to index {:?}, not {:?}",
                position.index,
                index.map(|index| index.name)
            )));
        }
        Ok(position)
    }

    /// `key`, if it is a start key of this query in shard `shard` of its partition (0 of a
    /// partition that is not sharded): the table's and the index's key attributes, the
    /// partition's values.
    pub(super) fn check_start(&self, key: Item, shard: usize) -> Result<Item, Error> {
        let expected = start_key_attributes(<E::Table as Table>::SCHEMA, self.partition.index);
        let mut found: Vec<&str> = key.keys().map(String::as_str).collect();
        found.sort_unstable();
        if found != expected {
            return Err(invalid_cursor(format!(
                "its key attributes {found:?} are not this query's {expected:?}"
            )));
        }
        if self
            .partition
            .conditions(shard)?
            .iter()
            .all(|(name, value)| key.get(name) == Some(value))
        {
            Ok(key)
        } else {
            Err(invalid_cursor("it belongs to another partition"))
        }
    }

    /// Every page, following `LastEvaluatedKey` through the SDK's paginator.
    pub fn pages(self) -> impl Stream<Item = Result<Page<D>, Error>> + 'db
    where
        E: 'db,
        I: 'db,
        P: 'db,
        D: 'db,
    {
        if self.is_sharded() {
            return futures::future::Either::Right(self.merged_pages());
        }
        let index = self.partition.index;
        let db = self.db;
        let pages = match (self.prepare(false), self.seal()) {
            (Ok(prepared), Ok(seal)) => {
                let request = prepared.builder(&self, None);
                Ok((db.query_pages(request, D::NAME, index_name(index)), seal))
            }
            (Err(error), _) | (_, Err(error)) => Err(error),
        };
        futures::future::Either::Left(futures::stream::unfold(
            Some(pages),
            move |state| async move {
                match state? {
                    Err(error) => Some((Err(error), None)),
                    Ok((mut pages, seal)) => {
                        let next = pages.next().await.map(|output| {
                            output.map(|output| {
                                Page::from_output(
                                    <E::Table as Table>::SCHEMA,
                                    output,
                                    index,
                                    seal.clone(),
                                )
                            })
                        });
                        match next.transpose()? {
                            // The last page: stop without asking the paginator, which would
                            // send nothing but still count as a request in its span.
                            Ok(page) if page.cursor.is_none() => Some((Ok(page), None)),
                            Ok(page) => Some((Ok(page), Some(Ok((pages, seal))))),
                            Err(error) => Some((Err(error), None)),
                        }
                    }
                }
            },
        ))
    }

    /// Every matching item, page after page; an item that does not decode is an `Err` in the
    /// stream (the rest still arrive).
    pub fn items(self) -> impl Stream<Item = Result<D, Error>> + 'db
    where
        E: 'db,
        I: 'db,
        P: 'db,
        D: 'db,
    {
        self.pages().flat_map(|page| {
            let results: Vec<Result<D, Error>> = match page {
                Ok(page) => page
                    .items
                    .into_iter()
                    .map(Ok)
                    .chain(
                        page.errors
                            .into_iter()
                            .map(|error| Err(Error::Decode(error))),
                    )
                    .collect(),
                Err(error) => vec![Err(error)],
            };
            futures::stream::iter(results)
        })
    }

    /// All matching items (every page).
    pub async fn all(self) -> Result<Vec<D>, Error>
    where
        E: 'db,
        I: 'db,
        P: 'db,
        D: 'db,
    {
        let items = self.items();
        futures::pin_mut!(items);
        let mut all = Vec::new();
        while let Some(item) = items.next().await {
            all.push(item?);
        }
        Ok(all)
    }

    /// The number of matching items (`Select = COUNT`, every page). On a lean index, whose
    /// entries are told apart by key, the entries are read and counted.
    pub async fn count(&self) -> Result<u64, Error> {
        if D::BY_KEY {
            let mut total = 0;
            let mut cursor = None;
            loop {
                let page = self.page(cursor.as_ref()).await?;
                total += (page.items.len() + page.errors.len()) as u64;
                match page.cursor {
                    Some(next) => cursor = Some(next),
                    None => return Ok(total),
                }
            }
        }
        if self.is_sharded() {
            return self.merged_count().await;
        }
        let prepared = self.prepare(true)?;
        let request = prepared.builder(self, None);
        let index = index_name(self.partition.index);
        let mut pages = self.db.query_pages(request, D::NAME, index);
        let mut total = 0u64;
        loop {
            let Some(output) = pages.next().await? else {
                break;
            };
            total += u64::try_from(output.count).unwrap_or_default();
            if output.last_evaluated_key.is_none() {
                break;
            }
        }
        Ok(total)
    }
}

/// The attributes of a start key of a query on the table or `index`: the table's keys and
/// the index's.
pub(super) fn start_key_attributes(
    table: &TableSchema,
    index: Option<&'static IndexSchema>,
) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = vec![table.partition_key];
    names.extend(table.sort_key);
    if let Some(index) = index {
        names.extend(index.key_attributes().map(|key| key.name));
    }
    names.sort_unstable();
    names.dedup();
    names
}

/// A cursor that cannot resume this query, and why.
fn invalid_cursor(reason: impl Into<String>) -> Error {
    Error::Cursor(CursorError {
        reason: reason.into(),
    })
}

/// The name of the index a query reads, for its span.
pub(super) fn index_name(index: Option<&'static IndexSchema>) -> Option<&'static str> {
    index.map(|index| index.name)
}
