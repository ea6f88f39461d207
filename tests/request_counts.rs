//! How many requests each high-level operation sends, counted on the wire by an SDK
//! interceptor on the local engine, so a change that adds a round trip fails here.
//!
//! Every HTTP attempt is counted (`read_before_transmit`), so SDK retries would show too.

mod common;
use common::Needs;

use aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::error::BoxError;
use common::{App, Status, Ticket};
use futures::StreamExt;
use singletable::op::batch::{MAX_GET_KEYS, MAX_WRITES};
use singletable::Db;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Records the operation of every request the client transmits, read from the
/// `X-Amz-Target` header (`DynamoDB_20120810.PutItem`), so retries count as requests.
#[derive(Debug, Clone, Default)]
struct RequestCounter {
    sent: Arc<Mutex<Vec<String>>>,
}

impl RequestCounter {
    /// Requests per operation since the last call.
    fn take(&self) -> BTreeMap<String, usize> {
        let sent = std::mem::take(&mut *self.sent.lock().unwrap());
        let mut counts = BTreeMap::new();
        for operation in sent {
            *counts.entry(operation).or_insert(0) += 1;
        }
        counts
    }
}

impl Intercept for RequestCounter {
    fn name(&self) -> &'static str {
        "RequestCounter"
    }

    fn read_before_transmit(
        &self,
        context: &BeforeTransmitInterceptorContextRef<'_>,
        _components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let target = context
            .request()
            .headers()
            .get("x-amz-target")
            .unwrap_or("<no X-Amz-Target>");
        let operation = target.rsplit('.').next().unwrap_or(target);
        self.sent.lock().unwrap().push(operation.to_owned());
        Ok(())
    }
}

/// A fresh table on the local engine, reached through a client that counts its requests;
/// the counter starts at zero after the table is created.
async fn counted_table<T: singletable::Table>() -> (Db<T>, RequestCounter) {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let sdk_config = singletable::local::sdk_config().await.unwrap();
    let counter = RequestCounter::default();
    let config = aws_sdk_dynamodb::config::Builder::from(&sdk_config)
        .interceptor(counter.clone())
        .build();
    let name = format!(
        "counts-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let db = Db::new(aws_sdk_dynamodb::Client::from_conf(config)).with_table_name(name);
    db.admin().ensure_table().await.unwrap();
    counter.take();
    (db, counter)
}

/// `[("PutItem", 1)]` as the map [`RequestCounter::take`] returns.
fn requests(expected: &[(&str, usize)]) -> BTreeMap<String, usize> {
    expected
        .iter()
        .filter(|(_, count)| *count > 0)
        .map(|(operation, count)| ((*operation).to_owned(), *count))
        .collect()
}

fn tickets(count: usize, team_id: u32) -> Vec<Ticket> {
    (0..count)
        .map(|n| Ticket::new(&format!("{team_id}-{n}"), team_id, Status::Open, "printer"))
        .collect()
}

#[tokio::test]
async fn put_get_and_delete_are_one_request_each() {
    let (db, counter) = counted_table::<App>().await;
    let ticket = Ticket::new("8842", 7, Status::Open, "Printer out of toner");

    db.put(&ticket).send().await.unwrap();
    assert_eq!(counter.take(), requests(&[("PutItem", 1)]));
    db.put(&ticket).send().await.unwrap();
    assert_eq!(counter.take(), requests(&[("PutItem", 1)]), "a replace");
    let failed = db.put(&ticket).only_if_absent().send().await;
    assert!(failed.is_err());
    assert_eq!(
        counter.take(),
        requests(&[("PutItem", 1)]),
        "a failed condition returns the existing item in the same response"
    );

    let read = db.get(Ticket::key("8842").unwrap()).send().await.unwrap();
    assert_eq!(read, ticket);
    assert_eq!(counter.take(), requests(&[("GetItem", 1)]));

    db.delete(Ticket::key("8842").unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(counter.take(), requests(&[("DeleteItem", 1)]));
}

#[tokio::test]
async fn a_status_change_is_one_update_item_that_also_maintains_the_index() {
    let (db, counter) = counted_table::<App>().await;
    db.put(&Ticket::new(
        "8842",
        7,
        Status::Open,
        "Printer out of toner",
    ))
    .send()
    .await
    .unwrap();
    counter.take();

    // Re-sorts GSI1: SET status and both GSI1 key attributes, in one request.
    let pending = db
        .update(Ticket::key("8842").unwrap())
        .set(Ticket::STATUS, Status::Pending)
        .given(Ticket::TEAM_ID, 7)
        .send()
        .await
        .unwrap();
    assert_eq!(pending.status, Status::Pending);
    assert_eq!(counter.take(), requests(&[("UpdateItem", 1)]));

    // Leaves the sparse index: SET status, REMOVE the GSI1 keys, still one request.
    let closed = db
        .update(Ticket::key("8842").unwrap())
        .set(Ticket::STATUS, Status::Closed)
        .given(Ticket::TEAM_ID, 7)
        .send()
        .await
        .unwrap();
    assert_eq!(closed.status, Status::Closed);
    assert_eq!(counter.take(), requests(&[("UpdateItem", 1)]));

    // A stale `given` fails in that same request (no read before the write).
    let stale = db
        .update(Ticket::key("8842").unwrap())
        .set(Ticket::STATUS, Status::Open)
        .given(Ticket::TEAM_ID, 8)
        .send()
        .await;
    assert!(stale.is_err());
    assert_eq!(counter.take(), requests(&[("UpdateItem", 1)]));
}

#[tokio::test]
async fn a_batch_write_of_n_is_ceil_n_over_25_requests() {
    let (db, counter) = counted_table::<App>().await;
    for (team, n) in [(1, 1), (2, MAX_WRITES), (3, MAX_WRITES + 1), (4, 60)] {
        let all = tickets(n, team);
        let output = db.batch_write().put_all(&all).send().await.unwrap();
        assert!(output.is_complete(), "{:?}", output.unprocessed);
        let expected = n.div_ceil(MAX_WRITES);
        // Nothing is left unprocessed on the local engine, so there are no retries.
        assert_eq!(output.requests, expected, "reported, n = {n}");
        assert_eq!(
            counter.take(),
            requests(&[("BatchWriteItem", expected)]),
            "sent, n = {n}"
        );
    }
    let output = db.batch_write().send().await.unwrap();
    assert_eq!(output.requests, 0);
    assert_eq!(
        counter.take(),
        requests(&[]),
        "an empty batch sends nothing"
    );
}

#[tokio::test]
async fn a_batch_get_of_n_is_ceil_n_over_100_requests() {
    let (db, counter) = counted_table::<App>().await;
    let all = tickets(MAX_GET_KEYS + 20, 7);
    let _ = db.batch_write().put_all(&all).send().await.unwrap();
    counter.take();
    let keys = all.iter().map(|ticket| Ticket::key(&ticket.id).unwrap());
    let output = db.batch_get(keys).send().await.unwrap();
    assert_eq!(output.items.len(), all.len());
    assert!(output.is_complete());
    assert_eq!(output.requests, 2);
    assert_eq!(counter.take(), requests(&[("BatchGetItem", 2)]));
}

#[tokio::test]
async fn a_query_of_k_pages_is_k_requests() {
    if common::skips(Needs::IndexReadAfterWrite) {
        return;
    }
    let (db, counter) = counted_table::<App>().await;
    let _ = db
        .batch_write()
        .put_all(&tickets(10, 7))
        .send()
        .await
        .unwrap();
    counter.take();

    // Everything fits in one page.
    let all = db
        .query(Ticket::gsi1(7))
        .sort(Ticket::STATUS, Status::Open)
        .all()
        .await
        .unwrap();
    assert_eq!(all.len(), 10);
    assert_eq!(counter.take(), requests(&[("Query", 1)]));

    // Pages of 4: 4, 4 and a short last page without a LastEvaluatedKey.
    let query = || db.query(Ticket::gsi1(7)).limit(4);
    let pages: Vec<_> = query().pages().collect().await;
    let sizes: Vec<usize> = pages
        .into_iter()
        .map(|page| page.unwrap().items.len())
        .collect();
    assert_eq!(sizes, [4, 4, 2]);
    assert_eq!(counter.take(), requests(&[("Query", 3)]));

    assert_eq!(query().all().await.unwrap().len(), 10);
    assert_eq!(counter.take(), requests(&[("Query", 3)]));

    assert_eq!(query().count().await.unwrap(), 10);
    assert_eq!(counter.take(), requests(&[("Query", 3)]));

    // One page at a time, by cursor: one request per page.
    let first = query().page(None).await.unwrap();
    assert_eq!(counter.take(), requests(&[("Query", 1)]));
    let cursor = first.cursor.expect("more pages");
    let second = query().page(Some(&cursor)).await.unwrap();
    assert_eq!(second.items.len(), 4);
    assert_eq!(counter.take(), requests(&[("Query", 1)]));
}

#[tokio::test]
async fn a_rekey_is_one_transaction() {
    let (db, counter) = counted_table::<App>().await;
    let ticket = Ticket::new("1", 7, Status::Open, "x");
    db.put(&ticket).send().await.unwrap();
    counter.take();
    // The common Ticket keeps its status off the primary key; moving it to another id is a
    // rekey all the same.
    let moved = Ticket::new("2", 7, Status::Open, "x");
    db.rekey(&ticket, &moved).send().await.unwrap();
    assert_eq!(counter.take(), requests(&[("TransactWriteItems", 1)]));
    let stale = db.rekey(&ticket, &moved).send().await;
    assert!(stale.is_err());
    assert_eq!(
        counter.take(),
        requests(&[("TransactWriteItems", 1)]),
        "a failed condition is never retried"
    );
}

#[derive(singletable::Table)]
#[dynamo(name = "expiring", pk = "PK", sk = "SK", ttl = "expires_at")]
struct Expiring;

#[derive(singletable::Entity, serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Expiring, pk = "INVITE#{id}", sk = "INVITE")]
struct Invite {
    id: u32,
    #[dynamo(unique)]
    code: String,
    #[dynamo(ttl)]
    expires_at: Option<u64>,
}

/// An entity with unique values that can expire: the new key is read first, since an expired
/// item there is replaced and its values released.
#[tokio::test]
async fn a_rekey_of_expiring_unique_values_reads_the_new_key_first() {
    let (db, counter) = counted_table::<Expiring>().await;
    let invite = Invite {
        id: 1,
        code: "WELCOME".into(),
        expires_at: None,
    };
    db.put(&invite).send().await.unwrap();
    counter.take();
    let moved = Invite {
        id: 2,
        ..invite.clone()
    };
    db.rekey(&invite, &moved).send().await.unwrap();
    let expected = [("GetItem", 1), ("TransactWriteItems", 1)];
    assert_eq!(counter.take(), requests(&expected));
}
