//! The abstraction's cost: each operation built by singletable's generated code and by the
//! hand-written `aws-sdk-dynamodb` + `serde_dynamo` code a careful user would write instead,
//! producing the identical SDK input (asserted once before measuring).
//!
//! Operations are measured up to the point where the SDK has the operation input and is
//! about to serialize it: both clients carry an interceptor that stops every operation in
//! `read_before_execution`. The library has no public hook that returns its SDK input
//! without sending, so this is the only way to observe what `send()` builds. Stopping there
//! leaves a fixed SDK cost (runtime plugins, config bag, the error) in both sides; the
//! `sdk_floor` benches of each group measure it on an input with only a table name (with the
//! SDK error converted as each side converts it), so the construction work alone is
//! `x - floor`. Item conversion is measured directly through `singletable::item::{encode,
//! decode}`.
//!
//! Run with `cargo bench --bench operations`. After criterion's benches it prints the ratios
//! measured interleaved (`-- paired` runs only those), which hold up on a machine shared with
//! other work; `python3 benches/ratios.py` prints ratios from criterion's own estimates, which
//! need a quiet machine.

use aws_sdk_dynamodb::config::interceptors::BeforeSerializationInterceptorContextRef;
use aws_sdk_dynamodb::config::{BehaviorVersion, ConfigBag, Credentials, Intercept, Region};
use aws_sdk_dynamodb::error::BoxError;
use aws_sdk_dynamodb::operation::put_item::PutItemInput;
use aws_sdk_dynamodb::operation::query::QueryInput;
use aws_sdk_dynamodb::operation::update_item::UpdateItemInput;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue, ReturnValuesOnConditionCheckFailure};
use aws_sdk_dynamodb::Client;
use criterion::{criterion_group, BatchSize, Criterion};
use futures::executor::block_on;
use serde::{Deserialize, Serialize};
use singletable::item::Item;
use singletable::{Db, Entity, KeyPart, Table};
use std::collections::HashMap;
use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Table)]
#[dynamo(
    name = "app",
    pk = "PK",
    sk = "SK",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
    gsi2(name = "GSI2", pk = "GSI2PK", sk = "GSI2SK")
)]
pub struct App;

#[derive(KeyPart, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Open,
    Pending,
    Closed,
}

impl Status {
    /// The text serde (and so the key) uses; what hand-written code spells out.
    fn as_str(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::Pending => "pending",
            Status::Closed => "closed",
        }
    }
}

/// Ten fields, two GSIs, one of them sparse: the team queue only holds tickets not closed.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "TICKET#{id}", sk = "TICKET",
         gsi1pk = "TEAM#{team_id}", gsi1sk = "STATUS#{status}#TICKET#{id}",
         gsi1_when = Ticket::is_open(status),
         gsi2pk = "USER#{assignee}", gsi2sk = "PRIORITY#{priority}#TICKET#{id}")]
pub struct Ticket {
    pub id: String,
    pub team_id: u32,
    pub status: Status,
    pub title: String,
    pub assignee: String,
    pub priority: u8,
    pub created_at: i64,
    pub description: String,
    pub tags: Vec<String>,
    /// Left out when `None`, as the library stores it, so that the hand-written side (plain
    /// `serde_dynamo`, which writes `NULL`) sends the same item.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate_hours: Option<f64>,
}

impl Ticket {
    pub fn is_open(status: &Status) -> bool {
        *status != Status::Closed
    }

    fn sample(n: usize) -> Self {
        Ticket {
            id: format!("{}", 8842 + n),
            team_id: 7 + (n % 3) as u32,
            status: [Status::Open, Status::Pending, Status::Closed][n % 3],
            title: format!("Printer on floor {n} is out of toner"),
            assignee: format!("user-{}", n % 11),
            priority: (n % 5) as u8,
            created_at: 1_767_225_600 + n as i64 * 60,
            description: "The printer by the kitchen shows a toner warning and prints blank pages."
                .to_owned(),
            tags: vec!["hardware".to_owned(), format!("floor-{n}")],
            estimate_hours: n.is_multiple_of(2).then_some(1.5),
        }
    }
}

const TABLE: &str = "app";

/// Stops each operation before serialization, keeping a copy of its input when capturing.
#[derive(Debug, Clone, Default)]
struct StopBeforeSerialization {
    captured: Option<Arc<Mutex<Vec<Captured>>>>,
}

#[derive(Debug, Clone, PartialEq)]
enum Captured {
    Put(PutItemInput),
    Update(UpdateItemInput),
    Query(QueryInput),
}

impl Intercept for StopBeforeSerialization {
    fn name(&self) -> &'static str {
        "StopBeforeSerialization"
    }

    fn read_before_execution(
        &self,
        context: &BeforeSerializationInterceptorContextRef<'_>,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let Some(captured) = &self.captured {
            let input = context.input();
            let copy = if let Some(put) = input.downcast_ref::<PutItemInput>() {
                Captured::Put(put.clone())
            } else if let Some(update) = input.downcast_ref::<UpdateItemInput>() {
                Captured::Update(update.clone())
            } else if let Some(query) = input.downcast_ref::<QueryInput>() {
                Captured::Query(query.clone())
            } else {
                return Err("unexpected operation".into());
            };
            captured.lock().unwrap().push(copy);
        }
        Err("stopped before serialization (benchmark)".into())
    }
}

fn client(interceptor: StopBeforeSerialization) -> Client {
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("bench", "bench", None, None, "bench"))
        .interceptor(interceptor)
        .build();
    Client::from_conf(config)
}

fn s(text: impl Into<String>) -> AttributeValue {
    AttributeValue::S(text.into())
}

// --- Hand-written baseline -------------------------------------------------------------

/// The item as hand-written code builds it: serde fields, keys formatted inline (integers
/// zero-padded so they sort), the sparse index left out for closed tickets, the type tag and
/// the schema version.
fn hand_item(ticket: &Ticket) -> Item {
    let mut item: Item = serde_dynamo::to_item(ticket).unwrap();
    item.insert("PK".to_owned(), s(format!("TICKET#{}", ticket.id)));
    item.insert("SK".to_owned(), s("TICKET"));
    item.insert("_type".to_owned(), s("Ticket"));
    item.insert("_sv".to_owned(), AttributeValue::N("1".to_owned()));
    if ticket.status != Status::Closed {
        item.insert(
            "GSI1PK".to_owned(),
            s(format!("TEAM#{:010}", ticket.team_id)),
        );
        item.insert(
            "GSI1SK".to_owned(),
            s(format!(
                "STATUS#{}#TICKET#{}",
                ticket.status.as_str(),
                ticket.id
            )),
        );
    }
    item.insert("GSI2PK".to_owned(), s(format!("USER#{}", ticket.assignee)));
    item.insert(
        "GSI2SK".to_owned(),
        s(format!(
            "PRIORITY#{:03}#TICKET#{}",
            ticket.priority, ticket.id
        )),
    );
    item
}

async fn hand_put(client: &Client, ticket: &Ticket) -> Result<(), BoxError> {
    client
        .put_item()
        .table_name(TABLE)
        .set_item(Some(hand_item(ticket)))
        .send()
        .await?;
    Ok(())
}

/// The status change with the GSI1 sort key (or, on close, its removal) in the same request.
async fn hand_status_update(
    client: &Client,
    id: &str,
    team_id: u32,
    status: Status,
) -> Result<(), BoxError> {
    let mut request = client
        .update_item()
        .table_name(TABLE)
        .key("PK", s(format!("TICKET#{id}")))
        .key("SK", s("TICKET"))
        .expression_attribute_names("#n0", "status")
        .expression_attribute_names("#n1", "GSI1PK")
        .expression_attribute_names("#n2", "GSI1SK")
        .expression_attribute_values(":v0", s(status.as_str()));
    let (update, team) = if status == Status::Closed {
        ("SET #n0 = :v0 REMOVE #n1, #n2", ":v1")
    } else {
        request = request
            .expression_attribute_values(":v1", s(format!("TEAM#{team_id:010}")))
            .expression_attribute_values(
                ":v2",
                s(format!("STATUS#{}#TICKET#{id}", status.as_str())),
            );
        ("SET #n0 = :v0, #n1 = :v1, #n2 = :v2", ":v3")
    };
    request
        .update_expression(update)
        .condition_expression(format!("attribute_exists(#n3) AND #n4 = {team}"))
        .expression_attribute_names("#n3", "PK")
        .expression_attribute_names("#n4", "team_id")
        .expression_attribute_values(team, AttributeValue::N(team_id.to_string()))
        .return_values(ReturnValue::AllNew)
        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
        .send()
        .await?;
    Ok(())
}

/// A team's tickets in one status, from a priority up: `begins_with` on GSI1 and a filter.
async fn hand_query(
    client: &Client,
    team_id: u32,
    status: Status,
    min_priority: u8,
) -> Result<(), BoxError> {
    client
        .query()
        .table_name(TABLE)
        .index_name("GSI1")
        .key_condition_expression("#n0 = :v0 AND begins_with(#n1, :v1)")
        .filter_expression(
            "(#n2 = :v2 OR attribute_not_exists(#n2) OR NOT attribute_type(#n2, :v3)) AND #n3 >= :v4",
        )
        .expression_attribute_names("#n0", "GSI1PK")
        .expression_attribute_names("#n1", "GSI1SK")
        .expression_attribute_names("#n2", "_type")
        .expression_attribute_names("#n3", "priority")
        .expression_attribute_values(":v0", s(format!("TEAM#{team_id:010}")))
        .expression_attribute_values(":v1", s(format!("STATUS#{}#TICKET#", status.as_str())))
        .expression_attribute_values(":v2", s("Ticket"))
        .expression_attribute_values(":v3", s("S"))
        .expression_attribute_values(":v4", AttributeValue::N(min_priority.to_string()))
        .send()
        .await?;
    Ok(())
}

fn hand_decode(page: Vec<Item>) -> Vec<Ticket> {
    page.into_iter()
        .map(|item| serde_dynamo::from_item(item).unwrap())
        .collect()
}

// --- Generated code ----------------------------------------------------------------------

async fn lib_put(db: &Db<App>, ticket: &Ticket) -> Result<(), singletable::Error> {
    db.put(ticket).send().await
}

async fn lib_status_update(
    db: &Db<App>,
    id: &str,
    team_id: u32,
    status: Status,
) -> Result<Ticket, singletable::Error> {
    db.update(Ticket::key(id)?)
        .set(Ticket::STATUS, status)
        .given(Ticket::TEAM_ID, team_id)
        .send()
        .await
}

async fn lib_query(
    db: &Db<App>,
    team_id: u32,
    status: Status,
    min_priority: u8,
) -> Result<(), singletable::Error> {
    db.query(Ticket::gsi1(team_id))
        .sort(Ticket::STATUS, status)
        .filter(Ticket::PRIORITY.ge(min_priority))
        .page(None)
        .await?;
    Ok(())
}

fn lib_decode(page: Vec<Item>) -> Vec<Ticket> {
    page.into_iter()
        .map(|item| singletable::item::decode(item).unwrap())
        .collect()
}

// --- Setup: both sides build the same request ----------------------------------------------

fn page_of(count: usize) -> Vec<Item> {
    (0..count)
        .map(|n| singletable::item::encode(&Ticket::sample(n)).unwrap())
        .collect()
}

/// Runs each operation once per side on a capturing client and compares the SDK inputs, so
/// the benches below compare equal work.
fn assert_identical_requests() {
    let captured = Arc::new(Mutex::new(Vec::new()));
    let client = client(StopBeforeSerialization {
        captured: Some(captured.clone()),
    });
    let db = Db::<App>::new(client.clone());
    let take = || std::mem::take(&mut *captured.lock().unwrap());
    let compare = |what: &str, library: Vec<Captured>, hand: Vec<Captured>| {
        assert_eq!(library.len(), 1, "{what}: one request");
        assert_eq!(library, hand, "{what}: the same SDK input");
    };

    for n in 0..3 {
        let ticket = Ticket::sample(n);
        assert!(block_on(lib_put(&db, &ticket)).is_err());
        let library = take();
        assert!(block_on(hand_put(&client, &ticket)).is_err());
        compare("put", library, take());
        assert_eq!(
            singletable::item::encode(&ticket).unwrap(),
            hand_item(&ticket)
        );
    }
    for status in [Status::Pending, Status::Closed] {
        assert!(block_on(lib_status_update(&db, "8842", 7, status)).is_err());
        let library = take();
        assert!(block_on(hand_status_update(&client, "8842", 7, status)).is_err());
        compare("status update", library, take());
    }
    assert!(block_on(lib_query(&db, 7, Status::Open, 3)).is_err());
    let library = take();
    assert!(block_on(hand_query(&client, 7, Status::Open, 3)).is_err());
    compare("query", library, take());
    let page = page_of(100);
    assert_eq!(lib_decode(page.clone()), hand_decode(page));
}

// --- Benches -------------------------------------------------------------------------------

/// One stopped request with only a table name, its SDK error converted into `$error` as each
/// side converts it: `?` into a `BoxError` (hand-written) or `singletable::Error` (library).
macro_rules! floor {
    ($client:expr, $operation:ident, $error:ty) => {
        block_on(async {
            $client.$operation().table_name(TABLE).send().await?;
            Ok::<(), $error>(())
        })
    };
}

/// The fixed SDK cost of a stopped operation, with each side's error conversion.
macro_rules! floors {
    ($group:expr, $client:expr, $operation:ident) => {{
        let client = $client;
        $group.bench_function("sdk_floor", |b| {
            b.iter(|| floor!(client, $operation, BoxError))
        });
        $group.bench_function("sdk_floor_singletable_error", |b| {
            b.iter(|| floor!(client, $operation, singletable::Error))
        });
    }};
}

fn operations(c: &mut Criterion) {
    assert_identical_requests();
    let client = client(StopBeforeSerialization::default());
    let db = Db::<App>::new(client.clone());
    let ticket = Ticket::sample(1);

    let mut group = c.benchmark_group("put_item_encode");
    group.bench_function("singletable", |b| {
        b.iter(|| singletable::item::encode(black_box(&ticket)))
    });
    group.bench_function("hand_written", |b| b.iter(|| hand_item(black_box(&ticket))));
    group.finish();

    let mut group = c.benchmark_group("put");
    group.bench_function("singletable", |b| {
        b.iter(|| block_on(lib_put(&db, black_box(&ticket))))
    });
    group.bench_function("hand_written", |b| {
        b.iter(|| block_on(hand_put(&client, black_box(&ticket))))
    });
    floors!(group, &client, put_item);
    group.finish();

    let mut group = c.benchmark_group("status_update");
    group.bench_function("singletable", |b| {
        b.iter(|| {
            block_on(lib_status_update(
                &db,
                black_box("8842"),
                7,
                Status::Pending,
            ))
        })
    });
    group.bench_function("hand_written", |b| {
        b.iter(|| {
            block_on(hand_status_update(
                &client,
                black_box("8842"),
                7,
                Status::Pending,
            ))
        })
    });
    floors!(group, &client, update_item);
    group.finish();

    let mut group = c.benchmark_group("query");
    group.bench_function("singletable", |b| {
        b.iter(|| block_on(lib_query(&db, black_box(7), Status::Open, 3)))
    });
    group.bench_function("hand_written", |b| {
        b.iter(|| block_on(hand_query(&client, black_box(7), Status::Open, 3)))
    });
    floors!(group, &client, query);
    group.finish();

    let page = page_of(100);
    let mut group = c.benchmark_group("decode_page_100");
    group.bench_function("singletable", |b| {
        b.iter_batched(|| page.clone(), lib_decode, BatchSize::SmallInput)
    });
    group.bench_function("hand_written", |b| {
        b.iter_batched(|| page.clone(), hand_decode, BatchSize::SmallInput)
    });
    group.finish();
}

/// Pieces of the library's work, through its public API, to explain the differences above.
fn breakdown(c: &mut Criterion) {
    // The expression trees are internal; a bench of their rendering reaches them as the
    // derives do.
    use singletable::__private::expr::{
        self, Action, AttrPath, Node, Operand, Placeholders, SetValue,
    };
    use singletable::expr::Comparison;

    let ticket = Ticket::sample(1);
    let item = singletable::item::encode(&ticket).unwrap();
    let mut group = c.benchmark_group("breakdown");
    // `encode` checks DynamoDB's 400 KB item limit before sending.
    group.bench_function("item_size", |b| {
        b.iter(|| singletable::item::item_size(black_box(&item)))
    });
    // `params()` and `explain()` prepare from a copy of the encoded item (`send` moves it).
    group.bench_function("item_clone", |b| b.iter(|| black_box(&item).clone()));
    // The key text a put keeps for error messages.
    group.bench_function("key_text", |b| {
        b.iter(|| singletable::item::key_text::<App>(black_box(&item)))
    });
    group.bench_function("key_render", |b| {
        b.iter(|| Ticket::key(black_box("8842")).unwrap().to_attributes())
    });
    group.bench_function("key_format", |b| {
        b.iter(|| {
            HashMap::from([
                ("PK".to_owned(), s(format!("TICKET#{}", black_box("8842")))),
                ("SK".to_owned(), s("TICKET")),
            ])
        })
    });
    // The status update's expressions and placeholder maps rendered from scratch: what the
    // first request of a shape costs on a thread (later ones reuse its text and names and only
    // place their values).
    let value = |text: &str| SetValue::Value(s(text));
    group.bench_function("update_expressions", |b| {
        b.iter(|| {
            let actions = [
                Action::Set(AttrPath::attribute("status"), value("pending")),
                Action::Set(AttrPath::attribute("GSI1PK"), value("TEAM#0000000007")),
                Action::Set(
                    AttrPath::attribute("GSI1SK"),
                    value("STATUS#pending#TICKET#8842"),
                ),
            ];
            let mut placeholders = Placeholders::default();
            let update = expr::render(black_box(actions.to_vec()), &mut placeholders);
            let condition = Node::And(
                Box::new(Node::Exists(AttrPath::attribute("PK"))),
                Box::new(Node::Compare(
                    Operand::Path(AttrPath::attribute("team_id")),
                    Comparison::Eq,
                    Operand::Value(AttributeValue::N("7".to_owned())),
                )),
            )
            .to_expression(&mut placeholders);
            (
                update,
                condition,
                placeholders.names(),
                placeholders.values(),
            )
        })
    });
    group.finish();
}

// --- Paired ratios -------------------------------------------------------------------------

/// One side of a comparison: runs `n` calls and returns the time they took (setup excluded).
type Subject<'a> = Box<dyn FnMut(u32) -> Duration + 'a>;

/// Times `rounds` rounds of `batch` calls of each subject, one subject after the other in an
/// order that rotates every round, so that load from other processes on a shared machine falls
/// on every subject alike; returns the per-round times of each subject.
fn interleaved(subjects: &mut [Subject<'_>], batch: u32, rounds: usize) -> Vec<Vec<f64>> {
    let mut times = vec![Vec::with_capacity(rounds); subjects.len()];
    for round in 0..rounds {
        for offset in 0..subjects.len() {
            let index = (round + offset) % subjects.len();
            times[index].push(subjects[index](batch).as_secs_f64());
        }
    }
    times
}

/// The median and quartiles of `values`.
fn quartiles(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
    (at(0.25), at(0.5), at(0.75))
}

fn report(name: &str, what: &str, ratios: Vec<f64>) {
    let (low, median, high) = quartiles(ratios);
    println!("{name:<16} {what:<34} {median:.2}  (quartiles {low:.2}..{high:.2})");
}

/// Generated / hand-written, per round: whole operation, and construction alone (each side
/// less its own SDK floor) when floors are given as subjects 2 and 3. Also prints each
/// subject's median time per call, in the order given.
fn compare(name: &str, mut subjects: Vec<Subject<'_>>, batch: u32) {
    let times = interleaved(&mut subjects, batch, 301);
    let per_call: Vec<String> = times
        .iter()
        .map(|rounds| {
            let (_, median, _) = quartiles(rounds.clone());
            format!("{:.2} µs", median * 1e6 / f64::from(batch))
        })
        .collect();
    println!("{name:<16} per call: {}", per_call.join(" / "));
    let per_round = |f: &dyn Fn(usize) -> f64| (0..times[0].len()).map(f).collect::<Vec<_>>();
    report(
        name,
        "generated / hand-written",
        per_round(&|r| times[0][r] / times[1][r]),
    );
    if times.len() == 4 {
        report(
            name,
            "  construction only (less floors)",
            per_round(&|r| (times[0][r] - times[2][r]) / (times[1][r] - times[3][r])),
        );
    }
}

/// Runs `call` `n` times and returns how long that took.
fn timed<R>(mut call: impl FnMut() -> R) -> impl FnMut(u32) -> Duration {
    move |n| {
        let start = Instant::now();
        for _ in 0..n {
            black_box(call());
        }
        start.elapsed()
    }
}

/// Decodes `n` fresh copies of `page` with `decode`, timing the decoding only.
fn timed_decode<'a>(page: &'a [Item], decode: fn(Vec<Item>) -> Vec<Ticket>) -> Subject<'a> {
    Box::new(move |n| {
        let copies: Vec<Vec<Item>> = (0..n).map(|_| page.to_vec()).collect();
        let start = Instant::now();
        for copy in copies {
            black_box(decode(copy));
        }
        start.elapsed()
    })
}

/// The ratios, measured interleaved (criterion measures one bench after another, so a burst
/// of load during one of them skews a ratio of two criterion results).
fn paired_ratios() {
    let client = client(StopBeforeSerialization::default());
    let db = Db::<App>::new(client.clone());
    let ticket = Ticket::sample(1);
    let page = page_of(100);
    println!(
        "\nPaired ratios (median of 301 interleaved rounds); per call: singletable / hand-written"
    );
    println!("[/ SDK floor with singletable::Error / SDK floor with BoxError]:");
    compare(
        "put_item_encode",
        vec![
            Box::new(timed(|| singletable::item::encode(&ticket))),
            Box::new(timed(|| hand_item(&ticket))),
        ],
        200,
    );
    compare(
        "put",
        vec![
            Box::new(timed(|| block_on(lib_put(&db, &ticket)))),
            Box::new(timed(|| block_on(hand_put(&client, &ticket)))),
            Box::new(timed(|| floor!(client, put_item, singletable::Error))),
            Box::new(timed(|| floor!(client, put_item, BoxError))),
        ],
        50,
    );
    compare(
        "status_update",
        vec![
            Box::new(timed(|| {
                block_on(lib_status_update(&db, "8842", 7, Status::Pending))
            })),
            Box::new(timed(|| {
                block_on(hand_status_update(&client, "8842", 7, Status::Pending))
            })),
            Box::new(timed(|| floor!(client, update_item, singletable::Error))),
            Box::new(timed(|| floor!(client, update_item, BoxError))),
        ],
        50,
    );
    compare(
        "query",
        vec![
            Box::new(timed(|| block_on(lib_query(&db, 7, Status::Open, 3)))),
            Box::new(timed(|| block_on(hand_query(&client, 7, Status::Open, 3)))),
            Box::new(timed(|| floor!(client, query, singletable::Error))),
            Box::new(timed(|| floor!(client, query, BoxError))),
        ],
        50,
    );
    compare(
        "decode_page_100",
        vec![
            timed_decode(&page, lib_decode),
            timed_decode(&page, hand_decode),
        ],
        3,
    );
}

criterion_group!(benches, operations, breakdown);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // Only under `cargo bench` (criterion's own test mode, `cargo test --benches`, runs each
    // bench once and has no `--bench` argument), and not with `NO_PAIRED` set, so that a
    // profiler run of one bench (`--profile-time`) sees that bench alone.
    if std::env::args().any(|argument| argument == "--bench")
        && std::env::var_os("NO_PAIRED").is_none()
    {
        paired_ratios();
    }
}
