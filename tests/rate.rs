//! Bulk writes under a write budget on the local engine: the budget is held, throttling lowers
//! the rate without losing a write, and a share of capacity is read from the table.

mod common;
use common::Needs;

use common::{db, raw_items, App, Status, Ticket};
use singletable::rate::RateError;
use singletable::{Db, Error, Rate, RetryPolicy};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(120);

fn tickets(count: usize) -> Vec<Ticket> {
    (0..count)
        .map(|n| {
            let status = [Status::Open, Status::Closed][n % 2];
            Ticket::new(&n.to_string(), 1, status, &format!("ticket {n}"))
        })
        .collect()
}

/// What a load of `tickets` cost in write units: as the engine reported, or, when it reports
/// none, as estimated (the figure the limiter was charged either way).
fn write_units(db: &Db<App>, tickets: &[Ticket]) -> f64 {
    let reported = db
        .consumed()
        .map_or(0.0, |consumed| consumed.capacity_units);
    if reported > 0.0 {
        return reported;
    }
    tickets
        .iter()
        .map(|ticket| {
            let item = singletable::item::encode(ticket).unwrap();
            singletable::cost::put_estimate::<App>(&item).write_units
        })
        .sum()
}

/// `units` written in `elapsed` seconds took no less than `budget` per second allows, less the
/// first request's reservation (25 tickets, each at most two units: the table and the sparse
/// index), which is not waited for.
fn assert_not_faster(units: f64, elapsed: f64, budget: f64) {
    let floor = (units - 50.0) / budget;
    assert!(
        elapsed >= floor * 0.95,
        "{units} units in {elapsed:.2} s: faster than {budget} units/s"
    );
}

/// 150 tickets at 100 write units a second, four requests in flight: the load cannot end
/// sooner than its units allow, less the first request, which goes at once.
#[tokio::test]
async fn a_bulk_load_holds_its_write_budget() {
    let table = db().await;
    let tracked = Db::<App>::new(table.client().clone())
        .with_table_name(table.table_name())
        .track_capacity();
    let tickets = tickets(150);
    let started = Instant::now();
    let output = tokio::time::timeout(
        TIMEOUT,
        tracked
            .put_stream(futures::stream::iter(tickets.clone()))
            .concurrency(4)
            .rate(Rate::WriteUnitsPerSecond(100.0))
            .send(),
    )
    .await
    .unwrap()
    .unwrap();
    let elapsed = started.elapsed().as_secs_f64();
    assert!(output.is_complete());
    assert_eq!(output.written, 150);
    // Nothing throttled, so the rate stayed at its ceiling.
    assert_eq!(output.rate, Some(100.0));
    assert_not_faster(write_units(&tracked, &tickets), elapsed, 100.0);
    assert_eq!(raw_items(&table).await.len(), 150);
}

/// A proxy leaves 30% of the batch requests' writes unprocessed or throttles them whole, with
/// the SDK's retries off: the load halves its rate (and reports it lower), resends, and every
/// ticket lands exactly once.
#[tokio::test]
async fn throttling_lowers_the_rate_and_loses_no_write() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    use singletable_fault::{self as fault, Fault, FaultKind, FaultPlan};
    let table = db().await;
    let plan = FaultPlan::new(11, 0.3)
        .with_kinds([
            Fault::before(FaultKind::Unprocessed),
            Fault::before(FaultKind::ProvisionedThroughputExceeded),
        ])
        .without_sdk_retries();
    let (client, stats) = fault::client(plan).await.unwrap();
    let faulty = Db::<App>::new(client).with_table_name(table.table_name());
    let tickets = tickets(150);
    let output = tokio::time::timeout(
        TIMEOUT,
        faulty
            .put_stream(futures::stream::iter(tickets.clone()))
            .concurrency(4)
            .rate(Rate::ItemsPerSecond(1000.0))
            .retry(
                RetryPolicy::default()
                    .with_max_attempts(40)
                    .with_base_delay(Duration::from_millis(1))
                    .with_max_delay(Duration::from_millis(20)),
            )
            .send(),
    )
    .await
    .unwrap()
    .unwrap();
    let injected = stats.report().injected;
    assert!(!injected.is_empty(), "no fault was injected");
    assert!(output.is_complete(), "{:?}", output.unprocessed);
    assert_eq!(output.written, 150);
    let rate = output.rate.unwrap();
    assert!(rate < 1000.0, "the rate was not lowered: {rate}");
    let mut stored: Vec<String> = raw_items(&table)
        .await
        .iter()
        .filter_map(|item| item.get("id")?.as_s().ok().cloned())
        .collect();
    stored.sort();
    let mut expected: Vec<String> = tickets.iter().map(|ticket| ticket.id.clone()).collect();
    expected.sort();
    assert_eq!(stored, expected);
}

/// A share of capacity means nothing on an on-demand table: the write is refused before
/// anything is sent.
#[tokio::test]
async fn a_share_of_an_on_demand_tables_capacity_is_refused() {
    let table = db().await;
    let error = table
        .batch_write()
        .put_all(&tickets(3))
        .rate(Rate::ShareOfCapacity(0.5))
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(&error, Error::Rate(RateError::NoProvisionedCapacity { table: name }) if name == table.table_name()),
        "{error}"
    );
    assert!(
        error.to_string().contains("Rate::WriteUnitsPerSecond"),
        "{error}"
    );
    assert!(raw_items(&table).await.is_empty());
    for rate in [Rate::ShareOfCapacity(0.0), Rate::WriteUnitsPerSecond(-1.0)] {
        let error = table
            .batch_write()
            .put_all(&tickets(1))
            .rate(rate)
            .send()
            .await
            .unwrap_err();
        assert!(matches!(error, Error::Rate(_)), "{error}");
    }
}

/// On a table of 40 provisioned write units, half its capacity is 20 units a second.
#[tokio::test]
async fn a_share_of_provisioned_capacity_is_read_from_the_table() {
    use aws_sdk_dynamodb::types::{BillingMode, ProvisionedThroughput};
    let table = db().await;
    table
        .client()
        .update_table()
        .table_name(table.table_name())
        .billing_mode(BillingMode::Provisioned)
        .provisioned_throughput(
            ProvisionedThroughput::builder()
                .read_capacity_units(40)
                .write_capacity_units(40)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let tracked = Db::<App>::new(table.client().clone())
        .with_table_name(table.table_name())
        .track_capacity();
    let tickets = tickets(40);
    let started = Instant::now();
    let output = tokio::time::timeout(
        TIMEOUT,
        tracked
            .put_stream(futures::stream::iter(tickets.clone()))
            .rate(Rate::ShareOfCapacity(0.5))
            .send(),
    )
    .await
    .unwrap()
    .unwrap();
    let elapsed = started.elapsed().as_secs_f64();
    assert_eq!(output.written, 40);
    assert_eq!(output.rate, Some(20.0));
    assert_not_faster(write_units(&tracked, &tickets), elapsed, 20.0);
}
