//! Reading a table's stream through the DynamoDB Streams API, with the position of each shard
//! kept in the table itself, so that a consumer restarted anywhere resumes where it stopped.
//!
//! A stream is a set of shards; a shard that splits is closed and has children. Records of one
//! item are in order within the shards of its lineage, so a child is read only once its parent
//! is read to its end. Each [`RecordPage`] is one `GetRecords` page of one shard; [`StreamReader::commit`]
//! saves its position. A reader that stops between a page and its commit is given the page
//! again when it starts: delivery is at least once.
//!
//! Every read the reader makes, of the stream and of the table (its description, the
//! consumer's checkpoints), is sent again with backoff while it is throttled (the Streams API
//! answers `LimitExceededException` to more readers of a shard than it allows) or its response
//! is lost: a read changes nothing, and a shard iterator can be read again until it expires.
//! A read still refused after the [`RetryPolicy`]'s attempts ends the poll with an error
//! ([`Error::is_throttling`] tells a throttle); the reader keeps its place, so polling again
//! goes on from there.
//!
//! The facade's [`stream`](https://docs.rs/singletable/latest/singletable/stream/) docs show it
//! in use.

use super::change::{decode, Record, StreamTarget};
use super::record::{EventName, RawRecord};
use super::view::{DeclaredStream, ViewOf};
use crate::error::stream::StreamError;
use crate::error::Error;
use crate::item::Item;
use crate::library::{read_record, record_item, LibraryRecord, RecordKind, STREAM_CHECKPOINT};
use crate::retry::{ReadError, RetryPolicy};
use crate::schema::Table;
use crate::send::StreamsClient;
use crate::Admin;
use crate::Db;
use aws_sdk_dynamodbstreams::error::{DisplayErrorContext, ProvideErrorMetadata};
use aws_sdk_dynamodbstreams::types::Record as SdkRecord;
use serde::{Deserialize, Serialize};

/// Records asked for per `GetRecords` unless set: DynamoDB's maximum.
const PAGE_RECORDS: i32 = 1000;

/// A consumer's position in one shard, as the table keeps it.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Checkpoint {
    /// The last sequence number committed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sequence_number: Option<String>,
    /// The shard is closed and read to its end.
    #[serde(default)]
    finished: bool,
}

impl LibraryRecord for Checkpoint {
    const KIND: &'static RecordKind = &STREAM_CHECKPOINT;
}

/// One shard, as far as this reader knows it.
#[derive(Debug, Clone)]
struct Shard {
    id: String,
    parent: Option<String>,
    /// The last sequence number committed.
    committed: Option<String>,
    /// Read to its end and committed: the shard is closed and holds nothing more.
    finished: bool,
    /// Where the next `GetRecords` starts; `None` before the first.
    iterator: Option<String>,
}

/// A consumer of a table's stream, named so that its checkpoints are its own; see the
/// [module docs](self). Run one reader per consumer name at a time: checkpoints are plain
/// writes, and two readers of one name would each move the other's position.
pub struct StreamReader<'db, T> {
    db: &'db Db<T>,
    client: StreamsClient,
    consumer: String,
    stream_arn: Option<String>,
    shards: Vec<Shard>,
    /// Records asked for per `GetRecords`.
    page_size: i32,
    /// Whether the last poll found every readable shard without new records.
    caught_up: bool,
    /// How each read is sent again while refused or lost.
    policy: RetryPolicy,
}

/// One page of records of one shard, decoded; commit it once it is applied.
pub struct RecordPage<D: StreamTarget>
where
    ViewOf<D::Table>: DeclaredStream,
{
    shard: Option<String>,
    records: Vec<Result<Record<D>, StreamError>>,
    last_sequence_number: Option<String>,
    ends_shard: bool,
}

impl<D: StreamTarget> RecordPage<D>
where
    ViewOf<D::Table>: DeclaredStream,
{
    /// The records, in stream order; a record that does not decode is an error in its place.
    pub fn records(&self) -> &[Result<Record<D>, StreamError>] {
        &self.records
    }

    /// The records, owned.
    pub fn into_records(self) -> Vec<Result<Record<D>, StreamError>> {
        self.records
    }

    /// Whether the page held no records.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The shard the records are from.
    pub fn shard(&self) -> Option<&str> {
        self.shard.as_deref()
    }
}

impl<'db, T: Table> Admin<'db, T> {
    /// A reader of this table's stream for the consumer named `consumer`, through `client`
    /// (with the `local` feature, [`crate::local::streams_client`] gives one for the local
    /// engine).
    pub fn stream_reader(
        &self,
        consumer: &str,
        client: aws_sdk_dynamodbstreams::Client,
    ) -> StreamReader<'db, T> {
        // Its reads are resent by the reader, under the policy: without the SDK's retries.
        let client = StreamsClient::new(&client);
        StreamReader {
            db: self.db,
            client,
            consumer: consumer.to_owned(),
            stream_arn: None,
            shards: Vec::new(),
            page_size: PAGE_RECORDS,
            caught_up: false,
            policy: self.db.retry_policy(),
        }
    }
}

impl<'db, T: Table> StreamReader<'db, T> {
    /// How many records one `GetRecords` returns at most, and so one page holds (1 to 1,000,
    /// DynamoDB's limit, which is the default; other values are brought into that range).
    pub fn page_size(mut self, records: u32) -> StreamReader<'db, T> {
        let records = i32::try_from(records).unwrap_or(PAGE_RECORDS);
        self.page_size = records.clamp(1, PAGE_RECORDS);
        self
    }

    /// The next page of records of the first shard that has some, decoded as `D`; an empty
    /// page when no readable shard has new records.
    pub async fn poll<D>(&mut self) -> Result<RecordPage<D>, Error>
    where
        D: StreamTarget<Table = T>,
        ViewOf<T>: DeclaredStream,
    {
        self.refresh().await?;
        let mut position = 0;
        while position < self.shards.len() {
            if !self.readable(position) {
                position += 1;
                continue;
            }
            let (records, next) = self.read_page(position).await?;
            let read_some = !records.is_empty();
            let Some(shard) = self.shards.get_mut(position) else {
                break;
            };
            let ends_shard = next.is_none();
            shard.iterator = next;
            let last_sequence_number = records
                .last()
                .and_then(|record| record.dynamodb())
                .and_then(|change| change.sequence_number())
                .map(str::to_owned);
            let records: Vec<_> = records
                .into_iter()
                .filter_map(|record| match raw(record) {
                    Ok(record) if record.is_library_item(T::SCHEMA) => None,
                    Ok(record) => Some(decode::<D>(record)),
                    Err(error) => Some(Err(error)),
                })
                .collect();
            // A page of only the library's own records (this reader's checkpoints among them)
            // is passed over without a page, so that committing never feeds itself; the
            // shard is read on, as more may follow it. Only an empty page is its current end.
            if !records.is_empty() || ends_shard {
                self.caught_up = false;
                return Ok(RecordPage {
                    shard: Some(shard.id.clone()),
                    records,
                    last_sequence_number,
                    ends_shard,
                });
            }
            if !read_some {
                position += 1;
            }
        }
        self.caught_up = true;
        Ok(RecordPage {
            shard: None,
            records: Vec::new(),
            last_sequence_number: None,
            ends_shard: false,
        })
    }

    /// Whether the last [`poll`](Self::poll) read every readable shard to its current end and
    /// found nothing to deliver (the library's own records are passed over, not delivered).
    pub fn is_caught_up(&self) -> bool {
        self.caught_up
    }

    /// Saves the page's position in the table: a reader started later resumes after it.
    pub async fn commit<D>(&mut self, page: &RecordPage<D>) -> Result<(), Error>
    where
        D: StreamTarget<Table = T>,
        ViewOf<T>: DeclaredStream,
    {
        let Some(shard_id) = &page.shard else {
            return Ok(());
        };
        let Some(shard) = self.shards.iter_mut().find(|shard| &shard.id == shard_id) else {
            return Ok(());
        };
        let sequence = page
            .last_sequence_number
            .clone()
            .or_else(|| shard.committed.clone());
        if sequence == shard.committed && page.ends_shard == shard.finished {
            return Ok(());
        }
        let checkpoint = Checkpoint {
            sequence_number: sequence.clone(),
            finished: page.ends_shard,
        };
        let item = record_item(
            T::SCHEMA,
            checkpoint_key::<T>(&self.consumer, shard_id),
            &checkpoint,
        )?;
        self.db.raw_put(STREAM_CHECKPOINT.description, item).await?;
        shard.committed = sequence;
        shard.finished = page.ends_shard;
        Ok(())
    }

    /// Learns the stream's shards (`DescribeStream`) and the checkpoints of new ones.
    async fn refresh(&mut self) -> Result<(), Error> {
        let stream_arn = match &self.stream_arn {
            Some(arn) => arn.clone(),
            None => {
                let table = self.db.describe_table().await?;
                let arn = table
                    .table()
                    .and_then(|table| table.latest_stream_arn())
                    .ok_or_else(|| StreamError::NoStream {
                        table: self.db.table_name().to_owned(),
                    })?
                    .to_owned();
                self.stream_arn = Some(arn.clone());
                arn
            }
        };
        let mut start: Option<String> = None;
        loop {
            let described = self
                .client
                .describe_stream(self.db, &self.policy, &stream_arn, start.clone())
                .await
                .map_err(|error| read_error("DescribeStream", &stream_arn, error))?;
            let Some(description) = described.stream_description() else {
                break;
            };
            for shard in description.shards() {
                let Some(id) = shard.shard_id() else { continue };
                if self.shards.iter().any(|known| known.id == id) {
                    continue;
                }
                let checkpoint = self.checkpoint(id).await?;
                self.shards.push(Shard {
                    id: id.to_owned(),
                    parent: shard.parent_shard_id().map(str::to_owned),
                    committed: checkpoint.0,
                    finished: checkpoint.1,
                    iterator: None,
                });
            }
            match description.last_evaluated_shard_id() {
                Some(last) => start = Some(last.to_owned()),
                None => break,
            }
        }
        Ok(())
    }

    /// Whether shard number `position` can be read: not finished, and its parent (if this
    /// reader knows it; an unknown parent has aged out of the stream) is.
    fn readable(&self, position: usize) -> bool {
        let Some(shard) = self.shards.get(position) else {
            return false;
        };
        let parent_done = match &shard.parent {
            None => true,
            Some(parent) => self
                .shards
                .iter()
                .find(|known| &known.id == parent)
                .is_none_or(|parent| parent.finished),
        };
        !shard.finished && parent_done
    }

    /// One `GetRecords` of shard number `position`: its records and the next iterator (`None`
    /// once the shard is closed and read to its end).
    async fn read_page(
        &mut self,
        position: usize,
    ) -> Result<(Vec<SdkRecord>, Option<String>), Error> {
        let stream_arn = self.stream_arn.clone().unwrap_or_default();
        for attempt in 0..2 {
            let iterator = match self.shards.get(position).and_then(|s| s.iterator.clone()) {
                Some(iterator) => iterator,
                None => self.start_iterator(&stream_arn, position).await?,
            };
            let page = self
                .client
                .get_records(self.db, &self.policy, iterator, self.page_size)
                .await;
            match page {
                Ok(page) => {
                    let next = page.next_shard_iterator().map(str::to_owned);
                    return Ok((page.records.unwrap_or_default(), next));
                }
                // Iterators expire after 15 minutes: start again from the checkpoint.
                Err(error)
                    if attempt == 0
                        && error
                            .as_service_error()
                            .is_some_and(|e| e.is_expired_iterator_exception()) =>
                {
                    if let Some(shard) = self.shards.get_mut(position) {
                        shard.iterator = None;
                    }
                }
                Err(error) => return Err(read_error("GetRecords", &stream_arn, error).into()),
            }
        }
        Err(StreamError::Read {
            operation: "GetRecords",
            stream: stream_arn,
            code: None,
            message: "the shard iterator expired twice".to_owned(),
        }
        .into())
    }

    /// An iterator after the shard's checkpoint, or at its oldest record.
    async fn start_iterator(&self, stream_arn: &str, position: usize) -> Result<String, Error> {
        let Some(shard) = self.shards.get(position) else {
            return Err(StreamError::Read {
                operation: "GetShardIterator",
                stream: stream_arn.to_owned(),
                code: None,
                message: format!("no shard number {position}"),
            }
            .into());
        };
        let output = self
            .client
            .get_shard_iterator(
                self.db,
                &self.policy,
                (stream_arn, &shard.id),
                shard.committed.as_deref(),
            )
            .await
            .map_err(|error| read_error("GetShardIterator", stream_arn, error))?;
        output.shard_iterator().map(str::to_owned).ok_or_else(|| {
            StreamError::Read {
                operation: "GetShardIterator",
                stream: stream_arn.to_owned(),
                code: None,
                message: "the answer has no iterator".to_owned(),
            }
            .into()
        })
    }

    /// The committed sequence number of `shard` and whether it is finished.
    async fn checkpoint(&self, shard: &str) -> Result<(Option<String>, bool), Error> {
        let key = checkpoint_key::<T>(&self.consumer, shard);
        let read = self
            .db
            .raw_get_under(&self.policy, STREAM_CHECKPOINT.description, key, true);
        let checkpoint = match read.await?.item {
            Some(item) => read_record::<T, Checkpoint>(item)?,
            None => Checkpoint::default(),
        };
        Ok((checkpoint.sequence_number, checkpoint.finished))
    }
}

/// The key of `consumer`'s checkpoint of `shard`: `PK = "_STREAM#<consumer>"`,
/// `SK = "SHARD#<shard>"` (or one partition key of both, in a table without a sort key).
fn checkpoint_key<T: Table>(consumer: &str, shard: &str) -> Item {
    crate::library::record_key(
        T::SCHEMA,
        &crate::library::STREAM_CHECKPOINT,
        consumer,
        format!("SHARD#{shard}"),
    )
}

fn read_error<E: std::error::Error + ProvideErrorMetadata + 'static>(
    operation: &'static str,
    stream: &str,
    error: ReadError<E>,
) -> StreamError {
    StreamError::Read {
        operation,
        stream: stream.to_owned(),
        code: error.code().map(str::to_owned),
        message: DisplayErrorContext(error).to_string(),
    }
}

/// A Streams API record as a [`RawRecord`].
pub fn raw(record: SdkRecord) -> Result<RawRecord, StreamError> {
    let change = record
        .dynamodb
        .unwrap_or_else(|| aws_sdk_dynamodbstreams::types::StreamRecord::builder().build());
    let sequence_number = change.sequence_number.unwrap_or_default();
    let name = record.event_name.map(|name| name.as_str().to_owned());
    let event =
        name.as_deref()
            .and_then(EventName::parse)
            .ok_or_else(|| StreamError::Malformed {
                sequence_number: sequence_number.clone(),
                reason: format!("unknown eventName {name:?}"),
            })?;
    let item = |image: Option<
        std::collections::HashMap<String, aws_sdk_dynamodbstreams::types::AttributeValue>,
    >| { image.map(|image| Item::from(serde_dynamo::Item::from(image))) };
    let by_ttl = record.user_identity.as_ref().is_some_and(|identity| {
        RawRecord::is_ttl_identity(identity.r#type(), identity.principal_id())
    });
    Ok(RawRecord {
        event_id: record.event_id.unwrap_or_default(),
        event,
        sequence_number,
        keys: item(change.keys).unwrap_or_default(),
        new_image: item(change.new_image),
        old_image: item(change.old_image),
        by_ttl,
    })
}
