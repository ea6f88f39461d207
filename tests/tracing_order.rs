//! A `Db` made before the application installs its `tracing` subscriber still counts each
//! request's attempts into its span. Alone in its test binary: no subscriber exists in the
//! process when the `Db` is made.
mod common;
use common::Needs;

use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, Table};
use singletable_fault::{self as fault, Fault, FaultKind, FaultPlan};
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

#[derive(Table)]
#[dynamo(name = "traced", pk = "PK", sk = "SK")]
struct Shop;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "ORDER#{id}", sk = "ORDER")]
struct Order {
    id: String,
}

/// The `singletable.attempts` each of the library's spans recorded last.
#[derive(Clone, Default)]
struct Attempts(Arc<Mutex<Vec<Option<u64>>>>);

struct Count(Option<u64>);

impl Visit for Count {
    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == "singletable.attempts" {
            self.0 = Some(value);
        }
    }

    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Attempts {
    fn on_new_span(&self, attributes: &Attributes<'_>, id: &Id, context: Context<'_, S>) {
        if attributes.metadata().target() == "singletable" {
            if let Some(span) = context.span(id) {
                span.extensions_mut().insert(Count(None));
            }
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, context: Context<'_, S>) {
        if let Some(span) = context.span(id) {
            if let Some(count) = span.extensions_mut().get_mut::<Count>() {
                values.record(count);
            }
        }
    }

    fn on_close(&self, id: Id, context: Context<'_, S>) {
        if let Some(span) = context.span(&id) {
            if let Some(count) = span.extensions().get::<Count>() {
                self.0.lock().unwrap().push(count.0);
            }
        }
    }
}

#[tokio::test]
async fn attempts_are_counted_when_the_subscriber_comes_after_the_db() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let table = singletable::testing::table::<Shop>().await.unwrap();
    // Every other request throttled: a put takes two attempts or more.
    let plan = FaultPlan::new(3, 0.5).with_kinds([Fault::before(FaultKind::Throttling)]);
    let (client, _stats) = fault::client(plan).await.unwrap();
    let db = Db::<Shop>::new(client).with_table_name(table.table_name());

    let attempts = Attempts::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(attempts.clone()));
    for n in 0..10 {
        let _ = db
            .put(&Order {
                id: format!("o{n}"),
            })
            .send()
            .await;
    }
    let counted = attempts.0.lock().unwrap().clone();
    assert_eq!(counted.len(), 10, "one span per put: {counted:?}");
    assert!(
        counted.iter().all(|count| count.is_some_and(|n| n >= 1)),
        "every span counts its attempts: {counted:?}"
    );
    assert!(
        counted.iter().any(|count| count.is_some_and(|n| n > 1)),
        "a throttled put's resend is counted: {counted:?}"
    );
}
