//! The field values an update knows: those it sets, and those the caller says are current.

use crate::expr::AttrPath;
use aws_sdk_dynamodb::types::AttributeValue;
use std::any::Any;
use std::sync::Arc;

/// A field value the update knows: what it sets, or what the caller says is current. Shared,
/// so that an update can be sent again ([`Update::or_create`](super::Update::or_create) after
/// a concurrent creation).
#[derive(Clone)]
pub(super) struct Known {
    pub(super) field: &'static str,
    pub(super) value: Arc<dyn Any + Send + Sync>,
    /// For a current value ([`Update::given`]): the attribute and value the condition
    /// asserts.
    pub(super) current: Option<(AttrPath, AttributeValue)>,
}

/// The known values, borrowed: the current values given are copied into the request, or, when
/// it is sent, moved.
pub(super) enum KnownValues<'a> {
    Copied(&'a [Known]),
    Moved(&'a mut [Known]),
}

impl KnownValues<'_> {
    pub(super) fn as_slice(&self) -> &[Known] {
        match self {
            KnownValues::Copied(known) => known,
            KnownValues::Moved(known) => known,
        }
    }
}
