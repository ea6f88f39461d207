//! The proxy's model of DynamoDB's latency and per-partition limits, checked through the SDK
//! against the embedded engine: the delay it adds (sequential requests pay it each, concurrent
//! ones together) and the throttling of one partition key value above 1,000 write units a
//! second (and above a read limit), answered with DynamoDB's documented errors, while the same
//! load spread over many keys passes; and of a global index's partition key, whose writes hold
//! back the table's.
//!
//! Timing bounds are one-sided where the machine can only slow things down: the least time a
//! delay must take is asserted tightly, the most time concurrency may take loosely.

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{BuildError, SdkError};
use aws_sdk_dynamodb::operation::batch_write_item::BatchWriteItemError;
use aws_sdk_dynamodb::operation::delete_item::DeleteItemError;
use aws_sdk_dynamodb::operation::get_item::GetItemError;
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, GlobalSecondaryIndex, KeySchemaElement,
    KeyType, Projection, ProjectionType, Put, PutRequest, ScalarAttributeType, ThrottlingReason,
    TransactWriteItem, WriteRequest,
};
use aws_sdk_dynamodb::Client;
use singletable_fault::{self as fault, FaultPlan, Latency, PartitionKey, PartitionLimits};
use std::collections::HashMap;
use std::time::{Duration, Instant};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A fresh on-demand table with `PK` and `SK`, as the library creates them.
async fn table(client: &Client) -> Result<String, Box<dyn std::error::Error>> {
    created(client, false).await
}

/// A fresh on-demand table with `PK` and `SK` and, `indexed`, a global index `GSI1` on
/// `GSI1PK` and `GSI1SK` (all attributes), as the library creates them.
async fn created(client: &Client, indexed: bool) -> Result<String, Box<dyn std::error::Error>> {
    let name = format!("partitions-{:016x}", fastrand::u64(..));
    let attribute = |name: &str| {
        AttributeDefinition::builder()
            .attribute_name(name)
            .attribute_type(ScalarAttributeType::S)
            .build()
    };
    let key = |name: &str, kind| {
        KeySchemaElement::builder()
            .attribute_name(name)
            .key_type(kind)
            .build()
    };
    let mut create = client
        .create_table()
        .table_name(&name)
        .attribute_definitions(attribute("PK")?)
        .attribute_definitions(attribute("SK")?)
        .key_schema(key("PK", KeyType::Hash)?)
        .key_schema(key("SK", KeyType::Range)?)
        .billing_mode(BillingMode::PayPerRequest);
    if indexed {
        let all = Projection::builder()
            .projection_type(ProjectionType::All)
            .build();
        let index = GlobalSecondaryIndex::builder()
            .index_name("GSI1")
            .key_schema(key("GSI1PK", KeyType::Hash)?)
            .key_schema(key("GSI1SK", KeyType::Range)?)
            .projection(all)
            .build()?;
        create = create
            .attribute_definitions(attribute("GSI1PK")?)
            .attribute_definitions(attribute("GSI1SK")?)
            .global_secondary_indexes(index);
    }
    create.send().await?;
    Ok(name)
}

/// An item of about `kilobytes` KB on partition key `pk`.
/// A client through the proxy with partition `limits` (seed `seed`, no injected faults and no
/// SDK retries, so each throttling is seen), and a fresh table on it.
async fn limited(
    seed: u64,
    limits: PartitionLimits,
) -> Result<(Client, fault::FaultStats, String), Box<dyn std::error::Error>> {
    let plan = FaultPlan::new(seed, 0.0)
        .without_sdk_retries()
        .with_partition_limits(limits);
    let (client, stats) = fault::client(plan).await?;
    let table = table(&client).await?;
    Ok((client, stats, table))
}

fn item(pk: &str, sk: usize, kilobytes: usize) -> HashMap<String, AttributeValue> {
    HashMap::from([
        ("PK".to_owned(), AttributeValue::S(pk.to_owned())),
        ("SK".to_owned(), AttributeValue::S(format!("{sk:04}"))),
        (
            "payload".to_owned(),
            AttributeValue::S("x".repeat(kilobytes * 1024)),
        ),
    ])
}

fn key(table: &str, value: &str) -> PartitionKey {
    PartitionKey {
        table: table.to_owned(),
        index: None,
        value: value.to_owned(),
    }
}

/// Whether the engine holds the item `pk`/`sk`.
async fn stored(
    client: &Client,
    table: &str,
    pk: &str,
    sk: usize,
) -> Result<bool, Box<dyn std::error::Error>> {
    let output = client
        .get_item()
        .table_name(table)
        .key("PK", AttributeValue::S(pk.to_owned()))
        .key("SK", AttributeValue::S(format!("{sk:04}")))
        .consistent_read(true)
        .send()
        .await?;
    Ok(output.item.is_some())
}

/// The one throttling reason DynamoDB gives for a partition key over its limit, on `table`.
fn assert_key_range_reason(reasons: &[ThrottlingReason], reason: &str, table: &str) {
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    let Some(first) = reasons.first() else {
        return;
    };
    assert_eq!(first.reason(), Some(reason));
    let resource = first.resource().unwrap_or_default();
    assert!(
        resource.starts_with("arn:aws:dynamodb:") && resource.ends_with(&format!(":table/{table}")),
        "{resource}"
    );
}

/// The HTTP status of a service's error answer.
fn status<E>(error: &SdkError<E, HttpResponse>) -> Option<u16> {
    error
        .raw_response()
        .map(|response| response.status().as_u16())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latency_is_paid_per_request_in_sequence_and_once_by_concurrent_requests() -> TestResult {
    let latency = Latency::new(Duration::from_millis(20), Duration::from_millis(5));
    let (client, stats) = fault::client(FaultPlan::new(11, 0.0).with_latency(latency)).await?;
    let table = table(&client).await?;

    // One at a time: each request waits at least the shortest delay.
    const SEQUENTIAL: u32 = 10;
    let started = Instant::now();
    for sk in 0..SEQUENTIAL {
        stored(&client, &table, "a", sk as usize).await?;
    }
    let sequential = started.elapsed();
    assert!(
        sequential >= latency.shortest() * SEQUENTIAL,
        "{SEQUENTIAL} requests in sequence took {sequential:?}"
    );

    // Together: one delay for all, not one after another (64 × 20 ms would be 1.28 s).
    const CONCURRENT: usize = 64;
    let started = Instant::now();
    let mut requests = tokio::task::JoinSet::new();
    for sk in 0..CONCURRENT {
        let (client, table) = (client.clone(), table.clone());
        requests.spawn(async move {
            stored(&client, &table, "b", sk)
                .await
                .map_err(|error| error.to_string())
        });
    }
    while let Some(done) = requests.join_next().await {
        assert_eq!(done?, Ok(false));
    }
    let concurrent = started.elapsed();
    assert!(concurrent >= latency.shortest(), "{concurrent:?}");
    assert!(
        concurrent < latency.base * CONCURRENT as u32 / 4,
        "{CONCURRENT} concurrent requests took {concurrent:?}: delayed one after another"
    );
    // CreateTable, then the reads.
    assert_eq!(
        stats.report().requests,
        1 + u64::from(SEQUENTIAL) + CONCURRENT as u64
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_partition_key_is_throttled_above_1000_write_units_a_second_and_many_are_not(
) -> TestResult {
    let (client, stats, table) = limited(12, PartitionLimits::DYNAMODB).await?;

    // 40 puts of 100 KB (101 write units each, 4,040 in all) on one key, as fast as they go.
    const PUTS: usize = 40;
    const UNITS: f64 = 101.0;
    let started = Instant::now();
    let mut written = Vec::new();
    let mut throttled = Vec::new();
    for sk in 0..PUTS {
        let put = client
            .put_item()
            .table_name(&table)
            .set_item(Some(item("hot", sk, 100)))
            .send()
            .await;
        match put {
            Ok(_) => written.push(sk),
            Err(error) => {
                assert_eq!(status(&error), Some(400));
                match error.into_service_error() {
                    PutItemError::ProvisionedThroughputExceededException(exceeded) => {
                        assert_key_range_reason(
                            exceeded.throttling_reasons(),
                            "TableWriteKeyRangeThroughputExceeded",
                            &table,
                        );
                    }
                    other => return Err(format!("not throttling: {other:?}").into()),
                }
                throttled.push(sk);
            }
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    // A quiet key holds one second of units: the first nine fit whatever the timing.
    assert!(written.len() >= 9, "{written:?}");
    assert!(
        !throttled.is_empty(),
        "4,040 write units in {elapsed:.2} s, none throttled"
    );
    // No more than the limit allows: a full second's units, a second's more per second, and
    // the last write that overdrew nothing.
    let admitted = written.len() as f64 * UNITS;
    assert!(
        admitted <= 1_000.0 + 1_000.0 * elapsed + UNITS,
        "{admitted} write units admitted in {elapsed:.2} s"
    );
    // A throttled write wrote nothing.
    for sk in &throttled {
        assert!(
            !stored(&client, &table, "hot", *sk).await?,
            "throttled write {sk} was applied"
        );
    }
    let report = stats.report();
    assert_eq!(
        report.throttled_writes,
        [(key(&table, "hot"), throttled.len() as u64)].into(),
        "{report}"
    );
    assert!(report.to_string().contains("\"hot\""), "{report}");

    // The same load over 40 keys: each key's 101 units are far below its limit.
    for sk in 0..PUTS {
        client
            .put_item()
            .table_name(&table)
            .set_item(Some(item(&format!("cold-{sk}"), sk, 100)))
            .send()
            .await?;
    }
    assert_eq!(stats.report().throttled_writes, report.throttled_writes);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_leaves_the_items_over_their_keys_limit_unprocessed_and_fails_when_none_fit(
) -> TestResult {
    let (client, stats, table) = limited(13, PartitionLimits::DYNAMODB).await?;
    let put = |item| -> Result<WriteRequest, BuildError> {
        Ok(WriteRequest::builder()
            .put_request(PutRequest::builder().set_item(Some(item)).build()?)
            .build())
    };

    // 8 items of 199 KB (200 units each, 1,600 in all) on one key, over the 1,000 a quiet key
    // holds, and 13 small ones on keys of their own.
    let mut requests = Vec::new();
    for sk in 0..8 {
        requests.push(put(item("hot", sk, 199))?);
    }
    for sk in 8..21 {
        requests.push(put(item(&format!("cold-{sk}"), sk, 1))?);
    }
    let output = client
        .batch_write_item()
        .request_items(&table, requests)
        .send()
        .await?;
    let unprocessed: Vec<HashMap<String, AttributeValue>> = output
        .unprocessed_items
        .unwrap_or_default()
        .remove(&table)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|request| request.put_request.map(|put| put.item))
        .collect();

    // Only hot items past the limit: five fit a full second, three do not.
    assert_eq!(unprocessed.len(), 3, "{unprocessed:?}");
    let unprocessed_sks: Vec<usize> = unprocessed
        .iter()
        .map(|item| {
            assert_eq!(item.get("PK"), Some(&AttributeValue::S("hot".to_owned())));
            match item.get("SK") {
                Some(AttributeValue::S(sk)) => sk.parse().unwrap_or(usize::MAX),
                _ => usize::MAX,
            }
        })
        .collect();
    for sk in 0..21 {
        let pk = if sk < 8 {
            "hot".to_owned()
        } else {
            format!("cold-{sk}")
        };
        assert_eq!(
            stored(&client, &table, &pk, sk).await?,
            !unprocessed_sks.contains(&sk),
            "item {sk}"
        );
    }
    assert_eq!(
        stats.report().throttled_writes,
        [(key(&table, "hot"), 3)].into()
    );

    // A batch of which nothing can be processed fails whole, as DynamoDB documents. To leave
    // no item room to fit, on a proxy whose key limit is 10 units a second: one put of 9 KB
    // (10 units) drains the key, and either item of the batch after it would need the second
    // it takes the bucket to refill (with DynamoDB's 1,000, draining a key and sending the
    // batch takes as long as the refill it must beat).
    let small_limit = FaultPlan::new(16, 0.0)
        .without_sdk_retries()
        .with_partition_limits(PartitionLimits::new(10.0, 30.0));
    let (drained_client, drained_stats) = fault::client(small_limit).await?;
    drained_client
        .put_item()
        .table_name(&table)
        .set_item(Some(item("drained", 0, 9)))
        .send()
        .await?;
    let requests = vec![put(item("drained", 1, 9))?, put(item("drained", 2, 9))?];
    let error = drained_client
        .batch_write_item()
        .request_items(&table, requests)
        .send()
        .await
        .err()
        .ok_or("a batch of which nothing fits fails")?;
    assert_eq!(status(&error), Some(400));
    match error.into_service_error() {
        BatchWriteItemError::ProvisionedThroughputExceededException(exceeded) => {
            assert_key_range_reason(
                exceeded.throttling_reasons(),
                "TableWriteKeyRangeThroughputExceeded",
                &table,
            );
        }
        other => return Err(format!("not throttling: {other:?}").into()),
    }
    for sk in [1, 2] {
        assert!(!stored(&client, &table, "drained", sk).await?);
    }
    assert_eq!(
        drained_stats.report().throttled_writes,
        [(key(&table, "drained"), 2)].into()
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_over_one_keys_limit_is_cancelled_whole() -> TestResult {
    let (client, stats, table) = limited(14, PartitionLimits::DYNAMODB).await?;
    let put = |item| -> Result<TransactWriteItem, BuildError> {
        Ok(TransactWriteItem::builder()
            .put(
                Put::builder()
                    .table_name(&table)
                    .set_item(Some(item))
                    .build()?,
            )
            .build())
    };
    // 301 units of the 1,000 a quiet key holds; then a transaction, which costs twice:
    // 2 × 2 × 301 units on "hot", above the 699 left.
    client
        .put_item()
        .table_name(&table)
        .set_item(Some(item("hot", 9, 300)))
        .send()
        .await?;
    let error = client
        .transact_write_items()
        .transact_items(put(item("cold", 0, 1))?)
        .transact_items(put(item("hot", 1, 300))?)
        .transact_items(put(item("hot", 2, 300))?)
        .send()
        .await
        .err()
        .ok_or("the transaction is over its key's limit")?;
    assert_eq!(status(&error), Some(400));
    match error.into_service_error() {
        TransactWriteItemsError::TransactionCanceledException(cancelled) => {
            let codes: Vec<&str> = cancelled
                .cancellation_reasons()
                .iter()
                .map(|reason| reason.code().unwrap_or_default())
                .collect();
            // On an on-demand table, as the `TransactWriteItems` reference gives it.
            assert_eq!(codes, ["None", "ThrottlingError", "ThrottlingError"]);
        }
        other => return Err(format!("not cancelled: {other:?}").into()),
    }
    for (pk, sk) in [("cold", 0), ("hot", 1), ("hot", 2)] {
        assert!(
            !stored(&client, &table, pk, sk).await?,
            "{pk} {sk} was written"
        );
    }
    assert_eq!(
        stats.report().throttled_writes,
        [(key(&table, "hot"), 2)].into()
    );
    // Alone, one of them fits (602 units of the 699): the cancelled transaction charged
    // nothing.
    client
        .transact_write_items()
        .transact_items(put(item("hot", 1, 300))?)
        .send()
        .await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_partition_key_is_throttled_above_its_read_limit() -> TestResult {
    // A tenth of DynamoDB's read limit: 3,000 units a second are 12 MB a second of strongly
    // consistent reads, more than a debug build of the engine and the SDK serve here, and
    // a load that cannot reach the limit tests nothing. The behaviour is DynamoDB's.
    const READ_LIMIT: f64 = 300.0;
    let (client, stats, table) = limited(15, PartitionLimits::new(1_000.0, READ_LIMIT)).await?;
    client
        .put_item()
        .table_name(&table)
        .set_item(Some(item("hot", 0, 100)))
        .send()
        .await?;

    // A strongly consistent read of 100 KB costs 26 read units: 11 fill a quiet key's second.
    const UNITS: f64 = 26.0;
    let started = Instant::now();
    let mut reads = 0u32;
    let throttled = loop {
        let read = client
            .get_item()
            .table_name(&table)
            .key("PK", AttributeValue::S("hot".to_owned()))
            .key("SK", AttributeValue::S("0000".to_owned()))
            .consistent_read(true)
            .send()
            .await;
        match read {
            Ok(output) => {
                assert!(output.item.is_some());
                reads += 1;
            }
            Err(error) => break error,
        }
        if reads > 1_000 {
            return Err("1,000 reads of 26 units, none throttled".into());
        }
    };
    let elapsed = started.elapsed().as_secs_f64();
    assert!(reads >= 11, "throttled after {reads} reads");
    assert!(
        f64::from(reads) * UNITS <= READ_LIMIT + READ_LIMIT * elapsed + UNITS,
        "{reads} reads in {elapsed:.2} s"
    );
    assert_eq!(status(&throttled), Some(400));
    match throttled.into_service_error() {
        GetItemError::ProvisionedThroughputExceededException(exceeded) => {
            assert_key_range_reason(
                exceeded.throttling_reasons(),
                "TableReadKeyRangeThroughputExceeded",
                &table,
            );
        }
        other => return Err(format!("not throttling: {other:?}").into()),
    }
    let report = stats.report();
    assert_eq!(report.throttled_reads, [(key(&table, "hot"), 1)].into());
    assert!(report.throttled_writes.is_empty());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_is_charged_the_stored_items_size_reported_or_seen_written() -> TestResult {
    use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
    use aws_sdk_dynamodb::types::ReturnConsumedCapacity;
    let (client, stats, table) = limited(14, PartitionLimits::new(100.0, 300.0)).await?;
    // A small update of an item of 250 KB: DynamoDB charges the larger of the item before and
    // after, 251 write units, far above the update's own size.
    let update = |pk: &str, capacity: Option<ReturnConsumedCapacity>| {
        client
            .update_item()
            .table_name(&table)
            .key("PK", AttributeValue::S(pk.to_owned()))
            .key("SK", AttributeValue::S("0000".to_owned()))
            .update_expression("SET n = :n")
            .expression_attribute_values(":n", AttributeValue::N("1".to_owned()))
            .set_return_consumed_capacity(capacity)
            .send()
    };
    for pk in ["reported", "unreported"] {
        client
            .put_item()
            .table_name(&table)
            .set_item(Some(item(pk, 0, 250)))
            .send()
            .await?;
    }
    // The puts overdrew their keys' buckets, to 150 units below empty; three seconds at 100 a
    // second fill them again (an update charged the item's 251 units waits for a full one).
    tokio::time::sleep(Duration::from_secs(3)).await;

    // Reported: the 250 units beyond the update's one empty the bucket (a second's worth of
    // deficit), and the next update is refused.
    let reported = update("reported", Some(ReturnConsumedCapacity::Indexes)).await?;
    let units = reported
        .consumed_capacity()
        .and_then(|consumed| consumed.table())
        .and_then(|table| table.capacity_units());
    assert_eq!(units, Some(251.0));
    match update("reported", None).await {
        Err(error) => assert!(
            matches!(
                error.into_service_error(),
                UpdateItemError::ProvisionedThroughputExceededException(_)
            ),
            "not throttling"
        ),
        Ok(_) => return Err("the update after a 251-unit update was not throttled".into()),
    }

    // Not reported: the proxy saw the item written, and charges the update its size all the
    // same, as DynamoDB does; the next update is refused too.
    update("unreported", None).await?;
    match update("unreported", None).await {
        Err(error) => assert!(
            matches!(
                error.into_service_error(),
                UpdateItemError::ProvisionedThroughputExceededException(_)
            ),
            "not throttling"
        ),
        Ok(_) => {
            return Err("the update after an unreported 251-unit update was not throttled".into())
        }
    }
    assert_eq!(
        stats.report().throttled_writes,
        [(key(&table, "reported"), 1), (key(&table, "unreported"), 1)].into()
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hot_index_partition_holds_back_the_tables_writes_and_shards_spread_it() -> TestResult {
    let plan = FaultPlan::new(17, 0.0)
        .without_sdk_retries()
        .with_partition_limits(PartitionLimits::DYNAMODB);
    let (client, stats) = fault::client(plan).await?;
    let table = created(&client, true).await?;
    let indexed = |pk: String, sk: usize, index_key: String| {
        let mut item = item(&pk, sk, 100);
        item.insert("GSI1PK".to_owned(), AttributeValue::S(index_key));
        item.insert("GSI1SK".to_owned(), AttributeValue::S(format!("{sk:04}")));
        item
    };

    // 40 puts of 100 KB, each on a table key of its own, all on one index key: the table's
    // keys have room, the index's partition does not, and holds the writes back.
    const PUTS: usize = 40;
    let started = Instant::now();
    let mut throttled = Vec::new();
    for sk in 0..PUTS {
        let put = client
            .put_item()
            .table_name(&table)
            .set_item(Some(indexed(format!("item-{sk}"), sk, "TEAM#7".into())))
            .send()
            .await;
        if let Err(error) = put {
            assert_eq!(status(&error), Some(400));
            let PutItemError::ProvisionedThroughputExceededException(exceeded) =
                error.into_service_error()
            else {
                return Err("a throttled index write that is not throttling".into());
            };
            let reasons = exceeded.throttling_reasons();
            assert_eq!(reasons.len(), 1, "{reasons:?}");
            let reason = reasons.first().ok_or("no reason")?;
            assert_eq!(
                reason.reason(),
                Some("IndexWriteKeyRangeThroughputExceeded")
            );
            let resource = reason.resource().unwrap_or_default();
            assert!(
                resource.ends_with(&format!(":table/{table}/index/GSI1")),
                "{resource}"
            );
            throttled.push(sk);
        }
    }
    // At once, while the key is drained: an update that moves an item onto the hot index key
    // is charged there too.
    let moved = client
        .update_item()
        .table_name(&table)
        .key("PK", AttributeValue::S("elsewhere".into()))
        .key("SK", AttributeValue::S("0000".into()))
        .update_expression("SET #pk = :pk, #sk = :sk, payload = :payload")
        .expression_attribute_names("#pk", "GSI1PK")
        .expression_attribute_names("#sk", "GSI1SK")
        .expression_attribute_values(":pk", AttributeValue::S("TEAM#7".into()))
        .expression_attribute_values(":sk", AttributeValue::S("0000".into()))
        .expression_attribute_values(":payload", AttributeValue::S("x".repeat(350 * 1024)))
        .send()
        .await;
    match moved.map_err(SdkError::into_service_error) {
        Err(UpdateItemError::ProvisionedThroughputExceededException(_)) => {}
        other => return Err(format!("the update onto the drained index key: {other:?}").into()),
    }

    let elapsed = started.elapsed().as_secs_f64();
    assert!(
        !throttled.is_empty(),
        "4,040 write units on one index key in {elapsed:.2} s, none throttled"
    );
    // A write held back by its index wrote nothing, to the table or the index.
    for sk in &throttled {
        assert!(!stored(&client, &table, &format!("item-{sk}"), *sk).await?);
    }
    let hot = PartitionKey {
        table: table.clone(),
        index: Some("GSI1".to_owned()),
        value: "TEAM#7".to_owned(),
    };
    let report = stats.report();
    assert_eq!(
        report.throttled_writes,
        [(hot, throttled.len() as u64 + 1)].into(),
        "{report}"
    );

    // The same load written over 8 shards of the team's key: 505 units each, within limits.
    for sk in 0..PUTS {
        let shard = format!("TEAM#8#{}", sk % 8);
        client
            .put_item()
            .table_name(&table)
            .set_item(Some(indexed(format!("sharded-{sk}"), sk, shard)))
            .send()
            .await?;
    }
    Ok(())
}

/// Removing an item's index entry is a write to the index, on the partition the entry was in,
/// charged by the item's size, as DynamoDB charges a delete: 80 items of 20 KB whose entries
/// share one index key, written within its limit, then deleted at once (1,680 units on that
/// key in one go, 21 on each table key), hold the deletes back with
/// `IndexWriteKeyRangeThroughputExceeded`, and the items held back are still there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletes_are_charged_to_the_index_partitions_their_entries_leave() -> TestResult {
    let plan = FaultPlan::new(19, 0.0)
        .without_sdk_retries()
        .with_partition_limits(PartitionLimits::DYNAMODB);
    let (client, stats) = fault::client(plan).await?;
    let table = created(&client, true).await?;
    const ITEMS: usize = 80;
    for sk in 0..ITEMS {
        let mut item = item(&format!("item-{sk}"), sk, 20);
        item.insert("GSI1PK".to_owned(), AttributeValue::S("TEAM#9".into()));
        item.insert("GSI1SK".to_owned(), AttributeValue::S(format!("{sk:04}")));
        client
            .put_item()
            .table_name(&table)
            .set_item(Some(item))
            .send()
            .await?;
        // 420 units on the index key every half second: within its 1,000 a second.
        if sk % 20 == 19 {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    tokio::time::sleep(Duration::from_millis(1100)).await;
    // All at once, each on a task of its own: they reach the proxy within a few milliseconds,
    // however busy the machine.
    let mut deletes = tokio::task::JoinSet::new();
    for sk in 0..ITEMS {
        let delete = client
            .delete_item()
            .table_name(&table)
            .key("PK", AttributeValue::S(format!("item-{sk}")))
            .key("SK", AttributeValue::S(format!("{sk:04}")));
        deletes.spawn(async move { (sk, delete.send().await) });
    }
    let mut throttled = Vec::new();
    while let Some(joined) = deletes.join_next().await {
        let (sk, deleted) = joined?;
        match deleted.map_err(SdkError::into_service_error) {
            Ok(_) => {}
            Err(DeleteItemError::ProvisionedThroughputExceededException(exceeded)) => {
                let reasons: Vec<_> = (exceeded.throttling_reasons().iter())
                    .map(|reason| {
                        (
                            reason.reason().unwrap_or_default().to_owned(),
                            reason.resource().unwrap_or_default().to_owned(),
                        )
                    })
                    .collect();
                assert_eq!(reasons.len(), 1, "{reasons:?}");
                assert_eq!(reasons[0].0, "IndexWriteKeyRangeThroughputExceeded");
                assert!(reasons[0].1.ends_with("/index/GSI1"), "{reasons:?}");
                throttled.push(sk);
            }
            Err(other) => return Err(format!("a delete: {other:?}").into()),
        }
    }
    // A second's 1,000 units fit (47 deletes of 21), and what refills while they go: the rest
    // are held back (33 at most; fewer the longer they take to arrive).
    assert!(
        (10..=33).contains(&throttled.len()),
        "{} of {ITEMS} deletes throttled",
        throttled.len()
    );
    for sk in &throttled {
        assert!(stored(&client, &table, &format!("item-{sk}"), *sk).await?);
    }
    let hot = PartitionKey {
        table: table.clone(),
        index: Some("GSI1".to_owned()),
        value: "TEAM#9".to_owned(),
    };
    let report = stats.report();
    assert_eq!(
        report.throttled_writes,
        [(hot, throttled.len() as u64)].into(),
        "{report}"
    );
    Ok(())
}
