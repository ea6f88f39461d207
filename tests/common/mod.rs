//! The seed's help-desk table, shared by the integration tests.
#![allow(dead_code)]

use serde::{Deserialize, Serialize};
use singletable::{Entity, KeyPart, Table};

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
