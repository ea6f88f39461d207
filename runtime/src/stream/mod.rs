//! DynamoDB Streams, typed: the table declares a view (`stream = "new_and_old_images"`), and
//! each record decodes into a [`Change`] of an entity or a [`Collection`](crate::op::query::Collection),
//! with the images that view carries.
//!
//! Records come from an AWS Lambda event (feature `aws_lambda_events`, [`lambda`]) or from the
//! Streams API (feature `aws-sdk-dynamodbstreams`, [`reader`]).
//!
//! Delivery is at least once, from either source: a record can arrive twice (a Lambda retry, a
//! reader resumed from a checkpoint older than its last record). Consumers must apply records
//! idempotently, for example under a condition on the record's sequence number, as
//! `examples/stream.rs` does.

pub(crate) mod change;
#[cfg(feature = "aws_lambda_events")]
#[cfg_attr(docsrs, doc(cfg(feature = "aws_lambda_events")))]
pub mod lambda;
#[cfg(feature = "aws-sdk-dynamodbstreams")]
#[cfg_attr(docsrs, doc(cfg(feature = "aws-sdk-dynamodbstreams")))]
pub mod reader;
pub(crate) mod record;
pub(crate) mod view;

pub use crate::error::stream::StreamError;
pub use change::{decode, Change, CollectionKey, Record, StreamRecord, StreamTarget};
#[cfg(feature = "aws-sdk-dynamodbstreams")]
#[cfg_attr(docsrs, doc(cfg(feature = "aws-sdk-dynamodbstreams")))]
pub use reader::{RecordPage, StreamReader};
pub use record::{EventName, RawRecord, TTL_PRINCIPAL};
#[doc(hidden)]
pub use view::{DeclaredStream, StreamView, ViewOf};
pub use view::{KeysOnly, NewAndOldImages, NewImage, OldImage, StreamViewType};
