//! Scans on the local engine: only the entity's items, every one exactly once across
//! parallel segments and pages, and an unreadable item as one error in the stream.

mod common;

use aws_sdk_dynamodb::types::AttributeValue;
use common::{db, App, Status, Team, Ticket};
use futures::{StreamExt, TryStreamExt};
use singletable::{DecodeError, Error};
use std::collections::BTreeMap;
use std::time::Duration;

/// Bounds every engine test: a scan that followed a bad `LastEvaluatedKey` forever would
/// otherwise hang the suite.
const TIMEOUT: Duration = Duration::from_secs(60);

fn ticket(n: usize) -> Ticket {
    let status = [Status::Open, Status::Pending, Status::Closed][n % 3];
    Ticket::new(
        &format!("{n:04}"),
        (n % 9) as u32,
        status,
        &format!("ticket {n}"),
    )
}

async fn seed(db: &singletable::Db<App>, tickets: usize, teams: u32) {
    let all: Vec<Ticket> = (0..tickets).map(ticket).collect();
    let teams: Vec<Team> = (0..teams)
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
    assert!(output.is_complete(), "{:?}", output.unprocessed);
}

#[tokio::test]
async fn parallel_scan_returns_every_ticket_exactly_once_and_no_team() {
    let db = db().await;
    seed(&db, 1500, 500).await;
    let scan = db.scan::<Ticket>().segments(4).limit(100);
    let params = scan.params().unwrap();
    assert_eq!(params.len(), 4);
    for (segment, request) in params.iter().enumerate() {
        assert_eq!(request.body["Segment"], segment);
        assert_eq!(request.body["TotalSegments"], 4);
        assert_eq!(request.body["Limit"], 100);
    }
    let tickets: Vec<Ticket> = tokio::time::timeout(TIMEOUT, scan.items().try_collect())
        .await
        .unwrap()
        .unwrap();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for ticket in &tickets {
        *counts.entry(ticket.id.clone()).or_default() += 1;
    }
    assert_eq!(tickets.len(), 1500);
    assert_eq!(counts.len(), 1500);
    assert!(counts.values().all(|count| *count == 1));
    assert_eq!(tickets.iter().find(|t| t.id == "0042"), Some(&ticket(42)));

    let teams: Vec<Team> =
        tokio::time::timeout(TIMEOUT, db.scan::<Team>().segments(3).items().try_collect())
            .await
            .unwrap()
            .unwrap();
    assert_eq!(teams.len(), 500);
}

#[tokio::test]
async fn filter_is_anded_with_the_entity_filter() {
    let db = db().await;
    seed(&db, 90, 10).await;
    let scan = db
        .scan::<Ticket>()
        .filter(Ticket::STATUS.eq(Status::Open))
        .filter(Ticket::TEAM_ID.lt(5))
        .limit(7);
    let params = scan.params().unwrap();
    assert_eq!(
        params[0].body["FilterExpression"],
        "(#n0 = :v0 OR attribute_not_exists(#n0) OR NOT attribute_type(#n0, :v1)) AND #n1 = :v2 AND #n2 < :v3"
    );
    assert_eq!(params[0].body["ExpressionAttributeNames"]["#n0"], "_type");
    let open: Vec<Ticket> = tokio::time::timeout(TIMEOUT, scan.items().try_collect())
        .await
        .unwrap()
        .unwrap();
    let expected = (0..90)
        .map(ticket)
        .filter(|t| t.status == Status::Open && t.team_id < 5)
        .count();
    assert!(expected > 0);
    assert_eq!(open.len(), expected);
    assert!(open
        .iter()
        .all(|t| t.status == Status::Open && t.team_id < 5));
}

#[tokio::test]
async fn malformed_item_is_one_error_in_the_stream_and_the_rest_still_arrive() {
    let db = db().await;
    seed(&db, 60, 5).await;
    let mut malformed =
        singletable::item::encode(&Ticket::new("bad", 7, Status::Open, "x")).unwrap();
    malformed.insert("team_id".into(), AttributeValue::S("seven".into()));
    singletable::testing::put_raw(&db, malformed).await.unwrap();

    // Small pages and two segments: the error must not end its segment's later pages.
    let stream = db.scan::<Ticket>().segments(2).limit(7).items();
    let results: Vec<Result<Ticket, Error>> = tokio::time::timeout(TIMEOUT, stream.collect())
        .await
        .unwrap();
    assert_eq!(results.len(), 61);
    let errors: Vec<&Error> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    match errors[0] {
        Error::Decode(DecodeError::Attribute { key, attribute, .. }) => {
            assert_eq!(key.partition.1, "TICKET#bad");
            assert_eq!(attribute, "team_id");
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 60);
}

#[tokio::test]
async fn a_stream_can_stop_early_and_an_empty_table_yields_nothing() {
    let db = db().await;
    let nothing: Vec<Ticket> = tokio::time::timeout(
        TIMEOUT,
        db.scan::<Ticket>().segments(4).items().try_collect(),
    )
    .await
    .unwrap()
    .unwrap();
    assert!(nothing.is_empty());

    seed(&db, 50, 0).await;
    let first: Vec<Result<Ticket, Error>> = tokio::time::timeout(
        TIMEOUT,
        db.scan::<Ticket>().limit(10).items().take(15).collect(),
    )
    .await
    .unwrap();
    assert_eq!(first.len(), 15);
    assert!(first.iter().all(Result::is_ok));
}

#[tokio::test]
async fn a_failed_request_is_an_error_in_the_stream() {
    let db = db().await.clone().with_table_name("no-such-table");
    let results: Vec<Result<Ticket, Error>> =
        tokio::time::timeout(TIMEOUT, db.scan::<Ticket>().segments(2).items().collect())
            .await
            .unwrap();
    assert_eq!(results.len(), 2, "one error per segment");
    assert!(results.iter().all(|r| matches!(r, Err(Error::Service(_)))));
}

#[test]
fn params_show_the_exact_request() {
    let db = common::offline::<App>();
    let params = db.scan::<Ticket>().consistent().params().unwrap();
    assert_eq!(params.len(), 1);
    assert_eq!(
        params[0].to_string(),
        r##"Scan {
  "ConsistentRead": true,
  "ExpressionAttributeNames": {
    "#n0": "_type"
  },
  "ExpressionAttributeValues": {
    ":v0": {
      "S": "Ticket"
    },
    ":v1": {
      "S": "S"
    }
  },
  "FilterExpression": "#n0 = :v0 OR attribute_not_exists(#n0) OR NOT attribute_type(#n0, :v1)",
  "TableName": "app"
}"##
    );
}

#[tokio::test]
async fn out_of_range_segments_and_page_sizes_are_rejected_before_sending() {
    let db = common::offline::<App>();
    for (scan, parameter, value) in [
        (db.scan::<Ticket>().segments(0), "TotalSegments", 0),
        (
            db.scan::<Ticket>().segments(1_000_001),
            "TotalSegments",
            1_000_001,
        ),
        (db.scan::<Ticket>().limit(0), "Limit", 0),
    ] {
        match scan.params() {
            Err(Error::OutOfRange {
                parameter: p,
                value: v,
                ..
            }) => assert_eq!((p, v), (parameter, value)),
            other => panic!("expected OutOfRange, got {other:?}"),
        }
        // The stream reports it as its only item, without touching the network.
        let results: Vec<Result<Ticket, Error>> = scan.items().collect().await;
        assert!(
            matches!(results.as_slice(), [Err(Error::OutOfRange { .. })]),
            "{results:?}"
        );
    }
    let error = db.scan::<Team>().limit(0).params().unwrap_err();
    assert_eq!(
        error.to_string(),
        "Limit must be between 1 and 2147483647, not 0"
    );
}
