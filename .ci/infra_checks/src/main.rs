//! Writes into the directory given as the only argument: the table as CloudFormation
//! templates and Terraform (defaults; a customer-managed key with tags and capacity settings;
//! a global table; provisioned capacity with auto scaling; unprotected) and its IAM policies
//! (the service's, read-only, deployment).

use singletable::infra::{IamPolicy, TableArn};
use singletable::op::table::CreateTable;
use singletable::{Db, Table};
use std::path::Path;

#[derive(Table)]
#[dynamo(
    name = "orders",
    pk = "PK",
    sk = "SK",
    ttl = "expires_at",
    stream = "new_and_old_images",
    gsi1(name = "ByCustomer", pk = "GSI1PK", sk = "GSI1SK", projection = ["total"]),
    gsi2(name = "ByStatus", pk = "GSI2PK", sk = "GSI2SK", projection = "keys_only"),
    lsi1(name = "ByPlaced", sk = "LSI1SK")
)]
struct Orders;

const KEY: &str = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args().nth(1).ok_or("usage: infra-checks OUT_DIR")?;
    let out = Path::new(&out);
    // Generating needs no request: a client that is never called.
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
        .region(aws_sdk_dynamodb::config::Region::new("eu-west-1"))
        .build();
    let db = Db::<Orders>::new(aws_sdk_dynamodb::Client::from_conf(config));
    let table = || db.admin().create_table();
    let configured = || -> Result<CreateTable, Box<dyn std::error::Error>> {
        Ok(table()
            .tag("team", "payments")?
            .kms_key(KEY)
            .on_demand_maximum(2000, 500)
            .warm_throughput(12000, 4000))
    };
    let variants = [
        ("default", table()),
        ("cmk", configured()?),
        ("global", configured()?.replicas(["eu-west-2", "eu-central-1"])?),
        (
            "scaled",
            table()
                .kms_key(KEY)
                .provisioned(5, 5)?
                .auto_scaling(400, 100, 70)?,
        ),
        ("unprotected", table().unprotected()),
    ];
    for (name, definition) in variants {
        let dir = out.join(name);
        std::fs::create_dir_all(&dir)?;
        let cloudformation = definition.cloudformation();
        let mut resources = cloudformation.auto_scaling_resources("Orders");
        resources.insert("Orders".to_owned(), serde_json::to_value(&cloudformation)?);
        let template = serde_json::json!({
            "AWSTemplateFormatVersion": "2010-09-09",
            "Resources": resources,
        });
        std::fs::write(dir.join("table.json"), format!("{template:#}\n"))?;
        std::fs::write(dir.join("table.tf"), definition.terraform("orders")?)?;
    }
    let arn = TableArn::new("eu-west-1", "123456789012", db.table_name())?;
    let policies = [
        ("service", IamPolicy::for_table::<Orders>(arn.clone()).with_streams()),
        ("read-only", IamPolicy::for_table::<Orders>(arn.clone()).read_only()),
        ("deployment", IamPolicy::for_table::<Orders>(arn).with_administration()),
    ];
    for (name, policy) in policies {
        std::fs::write(out.join(format!("policy-{name}.json")), format!("{policy}\n"))?;
    }
    Ok(())
}
