//! Every request the library sends is inside a span that counts it: for each DynamoDB
//! operation, the requests that reached the server (recorded by the fault proxy) are as many
//! as the attempts its spans recorded. The operations here are the library's own reads as
//! well as the user's: an update's read of what it wrote, a lookup by unique value, an
//! append's pointer, a lazy backfill's read, a migration's coverage scan and marker, and a
//! distributed sweep's status.
mod common;
use common::spans::{field, Capture};
use common::Needs;

use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, Table};
use singletable_fault::{self as fault, FaultPlan};
use std::collections::BTreeMap;
use tracing_subscriber::layer::SubscriberExt;

#[derive(Table)]
#[dynamo(name = "request_spans", pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "USER#{id}", sk = "USER")]
struct User {
    id: String,
    #[dynamo(unique)]
    email: String,
    name: String,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "PRODUCT#{product}", sk = "RELEASE#{number}")]
struct Release {
    product: String,
    number: u64,
}

#[tokio::test]
async fn every_request_is_counted_in_a_span() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let table = singletable::testing::table::<App>().await.unwrap();
    let plan = FaultPlan::new(1, 0.0).recording();
    let (client, stats) = fault::client(plan).await.unwrap();
    let db = Db::<App>::new(client).with_table_name(table.table_name());

    let capture = Capture::default();
    let _subscriber =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));

    let ana = User {
        id: "u1".into(),
        email: "ana@example.com".into(),
        name: "Ana".into(),
    };
    db.put(&ana).send().await.unwrap();
    let updated = db
        .update(User::key("u1").unwrap())
        .set(User::EMAIL, "ana@example.org".to_owned())
        .send()
        .await
        .unwrap();
    assert_eq!(updated.email, "ana@example.org");
    assert_eq!(
        db.get(User::key("u1").unwrap()).send().await.unwrap(),
        updated
    );
    let read = db.get_and_backfill(User::key("u1").unwrap()).await.unwrap();
    assert_eq!(read, updated);
    let listed = db.query(User::partition("u1")).all().await.unwrap();
    assert_eq!(listed, std::slice::from_ref(&updated));
    assert_eq!(db.query(User::partition("u1")).count().await.unwrap(), 1);
    let owner = db
        .get_by_unique(User::EMAIL, "ana@example.org")
        .await
        .unwrap();
    assert_eq!(owner, updated);
    let batch = db
        .batch_get([User::key("u1").unwrap()])
        .send()
        .await
        .unwrap();
    assert_eq!(batch.items, std::slice::from_ref(&updated));
    let mut transact = db.transact_get();
    let slot = transact.get(User::key("u1").unwrap());
    let mut read = transact.send().await.unwrap();
    assert_eq!(read.take(&slot).unwrap(), Some(updated.clone()));
    let scanned = db.scan::<User>().all().await.unwrap();
    assert_eq!(scanned, std::slice::from_ref(&updated));

    for number in [1, 2] {
        let release = Release {
            product: "p1".into(),
            number,
        };
        db.append(&release, Release::NUMBER).send().await.unwrap();
    }
    let latest = db
        .latest(Release::partition("p1"), Release::NUMBER)
        .await
        .unwrap();
    assert_eq!(latest, Some(2));

    let coverage = db.admin().coverage(User::SCHEMA).send().await.unwrap();
    assert_eq!((coverage.items, coverage.behind), (1, 0));
    let status = db
        .admin()
        .sweep::<User>()
        .distributed("spans")
        .status()
        .await
        .unwrap();
    assert!(!status.is_done(), "{status:?}");
    let marker = db.admin().migration_marker(User::SCHEMA).record().await;
    assert!(marker.unwrap().is_none());

    let mut sent: BTreeMap<String, u64> = BTreeMap::new();
    for request in stats.requests() {
        *sent.entry(request.operation).or_default() += 1;
    }
    let mut counted: BTreeMap<String, u64> = BTreeMap::new();
    for span in capture.take() {
        let attempts: u64 = field(&span, "singletable.attempts").parse().unwrap();
        *counted
            .entry(field(&span, "db.operation.name").to_owned())
            .or_default() += attempts;
    }
    assert_eq!(counted, sent, "attempts in spans, and requests sent");
}
