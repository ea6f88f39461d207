//! The seed's help-desk table, shared by the integration tests.
#![allow(dead_code)]

pub mod spans;

use serde::{Deserialize, Serialize};
use singletable::local::Engine;
use singletable::{Entity, KeyPart, Table};
use std::io::Write;

#[derive(Table)]
#[dynamo(
    name = "app",
    pk = "PK",
    sk = "SK",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
pub struct App;

#[derive(KeyPart, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Open,
    Pending,
    Closed,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "TICKET#{id}", sk = "TICKET",
         gsi1pk = "TEAM#{team_id}", gsi1sk = "STATUS#{status}#TICKET#{id}",
         gsi1_when = Ticket::is_open(status))]
pub struct Ticket {
    pub id: String,
    pub team_id: u32,
    pub status: Status,
    pub title: String,
}

impl Ticket {
    pub fn is_open(status: &Status) -> bool {
        *status != Status::Closed
    }

    pub fn new(id: &str, team_id: u32, status: Status, title: &str) -> Self {
        Ticket {
            id: id.to_owned(),
            team_id,
            status,
            title: title.to_owned(),
        }
    }
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "TEAM#{id}", sk = "TEAM")]
pub struct Team {
    pub id: u32,
    pub name: String,
}

/// What a test waits on or goes through that DynamoDB gives only eventually, or that only a
/// local endpoint allows. The engines act within the request (or have no such wait), so on
/// them every test runs; on AWS, a test that needs one of these skips, naming itself and why
/// (see [`skips`]). docs/production.md lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Waits for time to live to delete an expired item: DynamoDB does so "typically within
    /// two days of expiration" (UpdateTimeToLive, API reference).
    TtlDeletion,
    /// Waits, within the test's bound, for a table change to finish: a new global index's
    /// backfill, or time to live being enabled. On DynamoDB these take minutes to an hour.
    TableChange,
    /// Reads a global secondary index right after writing and asserts on what it sees. The
    /// engines update indexes within the write; DynamoDB propagates them eventually, and a
    /// global index takes no consistent reads.
    IndexReadAfterWrite,
    /// Goes through `singletable-fault`'s proxy, which forwards plain HTTP to a local
    /// endpoint; AWS takes HTTPS, signed for its own host.
    FaultProxy,
}

impl Needs {
    fn why(self) -> &'static str {
        match self {
            Needs::TtlDeletion => "it waits for a time-to-live deletion, which DynamoDB makes within about two days",
            Needs::TableChange => "it waits for an index backfill or a time-to-live change, which take minutes to an hour on DynamoDB",
            Needs::IndexReadAfterWrite => "it reads a global index right after writing, which DynamoDB updates eventually",
            Needs::FaultProxy => "it goes through the fault proxy, which needs a plain http:// endpoint",
        }
    }

    /// Whether `engine` (with `endpoint`, the value of `AWS_ENDPOINT_URL_DYNAMODB`) lacks it.
    fn missing_on(self, engine: Engine, endpoint: Option<&str>) -> bool {
        match self {
            Needs::FaultProxy => {
                engine == Engine::Aws
                    || endpoint.is_some_and(|endpoint| !endpoint.trim().starts_with("http://"))
            }
            Needs::TtlDeletion | Needs::TableChange | Needs::IndexReadAfterWrite => {
                engine == Engine::Aws
            }
        }
    }
}

/// Whether the running test skips on the engine the environment chooses, for lack of `needs`;
/// when it does, it says so on standard error by the test's name (libtest names each test's
/// thread after it), uncaptured, so a run against AWS lists every test it did not run and why.
pub fn skips(needs: Needs) -> bool {
    let engine = match Engine::from_env() {
        Ok(engine) => engine,
        Err(error) => panic!("{error}"),
    };
    let endpoint = std::env::var("AWS_ENDPOINT_URL_DYNAMODB").ok();
    if !needs.missing_on(
        engine,
        endpoint.as_deref().filter(|value| !value.trim().is_empty()),
    ) {
        return false;
    }
    let thread = std::thread::current();
    let test = thread
        .name()
        .filter(|name| *name != "main")
        .unwrap_or("this test");
    // Written to the handle, not through `eprintln!`, which libtest captures and shows only
    // for failing tests: a skip is shown in every run.
    let _ = writeln!(
        std::io::stderr(),
        "skipped on {engine}: {test}, because {}",
        needs.why()
    );
    true
}

pub async fn db() -> singletable::testing::TestTable<App> {
    match singletable::testing::table::<App>().await {
        Ok(db) => db,
        Err(error) => panic!("test table: {error}"),
    }
}

/// A handle whose requests are only built, never sent: for `params()`/`explain()` snapshots.
pub fn offline<T: singletable::Table>() -> singletable::Db<T> {
    let client = aws_sdk_dynamodb::Client::from_conf(
        aws_sdk_dynamodb::Config::builder()
            .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
            .build(),
    );
    singletable::Db::new(client)
}

/// Every item in `db`'s table, raw, read consistently: what tests judge a run against.
pub async fn raw_items<T: singletable::Table>(db: &singletable::Db<T>) -> Vec<singletable::Item> {
    let mut items = Vec::new();
    let mut start = None;
    loop {
        let page = db
            .client()
            .scan()
            .table_name(db.table_name())
            .consistent_read(true)
            .set_exclusive_start_key(start)
            .send()
            .await
            .unwrap();
        items.extend(page.items.unwrap_or_default());
        start = page.last_evaluated_key;
        if start.is_none() {
            return items;
        }
    }
}

/// `count` comments (`COMMENT#{id}`/`COMMENT`, an `author` of `a0` to `a{authors - 1}`) as
/// version 1 of an entity wrote them: no index keys, schema version 1, written raw.
pub async fn old_comments<T: singletable::Table>(
    db: &singletable::Db<T>,
    count: u32,
    authors: u32,
) {
    use aws_sdk_dynamodb::types::AttributeValue;
    for id in 0..count {
        let item = singletable::Item::from([
            ("PK".into(), AttributeValue::S(format!("COMMENT#{id:010}"))),
            ("SK".into(), AttributeValue::S("COMMENT".into())),
            ("_type".into(), AttributeValue::S("Comment".into())),
            ("_sv".into(), AttributeValue::N("1".into())),
            ("id".into(), AttributeValue::N(id.to_string())),
            (
                "author".into(),
                AttributeValue::S(format!("a{}", id % authors)),
            ),
        ]);
        singletable::testing::put_raw(db, item).await.unwrap();
    }
}

/// Captured output, for the command line's `run_with`.
#[derive(Clone, Default)]
pub struct Buffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Buffer {
    /// What was written, as text.
    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

/// Runs the command line (`program` and `args`) over `db` with `entities`: its exit code, and
/// what it wrote to stdout and stderr.
#[cfg(feature = "cli")]
pub async fn run_cli<T: singletable::Table>(
    db: &singletable::Db<T>,
    entities: singletable::cli::Entities<T>,
    program: &str,
    args: &[&str],
) -> (u8, String, String) {
    let (out, err) = (Buffer::default(), Buffer::default());
    let code = singletable::cli::run_with(
        db.clone(),
        entities,
        std::iter::once(program).chain(args.iter().copied()),
        Box::new(out.clone()),
        Box::new(err.clone()),
        false,
    )
    .await;
    (code, out.text(), err.text())
}
