//! What a batch leaves unprocessed, resent: the loop every batch request shares (a chunk sent,
//! and what DynamoDB reports unprocessed sent again under a [`RetryPolicy`] until nothing is
//! left or the attempts run out), and the library's own reads of its records through it.

use crate::error::Error;
use crate::item::{self, Item};
use crate::key::KeyText;
use crate::retry::{Next, RetryPolicy};
use crate::schema::Table;
use crate::Db;
use aws_sdk_dynamodb::operation::batch_get_item::BatchGetItemOutput;
use std::future::Future;

/// Requests still to send, each with the key that identifies it in DynamoDB's answer.
pub(super) struct Pending<M, R> {
    pub(super) key: KeyText,
    pub(super) request: R,
    pub(super) meta: M,
}

/// What one batch request returned: items read, and the requests DynamoDB left unprocessed,
/// each with its item's key. They come back whole in the answer, and are resent from it: the
/// requests sent need no copy kept.
pub(super) struct Response<R> {
    pub(super) items: Vec<Item>,
    pub(super) unprocessed: Vec<(KeyText, R)>,
}

/// The result of sending one chunk until it is done or the policy gives up.
pub(crate) struct Driven<M> {
    pub(crate) items: Vec<Item>,
    pub(super) done: usize,
    /// What is not done, in the order given.
    pub(crate) left: Vec<M>,
    pub(crate) requests: usize,
    pub(crate) error: Option<Error>,
}

/// What a chunk's attempts share: what is done so far, the operations still waiting, the
/// requests to send next, and the last ones sent (to resend whole).
struct Batch<M, R> {
    driven: Driven<M>,
    waiting: Vec<(KeyText, M)>,
    requests: Vec<R>,
    sent: Vec<R>,
}

/// Sends `pending` and resends whatever comes back unprocessed, sleeping between attempts as
/// `policy` says, until nothing is left or the attempts run out. A request refused or left
/// unanswered ([`Error::is_retryable`]: puts, deletes and reads are safe to send twice) is
/// resent whole, within the same attempts; any other failure ends it, with everything not yet
/// done in `left`. The requests are sent on a client without the SDK's retries, so that each
/// attempt is one the policy counts.
pub(super) async fn drive<M, R: Clone, F, Fut>(
    pending: Vec<Pending<M, R>>,
    policy: &RetryPolicy,
    mut send: F,
) -> Driven<M>
where
    F: FnMut(Vec<R>) -> Fut,
    Fut: Future<Output = Result<Response<R>, Error>>,
{
    let (waiting, requests): (Vec<(KeyText, M)>, Vec<R>) = pending
        .into_iter()
        .map(|entry| ((entry.key, entry.meta), entry.request))
        .unzip();
    let mut state = Batch {
        driven: Driven {
            items: Vec::new(),
            done: 0,
            left: Vec::new(),
            requests: 0,
            error: None,
        },
        waiting,
        requests,
        sent: Vec::new(),
    };
    let attempt = |state: &mut Batch<M, R>| {
        state.driven.requests += 1;
        // Kept to resend the whole request if it fails for a reason that passes.
        state.sent.clone_from(&state.requests);
        send(std::mem::take(&mut state.requests))
    };
    let judge = |state: &mut Batch<M, R>, answer: Result<Response<R>, Error>, _| {
        let response = match answer {
            Ok(response) => response,
            Err(error) if error.is_retryable() => {
                state.requests = std::mem::take(&mut state.sent);
                return Next::Again(Some(error));
            }
            Err(error) => return Next::Done(Some(error)),
        };
        state.driven.items.extend(response.items);
        // Keys are unique within a batch (deduplicated or rejected), so a key names exactly
        // one waiting operation.
        let (left, done): (Vec<_>, Vec<_>) = std::mem::take(&mut state.waiting)
            .into_iter()
            .partition(|(key, _)| {
                response
                    .unprocessed
                    .iter()
                    .any(|(unprocessed, _)| unprocessed == key)
            });
        state.driven.done += done.len();
        state.waiting = left;
        state.requests = response
            .unprocessed
            .into_iter()
            .map(|(_, request)| request)
            .collect();
        match state.requests.is_empty() {
            true => Next::Done(None),
            false => Next::Again(None),
        }
    };
    let error = match state.requests.is_empty() {
        true => None,
        false => policy.drive(&mut state, attempt, judge).await,
    };
    let Batch {
        mut driven,
        waiting,
        ..
    } = state;
    driven.error = error;
    driven.left = waiting.into_iter().map(|(_, meta)| meta).collect();
    driven
}

/// The items a `BatchGetItem` read from `table`, and the keys it left unprocessed.
pub(super) fn answer<T: Table>(output: BatchGetItemOutput, table: &str) -> Response<Item> {
    let items = output
        .responses
        .and_then(|mut responses| responses.remove(table))
        .unwrap_or_default();
    let unprocessed = output
        .unprocessed_keys
        .and_then(|mut unprocessed| unprocessed.remove(table))
        .map(|keys| {
            keys.keys
                .into_iter()
                .map(|key| (item::key_text::<T>(&key), key))
                .collect()
        })
        .unwrap_or_default();
    Response { items, unprocessed }
}

/// Reads the library's own records of kind `reader` at `keys` (at most
/// [`MAX_GET_KEYS`](super::MAX_GET_KEYS)), strongly consistent, as a long-running worker
/// must: each request is sent again while throttled or after a lost response, and what
/// DynamoDB leaves unprocessed is resent with backoff, both under `policy`. What is still
/// unread when the policy gives up is in `left`.
pub(crate) async fn read_records<T: Table>(
    db: &Db<T>,
    reader: &'static str,
    keys: Vec<Item>,
    policy: &RetryPolicy,
) -> Driven<()> {
    let pending = keys
        .into_iter()
        .map(|key| Pending {
            key: item::key_text::<T>(&key),
            request: key,
            meta: (),
        })
        .collect();
    drive(pending, policy, |keys| async move {
        let get = db.batch_get_request(keys, true, false)?;
        let output = db.send_batch_get(get, reader).await?;
        Ok(answer::<T>(output, db.table_name()))
    })
    .await
}
