//! Batch get and batch write on the local engine: chunking, deduplication, retries of what
//! DynamoDB leaves unprocessed, and errors that name the item.

mod common;

use aws_sdk_dynamodb::types::AttributeValue;
use common::{db, App, Status, Team, Ticket};
use serde::{Deserialize, Serialize};
use singletable::op::batch::{WriteOperation, MAX_GET_KEYS, MAX_WRITES};
use singletable::{DecodeError, Entity, Error, Key, RetryPolicy};
use std::collections::BTreeSet;
use std::time::Duration;

/// An entity with a library-maintained `updated_at`.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "NOTE#{id}", sk = "NOTE")]
struct Note {
    id: String,
    #[dynamo(updated_at)]
    updated_at: i64,
}

/// An entity with an optimistic-locking version.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "DOC#{id}", sk = "DOC")]
struct Doc {
    id: String,
    #[dynamo(version)]
    version: u64,
}

fn tickets(count: usize) -> Vec<Ticket> {
    (0..count)
        .map(|n| {
            let status = [Status::Open, Status::Pending, Status::Closed][n % 3];
            Ticket::new(
                &n.to_string(),
                (n % 7) as u32,
                status,
                &format!("ticket {n}"),
            )
        })
        .collect()
}

fn ids(tickets: &[Ticket]) -> BTreeSet<String> {
    tickets.iter().map(|ticket| ticket.id.clone()).collect()
}

/// Short delays, so the test does not wait on the default backoff.
fn fast_retries() -> RetryPolicy {
    RetryPolicy::default()
        .with_max_attempts(8)
        .with_base_delay(Duration::from_millis(1))
        .with_max_delay(Duration::from_millis(10))
}

#[tokio::test]
async fn batch_write_of_1000_tickets_lands_every_one_in_40_requests() {
    let db = db().await;
    let all = tickets(1000);
    let batch = db.batch_write().put_all(&all);
    assert_eq!(batch.len(), 1000);
    let params = batch.params().unwrap();
    assert_eq!(params.len(), 40);
    let output = batch.send().await.unwrap();
    assert_eq!(output.written, 1000);
    assert_eq!(output.requests, 40, "nothing unprocessed, so no retries");
    assert!(output.is_complete(), "{:?}", output.unprocessed);

    let read = db
        .batch_get(all.iter().map(|ticket| Ticket::key(&ticket.id).unwrap()))
        .send()
        .await
        .unwrap();
    assert_eq!(read.requests, 10);
    assert!(read.is_complete());
    assert_eq!(read.items.len(), 1000);
    let mut items = read.items;
    items.sort_by_key(|ticket| ticket.id.parse::<usize>().unwrap());
    assert_eq!(items, all);
}

#[tokio::test]
async fn batch_get_of_250_keys_sends_3_requests_and_returns_every_item() {
    let db = db().await;
    let all = tickets(250);
    let output = db.batch_write().put_all(&all).send().await.unwrap();
    assert!(output.is_complete());
    let keys = || all.iter().map(|ticket| Ticket::key(&ticket.id).unwrap());
    // Repeated keys are read once (DynamoDB would reject the request).
    let get = db.batch_get(keys().chain(keys().take(30))).consistent();
    let params = get.params().unwrap();
    let sizes: Vec<usize> = params
        .iter()
        .map(|request| {
            let table = &request.body["RequestItems"][db.table_name()];
            assert_eq!(table["ConsistentRead"], true);
            table["Keys"].as_array().unwrap().len()
        })
        .collect();
    assert_eq!(sizes, [100, 100, 50]);
    let output = get.send().await.unwrap();
    assert_eq!(output.requests, 3);
    assert!(output.is_complete());
    assert_eq!(output.items.len(), 250);
    assert_eq!(ids(&output.items), ids(&all));
}

#[tokio::test]
async fn batch_get_skips_missing_items_and_reports_unreadable_ones_without_failing() {
    let db = db().await;
    let output = db
        .batch_write()
        .put_all(&tickets(3))
        .put(&Team {
            id: 7,
            name: "Support".into(),
        })
        .send()
        .await
        .unwrap();
    assert_eq!(output.written, 4);
    // A Team item under a Ticket key, and a Ticket whose team_id is not a number.
    let mut team_as_ticket = singletable::item::encode(&Team {
        id: 8,
        name: "Ops".into(),
    })
    .unwrap();
    team_as_ticket.extend(Ticket::key("team").unwrap().to_attributes());
    let mut malformed =
        singletable::item::encode(&Ticket::new("bad", 7, Status::Open, "x")).unwrap();
    malformed.insert("team_id".into(), AttributeValue::S("seven".into()));
    for item in [team_as_ticket, malformed] {
        singletable::testing::put_raw(&db, item).await.unwrap();
    }

    let keys = ["0", "1", "2", "missing", "team", "bad"].map(|id| Ticket::key(id).unwrap());
    let output = db.batch_get(keys).send().await.unwrap();
    assert_eq!(ids(&output.items), ids(&tickets(3)));
    assert!(output.unprocessed.is_empty());
    assert_eq!(output.errors.len(), 2, "{:?}", output.errors);
    assert!(!output.is_complete());
    let mut wrong_entity = 0;
    let mut bad_attribute = 0;
    for error in &output.errors {
        match error {
            DecodeError::WrongEntity { key, found, .. } => {
                assert_eq!(key.partition.1, "TICKET#team");
                assert_eq!(found.as_deref(), Some("Team"));
                wrong_entity += 1;
            }
            DecodeError::Attribute { key, attribute, .. } => {
                assert_eq!(key.partition.1, "TICKET#bad");
                assert_eq!(attribute, "team_id");
                bad_attribute += 1;
            }
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!((wrong_entity, bad_attribute), (1, 1));
}

#[tokio::test]
async fn batch_get_resends_keys_left_unprocessed_by_the_16_mb_response_limit() {
    let db = db().await;
    // 48 items of ~350 KB: about 16.8 MB, just over what one BatchGetItem response may
    // carry, so the engine leaves the last keys unprocessed (as DynamoDB does).
    let big: Vec<Ticket> = (0..48)
        .map(|n| Ticket::new(&n.to_string(), 1, Status::Open, &"x".repeat(350 * 1024)))
        .collect();
    let keys = || big.iter().map(|ticket| Ticket::key(&ticket.id).unwrap());
    for chunk in big.chunks(8) {
        let output = db.batch_write().put_all(chunk).send().await.unwrap();
        assert!(output.is_complete());
    }

    let once = db
        .batch_get(keys())
        .retry(RetryPolicy::never())
        .send()
        .await
        .unwrap();
    assert_eq!(once.requests, 1);
    assert!(
        !once.unprocessed.is_empty(),
        "the engine should hit the 16 MB limit"
    );
    // Nothing is dropped: every key is either read or handed back.
    let mut seen = ids(&once.items);
    seen.extend(
        once.unprocessed
            .iter()
            .map(|key: &Key<Ticket>| key.partition().trim_start_matches("TICKET#").to_owned()),
    );
    assert_eq!(seen, ids(&big));
    assert_eq!(once.items.len() + once.unprocessed.len(), 48);

    let retried = db
        .batch_get(keys())
        .retry(fast_retries())
        .send()
        .await
        .unwrap();
    assert_eq!(retried.requests, 2, "one retry reads the rest");
    assert!(retried.is_complete());
    assert_eq!(ids(&retried.items), ids(&big));
}

#[tokio::test]
async fn batch_write_puts_and_deletes_items_of_several_entities() {
    let db = db().await;
    let all = tickets(30);
    let teams: Vec<Team> = (0..5)
        .map(|id| Team {
            id,
            name: format!("team {id}"),
        })
        .collect();
    let output = db
        .batch_write()
        .put_all(&all)
        .put_all(&teams)
        .send()
        .await
        .unwrap();
    assert_eq!((output.written, output.requests), (35, 2));

    let output = db
        .batch_write()
        .delete_all((0..10).map(|n| Ticket::key(n.to_string()).unwrap()))
        .delete(Team::key(0).unwrap())
        .put(&Ticket::new("new", 3, Status::Open, "added"))
        .send()
        .await
        .unwrap();
    assert_eq!((output.written, output.requests), (12, 1));

    let left = db
        .batch_get((0..31).map(|n| Ticket::key(n.to_string()).unwrap()))
        .send()
        .await
        .unwrap();
    assert_eq!(ids(&left.items), ids(&all[10..]));
    let teams_left = db
        .batch_get((0..5).map(|id| Team::key(id).unwrap()))
        .send()
        .await
        .unwrap();
    assert_eq!(teams_left.items.len(), 4);
    assert!(db.get(Ticket::key("new").unwrap()).send().await.is_ok());
}

#[tokio::test]
async fn two_operations_on_one_item_are_rejected_before_sending() {
    let db = db().await;
    let ticket = Ticket::new("1", 7, Status::Open, "x");
    // The duplicate is in another chunk of 25: still one call, so still rejected.
    let batch = db
        .batch_write()
        .put(&ticket)
        .put_all(&tickets(40)[2..])
        .delete(Ticket::key("1").unwrap());
    let expect_duplicate = |error: Error| match error {
        Error::DuplicateWrite { key, first, second } => {
            assert_eq!(key.partition.1, "TICKET#1");
            assert_eq!(
                (first, second),
                (WriteOperation::Put, WriteOperation::Delete)
            );
        }
        other => panic!("expected DuplicateWrite, got {other:?}"),
    };
    expect_duplicate(batch.params().unwrap_err());
    let error = batch.send().await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "batch write has a put and then a delete of the item at PK = ‹hidden›, SK = ‹hidden›; \
         DynamoDB rejects two operations on one item in a batch"
    );
    expect_duplicate(error);
    // Nothing of the batch was written.
    assert!(db
        .get(Ticket::key("1").unwrap())
        .send()
        .await
        .unwrap_err()
        .is_not_found());
    assert!(db
        .get(Ticket::key("5").unwrap())
        .send()
        .await
        .unwrap_err()
        .is_not_found());

    let twice = db.batch_write().put(&ticket).put(&ticket).send().await;
    assert!(
        matches!(twice, Err(Error::DuplicateWrite { .. })),
        "{twice:?}"
    );
}

#[tokio::test]
async fn a_failed_request_reports_what_was_not_written() {
    let db = db().await.clone().with_table_name("no-such-table");
    let error = db
        .batch_write()
        .put_all(&tickets(60))
        .send()
        .await
        .unwrap_err();
    match &error {
        Error::BatchWrite { partial, source } => {
            assert_eq!(partial.written, 0);
            assert_eq!(
                partial.requests, 1,
                "the first request failed, the rest were not sent"
            );
            assert_eq!(partial.unprocessed.len(), 60);
            assert_eq!(partial.unprocessed[59].key.partition.1, "TICKET#59");
            assert_eq!(partial.unprocessed[59].operation, WriteOperation::Put);
            assert_eq!(partial.unprocessed[59].entity, "Ticket");
            assert!(matches!(**source, Error::Service(_)), "{source:?}");
        }
        other => panic!("expected BatchWrite, got {other:?}"),
    }
    assert!(
        error
            .to_string()
            .starts_with("batch write stopped after writing 0 items (60 not written): "),
        "{error}"
    );
}

#[test]
fn params_chunk_writes_by_25_and_keys_by_100() {
    let db = common::offline::<App>();
    assert_eq!((MAX_WRITES, MAX_GET_KEYS), (25, 100));
    let writes = db.batch_write().put_all(&tickets(51)).params().unwrap();
    let sizes: Vec<usize> = writes
        .iter()
        .map(|request| {
            request.body["RequestItems"]["app"]
                .as_array()
                .unwrap()
                .len()
        })
        .collect();
    assert_eq!(sizes, [25, 25, 1]);
    let gets = db
        .batch_get((0..201).map(|n| Ticket::key(n.to_string()).unwrap()))
        .params()
        .unwrap();
    let sizes: Vec<usize> = gets
        .iter()
        .map(|request| {
            request.body["RequestItems"]["app"]["Keys"]
                .as_array()
                .unwrap()
                .len()
        })
        .collect();
    assert_eq!(sizes, [100, 100, 1]);
    assert!(db.batch_write().params().unwrap().is_empty());
    assert!(db
        .batch_get(Vec::<Key<Ticket>>::new())
        .params()
        .unwrap()
        .is_empty());
}

#[test]
fn params_show_the_exact_requests() {
    let db = common::offline::<App>();
    let write = db
        .batch_write()
        .put(&Team {
            id: 7,
            name: "Support".into(),
        })
        .delete(Ticket::key("8842").unwrap())
        .params()
        .unwrap();
    assert_eq!(write.len(), 1);
    assert_eq!(
        write[0].to_string(),
        r#"BatchWriteItem {
  "RequestItems": {
    "app": [
      {
        "PutRequest": {
          "Item": {
            "PK": {
              "S": "TEAM#0000000007"
            },
            "SK": {
              "S": "TEAM"
            },
            "_sv": {
              "N": "1"
            },
            "_type": {
              "S": "Team"
            },
            "id": {
              "N": "7"
            },
            "name": {
              "S": "Support"
            }
          }
        }
      },
      {
        "DeleteRequest": {
          "Key": {
            "PK": {
              "S": "TICKET#8842"
            },
            "SK": {
              "S": "TICKET"
            }
          }
        }
      }
    ]
  }
}"#
    );
    let get = db.batch_get([Ticket::key("1").unwrap()]).params().unwrap();
    assert_eq!(
        get[0].to_string(),
        r#"BatchGetItem {
  "RequestItems": {
    "app": {
      "Keys": [
        {
          "PK": {
            "S": "TICKET#1"
          },
          "SK": {
            "S": "TICKET"
          }
        }
      ]
    }
  }
}"#
    );
}

#[test]
fn an_entity_that_cannot_be_encoded_fails_the_batch_before_sending() {
    let db = common::offline::<App>();
    let huge = Ticket::new("huge", 1, Status::Open, &"x".repeat(401 * 1024));
    let error = db
        .batch_write()
        .put(&Ticket::new("ok", 1, Status::Open, "fine"))
        .put(&huge)
        .params()
        .unwrap_err();
    assert!(matches!(error, Error::Limit(_)), "{error:?}");
}

#[tokio::test]
async fn batch_puts_stamp_updated_at_and_batch_deletes_take_versioned_entities() {
    let db = db().await;
    let output = db
        .batch_write()
        .put(&Note {
            id: "n".into(),
            updated_at: 0,
        })
        .send()
        .await
        .unwrap();
    assert_eq!(output.written, 1);
    let note = db.get(Note::key("n").unwrap()).send().await.unwrap();
    assert!(note.updated_at > 0, "{note:?}");

    // A versioned entity cannot be put in a batch (tests/ui/versioned_batch_put.rs), but it
    // can be deleted in one, as with `delete`, which needs no version.
    db.put(&Doc {
        id: "d".into(),
        version: 0,
    })
    .send()
    .await
    .unwrap();
    let output = db
        .batch_write()
        .delete(Doc::key("d").unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(output.written, 1);
    let gone = db.get(Doc::key("d").unwrap()).send().await.unwrap_err();
    assert!(gone.is_not_found(), "{gone:?}");
}

/// The library's requests in flight on one table (a span per request, open from its start
/// until its response is read), the most at once, and those finished.
#[derive(Clone, Default)]
struct InFlight(std::sync::Arc<std::sync::Mutex<(usize, usize, usize)>>);

/// Counts requests per table for every test of this binary: one global subscriber, since
/// thread-local ones race with the other tests' threads over tracing's callsite cache.
#[derive(Clone, Default)]
struct ByTable(std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, InFlight>>>);

/// The table a span is about, kept on the span for its close.
struct SpanTable(String);

struct TableField(Option<String>);

impl tracing::field::Visit for TableField {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        // A `string[]`, recorded as its JSON text: the library's requests name one table.
        if field.name() == "aws.dynamodb.table_names" {
            let names: Vec<String> = serde_json::from_str(value).unwrap_or_default();
            self.0 = names.into_iter().next();
        }
    }

    fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
}

impl ByTable {
    fn of(&self, table: &str) -> InFlight {
        self.0
            .lock()
            .unwrap()
            .entry(table.to_owned())
            .or_default()
            .clone()
    }
}

impl<S> tracing_subscriber::Layer<S> for ByTable
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    fn on_new_span(
        &self,
        attributes: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        context: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if attributes.metadata().target() != "singletable" {
            return;
        }
        let mut table = TableField(None);
        attributes.record(&mut table);
        let Some(table) = table.0 else {
            return;
        };
        let counts = self.of(&table);
        let mut counts = counts.0.lock().unwrap();
        counts.0 += 1;
        counts.1 = counts.1.max(counts.0);
        if let Some(span) = context.span(id) {
            span.extensions_mut().insert(SpanTable(table));
        }
    }

    fn on_close(&self, id: tracing::span::Id, context: tracing_subscriber::layer::Context<'_, S>) {
        let Some(span) = context.span(&id) else {
            return;
        };
        let Some(SpanTable(table)) = span.extensions_mut().remove::<SpanTable>() else {
            return;
        };
        let counts = self.of(&table);
        let mut counts = counts.0.lock().unwrap();
        counts.0 -= 1;
        counts.2 += 1;
    }
}

/// The requests in flight on `table`, counted from now on.
fn in_flight(table: &str) -> InFlight {
    use tracing_subscriber::layer::SubscriberExt;
    static COUNTS: std::sync::OnceLock<ByTable> = std::sync::OnceLock::new();
    let counts = COUNTS.get_or_init(|| {
        let counts = ByTable::default();
        tracing::subscriber::set_global_default(
            tracing_subscriber::registry().with(counts.clone()),
        )
        .expect("no other global subscriber in this test binary");
        counts
    });
    counts.of(table)
}

/// `concurrency(n)` keeps up to n `BatchWriteItem` requests in flight, never more, and every
/// item still lands once.
#[test]
fn batch_writes_keep_at_most_their_concurrency_in_flight() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let most = runtime.block_on(async {
        let db = db().await;
        let in_flight = in_flight(db.table_name());
        let all = tickets(500);
        let output = db
            .batch_write()
            .put_all(&all)
            .concurrency(4)
            .send()
            .await
            .unwrap();
        assert_eq!((output.written, output.requests), (500, 20));
        let read = db
            .batch_get(all.iter().map(|ticket| Ticket::key(&ticket.id).unwrap()))
            .send()
            .await
            .unwrap();
        assert_eq!(read.items.len(), 500);
        let most = in_flight.0.lock().unwrap().1;
        most
    });
    assert!((2..=4).contains(&most), "{most} requests in flight at once");
}

/// A stream of any length loads in bounded memory: the stream is read only as chunks are sent,
/// so at most `concurrency` chunks (plus the one being cut) are read ahead of the writes.
#[test]
fn a_stream_loads_at_its_concurrency_reading_only_ahead_of_what_is_in_flight() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let most = runtime.block_on(async {
        let db = db().await;
        let in_flight = in_flight(db.table_name());
        let all = tickets(1000);
        let pulled = Arc::new(AtomicUsize::new(0));
        let most_ahead = Arc::new(AtomicUsize::new(0));
        let (counter, ahead, spans) = (pulled.clone(), most_ahead.clone(), in_flight.clone());
        let finished_before = in_flight.0.lock().unwrap().2;
        let items = futures::StreamExt::inspect(futures::stream::iter(all.clone()), move |_| {
            let read = counter.fetch_add(1, Ordering::SeqCst) + 1;
            // Items read beyond those whose requests finished (each wrote a full chunk).
            let finished = spans.0.lock().unwrap().2 - finished_before;
            ahead.fetch_max(read.saturating_sub(finished * MAX_WRITES), Ordering::SeqCst);
        });
        let output = db.put_stream(items).concurrency(4).send().await.unwrap();
        assert_eq!((output.written, output.requests), (1000, 40));
        assert_eq!(pulled.load(Ordering::SeqCst), 1000);
        // At most the 4 chunks in flight and the one being cut were ever read ahead.
        let ahead = most_ahead.load(Ordering::SeqCst);
        assert!(
            ahead <= 5 * MAX_WRITES,
            "{ahead} items read ahead of the writes"
        );
        assert!(
            ahead > MAX_WRITES,
            "the load ran requests side by side ({ahead})"
        );
        let read = db
            .batch_get(all.iter().map(|ticket| Ticket::key(&ticket.id).unwrap()))
            .send()
            .await
            .unwrap();
        assert_eq!(read.items.len(), 1000);
        let most = in_flight.0.lock().unwrap().1;
        most
    });
    assert!((2..=4).contains(&most), "{most} requests in flight at once");
}

/// A batch write and a stream load are futures a task can own: they run in `tokio::spawn`
/// (this failed to compile while chunks were mapped by a closure taking a slice).
#[tokio::test]
async fn batch_writes_run_in_spawned_tasks() {
    let table = db().await;
    let db: singletable::Db<App> = table.clone();
    let batch = tokio::spawn(async move {
        let tickets = tickets(30);
        db.batch_write().put_all(&tickets).send().await
    });
    let db: singletable::Db<App> = table.clone();
    let stream = tokio::spawn(async move {
        let more = tickets(60).split_off(30);
        db.put_stream(futures::stream::iter(more)).send().await
    });
    assert_eq!(batch.await.unwrap().unwrap().written, 30);
    assert_eq!(stream.await.unwrap().unwrap().written, 30);
    assert_eq!(common::raw_items(&table).await.len(), 60);
}

/// The entities of `App` that tests read in one batch, each item as its variant.
#[derive(singletable::Collection, Debug, PartialEq)]
enum Desk {
    Ticket(Ticket),
    Note(Note),
    Doc(Doc),
}

/// Items of three entities, stored: 90 tickets, 40 notes, 30 docs.
async fn desk(db: &singletable::Db<App>) -> (Vec<Ticket>, Vec<Note>, Vec<Doc>) {
    let tickets = tickets(90);
    let notes: Vec<Note> = (0..40)
        .map(|n| Note {
            id: format!("n{n}"),
            updated_at: 0,
        })
        .collect();
    let docs: Vec<Doc> = (0..30)
        .map(|n| Doc {
            id: format!("d{n}"),
            version: 0,
        })
        .collect();
    let written = db
        .batch_write()
        .put_all(&tickets)
        .put_all(&notes)
        .send()
        .await
        .unwrap();
    assert!(written.is_complete());
    for doc in &docs {
        db.put(doc).send().await.unwrap();
    }
    (tickets, notes, docs)
}

/// What a collection's batch read returned, by entity and id.
fn read_ids(items: &[Desk]) -> BTreeSet<String> {
    items
        .iter()
        .map(|item| match item {
            Desk::Ticket(ticket) => format!("ticket {}", ticket.id),
            Desk::Note(note) => format!("note {}", note.id),
            Desk::Doc(doc) => format!("doc {} v{}", doc.id, doc.version),
        })
        .collect()
}

#[tokio::test]
async fn a_collection_batch_reads_keys_of_several_entities_as_their_variants() {
    let db = db().await;
    let (tickets, notes, docs) = desk(&db).await;
    let mut read = db.batch_get_collection::<Desk>();
    for ticket in &tickets {
        read = read.key(Ticket::key(&ticket.id).unwrap());
    }
    for note in &notes {
        read = read.key(Note::key(&note.id).unwrap());
    }
    for doc in &docs {
        read = read.key(Doc::key(&doc.id).unwrap());
    }
    // A key twice is read once; a key with no item is absent.
    let read = read
        .key(Note::key("n0").unwrap())
        .key(Doc::key("missing").unwrap())
        .consistent();
    let params = read.params().unwrap();
    assert_eq!(params.len(), 2, "161 distinct keys: chunks of 100 and 61");
    let output = read.send().await.unwrap();
    assert!(output.is_complete(), "{:?}", output.unprocessed);
    assert_eq!(output.requests, 2);
    let expected: BTreeSet<String> = (tickets.iter().map(|ticket| format!("ticket {}", ticket.id)))
        .chain(notes.iter().map(|note| format!("note {}", note.id)))
        .chain(docs.iter().map(|doc| format!("doc {} v1", doc.id)))
        .collect();
    assert_eq!(read_ids(&output.items), expected);
    let sample = output
        .items
        .iter()
        .find(|item| matches!(item, Desk::Ticket(t) if t.id == "5"));
    assert_eq!(
        sample,
        Some(&Desk::Ticket(tickets[5].clone())),
        "decoded whole, as its variant"
    );
}

#[tokio::test]
async fn a_collection_batch_resends_unprocessed_keys_and_hands_back_the_rest_of_any_entity() {
    if common::skips(common::Needs::FaultProxy) {
        return;
    }
    use singletable_fault::{self as fault, Fault, FaultKind, FaultPlan};
    let db = db().await;
    let (tickets, notes, docs) = desk(&db).await;
    fn all<'db>(
        faulty: &'db singletable::Db<App>,
        (tickets, notes, docs): (&[Ticket], &[Note], &[Doc]),
    ) -> singletable::op::batch::BatchGet<'db, Desk> {
        let mut read = faulty.batch_get_collection::<Desk>();
        for ticket in tickets {
            read = read.key(Ticket::key(&ticket.id).unwrap());
        }
        for note in notes {
            read = read.key(Note::key(&note.id).unwrap());
        }
        for doc in docs {
            read = read.key(Doc::key(&doc.id).unwrap());
        }
        read
    }
    let stored = (&tickets[..], &notes[..], &docs[..]);
    let everything = tickets.len() + notes.len() + docs.len();
    // Half the answers leave part of their keys unprocessed: resent until none is left.
    let plan = FaultPlan::new(21, 0.5).with_kinds([Fault::before(FaultKind::Unprocessed)]);
    let (client, stats) = fault::client(plan).await.unwrap();
    let faulty = singletable::Db::<App>::new(client).with_table_name(db.table_name());
    let output = all(&faulty, stored)
        .consistent()
        .retry(fast_retries())
        .send()
        .await
        .unwrap();
    assert!(output.is_complete(), "{} left", output.unprocessed.len());
    assert_eq!(output.items.len(), everything);
    assert!(
        output.requests > 2,
        "the unprocessed keys were resent: {} requests",
        output.requests
    );
    assert!(stats.report().injected_total() > 0);
    // Every answer leaves some unprocessed.
    let plan = FaultPlan::new(22, 1.0).with_kinds([Fault::before(FaultKind::Unprocessed)]);
    let (client, _) = fault::client(plan).await.unwrap();
    let faulty = singletable::Db::<App>::new(client).with_table_name(db.table_name());
    // With no resends, what is left is handed back, keys of every entity among them, and
    // reads back through `keys`.
    let once = all(&faulty, stored)
        .consistent()
        .retry(RetryPolicy::never())
        .send()
        .await
        .unwrap();
    assert_eq!(once.requests, 2);
    assert!(!once.unprocessed.is_empty());
    assert_eq!(once.items.len() + once.unprocessed.len(), everything);
    let entities: BTreeSet<&str> = once.unprocessed.iter().map(|key| key.entity).collect();
    assert_eq!(
        entities,
        BTreeSet::from(["Doc", "Note", "Ticket"]),
        "unprocessed keys span entities"
    );
    let rest = db
        .batch_get_collection::<Desk>()
        .keys(once.unprocessed)
        .consistent()
        .send()
        .await
        .unwrap();
    assert!(rest.is_complete());
    let mut both = read_ids(&once.items);
    both.extend(read_ids(&rest.items));
    assert_eq!(both.len(), everything);
}
