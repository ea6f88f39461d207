//! Items other tools wrote: a table seeded with the raw SDK with missing attributes, wrong
//! types, unknown entity types, keys that do not match the template, numbers out of range and
//! oversized strings. Every read path (get, query pages/items/all, scan, batch get, transact
//! get) must return a typed error or skip and report the item: none may panic, and none may
//! drop it silently. And DynamoDB's limits are checked before a request is sent.

mod common;
use common::Needs;

use aws_sdk_dynamodb::types::AttributeValue;
use futures::{FutureExt, StreamExt};
use serde::{Deserialize, Serialize};
use singletable::item::Item;
use singletable::op::transact::TransactionError;
use singletable::testing::TestTable;
use singletable::{Db, DecodeError, Entity, Error, KeyError, KeyPart, LimitError, Table};
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::panic::AssertUnwindSafe;

#[derive(Table)]
#[dynamo(
    name = "bad",
    pk = "PK",
    sk = "SK",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
struct Bad;

#[derive(KeyPart, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Status {
    Open,
    Closed,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Bad, schema_version = 2, pk = "TICKET#{id}", sk = "TICKET",
         gsi1pk = "TEAM#{team_id}", gsi1sk = "TICKET#{id}")]
struct Ticket {
    id: String,
    team_id: u32,
    status: Status,
    title: String,
    tags: Vec<String>,
    owner: Option<String>,
}

/// The tickets' items as a collection: decided by the entity attribute, no filter.
#[derive(singletable::Collection, Debug)]
enum TicketItem {
    Ticket(Ticket),
}

/// An entity whose sort key is a free-form field, to reach the 1024-byte sort key limit.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Bad, pk = "NOTE", sk = "{name}")]
struct Note {
    name: String,
}

fn ticket(id: &str) -> Ticket {
    Ticket {
        id: id.to_owned(),
        team_id: 7,
        status: Status::Open,
        title: format!("ticket {id}"),
        tags: vec!["printer".to_owned()],
        owner: None,
    }
}

fn offline() -> Db<Bad> {
    let client = aws_sdk_dynamodb::Client::from_conf(
        aws_sdk_dynamodb::Config::builder()
            .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
            .build(),
    );
    Db::new(client)
}

/// What reading a seeded item should give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// It is a valid ticket (odd, but readable).
    Decodes,
    /// A `DecodeError::Attribute` naming this attribute.
    BadAttribute(&'static str),
    /// A `DecodeError::WrongEntity`: not a ticket by its entity attribute.
    WrongEntity,
}

/// One item another tool wrote, under key `TICKET#<name>` (unless it rewrites its key).
struct Seed {
    name: &'static str,
    item: Item,
    expect: Expect,
}

fn s(text: &str) -> AttributeValue {
    AttributeValue::S(text.to_owned())
}

fn n(text: &str) -> AttributeValue {
    AttributeValue::N(text.to_owned())
}

/// A valid ticket item named `name`, changed by `change`.
fn seed(name: &'static str, expect: Expect, change: impl FnOnce(&mut Item)) -> Seed {
    let mut item = singletable::item::encode(&ticket(name)).unwrap();
    change(&mut item);
    Seed { name, item, expect }
}

fn nested(depth: usize) -> AttributeValue {
    (0..depth).fold(s("bottom"), |inner, level| {
        if level % 2 == 0 {
            AttributeValue::L(vec![inner])
        } else {
            AttributeValue::M(Item::from([("x".to_owned(), inner)]))
        }
    })
}

fn seeds() -> Vec<Seed> {
    use Expect::*;
    vec![
        seed("valid-1", Decodes, |_| {}),
        seed("valid-2", Decodes, |_| {}),
        seed("missing-title", BadAttribute("title"), |item| {
            item.remove("title");
        }),
        // A field a key renders is read from that key: the team from `GSI1PK = TEAM#..7`.
        seed("team-only-in-its-key", Decodes, |item| {
            item.remove("team_id");
        }),
        seed("team-as-text", BadAttribute("team_id"), |item| {
            item.insert("team_id".into(), s("seven"));
        }),
        seed("team-2-pow-40", BadAttribute("team_id"), |item| {
            item.insert("team_id".into(), n("1099511627776"));
        }),
        seed("team-negative", BadAttribute("team_id"), |item| {
            item.insert("team_id".into(), n("-1"));
        }),
        seed("team-fraction", BadAttribute("team_id"), |item| {
            item.insert("team_id".into(), n("1.5"));
        }),
        seed("team-38-digits", BadAttribute("team_id"), |item| {
            item.insert(
                "team_id".into(),
                n("99999999999999999999999999999999999999"),
            );
        }),
        seed("team-exponent", BadAttribute("team_id"), |item| {
            item.insert("team_id".into(), n("1E+125"));
        }),
        seed("status-unknown", BadAttribute("status"), |item| {
            item.insert("status".into(), s("reopened"));
        }),
        seed("status-number", BadAttribute("status"), |item| {
            item.insert("status".into(), n("1"));
        }),
        seed("title-null", BadAttribute("title"), |item| {
            item.insert("title".into(), AttributeValue::Null(true));
        }),
        seed("title-binary", BadAttribute("title"), |item| {
            item.insert(
                "title".into(),
                AttributeValue::B(aws_smithy_types::Blob::new(vec![0xff, 0x00, 0xfe])),
            );
        }),
        seed("title-map", BadAttribute("title"), |item| {
            item.insert("title".into(), AttributeValue::M(Item::new()));
        }),
        seed("tags-text", BadAttribute("tags"), |item| {
            item.insert("tags".into(), s("a,b"));
        }),
        seed("tags-mixed", BadAttribute("tags[0]"), |item| {
            item.insert(
                "tags".into(),
                AttributeValue::L(vec![n("1"), AttributeValue::M(Item::new())]),
            );
        }),
        seed("owner-number", BadAttribute("owner"), |item| {
            item.insert("owner".into(), n("42"));
        }),
        seed("id-number", BadAttribute("id"), |item| {
            item.insert("id".into(), n("5"));
        }),
        // Oddities that are still valid tickets.
        seed("tags-string-set", Decodes, |item| {
            item.insert(
                "tags".into(),
                AttributeValue::Ss(vec!["a".into(), "b".into()]),
            );
        }),
        seed("title-350-kb", Decodes, |item| {
            item.insert("title".into(), s(&"é".repeat(175 * 1024)));
        }),
        seed("extra-attributes", Decodes, |item| {
            item.insert("legacy_field".into(), AttributeValue::Bool(true));
            item.insert("nested_32_levels".into(), nested(31));
        }),
        seed("owner-null", Decodes, |item| {
            item.insert("owner".into(), AttributeValue::Null(true));
        }),
        // Not tickets by their entity attribute.
        seed("type-alien", WrongEntity, |item| {
            item.insert("_type".into(), s("Alien"));
        }),
        seed("type-missing", WrongEntity, |item| {
            item.remove("_type");
        }),
        seed("type-number", WrongEntity, |item| {
            item.insert("_type".into(), n("1"));
        }),
        seed("type-lowercase", WrongEntity, |item| {
            item.insert("_type".into(), s("ticket"));
        }),
    ]
}

/// Items whose key does not match the template (the fields say one key, the item has
/// another): a reader that accepts them hands out an entity whose `primary_key()` is not
/// where it was read from, and writing it back duplicates it.
fn key_mismatches() -> Vec<Seed> {
    vec![
        seed("id-disagrees", Expect::Decodes, |item| {
            item.insert("id".into(), s("someone-else"));
        }),
        seed("pk-off-template", Expect::Decodes, |item| {
            item.insert("PK".into(), s("TKT-99"));
        }),
        seed("gsi-off-template", Expect::Decodes, |item| {
            item.insert("GSI1SK".into(), s("NOT-A-TICKET"));
        }),
    ]
}

async fn seeded(seeds: &[Seed]) -> TestTable<Bad> {
    let db = singletable::testing::table::<Bad>().await.unwrap();
    for seed in seeds {
        let mut item = seed.item.clone();
        if !item
            .get("PK")
            .is_some_and(|pk| pk.as_s().is_ok_and(|pk| pk.starts_with("TKT")))
        {
            item.insert("PK".into(), s(&format!("TICKET#{}", seed.name)));
        }
        singletable::testing::put_raw(&db, item)
            .await
            .unwrap_or_else(|error| panic!("seeding {}: {error:?}", seed.name));
    }
    db
}

/// Runs a read, turning a panic into a reported failure (and counting it).
async fn no_panic<T>(
    panics: &mut Vec<String>,
    path: &str,
    read: impl Future<Output = T>,
) -> Option<T> {
    match AssertUnwindSafe(read).catch_unwind().await {
        Ok(value) => Some(value),
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|text| (*text).to_owned()))
                .unwrap_or_default();
            panics.push(format!("{path}: {message}"));
            None
        }
    }
}

/// The seed a decode error is about, from the key it names.
fn seed_of(error: &DecodeError) -> String {
    let key = match error {
        DecodeError::WrongEntity { key, .. }
        | DecodeError::Attribute { key, .. }
        | DecodeError::KeyMismatch { key, .. } => key,
        other => panic!("unexpected {other}"),
    };
    key.partition.1.trim_start_matches("TICKET#").to_owned()
}

/// Checks one seed's outcome on one read path.
fn check(
    seed: &Seed,
    path: &str,
    outcome: Result<Option<Ticket>, Error>,
    failures: &mut Vec<String>,
) {
    let ok = match (&outcome, seed.expect) {
        (Ok(Some(found)), Expect::Decodes) => found.id == seed.name,
        (
            Err(Error::Decode(DecodeError::Attribute { attribute, key, .. })),
            Expect::BadAttribute(expected),
        ) => attribute == expected && key.partition.1 == format!("TICKET#{}", seed.name),
        (
            Err(Error::Decode(DecodeError::WrongEntity { key, expected, .. })),
            Expect::WrongEntity,
        ) => *expected == "Ticket" && key.partition.1 == format!("TICKET#{}", seed.name),
        _ => false,
    };
    if !ok {
        failures.push(format!(
            "{path} {}: expected {:?}, got {outcome:?}",
            seed.name, seed.expect
        ));
    }
}

#[tokio::test]
async fn every_read_path_reports_malformed_items_without_panicking() {
    if common::skips(Needs::IndexReadAfterWrite) {
        return;
    }
    let seeds = seeds();
    let db = seeded(&seeds).await;
    let mut failures = Vec::new();
    let mut panics = Vec::new();
    let key = |seed: &Seed| Ticket::key(seed.name).unwrap();

    // GetItem.
    for seed in &seeds {
        if let Some(outcome) =
            no_panic(&mut panics, "get", db.get(key(seed)).consistent().send()).await
        {
            check(seed, "get", outcome.map(Some), &mut failures);
        }
    }

    // BatchGetItem: decoded items and reported errors, nothing else.
    if let Some(output) = no_panic(
        &mut panics,
        "batch_get",
        db.batch_get(seeds.iter().map(key)).consistent().send(),
    )
    .await
    {
        let output = output.unwrap();
        assert!(output.unprocessed.is_empty());
        let items: BTreeMap<String, Ticket> = output
            .items
            .into_iter()
            .map(|t| (t.id.clone(), t))
            .collect();
        let errors: BTreeMap<String, DecodeError> = output
            .errors
            .into_iter()
            .map(|e| (seed_of(&e), e))
            .collect();
        for seed in &seeds {
            let outcome = match (items.get(seed.name), errors.get(seed.name)) {
                (Some(found), None) => Ok(Some(found.clone())),
                (None, Some(error)) => Err(Error::Decode(error.clone())),
                (None, None) => Ok(None),
                (Some(_), Some(_)) => Err(Error::Wait {
                    table: "both an item and an error".into(),
                    message: String::new(),
                }),
            };
            check(seed, "batch_get", outcome, &mut failures);
        }
    }

    // TransactGetItems: each slot decodes on its own.
    for chunk in seeds.chunks(25) {
        let mut get = db.transact_get();
        let slots: Vec<_> = chunk.iter().map(|seed| get.get(key(seed))).collect();
        if let Some(output) = no_panic(&mut panics, "transact_get", get.send()).await {
            let mut output = output.unwrap();
            for (seed, slot) in chunk.iter().zip(&slots) {
                check(seed, "transact_get", output.take(slot), &mut failures);
            }
        }
    }

    // Query on GSI1, where every seed lives: page by page, item by item, and all at once.
    // Items of another entity (`Alien`, `ticket`) are filtered out; items with no string
    // entity attribute come back as `WrongEntity` errors.
    let tickets: Vec<&Seed> = seeds
        .iter()
        .filter(|seed| {
            seed.expect != Expect::WrongEntity
                || ["type-missing", "type-number"].contains(&seed.name)
        })
        .collect();
    let mut paged = Vec::new();
    if let Some(pages) = no_panic(
        &mut panics,
        "query pages",
        db.query(Ticket::gsi1(7))
            .limit(4)
            .pages()
            .collect::<Vec<_>>(),
    )
    .await
    {
        for page in pages {
            let page = page.unwrap();
            paged.extend(page.items.into_iter().map(Ok));
            paged.extend(
                page.errors
                    .into_iter()
                    .map(|error| Err(Error::Decode(error))),
            );
        }
    }
    let streamed = no_panic(
        &mut panics,
        "query items",
        db.query(Ticket::gsi1(7)).items().collect::<Vec<_>>(),
    )
    .await
    .unwrap_or_default();
    let scanned = no_panic(
        &mut panics,
        "scan",
        db.scan::<Ticket>()
            .limit(5)
            .segments(3)
            .items()
            .collect::<Vec<_>>(),
    )
    .await
    .unwrap_or_default();
    for (path, results) in [
        ("query pages", paged),
        ("query items", streamed),
        ("scan", scanned),
    ] {
        let mut outcomes: BTreeMap<String, Result<Option<Ticket>, Error>> = BTreeMap::new();
        for result in results {
            let name = match &result {
                Ok(ticket) => ticket.id.clone(),
                Err(Error::Decode(error)) => seed_of(error),
                Err(other) => panic!("{path}: {other}"),
            };
            if outcomes.insert(name.clone(), result.map(Some)).is_some() {
                failures.push(format!("{path}: {name} came back twice"));
            }
        }
        for seed in &tickets {
            let outcome = outcomes.remove(seed.name).unwrap_or(Ok(None));
            check(seed, path, outcome, &mut failures);
        }
        // Other entities' items are left out by the entity filter; nothing else may appear.
        assert!(outcomes.is_empty(), "{path}: unexpected {outcomes:?}");
    }
    // A collection decides by the entity attribute and filters nothing: every seed comes
    // back, decoded or reported.
    let mut collected: BTreeMap<String, Result<Ticket, DecodeError>> = BTreeMap::new();
    let pages = no_panic(
        &mut panics,
        "collection",
        db.query(Ticket::gsi1(7))
            .collection::<TicketItem>()
            .limit(6)
            .pages()
            .collect::<Vec<_>>(),
    )
    .await
    .unwrap_or_default();
    for page in pages {
        let page = page.unwrap();
        for TicketItem::Ticket(ticket) in page.items {
            collected.insert(ticket.id.clone(), Ok(ticket));
        }
        for error in page.errors {
            collected.insert(seed_of(&error), Err(error));
        }
    }
    for seed in &seeds {
        let ok = match (collected.remove(seed.name), seed.expect) {
            (Some(Ok(found)), Expect::Decodes) => found.id == seed.name,
            (
                Some(Err(DecodeError::Attribute { attribute, .. })),
                Expect::BadAttribute(expected),
            ) => attribute == expected,
            (Some(Err(DecodeError::WrongEntity { expected, .. })), Expect::WrongEntity) => {
                expected == "TicketItem"
            }
            _ => false,
        };
        if !ok {
            failures.push(format!("collection {}: not as expected", seed.name));
        }
    }
    assert!(collected.is_empty(), "collection: unexpected {collected:?}");
    // `all` stops at the first item that does not decode, with its typed error.
    match no_panic(&mut panics, "query all", db.query(Ticket::gsi1(7)).all()).await {
        Some(Err(Error::Decode(_))) | None => {}
        Some(other) => failures.push(format!("query all: expected a decode error, got {other:?}")),
    }
    let count = db.query(Ticket::gsi1(7)).count().await.unwrap();
    assert_eq!(
        count,
        tickets.len() as u64,
        "count includes malformed tickets"
    );

    eprintln!(
        "[bad input] {} malformed or odd items ({} tickets, {} foreign) through 8 read paths: {} unexpected outcomes, {} panics",
        seeds.len(),
        tickets.len(),
        seeds.len() - tickets.len(),
        failures.len(),
        panics.len()
    );
    assert!(panics.is_empty(), "{panics:#?}");
    assert!(failures.is_empty(), "{failures:#?}");
}

/// An entity query or scan filters on the entity attribute in DynamoDB, but keeps items whose
/// `_type` is missing or not a string, so that they are reported rather than skipped. (One
/// whose `_type` names another entity, `Alien` or `ticket`, is rightly skipped: it may be
/// another entity of the table; a collection query reports it.)
#[tokio::test]
async fn queries_and_scans_report_items_without_an_entity_attribute() {
    if common::skips(Needs::IndexReadAfterWrite) {
        return;
    }
    let seeds: Vec<Seed> = seeds()
        .into_iter()
        .filter(|seed| ["type-missing", "type-number"].contains(&seed.name))
        .collect();
    let db = seeded(&seeds).await;
    let queried: Vec<Result<Ticket, Error>> = db.query(Ticket::gsi1(7)).items().collect().await;
    let scanned: Vec<Result<Ticket, Error>> = db.scan::<Ticket>().items().collect().await;
    for (path, results) in [("query", queried), ("scan", scanned)] {
        let reported: BTreeSet<String> = results
            .iter()
            .filter_map(|result| match result {
                Err(Error::Decode(error)) => Some(seed_of(error)),
                _ => None,
            })
            .collect();
        let expected: BTreeSet<String> = seeds.iter().map(|seed| seed.name.to_owned()).collect();
        assert_eq!(
            reported, expected,
            "{path} reports every item under a ticket key that is not a ticket"
        );
    }
}

/// `item::decode` checks the key too: an item whose stored key is not the key its fields render
/// is reported (`KeyMismatch`), not returned as a ticket whose `primary_key()` is elsewhere.
#[tokio::test]
async fn items_whose_key_does_not_match_the_template_are_reported() {
    let seeds = key_mismatches();
    let db = seeded(&seeds).await;
    let got = db.get(Ticket::key("id-disagrees").unwrap()).send().await;
    assert!(matches!(got, Err(Error::Decode(_))), "get: {got:?}");
    let queried: Vec<Result<Ticket, Error>> = db.query(Ticket::gsi1(7)).items().collect().await;
    let accepted: Vec<&Ticket> = queried
        .iter()
        .filter_map(|result| result.as_ref().ok())
        .collect();
    assert!(
        accepted.is_empty(),
        "query accepted items at the wrong key: {accepted:?}"
    );
}

/// Why that matters: a mis-keyed item that was read and written back would make a second copy.
#[tokio::test]
async fn a_mis_keyed_item_is_reported_so_it_cannot_be_copied_by_writing_it_back() {
    let seeds = key_mismatches();
    let db = seeded(&seeds[..1]).await;
    let read = db.get(Ticket::key("id-disagrees").unwrap()).send().await;
    match read {
        Err(Error::Decode(DecodeError::KeyMismatch { key, rendered, .. })) => {
            assert_eq!(key.partition.1, "TICKET#id-disagrees");
            assert_eq!(rendered.partition.1, "TICKET#someone-else");
        }
        other => panic!("expected KeyMismatch, got {other:?}"),
    }
}

/// The migration path: a backfill sweep over old items (schema version 1) that other tools
/// wrote reports each one it cannot read, and backfills the rest.
#[tokio::test]
async fn a_backfill_sweep_reports_malformed_items() {
    let mut seeds = seeds();
    for seed in &mut seeds {
        seed.item.insert("_sv".into(), n("1"));
    }
    let db = seeded(&seeds).await;
    let report = AssertUnwindSafe(db.admin().sweep::<Ticket>().segments(2).page_size(5).send())
        .catch_unwind()
        .await
        .expect("the sweep does not panic")
        .unwrap();
    let failed: BTreeSet<String> = report
        .failures
        .iter()
        .map(|failure| {
            failure
                .key
                .partition
                .1
                .trim_start_matches("TICKET#")
                .to_owned()
        })
        .collect();
    let malformed: BTreeSet<String> = seeds
        .iter()
        .filter(|seed| matches!(seed.expect, Expect::BadAttribute(_)))
        .map(|seed| seed.name.to_owned())
        .collect();
    let readable = seeds
        .iter()
        .filter(|seed| seed.expect == Expect::Decodes)
        .count() as u64;
    eprintln!("[bad input] sweep: {report}");
    assert!(report.complete, "{report}");
    assert_eq!(
        failed, malformed,
        "every malformed ticket is reported by key"
    );
    assert_eq!(report.this_run.failed, malformed.len() as u64);
    assert_eq!(report.this_run.backfilled, readable, "{report}");
}

/// A guarded append's pointer that another tool wrote with the wrong type.
#[tokio::test]
async fn a_malformed_append_pointer_is_a_typed_error() {
    #[derive(Table)]
    #[dynamo(name = "history", pk = "PK", sk = "SK")]
    struct Histories;
    #[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
    #[dynamo(table = Histories, pk = "DOC#{doc}", sk = "AT#{at}")]
    struct Entry {
        doc: String,
        at: u64,
    }
    let db = singletable::testing::table::<Histories>().await.unwrap();
    db.client()
        .put_item()
        .table_name(db.table_name())
        .item("PK", s("DOC#a"))
        .item("SK", s("Entry#LATEST"))
        .item("latest", s("not a number"))
        .send()
        .await
        .unwrap();
    let entry = Entry {
        doc: "a".into(),
        at: 5,
    };
    let outcome = AssertUnwindSafe(db.append(&entry, Entry::AT).send())
        .catch_unwind()
        .await;
    match outcome {
        Ok(Err(error)) => eprintln!("[bad input] malformed pointer: {error}"),
        other => panic!("expected a typed error, got {other:?}"),
    }
}

#[test]
fn limits_are_checked_before_sending() {
    let db = offline();
    // Items above 400 KB.
    let mut huge = ticket("huge");
    huge.title = "x".repeat(400 * 1024);
    match db.put(&huge).params() {
        Err(Error::Limit(LimitError::ItemSize { size, max, key })) => {
            assert!(size > max && max == 400 * 1024);
            assert_eq!(key.partition.1, "TICKET#huge");
        }
        other => panic!("expected an item size error, got {other:?}"),
    }
    assert!(matches!(
        db.batch_write().put(&huge).params(),
        Err(Error::Limit(_))
    ));
    assert!(matches!(
        db.transaction().with(db.put(&huge)).params(),
        Err(Error::Transaction(TransactionError::Operation {
            position: 0,
            ..
        }))
    ));
    // Just under the limit is fine.
    let mut big = ticket("big");
    big.title = "x".repeat(399 * 1024);
    db.put(&big).params().unwrap();

    // Key attributes: 2048 bytes of partition key, 1024 of sort key.
    let long_id = "x".repeat(2048);
    match Ticket::key(&long_id) {
        Err(KeyError::TooLong {
            size,
            max: 2048,
            role: "partition",
            ..
        }) => assert_eq!(size, 2048 + 7),
        other => panic!("expected a partition key size error, got {other:?}"),
    }
    assert!(matches!(
        db.put(&ticket(&long_id)).params(),
        Err(Error::Key(KeyError::TooLong { .. }))
    ));
    assert!(
        Ticket::key("x".repeat(2041)).is_ok(),
        "exactly 2048 bytes is allowed"
    );
    match Note::key("é".repeat(513)) {
        Err(KeyError::TooLong {
            size: 1026,
            max: 1024,
            role: "sort",
            ..
        }) => {}
        other => panic!("expected a sort key size error, got {other:?}"),
    }
    assert!(Note::key("é".repeat(512)).is_ok());

    // 100 operations per transaction.
    let mut transaction = db.transaction();
    for n in 0..101 {
        transaction = transaction.with(db.put(&ticket(&n.to_string())));
    }
    assert!(matches!(
        transaction.params(),
        Err(Error::Transaction(TransactionError::TooMany {
            count: 101,
            max: 100
        }))
    ));
    let mut get = db.transact_get();
    for n in 0..101 {
        get.get(Ticket::key(n.to_string()).unwrap());
    }
    let sent = futures::executor::block_on(get.send());
    assert!(
        matches!(
            sent,
            Err(Error::Transaction(TransactionError::TooMany {
                count: 101,
                ..
            }))
        ),
        "refused before sending (the offline client would fail otherwise): {sent:?}"
    );
}

/// Index key attributes have the same size limits as the table's.
#[test]
fn index_key_sizes_are_checked_before_sending() {
    let db = offline();
    // The table key is 1507 bytes (fine), GSI1SK `TICKET#{id}` too, above 1024.
    let result = db.put(&ticket(&"x".repeat(1500))).params();
    assert!(
        matches!(result, Err(Error::Key(KeyError::TooLong { .. }))),
        "{result:?}"
    );
}

/// DynamoDB refuses expressions above 4 KB and `IN` lists above 100 operands; an update's
/// values alone can exceed the 400 KB item limit.
#[test]
fn expression_limits_are_checked_before_sending() {
    let db = offline();
    let mut accepted = Vec::new();
    let titles: Vec<String> = (0..150).map(|n| format!("title number {n}")).collect();
    let filter = db
        .query(Ticket::gsi1(7))
        .filter(Ticket::TITLE.is_in(&titles))
        .params();
    if filter.is_ok() {
        accepted.push("a filter with an IN of 150 operands".to_owned());
    }
    let mut condition = Ticket::TITLE.eq("a".to_owned());
    for n in 0..400 {
        condition = condition.or(Ticket::TITLE.eq(n.to_string()));
    }
    if let Ok(request) = db.put(&ticket("1")).condition(condition).params() {
        let length = request.body["ConditionExpression"]
            .as_str()
            .map_or(0, str::len);
        accepted.push(format!("a {length}-byte condition expression"));
    }
    let update = db
        .update(Ticket::key("1").unwrap())
        .set(Ticket::TITLE, "x".repeat(500 * 1024))
        .params();
    if update.is_ok() {
        accepted.push("an update that SETs 500 KB".to_owned());
    }
    assert!(accepted.is_empty(), "accepted before sending: {accepted:?}");
}
