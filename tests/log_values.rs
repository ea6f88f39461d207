//! No value of the user's reaches a log by default: the library's events name the entity and
//! the error's kind, and hold a key or an error's text (which can quote values) only when the
//! `Db` opts in with `trace_values()`, as its spans do. Captured here with a subscriber that
//! keeps every event of the library's crates, wherever emitted. (In a binary of its own: a
//! thread's subscriber here must not share callsites with the span tests'.) Error texts hide
//! keys and values too, unless `singletable::error::show_values(true)`; the unit test
//! `error::texts` covers every error variant, this one errors from the engine.
mod common;
use common::Needs;

use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, Table};
use singletable_fault::{self as fault, Fault, FaultKind, FaultPlan};
use tracing_subscriber::layer::SubscriberExt;

#[derive(Table)]
#[dynamo(name = "quiet", pk = "PK", sk = "SK")]
struct Shop;

/// Every event of the library's crates, wherever it is emitted, with its target and fields.
#[derive(Clone, Default)]
struct Events(std::sync::Arc<std::sync::Mutex<Vec<(String, String)>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Events {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct Text(String);
        impl tracing::field::Visit for Text {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                self.0.push_str(&format!("{}={value:?} ", field.name()));
            }
        }
        let target = event.metadata().target();
        if target.starts_with("singletable") {
            let mut text = Text(String::new());
            event.record(&mut text);
            self.0.lock().unwrap().push((target.to_owned(), text.0));
        }
    }
}

/// A customer with a unique e-mail, for errors that carry a unique value.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "CUSTOMER#{id}", sk = "CUSTOMER")]
struct Customer {
    id: String,
    #[dynamo(unique)]
    email: String,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, schema_version = 2, pk = "MEMO#{id}", sk = "MEMO")]
struct Memo {
    id: String,
    text: String,
}

/// A lazy backfill whose write fails logs a warning under the `singletable` target: the entity
/// and the error's kind, but the key and the error's text (which can quote values) only when
/// the `Db` opts in, as spans do.
#[tokio::test]
async fn a_failed_lazy_backfill_logs_no_value_unless_the_db_opts_in() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let table = singletable::testing::table::<Shop>().await.unwrap();
    let memo = Memo {
        id: "secret-id".into(),
        text: "the-secret-text".into(),
    };
    // As version 1 wrote it.
    let mut item = singletable::item::encode(&memo).unwrap();
    item.insert(
        "_sv".to_owned(),
        aws_sdk_dynamodb::types::AttributeValue::N("1".into()),
    );
    table
        .client()
        .put_item()
        .table_name(table.table_name())
        .set_item(Some(item))
        .send()
        .await
        .unwrap();
    // Every backfill write refused, once.
    let plan = FaultPlan::new(3, 1.0)
        .with_kinds([Fault::before(FaultKind::Throttling)])
        .only_operations(["UpdateItem"]);
    let (client, _stats) = fault::client(plan).await.unwrap();
    let db = Db::<Shop>::new(client)
        .with_table_name(table.table_name())
        .with_retry_policy(singletable::RetryPolicy::never());
    for opted_in in [false, true] {
        let events = Events::default();
        let _guard =
            tracing::subscriber::set_default(tracing_subscriber::registry().with(events.clone()));
        let db = if opted_in {
            db.clone().trace_values()
        } else {
            db.clone()
        };
        let read = db.get_and_backfill(Memo::key("secret-id").unwrap()).await;
        assert_eq!(
            read.unwrap(),
            memo,
            "the read is what matters to the caller"
        );
        let events = events.0.lock().unwrap().clone();
        let warning = events
            .iter()
            .find(|(_, fields)| fields.contains("lazy backfill failed"))
            .unwrap_or_else(|| panic!("no warning among {events:?}"));
        assert_eq!(warning.0, "singletable", "{warning:?}");
        assert!(warning.1.contains("Memo"), "{warning:?}");
        assert!(
            warning.1.contains("service"),
            "the error's kind: {warning:?}"
        );
        for (target, fields) in &events {
            assert_eq!(
                fields.contains("secret-id"),
                opted_in && target == "singletable" && fields.contains("lazy backfill"),
                "{target}: {fields}"
            );
        }
    }
}

/// Errors the engine's answers make (an item not found, a unique value taken, a condition
/// failed) name the entity, the field and the key's attributes, and no value, until values are
/// shown; their fields hold the values all along.
#[tokio::test]
async fn error_texts_hold_no_value_unless_values_are_shown() {
    let db = singletable::testing::table::<Shop>().await.unwrap();
    let ana = Customer {
        id: "c-secret-1".into(),
        email: "ana@secret.example".into(),
    };
    db.put(&ana).send().await.unwrap();
    let taken = db
        .put(&Customer {
            id: "c-secret-2".into(),
            email: "ana@secret.example".into(),
        })
        .send()
        .await
        .unwrap_err();
    let missing = db
        .get(Customer::key("c-secret-3").unwrap())
        .send()
        .await
        .unwrap_err();
    let exists = db.put(&ana).only_if_absent().send().await.unwrap_err();
    let errors = [&taken, &missing, &exists];
    for error in errors {
        let text = error.to_string();
        assert!(!text.contains("secret"), "{}: {text}", error.kind());
        assert!(text.contains("Customer"), "{text}");
    }
    assert!(taken.to_string().contains("email"), "{taken}");
    match &taken {
        singletable::Error::Unique {
            value, owner_key, ..
        } => {
            assert_eq!(value, "ana@secret.example");
            let owner = owner_key.as_ref().unwrap();
            assert_eq!(owner.partition.1, "CUSTOMER#c-secret-1");
        }
        other => panic!("{other:?}"),
    }
    singletable::error::show_values(true);
    let shown: Vec<String> = errors.iter().map(|error| error.to_string()).collect();
    singletable::error::show_values(false);
    assert!(shown[0].contains("ana@secret.example"), "{}", shown[0]);
    assert!(shown[0].contains("CUSTOMER#c-secret-1"), "{}", shown[0]);
    assert!(shown[1].contains("CUSTOMER#c-secret-3"), "{}", shown[1]);
    assert!(shown[2].contains("CUSTOMER#c-secret-1"), "{}", shown[2]);
}
