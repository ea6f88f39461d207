//! The generated infrastructure, checked from outside: the CloudFormation resource parses as
//! JSON and, created on the engine as its properties say, is a table the migration plan finds
//! up to date; the Terraform block parses as HCL and states the same table; and the IAM
//! policy allows every request the administration sends through a recording proxy, while the
//! data statements alone do not. (`tests/together.rs` checks the data and stream statements
//! against every request of its model-based run.)

mod common;
use common::Needs;

use aws_sdk_dynamodb::client::Waiters;
use aws_sdk_dynamodb::types::BillingMode;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, GlobalSecondaryIndex, KeySchemaElement, KeyType, LocalSecondaryIndex,
    PointInTimeRecoverySpecification, Projection, ProjectionType, ScalarAttributeType,
    SseSpecification, SseType, StreamSpecification, StreamViewType, TimeToLiveSpecification,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use singletable::infra::{IamPolicy, InfraError, TableArn};
use singletable::local::{Deviation, Engine};
use singletable::migrate::PlanAction;
use singletable::{Db, Entity, Table};
use singletable_fault::{self as fault, Authorization, FaultPlan};
use std::collections::BTreeSet;
use std::time::Duration;

#[derive(Table)]
#[dynamo(
    name = "infra-shop",
    pk = "PK",
    sk = "SK",
    ttl = "expires_at",
    stream = "new_and_old_images",
    gsi1(name = "ByCustomer", pk = "GSI1PK", sk = "GSI1SK", projection = ["total"]),
    gsi2(name = "ByStatus", pk = "GSI2PK", sk = "GSI2SK", projection = "keys_only"),
    gsi3(name = "ByTotal", pk = "GSI3PK", sk = "total", sk_type = "N"),
    lsi1(name = "ByPlaced", sk = "LSI1SK")
)]
pub struct Shop;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "ORDER#{id}", sk = "ORDER",
         gsi1pk = "CUSTOMER#{customer}", gsi1sk = "ORDER#{id}",
         gsi2pk = "STATUS#{status}", gsi2sk = "ORDER#{id}",
         gsi3pk = "TOTALS", gsi3sk = total, lsi1sk = "PLACED#{placed}")]
struct Order {
    id: String,
    customer: String,
    status: String,
    placed: u32,
    total: u64,
    #[dynamo(ttl)]
    expires_at: Option<u64>,
}

/// A second declaration of the same table name with one more index, as the next release
/// would declare it: its migration adds the index online.
#[derive(Table)]
#[dynamo(
    name = "infra-shop",
    pk = "PK",
    sk = "SK",
    ttl = "expires_at",
    stream = "new_and_old_images",
    gsi1(name = "ByCustomer", pk = "GSI1PK", sk = "GSI1SK", projection = ["total"]),
    gsi2(name = "ByStatus", pk = "GSI2PK", sk = "GSI2SK", projection = "keys_only"),
    gsi3(name = "ByTotal", pk = "GSI3PK", sk = "total", sk_type = "N"),
    gsi4(name = "ByDay", pk = "GSI4PK"),
    lsi1(name = "ByPlaced", sk = "LSI1SK")
)]
pub struct ShopNext;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn table_name(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

fn text<'a>(value: &'a Value, name: &str) -> &'a str {
    value[name]
        .as_str()
        .unwrap_or_else(|| panic!("{name} in {value}"))
}

fn key_schema(value: &Value) -> Vec<KeySchemaElement> {
    let elements = value.as_array().expect("a KeySchema list");
    elements
        .iter()
        .map(|element| {
            KeySchemaElement::builder()
                .attribute_name(text(element, "AttributeName"))
                .key_type(KeyType::from(text(element, "KeyType")))
                .build()
                .unwrap()
        })
        .collect()
}

fn projection(value: &Value) -> Projection {
    let attributes = value["NonKeyAttributes"].as_array().map(|names| {
        names
            .iter()
            .map(|name| name.as_str().unwrap().to_owned())
            .collect()
    });
    Projection::builder()
        .projection_type(ProjectionType::from(text(value, "ProjectionType")))
        .set_non_key_attributes(attributes)
        .build()
}

/// Creates the table the way CloudFormation does from the resource's properties: the
/// `CreateTable` they describe, then time to live as `TimeToLiveSpecification` says.
fn engine() -> Engine {
    Engine::from_env().unwrap()
}

async fn create_from_cloudformation(client: &aws_sdk_dynamodb::Client, resource: &Value) {
    assert_eq!(resource["Type"], "AWS::DynamoDB::Table");
    let properties = &resource["Properties"];
    let name = text(properties, "TableName");
    let mut create = client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::from(text(properties, "BillingMode")))
        .set_key_schema(Some(key_schema(&properties["KeySchema"])));
    for attribute in properties["AttributeDefinitions"].as_array().unwrap() {
        create = create.attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name(text(attribute, "AttributeName"))
                .attribute_type(ScalarAttributeType::from(text(attribute, "AttributeType")))
                .build()
                .unwrap(),
        );
    }
    // Global and local indexes have the same properties, in builders of two types.
    macro_rules! index {
        ($kind:ident, $index:expr) => {
            $kind::builder()
                .index_name(text($index, "IndexName"))
                .set_key_schema(Some(key_schema(&$index["KeySchema"])))
                .projection(projection(&$index["Projection"]))
                .build()
                .unwrap()
        };
    }
    for index in properties["GlobalSecondaryIndexes"].as_array().unwrap() {
        create = create.global_secondary_indexes(index!(GlobalSecondaryIndex, index));
    }
    for index in properties["LocalSecondaryIndexes"].as_array().unwrap() {
        create = create.local_secondary_indexes(index!(LocalSecondaryIndex, index));
    }
    let stream = &properties["StreamSpecification"];
    create = create.stream_specification(
        StreamSpecification::builder()
            .stream_enabled(true)
            .stream_view_type(StreamViewType::from(text(stream, "StreamViewType")))
            .build()
            .unwrap(),
    );
    // What keeps the data: deletion protection and KMS encryption are the table's own
    // settings, point-in-time recovery is turned on after.
    let sse = &properties["SSESpecification"];
    assert_eq!(
        (&sse["SSEEnabled"], &sse["SSEType"]),
        (&json!(true), &json!("KMS"))
    );
    create = create
        .deletion_protection_enabled(properties["DeletionProtectionEnabled"] == json!(true))
        .sse_specification(
            SseSpecification::builder()
                .enabled(true)
                .sse_type(SseType::Kms)
                .build(),
        );
    create.send().await.unwrap();
    client
        .wait_until_table_exists()
        .table_name(name)
        .wait(Duration::from_secs(60))
        .await
        .unwrap();
    let recovery = &properties["PointInTimeRecoverySpecification"];
    if !engine().deviates(Deviation::NoContinuousBackups) {
        client
            .update_continuous_backups()
            .table_name(name)
            .point_in_time_recovery_specification(
                PointInTimeRecoverySpecification::builder()
                    .point_in_time_recovery_enabled(
                        recovery["PointInTimeRecoveryEnabled"] == json!(true),
                    )
                    .build()
                    .unwrap(),
            )
            .send()
            .await
            .unwrap();
    }
    let ttl = &properties["TimeToLiveSpecification"];
    client
        .update_time_to_live()
        .table_name(name)
        .time_to_live_specification(
            TimeToLiveSpecification::builder()
                .attribute_name(text(ttl, "AttributeName"))
                .enabled(ttl["Enabled"].as_bool().unwrap())
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
}

#[test]
fn a_table_created_from_the_cloudformation_resource_is_what_the_plan_expects() {
    runtime().block_on(async {
        let client = singletable::local::client().await.unwrap();
        let db = Db::<Shop>::new(client.clone()).with_table_name(table_name("infra-cfn"));
        let resource = serde_json::to_value(db.admin().create_table().cloudformation()).unwrap();
        // What a template holds is JSON text: print it and read it back as a parser would.
        let printed = db.admin().create_table().cloudformation().to_string();
        assert_eq!(serde_json::from_str::<Value>(&printed).unwrap(), resource);

        let properties = &resource["Properties"];
        assert_eq!(properties["TableName"], db.table_name());
        assert_eq!(properties["BillingMode"], "PAY_PER_REQUEST");
        let by_customer = &properties["GlobalSecondaryIndexes"][0];
        assert_eq!(by_customer["IndexName"], "ByCustomer");
        let included: BTreeSet<&str> = by_customer["Projection"]["NonKeyAttributes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|name| name.as_str().unwrap())
            .collect();
        // The library adds the entity and TTL attributes to an INCLUDE index.
        assert!(included.is_superset(&BTreeSet::from(["total", "_type", "expires_at"])));
        let attributes: Vec<(&str, &str)> = properties["AttributeDefinitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| (text(a, "AttributeName"), text(a, "AttributeType")))
            .collect();
        assert!(attributes.contains(&("total", "N")), "{attributes:?}");
        assert_eq!(
            properties["StreamSpecification"]["StreamViewType"],
            "NEW_AND_OLD_IMAGES"
        );

        create_from_cloudformation(&client, &resource).await;
        let migration = || db.admin().table_migration(&[Order::SCHEMA]);
        let plan = migration().plan().await.unwrap();
        // The table is as declared; what is left is recording the keys it is used with, which
        // apply does without changing the table.
        let record = PlanAction::RecordKeys {
            entity: "Order",
            schema_version: 1,
        };
        assert_eq!(plan.actions, [record], "{plan}");
        assert!(plan.blockers.is_empty(), "{plan}");
        migration().send().await.unwrap();
        let plan = migration().plan().await.unwrap();
        assert!(plan.is_up_to_date(), "{plan}");
        // Its settings too: deletion protection, point-in-time recovery and KMS encryption.
        assert!(plan.notes.is_empty(), "{plan}");
        // And the table works as the library's own would.
        let order = Order {
            id: "1".into(),
            customer: "ana".into(),
            status: "open".into(),
            placed: 7,
            total: 42,
            expires_at: None,
        };
        db.put(&order).send().await.unwrap();
        let found = db.query(Order::lsi1("1")).all().await.unwrap();
        assert_eq!(found, vec![order]);
        // Protected: the deletion is refused until the protection is turned off.
        let refused = client
            .delete_table()
            .table_name(db.table_name())
            .send()
            .await;
        assert!(refused.is_err(), "{refused:?}");
        client
            .update_table()
            .table_name(db.table_name())
            .deletion_protection_enabled(false)
            .send()
            .await
            .unwrap();
        client
            .delete_table()
            .table_name(db.table_name())
            .send()
            .await
            .unwrap();
    });
}

/// The value of attribute `name` of an HCL body, as text.
fn hcl_text(body: &hcl::Body, name: &str) -> Option<String> {
    body.attributes()
        .find(|attribute| attribute.key() == name)
        .map(|attribute| match attribute.expr() {
            hcl::Expression::String(text) => text.clone(),
            hcl::Expression::Bool(flag) => flag.to_string(),
            other => format!("{other:?}"),
        })
}

#[test]
fn the_terraform_block_parses_and_states_the_same_table() {
    let db = singletable_offline::<Shop>();
    let block = db.admin().create_table().terraform("shop").unwrap();
    let resource = db.admin().create_table().cloudformation();
    let properties = &serde_json::to_value(&resource).unwrap()["Properties"];

    let body: hcl::Body = hcl::from_str(&block).unwrap_or_else(|e| panic!("{e}\n{block}"));
    let resources: Vec<&hcl::Block> = body.blocks().collect();
    assert_eq!(resources.len(), 1);
    let table = resources[0];
    assert_eq!(table.identifier(), "resource");
    let labels: Vec<&str> = table.labels().iter().map(|label| label.as_str()).collect();
    assert_eq!(labels, ["aws_dynamodb_table", "shop"]);
    let table = table.body();
    assert_eq!(hcl_text(table, "name").as_deref(), Some("infra-shop"));
    assert_eq!(
        hcl_text(table, "billing_mode").as_deref(),
        Some("PAY_PER_REQUEST")
    );
    assert_eq!(hcl_text(table, "hash_key").as_deref(), Some("PK"));
    assert_eq!(hcl_text(table, "range_key").as_deref(), Some("SK"));
    assert_eq!(hcl_text(table, "stream_enabled").as_deref(), Some("true"));
    assert_eq!(
        hcl_text(table, "stream_view_type").as_deref(),
        Some("NEW_AND_OLD_IMAGES")
    );
    let blocks = |kind: &str| -> Vec<&hcl::Body> {
        table
            .blocks()
            .filter(|block| block.identifier() == kind)
            .map(hcl::Block::body)
            .collect()
    };
    let attributes: BTreeSet<(String, String)> = blocks("attribute")
        .into_iter()
        .map(|a| (hcl_text(a, "name").unwrap(), hcl_text(a, "type").unwrap()))
        .collect();
    let declared: BTreeSet<(String, String)> = properties["AttributeDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                text(a, "AttributeName").into(),
                text(a, "AttributeType").into(),
            )
        })
        .collect();
    assert_eq!(attributes, declared);
    let globals = blocks("global_secondary_index");
    let names: Vec<String> = globals
        .iter()
        .map(|g| hcl_text(g, "name").unwrap())
        .collect();
    assert_eq!(names, ["ByCustomer", "ByStatus", "ByTotal"]);
    assert_eq!(hcl_text(globals[0], "hash_key").as_deref(), Some("GSI1PK"));
    assert_eq!(
        hcl_text(globals[0], "projection_type").as_deref(),
        Some("INCLUDE")
    );
    let included = globals[0]
        .attributes()
        .find(|a| a.key() == "non_key_attributes")
        .map(|a| a.expr().clone());
    let Some(hcl::Expression::Array(included)) = included else {
        panic!("no non_key_attributes list in\n{block}");
    };
    let expected = &properties["GlobalSecondaryIndexes"][0]["Projection"]["NonKeyAttributes"];
    assert_eq!(included.len(), expected.as_array().unwrap().len());
    let locals = blocks("local_secondary_index");
    assert_eq!(locals.len(), 1);
    assert_eq!(hcl_text(locals[0], "range_key").as_deref(), Some("LSI1SK"));
    assert_eq!(hcl_text(locals[0], "hash_key"), None);
    let ttl = blocks("ttl");
    assert_eq!(
        hcl_text(ttl[0], "attribute_name").as_deref(),
        Some("expires_at")
    );
    assert_eq!(hcl_text(ttl[0], "enabled").as_deref(), Some("true"));

    assert_eq!(
        db.admin().create_table().terraform("1shop"),
        Err(InfraError::ResourceName {
            name: "1shop".into()
        })
    );
}

#[derive(Table)]
#[dynamo(name = "infra-multi", pk = "PK", sk = "SK",
         gsi1(name = "ByTenantDay", pk = ["tenant", "region"], sk = "day"))]
pub struct Multi;

#[test]
fn a_multi_attribute_index_key_is_refused_by_terraform_and_stated_by_cloudformation() {
    let db = singletable_offline::<Multi>();
    assert_eq!(
        db.admin().create_table().terraform("multi"),
        Err(InfraError::MultiAttributeKey {
            index: "ByTenantDay"
        })
    );
    let resource = serde_json::to_value(db.admin().create_table().cloudformation()).unwrap();
    let keys = &resource["Properties"]["GlobalSecondaryIndexes"][0]["KeySchema"];
    let keys: Vec<(&str, &str)> = keys
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (text(k, "AttributeName"), text(k, "KeyType")))
        .collect();
    assert_eq!(
        keys,
        [("tenant", "HASH"), ("region", "HASH"), ("day", "RANGE")]
    );
}

/// A `Db` for building requests only; nothing is sent.
fn singletable_offline<T: Table>() -> Db<T> {
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
        .region(aws_sdk_dynamodb::config::Region::new("eu-west-1"))
        .build();
    Db::new(aws_sdk_dynamodb::Client::from_conf(config))
}

const REGION: &str = "eu-west-1";
const ACCOUNT: &str = "123456789012";

fn denied(policy: &IamPolicy, needed: &[Authorization]) -> Vec<Authorization> {
    let document = serde_json::to_value(policy).unwrap();
    let mut denied: Vec<Authorization> = needed
        .iter()
        .filter(|need| !fault::allows(&document, need))
        .cloned()
        .collect();
    denied.sort();
    denied.dedup();
    denied
}

#[test]
fn the_administration_statement_allows_creating_planning_and_migrating_the_table() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    runtime().block_on(async {
        let plan = FaultPlan::new(1, 0.0)
            .recording()
            .with_attempt_timeout(Duration::from_secs(30));
        let (client, stats) = fault::client(plan).await.unwrap();
        let name = table_name("infra-iam");
        let db = Db::<Shop>::new(client.clone()).with_table_name(name.clone());
        assert!(db.admin().ensure_table().await.unwrap());
        let order = Order {
            id: "1".into(),
            customer: "ana".into(),
            status: "open".into(),
            placed: 1,
            total: 5,
            expires_at: Some(4_000_000_000),
        };
        db.put(&order).send().await.unwrap();
        let next = Db::<ShopNext>::new(client.clone()).with_table_name(name.clone());
        let migration = next.admin().table_migration(&[]);
        let planned = migration.plan().await.unwrap();
        assert!(
            planned
                .actions
                .iter()
                .any(|action| matches!(action, PlanAction::CreateIndex(_))),
            "{planned}"
        );
        migration
            .poll_interval(Duration::from_millis(50))
            .send()
            .await
            .unwrap();

        let needed: Vec<Authorization> = stats
            .requests()
            .iter()
            .flat_map(|request| request.authorizations(REGION, ACCOUNT, &name))
            .collect();
        let operations: BTreeSet<&str> = needed.iter().map(|n| n.action.as_str()).collect();
        assert!(
            operations.contains("dynamodb:CreateTable"),
            "{operations:?}"
        );
        assert!(
            operations.contains("dynamodb:UpdateTable"),
            "{operations:?}"
        );
        assert!(
            operations.contains("dynamodb:UpdateTimeToLive"),
            "{operations:?}"
        );

        let arn = TableArn::new(REGION, ACCOUNT, &name).unwrap();
        let full = IamPolicy::for_table::<ShopNext>(arn.clone()).with_administration();
        assert_eq!(denied(&full, &needed), []);
        // The service's role, without the administration statement, may not do it.
        let data = IamPolicy::for_table::<ShopNext>(arn.clone());
        let refused: BTreeSet<String> = denied(&data, &needed)
            .into_iter()
            .map(|need| need.action)
            .collect();
        let administration: BTreeSet<String> = [
            "dynamodb:CreateTable",
            "dynamodb:DescribeTable",
            "dynamodb:UpdateTable",
            "dynamodb:DescribeTimeToLive",
            "dynamodb:UpdateTimeToLive",
            "dynamodb:ListTagsOfResource",
            "dynamodb:DescribeContinuousBackups",
        ]
        .map(String::from)
        .into();
        assert!(refused.is_subset(&administration), "{refused:?}");
        assert!(refused.contains("dynamodb:UpdateTable"));
        // Reads only: the put is refused.
        let read_only = IamPolicy::for_table::<ShopNext>(arn).read_only();
        let refused = denied(&read_only, &needed);
        assert!(refused.iter().any(|need| need.action == "dynamodb:PutItem"));
        client
            .delete_table()
            .table_name(&name)
            .send()
            .await
            .unwrap();
    });
}

#[test]
fn arns_refuse_what_iam_would_not_read() {
    assert!(TableArn::new("eu-west-1", "12345678901", "app").is_err());
    assert!(TableArn::new("EU", "123456789012", "app").is_err());
    assert!(TableArn::new("eu-west-1", "123456789012", "a b").is_err());
    let arn = TableArn::new("cn-north-1", "123456789012", "app")
        .unwrap()
        .in_partition("aws-cn")
        .unwrap();
    assert_eq!(
        arn.to_string(),
        "arn:aws-cn:dynamodb:cn-north-1:123456789012:table/app"
    );
    assert_eq!(
        arn.streams(),
        "arn:aws-cn:dynamodb:cn-north-1:123456789012:table/app/stream/*"
    );
}

#[cfg(feature = "cli")]
mod cli {
    use super::*;
    use singletable::cli::{Entities, EXIT_OK, EXIT_USAGE};

    fn run(db: &Db<Shop>, args: &[&str]) -> (u8, String, String) {
        let entities = Entities::new().with::<Order>();
        runtime().block_on(common::run_cli(db, entities, "shop", args))
    }

    #[test]
    fn the_command_line_prints_the_policy_and_the_table_definitions() {
        let db = singletable_offline::<Shop>().with_table_name("shop-prod");

        let (code, out, err) = run(&db, &["iam", "--account", ACCOUNT, "--streams"]);
        assert_eq!(code, EXIT_OK, "{err}");
        let printed: Value = serde_json::from_str(&out).unwrap();
        // The region is the client's.
        let arn = TableArn::new("eu-west-1", ACCOUNT, "shop-prod").unwrap();
        let expected = IamPolicy::for_table::<Shop>(arn).with_streams();
        assert_eq!(printed, serde_json::to_value(&expected).unwrap());

        let (code, _, err) = run(&db, &["iam", "--account", "12"]);
        assert_eq!(code, EXIT_USAGE);
        assert!(err.contains("account id \"12\""), "{err}");

        let (code, out, err) = run(&db, &["infra"]);
        assert_eq!(code, EXIT_OK, "{err}");
        let template: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(template["AWSTemplateFormatVersion"], "2010-09-09");
        let resource = serde_json::to_value(db.admin().create_table().cloudformation()).unwrap();
        assert_eq!(template["Resources"]["Shop"], resource);

        let args = ["infra", "--format", "terraform", "--resource", "shop"];
        let (code, out, err) = run(&db, &args);
        assert_eq!(code, EXIT_OK, "{err}");
        assert_eq!(out, db.admin().create_table().terraform("shop").unwrap());

        let args = ["infra", "--format", "terraform", "--resource", "9"];
        let (code, _, err) = run(&db, &args);
        assert_eq!(code, EXIT_USAGE);
        assert!(err.contains("not a Terraform resource name"), "{err}");

        let key = "alias/shop";
        let args = ["infra", "--tag", "team=payments", "--kms-key", key];
        let (code, out, err) = run(&db, &args);
        assert_eq!(code, EXIT_OK, "{err}");
        let template: Value = serde_json::from_str(&out).unwrap();
        let tagged = db.admin().create_table().tag("team", "payments").unwrap();
        let resource = serde_json::to_value(tagged.kms_key(key).cloudformation()).unwrap();
        assert_eq!(template["Resources"]["Shop"], resource);
        let (code, out, err) = run(&db, &["infra", "--unprotected"]);
        assert_eq!(code, EXIT_OK, "{err}");
        let template: Value = serde_json::from_str(&out).unwrap();
        assert!(template["Resources"]["Shop"]
            .get("DeletionPolicy")
            .is_none());
        for (tag, refusal) in [("team", "KEY=VALUE"), ("aws:x=1", "AWS's own")] {
            let (code, _, err) = run(&db, &["infra", "--tag", tag]);
            assert_eq!(code, EXIT_USAGE);
            assert!(err.contains(refusal), "{err}");
        }
    }
}

/// By default the generated table keeps its data: retained with its stack or resource,
/// protected from deletion, recoverable to a point in time, encrypted with KMS. Tags, a
/// customer-managed key, the on-demand maximum, warm throughput and a resource policy are
/// stated in both languages; `unprotected()` leaves out the first three.
#[test]
fn the_generated_table_protects_its_data_by_default() {
    let db = singletable_offline::<Shop>();
    let json = |definition: &singletable::op::table::CreateTable| {
        serde_json::to_value(definition.cloudformation()).unwrap()
    };
    let parsed = |definition: &singletable::op::table::CreateTable| -> hcl::Body {
        let block = definition.terraform("shop").unwrap();
        hcl::from_str(&block).unwrap_or_else(|e| panic!("{e}\n{block}"))
    };
    let block_named = |body: &hcl::Body, kind: &str, name: &str| -> Option<hcl::Body> {
        body.blocks()
            .find(|block| block.identifier() == kind && block.labels()[0].as_str() == name)
            .map(|block| block.body().clone())
    };
    let inner = |body: &hcl::Body, kind: &str| -> Option<hcl::Body> {
        body.blocks()
            .find(|block| block.identifier() == kind)
            .map(|block| block.body().clone())
    };

    let protected = db.admin().create_table();
    let resource = json(&protected);
    assert_eq!(resource["DeletionPolicy"], "Retain");
    assert_eq!(resource["UpdateReplacePolicy"], "Retain");
    let properties = &resource["Properties"];
    assert_eq!(properties["DeletionProtectionEnabled"], true);
    assert_eq!(
        properties["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"],
        true
    );
    assert_eq!(properties["SSESpecification"]["SSEEnabled"], true);
    assert_eq!(properties["SSESpecification"]["SSEType"], "KMS");
    assert!(properties["SSESpecification"]
        .get("KMSMasterKeyId")
        .is_none());
    let body = parsed(&protected);
    let table = block_named(&body, "resource", "aws_dynamodb_table").unwrap();
    assert_eq!(
        hcl_text(&table, "deletion_protection_enabled").as_deref(),
        Some("true")
    );
    let recovery = inner(&table, "point_in_time_recovery").unwrap();
    assert_eq!(hcl_text(&recovery, "enabled").as_deref(), Some("true"));
    let encryption = inner(&table, "server_side_encryption").unwrap();
    assert_eq!(hcl_text(&encryption, "enabled").as_deref(), Some("true"));
    let lifecycle = inner(&table, "lifecycle").unwrap();
    assert_eq!(
        hcl_text(&lifecycle, "prevent_destroy").as_deref(),
        Some("true")
    );

    let key = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab";
    let policy = serde_json::json!({
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Deny",
            "Principal": "*",
            "Action": "dynamodb:DeleteTable",
            "Resource": "*"
        }]
    });
    let configured = db
        .admin()
        .create_table()
        .tag("team", "payments")
        .unwrap()
        .tag("cost-centre", "42")
        .unwrap()
        .kms_key(key)
        .on_demand_maximum(2000, 500)
        .warm_throughput(12000, 4000)
        .resource_policy(policy.clone());
    let properties = json(&configured)["Properties"].clone();
    assert_eq!(properties["SSESpecification"]["KMSMasterKeyId"], key);
    assert_eq!(
        properties["Tags"],
        serde_json::json!([
            {"Key": "team", "Value": "payments"},
            {"Key": "cost-centre", "Value": "42"}
        ])
    );
    assert_eq!(
        properties["OnDemandThroughput"],
        serde_json::json!({"MaxReadRequestUnits": 2000, "MaxWriteRequestUnits": 500})
    );
    assert_eq!(
        properties["WarmThroughput"],
        serde_json::json!({"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000})
    );
    assert_eq!(properties["ResourcePolicy"]["PolicyDocument"], policy);
    let body = parsed(&configured);
    let table = block_named(&body, "resource", "aws_dynamodb_table").unwrap();
    let encryption = inner(&table, "server_side_encryption").unwrap();
    assert_eq!(hcl_text(&encryption, "kms_key_arn").as_deref(), Some(key));
    let tags = table.attributes().find(|a| a.key() == "tags").unwrap();
    let hcl::Expression::Object(tags) = tags.expr() else {
        panic!("tags is not a map: {tags:?}");
    };
    assert_eq!(tags.len(), 2);
    assert!(inner(&table, "on_demand_throughput").is_some());
    assert!(inner(&table, "warm_throughput").is_some());
    let attached = block_named(&body, "resource", "aws_dynamodb_resource_policy").unwrap();
    let document = hcl_text(&attached, "policy").unwrap();
    assert_eq!(serde_json::from_str::<Value>(&document).unwrap(), policy);

    let scratch = db.admin().create_table().unprotected();
    let resource = json(&scratch);
    assert!(resource.get("DeletionPolicy").is_none());
    assert_eq!(resource["Properties"]["DeletionProtectionEnabled"], false);
    assert!(resource["Properties"]
        .get("PointInTimeRecoverySpecification")
        .is_none());
    assert_eq!(
        resource["Properties"]["SSESpecification"]["SSEEnabled"],
        true
    );
    let body = parsed(&scratch);
    let table = block_named(&body, "resource", "aws_dynamodb_table").unwrap();
    assert!(inner(&table, "lifecycle").is_none());
    assert!(inner(&table, "point_in_time_recovery").is_none());

    for (key, value) in [
        ("", "x"),
        ("aws:created-by", "x"),
        ("k", &"v".repeat(257)[..]),
    ] {
        let refused = db.admin().create_table().tag(key, value);
        assert!(
            matches!(refused, Err(InfraError::Tag { .. })),
            "{key:?} = {value:?}"
        );
    }
}

/// `ListStreams` takes no resource-level permission: IAM authorizes it only on `*`, so the
/// stream statements name it there, apart from the reads of the table's stream (parliament
/// flags it on the stream's ARN).
#[test]
fn the_stream_statements_allow_listing_streams_on_every_resource() {
    let arn = TableArn::new("eu-west-1", ACCOUNT, "shop-prod").unwrap();
    let policy = IamPolicy::for_table::<Shop>(arn).with_streams();
    let stream =
        "arn:aws:dynamodb:eu-west-1:123456789012:table/shop-prod/stream/2026-12-06T00:00:00.000";
    let needed = [
        Authorization {
            action: "dynamodb:ListStreams".to_owned(),
            resource: "*".to_owned(),
        },
        Authorization {
            action: "dynamodb:GetRecords".to_owned(),
            resource: stream.to_owned(),
        },
    ];
    assert_eq!(denied(&policy, &needed), []);
    // Nothing but `ListStreams` is allowed on every resource.
    let document = serde_json::to_value(&policy).unwrap();
    for statement in document["Statement"].as_array().unwrap() {
        if statement["Resource"] == serde_json::json!(["*"]) {
            assert_eq!(
                statement["Action"],
                serde_json::json!(["dynamodb:ListStreams"])
            );
        }
    }
}

/// A global table: CloudFormation's `AWS::DynamoDB::GlobalTable`, its first replica the
/// stack's own Region, each replica protected and tagged; Terraform's `replica` blocks. A
/// table without a stream of new and old images cannot be replicated.
#[test]
fn replicas_make_a_global_table_in_both_languages() {
    let db = singletable_offline::<Shop>();
    let global = db
        .admin()
        .create_table()
        .tag("team", "payments")
        .unwrap()
        .replicas(["eu-west-2", "eu-central-1", "eu-west-2"])
        .unwrap();
    let resource = serde_json::to_value(global.cloudformation()).unwrap();
    assert_eq!(resource["Type"], "AWS::DynamoDB::GlobalTable");
    assert_eq!(resource["DeletionPolicy"], "Retain");
    let properties = &resource["Properties"];
    assert_eq!(
        properties["StreamSpecification"]["StreamViewType"],
        "NEW_AND_OLD_IMAGES"
    );
    let replicas = properties["Replicas"].as_array().unwrap();
    let regions: Vec<&Value> = replicas.iter().map(|replica| &replica["Region"]).collect();
    assert_eq!(
        regions,
        [
            &serde_json::json!({"Ref": "AWS::Region"}),
            &serde_json::json!("eu-west-2"),
            &serde_json::json!("eu-central-1")
        ]
    );
    for replica in replicas {
        assert_eq!(replica["DeletionProtectionEnabled"], true);
        assert_eq!(
            replica["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"],
            true
        );
        assert_eq!(replica["Tags"][0]["Key"], "team");
    }
    let block = global.terraform("shop").unwrap();
    let body: hcl::Body = hcl::from_str(&block).unwrap_or_else(|e| panic!("{e}\n{block}"));
    let table = body.blocks().next().unwrap().body();
    let replicas: Vec<String> = table
        .blocks()
        .filter(|block| block.identifier() == "replica")
        .map(|block| hcl_text(block.body(), "region_name").unwrap())
        .collect();
    assert_eq!(replicas, ["eu-west-2", "eu-central-1"]);

    let refused = singletable_offline::<ShopWithoutStream>()
        .admin()
        .create_table()
        .replicas(["eu-west-2"]);
    assert!(
        matches!(&refused, Err(InfraError::Replicas { reason }) if reason.contains("new_and_old_images")),
        "{:?}",
        refused.map(|_| ())
    );
    let refused = db.admin().create_table().replicas(["EU West"]);
    assert!(matches!(refused, Err(InfraError::Replicas { .. })));
}

#[derive(Table)]
#[dynamo(name = "infra-plain", pk = "PK", sk = "SK")]
pub struct ShopWithoutStream;

/// A table a CloudFormation stack manages carries the `aws:cloudformation:stack-name` tag:
/// apply leaves it as it is (its change belongs in the template) unless forced. CloudFormation
/// sets that tag, and DynamoDB refuses `aws:` keys from anyone else; the engines take it, so
/// the test sets it itself there, and skips on DynamoDB with the index backfill it waits for.
#[test]
fn apply_leaves_a_stack_managed_table_to_its_stack_unless_forced() {
    use singletable::migrate::MigrationError;
    if common::skips(Needs::TableChange) {
        return;
    }
    runtime().block_on(async {
        let table = singletable::testing::table::<Shop>().await.unwrap();
        let client = table.client().clone();
        let described = client
            .describe_table()
            .table_name(table.table_name())
            .send()
            .await
            .unwrap();
        let arn = described.table().and_then(|t| t.table_arn()).unwrap();
        let tag = aws_sdk_dynamodb::types::Tag::builder()
            .key("aws:cloudformation:stack-name")
            .value("shop-stack")
            .build()
            .unwrap();
        client
            .tag_resource()
            .resource_arn(arn)
            .tags(tag)
            .send()
            .await
            .unwrap();
        let next = Db::<ShopNext>::new(client).with_table_name(table.table_name());
        let migration = || next.admin().table_migration(&[]);
        match migration().send().await {
            Err(singletable::Error::Migration(MigrationError::StackManaged { stack, .. })) => {
                assert_eq!(stack, "shop-stack")
            }
            other => panic!("expected StackManaged, got {other:?}"),
        }
        // The command line refuses too, and prints the resource the stack's template should
        // state: the table with the index apply would have made.
        #[cfg(feature = "cli")]
        {
            let entities = singletable::cli::Entities::new();
            let (code, out, err) = common::run_cli(&next, entities, "shop", &["apply"]).await;
            assert_eq!(code, singletable::cli::EXIT_FAILURE, "{out}{err}");
            assert!(
                err.contains("shop-stack") && err.contains("--force"),
                "{err}"
            );
            let resource: Value =
                serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
            assert_eq!(resource["Type"], "AWS::DynamoDB::Table");
            let indexes = resource["Properties"]["GlobalSecondaryIndexes"]
                .as_array()
                .unwrap();
            // ShopNext's four global indexes, `ByDay` among them.
            assert_eq!(indexes.len(), 4, "{out}");
            assert!(out.contains("ByDay"), "{out}");
        }
        let plan = migration().plan().await.unwrap();
        assert!(
            (plan.actions.iter()).any(|action| matches!(action, PlanAction::CreateIndex(_))),
            "nothing changed: {plan}"
        );
        migration()
            .force()
            .poll_interval(Duration::from_millis(50))
            .send()
            .await
            .unwrap();
        assert!(migration().plan().await.unwrap().is_up_to_date());
    });
}

/// A table made without the infrastructure code (by `ensure_table`, as tests and development
/// make them) lacks what the code sets to keep the data: the plan says which settings differ,
/// and leaves them to the infrastructure code; with the settings of an unprotected table's
/// code, only the encryption differs.
#[test]
fn the_plan_names_the_settings_a_table_lacks() {
    runtime().block_on(async {
        // Made as `ensure_table` makes it, and deleted when the test ends.
        let db = singletable::testing::table::<Shop>().await.unwrap();
        let migration = db.admin().table_migration(&[Order::SCHEMA]);
        let plan = migration.plan().await.unwrap();
        let settings: BTreeSet<(&str, &str)> = plan
            .notes
            .iter()
            .filter_map(|note| match note {
                singletable::migrate::Note::Setting { setting, found, .. } => {
                    Some((*setting, found.as_str()))
                }
                _ => None,
            })
            .collect();
        let mut expected = BTreeSet::from([
            ("deletion_protection", "off"),
            ("encryption", "AWS owned key"),
        ]);
        if !engine().deviates(Deviation::NoContinuousBackups) {
            expected.insert(("point_in_time_recovery", "off"));
        }
        assert_eq!(settings, expected, "{plan}");
        // Settings are notes: the only action is the record of the keys.
        let only_records =
            (plan.actions.iter()).all(|action| matches!(action, PlanAction::RecordKeys { .. }));
        assert!(plan.blockers.is_empty() && only_records, "{plan}");
        let shown = plan.to_string();
        assert!(
            shown.contains("deletion_protection: off on the table, on in its infrastructure code"),
            "{shown}"
        );
        let scratch = db.admin().create_table().unprotected();
        let plan = db
            .admin()
            .table_migration(&[Order::SCHEMA])
            .settings(&scratch)
            .plan()
            .await
            .unwrap();
        let settings: Vec<&str> = plan
            .notes
            .iter()
            .filter_map(|note| match note {
                singletable::migrate::Note::Setting { setting, .. } => Some(*setting),
                _ => None,
            })
            .collect();
        assert_eq!(settings, ["encryption"], "{plan}");
    });
}

/// Provisioned capacity for the table and each global index, and auto scaling of every one of
/// them: CloudFormation's scalable targets and target-tracking policies beside the table,
/// Terraform's after its block (whose capacity a plan then leaves to the scaling). What AWS
/// would refuse is refused here.
#[test]
fn provisioned_capacity_scales_the_table_and_each_global_index() {
    let db = singletable_offline::<Shop>();
    let scaled = db
        .admin()
        .create_table()
        .on_demand_maximum(2000, 500)
        .provisioned(5, 10)
        .unwrap()
        .auto_scaling(400, 100, 70)
        .unwrap();
    let cloudformation = scaled.cloudformation();
    let resource = serde_json::to_value(&cloudformation).unwrap();
    let properties = &resource["Properties"];
    assert_eq!(properties["BillingMode"], "PROVISIONED");
    let units = json!({ "ReadCapacityUnits": 5, "WriteCapacityUnits": 10 });
    assert_eq!(properties["ProvisionedThroughput"], units);
    assert!(
        properties.get("OnDemandThroughput").is_none(),
        "{resource:#}"
    );
    for index in properties["GlobalSecondaryIndexes"].as_array().unwrap() {
        assert_eq!(index["ProvisionedThroughput"], units, "{index}");
    }
    for index in properties["LocalSecondaryIndexes"].as_array().unwrap() {
        assert!(index.get("ProvisionedThroughput").is_none(), "{index}");
    }
    let resources = cloudformation.auto_scaling_resources("Shop");
    // The table and its three global indexes, reads and writes, a target and a policy each.
    assert_eq!(resources.len(), 16, "{resources:#?}");
    let target = &resources["ShopByCustomerWriteScaling"];
    assert_eq!(
        target["Type"],
        "AWS::ApplicationAutoScaling::ScalableTarget"
    );
    assert_eq!(
        target["Properties"],
        json!({
            "MaxCapacity": 100,
            "MinCapacity": 10,
            "ResourceId": { "Fn::Sub": "table/${Shop}/index/ByCustomer" },
            "ScalableDimension": "dynamodb:index:WriteCapacityUnits",
            "ServiceNamespace": "dynamodb",
        })
    );
    let policy = &resources["ShopReadScalingPolicy"]["Properties"];
    assert_eq!(
        policy["ScalingTargetId"],
        json!({ "Ref": "ShopReadScaling" })
    );
    assert_eq!(
        policy["TargetTrackingScalingPolicyConfiguration"],
        json!({
            "TargetValue": 70.0,
            "PredefinedMetricSpecification": {
                "PredefinedMetricType": "DynamoDBReadCapacityUtilization"
            },
        })
    );
    assert!(db
        .admin()
        .create_table()
        .cloudformation()
        .auto_scaling_resources("Shop")
        .is_empty());

    let block = scaled.terraform("shop").unwrap();
    let body: hcl::Body = hcl::from_str(&block).unwrap_or_else(|e| panic!("{e}\n{block}"));
    let kinds: Vec<String> = body
        .blocks()
        .map(|block| block.labels()[0].as_str().to_owned())
        .collect();
    assert_eq!(kinds[0], "aws_dynamodb_table");
    let count = |kind: &str| kinds.iter().filter(|k| *k == kind).count();
    assert_eq!(
        (
            count("aws_appautoscaling_target"),
            count("aws_appautoscaling_policy")
        ),
        (8, 8)
    );
    let table = body.blocks().next().unwrap().body();
    assert_eq!(
        hcl_text(table, "billing_mode").as_deref(),
        Some("PROVISIONED")
    );
    // Attribute by attribute, whatever `terraform fmt`'s alignment.
    let words = block.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("read_capacity = 5 write_capacity = 10"),
        "{block}"
    );
    assert!(
        words.contains("ignore_changes = [read_capacity, write_capacity]"),
        "{block}"
    );
    assert!(
        words.contains("resource_id = \"table/${aws_dynamodb_table.shop.name}/index/ByStatus\""),
        "{block}"
    );

    let refused = |result: Result<singletable::op::table::CreateTable, InfraError>| {
        matches!(result, Err(InfraError::Capacity { .. }))
    };
    let table = || db.admin().create_table();
    assert!(refused(table().provisioned(0, 5)));
    assert!(refused(table().auto_scaling(10, 10, 70)));
    assert!(refused(
        table().provisioned(5, 5).unwrap().auto_scaling(4, 10, 70)
    ));
    assert!(refused(
        table().provisioned(5, 5).unwrap().auto_scaling(10, 10, 95)
    ));
    assert!(refused(
        table().provisioned(5, 5).unwrap().auto_scaling(10, 10, 19)
    ));
    let global = table().replicas(["eu-west-2"]).unwrap();
    assert!(refused(global.provisioned(5, 5)));
    let replicated = table().provisioned(5, 5).unwrap().replicas(["eu-west-2"]);
    assert!(matches!(replicated, Err(InfraError::Replicas { .. })));
}
