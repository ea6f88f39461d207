//! Stream records from AWS Lambda: the DynamoDB event of `aws_lambda_events`, whose items are
//! `serde_dynamo` items.
//!
//! The facade's [`stream`](https://docs.rs/singletable/latest/singletable/stream/) docs show it
//! in use.

use super::change::{decode, Record, StreamTarget};
use super::record::{EventName, RawRecord};
use super::view::{DeclaredStream, ViewOf};
use crate::error::stream::StreamError;
use crate::item::Item;
use crate::schema::Table;
use aws_lambda_events::event::dynamodb::{Event, EventRecord};

/// The event's records, each decoded as a change of `T`, in the order Lambda gave them; those
/// of the library's own items (see [`RawRecord::is_library_item`]) are left out.
pub fn records<T>(event: Event) -> impl Iterator<Item = Result<Record<T>, StreamError>>
where
    T: StreamTarget,
    ViewOf<T::Table>: DeclaredStream,
{
    event
        .records
        .into_iter()
        .filter_map(|record| match raw(record) {
            Ok(record) if record.is_library_item(<T::Table as Table>::SCHEMA) => None,
            Ok(record) => Some(decode::<T>(record)),
            Err(error) => Some(Err(error)),
        })
}

/// A Lambda event record as a [`RawRecord`].
pub fn raw(record: EventRecord) -> Result<RawRecord, StreamError> {
    let change = record.change;
    let sequence_number = change.sequence_number.unwrap_or_default();
    let event = EventName::parse(&record.event_name).ok_or_else(|| StreamError::Malformed {
        sequence_number: sequence_number.clone(),
        reason: format!("unknown eventName {:?}", record.event_name),
    })?;
    // Lambda's event writes an image the view leaves out as an empty map.
    let image = |item: serde_dynamo::Item| {
        let item: Item = item.into();
        (!item.is_empty()).then_some(item)
    };
    let by_ttl = record.user_identity.as_ref().is_some_and(|identity| {
        RawRecord::is_ttl_identity(Some(&identity.type_), Some(&identity.principal_id))
    });
    Ok(RawRecord {
        event_id: record.event_id,
        event,
        sequence_number,
        keys: change.keys.into(),
        new_image: image(change.new_image),
        old_image: image(change.old_image),
        by_ttl,
    })
}
