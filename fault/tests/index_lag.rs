//! The proxy's index lag, checked through the SDK: a global index and eventually consistent
//! reads see the table as it was up to the lag ago, strongly consistent reads and
//! transactions' reads see the present, an item's versions reach the replica in order, and
//! none is older than the longest lag (with a margin for a loaded machine, which can only
//! make the replica later).

use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, GlobalSecondaryIndex,
    GlobalSecondaryIndexUpdate, KeySchemaElement, KeyType, Projection, ProjectionType,
    ScalarAttributeType,
};
use aws_sdk_dynamodb::Client;
use singletable_fault::{self as fault, FaultPlan, FaultStats, IndexLag};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// How late the replica may be beyond the longest lag on a loaded two-core machine before
/// the test calls it a failure: its applier is one task among the test's.
const MARGIN: Duration = Duration::from_millis(300);

fn s(value: &str) -> AttributeValue {
    AttributeValue::S(value.to_owned())
}

fn attribute(name: &str) -> Result<AttributeDefinition, aws_sdk_dynamodb::error::BuildError> {
    AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(ScalarAttributeType::S)
        .build()
}

fn key(name: &str, kind: KeyType) -> Result<KeySchemaElement, aws_sdk_dynamodb::error::BuildError> {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(kind)
        .build()
}

fn index(
    name: &str,
    pk: &str,
) -> Result<GlobalSecondaryIndex, aws_sdk_dynamodb::error::BuildError> {
    GlobalSecondaryIndex::builder()
        .index_name(name)
        .key_schema(key(pk, KeyType::Hash)?)
        .key_schema(key("PK", KeyType::Range)?)
        .projection(
            Projection::builder()
                .projection_type(ProjectionType::All)
                .build(),
        )
        .build()
}

/// A fresh table (`PK`, `SK`) with an index on `GSI1PK` (sort key `PK`).
async fn table(client: &Client) -> Result<String, Box<dyn std::error::Error>> {
    let name = format!("lag-{:016x}", fastrand::u64(..));
    client
        .create_table()
        .table_name(&name)
        .attribute_definitions(attribute("PK")?)
        .attribute_definitions(attribute("SK")?)
        .attribute_definitions(attribute("GSI1PK")?)
        .key_schema(key("PK", KeyType::Hash)?)
        .key_schema(key("SK", KeyType::Range)?)
        .global_secondary_indexes(index("gsi1", "GSI1PK")?)
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await?;
    Ok(name)
}

async fn lagging(
    lag: IndexLag,
) -> Result<(Client, FaultStats, String), Box<dyn std::error::Error>> {
    let plan = FaultPlan::new(11, 0.0).with_index_lag(lag);
    let (client, stats) = fault::client(plan).await?;
    let table = table(&client).await?;
    Ok((client, stats, table))
}

fn item(pk: &str, group: &str, version: u64) -> HashMap<String, AttributeValue> {
    HashMap::from([
        ("PK".to_owned(), s(pk)),
        ("SK".to_owned(), s("ITEM")),
        ("GSI1PK".to_owned(), s(group)),
        ("version".to_owned(), AttributeValue::N(version.to_string())),
    ])
}

fn the_key(pk: &str) -> HashMap<String, AttributeValue> {
    HashMap::from([("PK".to_owned(), s(pk)), ("SK".to_owned(), s("ITEM"))])
}

fn version(item: &HashMap<String, AttributeValue>) -> Option<u64> {
    item.get("version")?.as_n().ok()?.parse().ok()
}

/// What each kind of read sees of one item: (strongly consistent get, eventually consistent
/// get, the index's partition `group`, a transaction's get).
async fn seen(
    client: &Client,
    table: &str,
    pk: &str,
    group: &str,
) -> Result<[Option<u64>; 4], Box<dyn std::error::Error>> {
    let get = |consistent: bool| {
        client
            .get_item()
            .table_name(table)
            .set_key(Some(the_key(pk)))
            .consistent_read(consistent)
            .send()
    };
    let strong = get(true).await?.item.as_ref().and_then(version);
    let eventual = get(false).await?.item.as_ref().and_then(version);
    let indexed = client
        .query()
        .table_name(table)
        .index_name("gsi1")
        .key_condition_expression("GSI1PK = :g")
        .expression_attribute_values(":g", s(group))
        .send()
        .await?
        .items
        .unwrap_or_default()
        .iter()
        .find_map(version);
    let transactional = client
        .transact_get_items()
        .transact_items(
            aws_sdk_dynamodb::types::TransactGetItem::builder()
                .get(
                    aws_sdk_dynamodb::types::Get::builder()
                        .table_name(table)
                        .set_key(Some(the_key(pk)))
                        .build()?,
                )
                .build(),
        )
        .send()
        .await?
        .responses
        .unwrap_or_default()
        .first()
        .and_then(|response| response.item.as_ref())
        .and_then(version);
    Ok([strong, eventual, indexed, transactional])
}

#[tokio::test]
async fn indexes_and_eventually_consistent_reads_see_the_table_as_it_was() -> TestResult {
    // A fixed lag long enough that the reads right after a write all come before it.
    let lag = IndexLag::new(Duration::from_millis(400), Duration::from_millis(400));
    let (client, stats, table) = lagging(lag).await?;
    let put = |version: u64, group: &'static str| {
        client
            .put_item()
            .table_name(&table)
            .set_item(Some(item("a", group, version)))
            .send()
    };
    put(1, "blue").await?;
    let written = Instant::now();
    let right_after = seen(&client, &table, "a", "blue").await?;
    if written.elapsed() < lag.shortest {
        assert_eq!(right_after, [Some(1), None, None, Some(1)]);
    }
    stats.caught_up().await;
    assert_eq!(seen(&client, &table, "a", "blue").await?, [Some(1); 4]);

    // Moved to another index partition: the old one still shows the old version, the new
    // one nothing, until the lag has passed.
    put(2, "red").await?;
    let written = Instant::now();
    let in_blue = seen(&client, &table, "a", "blue").await?;
    let in_red = seen(&client, &table, "a", "red").await?;
    if written.elapsed() < lag.shortest {
        assert_eq!(in_blue, [Some(2), Some(1), Some(1), Some(2)]);
        assert_eq!(in_red[2], None);
    }
    stats.caught_up().await;
    assert_eq!(seen(&client, &table, "a", "blue").await?[2], None);
    assert_eq!(seen(&client, &table, "a", "red").await?, [Some(2); 4]);

    // Deleted: gone for strong reads at once, for the others after the lag.
    client
        .delete_item()
        .table_name(&table)
        .set_key(Some(the_key("a")))
        .send()
        .await?;
    let written = Instant::now();
    let right_after = seen(&client, &table, "a", "red").await?;
    if written.elapsed() < lag.shortest {
        assert_eq!(right_after, [None, Some(2), Some(2), None]);
    }
    stats.caught_up().await;
    assert_eq!(seen(&client, &table, "a", "red").await?, [None; 4]);
    assert!(stats.report().lagging_reads >= 9, "{}", stats.report());

    // DynamoDB refuses a strongly consistent read of a global index; so does the lag mode.
    let refused = client
        .query()
        .table_name(&table)
        .index_name("gsi1")
        .key_condition_expression("GSI1PK = :g")
        .expression_attribute_values(":g", s("red"))
        .consistent_read(true)
        .send()
        .await;
    assert!(refused.is_err(), "{refused:?}");
    Ok(())
}

#[tokio::test]
async fn a_table_written_around_the_proxy_or_reshaped_is_copied_as_it_is() -> TestResult {
    let plan = FaultPlan::new(12, 0.0).with_index_lag(IndexLag::up_to(Duration::from_millis(50)));
    let (client, stats) = fault::client(plan).await?;
    // Made and written on the engine directly: the replica has seen none of it.
    let direct = singletable_runtime::local::client().await?;
    let table = table(&direct).await?;
    for (pk, group) in [("a", "blue"), ("b", "blue")] {
        direct
            .put_item()
            .table_name(&table)
            .set_item(Some(item(pk, group, 1)))
            .send()
            .await?;
    }
    let scanned = client.scan().table_name(&table).send().await?;
    assert_eq!(
        scanned.count, 2,
        "the replica copies the table on first use"
    );
    // A new index, created online: the replica copies the table again, with it.
    client
        .update_table()
        .table_name(&table)
        .attribute_definitions(attribute("PK")?)
        .attribute_definitions(attribute("group2")?)
        .global_secondary_index_updates(
            GlobalSecondaryIndexUpdate::builder()
                .create(
                    aws_sdk_dynamodb::types::CreateGlobalSecondaryIndexAction::builder()
                        .index_name("gsi2")
                        .key_schema(key("group2", KeyType::Hash)?)
                        .key_schema(key("PK", KeyType::Range)?)
                        .projection(
                            Projection::builder()
                                .projection_type(ProjectionType::KeysOnly)
                                .build(),
                        )
                        .build()?,
                )
                .build(),
        )
        .send()
        .await?;
    let mut tagged = item("c", "blue", 1);
    tagged.insert("group2".to_owned(), s("green"));
    client
        .put_item()
        .table_name(&table)
        .set_item(Some(tagged))
        .send()
        .await?;
    stats.caught_up().await;
    let green = client
        .query()
        .table_name(&table)
        .index_name("gsi2")
        .key_condition_expression("group2 = :g")
        .expression_attribute_values(":g", s("green"))
        .send()
        .await?;
    assert_eq!(green.count, 1, "{green:?}");
    Ok(())
}

/// Several writers raise the versions of a few items while readers read them eventually
/// consistently. Afterwards, against the writers' log: a reader never sees an item go back
/// to an older version, and never sees a version older than the latest one written
/// `longest` (plus the margin) before its read began.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_arrive_in_order_and_no_read_is_older_than_the_lag() -> TestResult {
    const ITEMS: usize = 3;
    const VERSIONS: u64 = 60;
    let lag = IndexLag::up_to(Duration::from_millis(100));
    let (client, stats, table) = lagging(lag).await?;
    let started = Instant::now();
    // (item, version, when its write was acknowledged)
    let log = Arc::new(std::sync::Mutex::new(Vec::<(usize, u64, Duration)>::new()));
    let writers = (0..ITEMS).map(|n| {
        let (client, table, log) = (client.clone(), table.clone(), Arc::clone(&log));
        tokio::spawn(async move {
            for version in 1..=VERSIONS {
                client
                    .put_item()
                    .table_name(&table)
                    .set_item(Some(item(&format!("i{n}"), "g", version)))
                    .send()
                    .await?;
                let at = started.elapsed();
                log.lock()
                    .map_err(|e| e.to_string())?
                    .push((n, version, at));
                tokio::time::sleep(Duration::from_millis(fastrand::u64(0..15))).await;
            }
            Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
        })
    });
    let readers = (0..ITEMS).map(|n| {
        let (client, table) = (client.clone(), table.clone());
        tokio::spawn(async move {
            // (when the read began, the version seen)
            let mut reads = Vec::new();
            let until = Duration::from_millis(1_500);
            while started.elapsed() < until {
                let began = started.elapsed();
                let got = client
                    .get_item()
                    .table_name(&table)
                    .set_key(Some(the_key(&format!("i{n}"))))
                    .send()
                    .await?;
                reads.push((began, got.item.as_ref().and_then(version).unwrap_or(0)));
            }
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(reads)
        })
    });
    let (writers, readers) = tokio::join!(
        futures_join(writers.collect()),
        futures_join(readers.collect())
    );
    for writer in writers {
        writer?.map_err(|e| e.to_string())?;
    }
    let log = log.lock().map_err(|e| e.to_string())?.clone();
    // Reads that a version was due for: the bound was really put to the test.
    let mut bounded = 0;
    for (n, reads) in readers.into_iter().enumerate() {
        let reads = reads?.map_err(|e| e.to_string())?;
        assert!(reads.len() > 5, "item {n}: only {} reads", reads.len());
        for pair in reads.windows(2) {
            assert!(pair[0].1 <= pair[1].1, "item {n} went back: {pair:?}");
        }
        for (began, seen) in &reads {
            let due = log
                .iter()
                .filter(|(item, _, at)| *item == n && *at + lag.longest + MARGIN < *began)
                .map(|(_, version, _)| *version)
                .max()
                .unwrap_or(0);
            assert!(
                *seen >= due,
                "item {n} read at {began:?} saw version {seen}, older than {due}"
            );
            bounded += usize::from(due > 0);
        }
    }
    assert!(
        bounded > 10,
        "only {bounded} reads came after a version was due"
    );
    stats.caught_up().await;
    for n in 0..ITEMS {
        let now = seen(&client, &table, &format!("i{n}"), "g").await?;
        assert_eq!(now[1], Some(VERSIONS), "item {n} after the lag");
    }
    Ok(())
}

/// Every task's output, in order.
async fn futures_join<T>(
    tasks: Vec<tokio::task::JoinHandle<T>>,
) -> Vec<Result<T, tokio::task::JoinError>> {
    let mut outputs = Vec::with_capacity(tasks.len());
    for task in tasks {
        outputs.push(task.await);
    }
    outputs
}
