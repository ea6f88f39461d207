//! The performance mechanics of sending a request, in one place: each keeps the generated
//! operations as fast as hand-written SDK code, for a cost measured by bench `operations`
//! (instruction and cache counts with callgrind; the figures are in benches/README.md, "The
//! mechanics behind the ratios"). Everywhere else, operations read as plain code.
//!
//! - [`sent`]: the SDK's request future made in place. The pattern around it: an operation
//!   builds its request in an `#[inline(never)]` function (`Get::request`,
//!   `Query::page_request`) and sends it from an `#[inline(always)]` one (`Get::send`,
//!   `Update::send`, `Db::traced`, `trace::traced`, `unique::plain_or_with_sentinels`), so
//!   the future is written once into the caller's frame. Code most requests skip is kept out
//!   of their way the same way (`range_condition`, `attribute_sort_condition`, the update's
//!   `#[cold]` estimate text).
//! - [`SetSome`]: an SDK builder's setter called only for a value that is there.
//! - `Db::write` boxes the request's future (the SDK's, inside the resend loop) where it makes
//!   it: the layers above it (the span, the operation, the caller) are async functions that
//!   would each copy it.
//!
//! The other mechanics are rendering's, and live with it: the shape cache
//! (`expr/shape.rs`) and the placeholder maps' first reservation (`expr/placeholders.rs`).

use crate::error::Error;
use futures::future::{Either, FutureExt};
use std::future::Future;

/// `send(request)` (the SDK's request future) with `then` applied to its output, or, when the
/// request could not be built, that error at once.
///
/// Operations return this instead of an `async` block around the SDK's future, so that the
/// future (several kilobytes) is written once, in place, not copied by each layer holding
/// it (bench `operations`, groups `put`, `status_update`, `query`).
#[inline(always)]
pub(crate) fn sent<R, F: Future, T>(
    request: Result<R, Error>,
    send: impl FnOnce(R) -> F,
    then: impl FnOnce(F::Output) -> Result<T, Error>,
) -> impl Future<Output = Result<T, Error>> {
    match request {
        Ok(request) => Either::Left(send(request).map(then)),
        Err(error) => Either::Right(std::future::ready(Err(error))),
    }
}

/// Calls an SDK builder's setter only for a value that is there: the builders move through
/// every setter, so setting `None` is not free (bench `operations`, group `put`).
pub(crate) trait SetSome: Sized {
    fn set_some<T>(self, value: Option<T>, set: impl FnOnce(Self, T) -> Self) -> Self {
        match value {
            Some(value) => set(self, value),
            None => self,
        }
    }
}

impl<Builder> SetSome for Builder {}
