//! NoSQL Workbench models out: the table as the Workbench's data model (format 3.0), with its
//! keys, indexes, projections, facets and billing, and sample items exactly as a put stores
//! them on the engine.

mod common;

use serde::{Deserialize, Serialize};
use singletable::workbench::format::{Facet, Model};
use singletable::workbench::WorkbenchError;
use singletable::{Entity, KeyPart, Table};

#[derive(Table)]
#[dynamo(
    name = "workbench-shop",
    pk = "PK",
    sk = "SK",
    gsi1(name = "ByTeam", pk = "GSI1PK", sk = "GSI1SK"),
    gsi2(name = "ByAuthor", pk = "author", sk = "score", sk_type = "N", projection = ["title"]),
    gsi3(name = "Keys", pk = "GSI3PK", projection = "keys_only"),
    lsi1(name = "ByTitle", sk = "title")
)]
pub struct Shop;

#[derive(KeyPart, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Open,
    Closed,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "TICKET#{id}", sk = "TICKET",
         gsi1pk = "TEAM#{team_id}", gsi1sk = "STATUS#{status}#TICKET#{id}",
         gsi1_when = Ticket::is_open(status))]
pub struct Ticket {
    pub id: String,
    pub team_id: u32,
    pub status: Status,
    pub title: String,
    pub labels: Vec<String>,
    pub watchers: Option<std::collections::BTreeMap<String, bool>>,
}

impl Ticket {
    fn is_open(status: &Status) -> bool {
        *status == Status::Open
    }
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "REVIEW#{id}", sk = "REVIEW", gsi2pk = author, gsi2sk = score,
         gsi3pk = "AUTHOR#{author}")]
pub struct Review {
    pub id: String,
    pub author: String,
    pub score: u32,
    pub title: String,
    #[serde(rename = "Body")]
    pub body: Option<String>,
}

#[derive(Table)]
#[dynamo(name = "workbench-wide", pk = "PK", gsi1(pk = ["tenant", "region"]))]
pub struct Wide;

#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = Wide, pk = "T#{id}", gsi1pk = [tenant, region])]
pub struct Tenanted {
    pub id: String,
    pub tenant: String,
    pub region: String,
}

fn ticket(id: &str, status: Status) -> Ticket {
    Ticket {
        id: id.into(),
        team_id: 7,
        status,
        title: format!("Ticket {id}"),
        labels: vec!["printer".into()],
        watchers: None,
    }
}

fn parse(json: &str) -> Model {
    serde_json::from_str(json).expect("the export reads as a Workbench model")
}

fn facet<'m>(model: &'m Model, name: &str) -> &'m Facet {
    let table = &model.data_model[0];
    (table.table_facets.iter())
        .find(|facet| facet.facet_name == name)
        .unwrap_or_else(|| panic!("no facet {name}"))
}

fn attribute_type(model: &Model, name: &str) -> Option<String> {
    (model.data_model[0].non_key_attributes.iter())
        .find(|attribute| attribute.attribute_name == name)
        .map(|attribute| attribute.attribute_type.clone())
}

#[test]
fn a_table_exports_its_keys_indexes_facets_and_billing() {
    let db = common::offline::<Shop>();
    let create = db
        .admin()
        .create_table()
        .provisioned(5, 5)
        .and_then(|create| create.auto_scaling(10, 20, 70))
        .expect("capacity");
    let json = db
        .admin()
        .workbench_model()
        .entity::<Ticket>()
        .entity::<Review>()
        .infrastructure(&create)
        .to_json()
        .expect("exports");
    let model = parse(&json);
    assert_eq!(model.model_metadata.version, "3.0");
    assert_eq!(model.model_metadata.aws_service, "Amazon DynamoDB");
    let table = &model.data_model[0];
    assert_eq!(table.table_name, "workbench-shop");
    assert_eq!(table.key_attributes.partition_key.attribute_name, "PK");
    assert_eq!(
        table
            .key_attributes
            .sort_key
            .as_ref()
            .map(|key| key.attribute_name.as_str()),
        Some("SK")
    );

    // Facets: one per entity, its templates as key aliases.
    let tickets = facet(&model, "Ticket");
    assert_eq!(tickets.key_attribute_alias.partition_key_alias, "TICKET#id");
    assert_eq!(
        tickets.key_attribute_alias.sort_key_alias.as_deref(),
        Some("TICKET")
    );
    assert!(tickets.table_data.is_empty());
    assert!(tickets
        .non_key_attributes
        .iter()
        .any(|name| name == "labels"));
    let reviews = facet(&model, "Review");
    assert_eq!(reviews.key_attribute_alias.partition_key_alias, "REVIEW#id");
    assert!(
        reviews.non_key_attributes.iter().any(|name| name == "Body"),
        "serde's rename"
    );

    // Attribute types from the entities' types, with no samples: keys are not among them.
    assert_eq!(attribute_type(&model, "team_id").as_deref(), Some("N"));
    assert_eq!(attribute_type(&model, "status").as_deref(), Some("S"));
    assert_eq!(attribute_type(&model, "labels").as_deref(), Some("L"));
    assert_eq!(attribute_type(&model, "watchers").as_deref(), Some("M"));
    assert_eq!(attribute_type(&model, "Body").as_deref(), Some("S"));
    assert_eq!(attribute_type(&model, "score").as_deref(), Some("N"));
    assert_eq!(attribute_type(&model, "GSI1PK").as_deref(), Some("S"));
    assert_eq!(attribute_type(&model, "_type").as_deref(), Some("S"));
    assert_eq!(attribute_type(&model, "PK"), None);

    // Indexes, with their projections as the table is created.
    let global = &table.global_secondary_indexes;
    let names: Vec<&str> = global
        .iter()
        .map(|index| index.index_name.as_str())
        .collect();
    assert_eq!(names, ["ByTeam", "ByAuthor", "Keys"]);
    assert_eq!(global[0].projection.projection_type, "ALL");
    assert_eq!(
        global[1].key_attributes.partition_key.attribute_name,
        "author"
    );
    let score = global[1]
        .key_attributes
        .sort_key
        .as_ref()
        .expect("a sort key");
    assert_eq!(
        (score.attribute_name.as_str(), score.attribute_type.as_str()),
        ("score", "N")
    );
    assert_eq!(global[1].projection.projection_type, "INCLUDE");
    assert!(global[1]
        .projection
        .non_key_attributes
        .iter()
        .any(|name| name == "title"));
    assert_eq!(global[2].projection.projection_type, "KEYS_ONLY");
    assert_eq!(global[2].key_attributes.sort_key, None);
    let local = &table.local_secondary_indexes;
    assert_eq!(local.len(), 1);
    assert_eq!(local[0].key_attributes.partition_key.attribute_name, "PK");
    assert_eq!(
        local[0]
            .key_attributes
            .sort_key
            .as_ref()
            .map(|key| key.attribute_name.as_str()),
        Some("title")
    );

    // Billing: the infrastructure's provisioned capacity, scaling up from it.
    assert_eq!(table.billing_mode, "PROVISIONED");
    let capacity = table
        .provisioned_capacity_settings
        .as_ref()
        .expect("capacity");
    assert_eq!(capacity["ProvisionedThroughput"]["ReadCapacityUnits"], 5);
    assert_eq!(
        capacity["AutoScalingWrite"]["ScalableTargetRequest"]["MinCapacity"],
        5
    );
    assert_eq!(
        capacity["AutoScalingWrite"]["ScalableTargetRequest"]["MaxCapacity"],
        20
    );
    assert_eq!(
        capacity["AutoScalingRead"]["ScalingPolicyConfiguration"]["TargetValue"],
        70
    );

    let on_demand = parse(&db.admin().workbench_model().to_json().expect("exports"));
    assert_eq!(on_demand.data_model[0].billing_mode, "PAY_PER_REQUEST");
    assert_eq!(on_demand.data_model[0].provisioned_capacity_settings, None);
}

#[test]
fn a_key_of_several_attributes_is_refused_with_its_index_named() {
    let db = common::offline::<Wide>();
    match db.admin().workbench_model().entity::<Tenanted>().to_json() {
        Err(WorkbenchError::MultiAttributeKey { index, attributes }) => {
            assert_eq!((index, attributes.as_str()), ("GSI1", "tenant, region"));
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_sample_a_put_would_refuse_is_refused() {
    let db = common::offline::<Shop>();
    let bad = Ticket {
        id: "a#b".into(),
        ..ticket("1", Status::Open)
    };
    let refused = db.admin().workbench_model().sample(&bad).err();
    assert!(
        matches!(
            refused,
            Some(WorkbenchError::Sample {
                entity: "Ticket",
                ..
            })
        ),
        "{refused:?}"
    );
}

#[singletable::test]
async fn samples_are_the_items_a_put_stores(
    db: singletable::Db<Shop>,
) -> Result<(), Box<dyn std::error::Error>> {
    let open = ticket("1", Status::Open);
    let closed = ticket("2", Status::Closed);
    let review = Review {
        id: "r1".into(),
        author: "ana".into(),
        score: 4,
        title: "Good".into(),
        body: Some("Works".into()),
    };
    let json = db
        .admin()
        .workbench_model()
        .sample(&open)?
        .sample(&closed)?
        .sample(&review)?
        .to_json()?;
    let model = parse(&json);
    let again = (db.admin().workbench_model())
        .sample(&open)?
        .sample(&closed)?
        .sample(&review)?
        .to_json()?;
    assert_eq!(
        json, again,
        "the same model, attribute for attribute, every time"
    );
    db.put(&open).send().await?;
    db.put(&closed).send().await?;
    db.put(&review).send().await?;
    let stored: Vec<serde_json::Value> = (common::raw_items(&db).await.iter())
        .map(singletable::wire::item)
        .collect();
    let exported: Vec<&serde_json::Value> = model.data_model[0]
        .table_facets
        .iter()
        .flat_map(|facet| &facet.table_data)
        .collect();
    assert_eq!(exported.len(), 3);
    for item in exported {
        // The managed timestamps of this design are none, so a stored item is the sample.
        assert!(
            stored.contains(item),
            "{item:#} is not stored as exported: {stored:#?}"
        );
    }
    let tickets = facet(&model, "Ticket");
    assert_eq!(tickets.table_data.len(), 2);
    assert!(
        tickets.table_data[0].get("GSI1PK").is_some(),
        "an open ticket's index keys"
    );
    assert!(
        tickets.table_data[1].get("GSI1PK").is_none(),
        "a closed one is not indexed"
    );
    // A sample's stored type wins over what the type asks for.
    assert_eq!(attribute_type(&model, "watchers").as_deref(), Some("M"));
    Ok(())
}

/// The command line's `workbench` (samples from a file) and `import-workbench`.
#[cfg(feature = "cli")]
mod cli {
    use super::*;
    use singletable::cli::{Entities, EXIT_OK, EXIT_USAGE};

    fn run(args: &[&str]) -> (u8, String, String) {
        let db = common::offline::<Shop>();
        let entities = Entities::new().with::<Ticket>().with::<Review>();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(common::run_cli(&db, entities, "shop", args))
    }

    fn file(name: &str, text: &str) -> String {
        let path = std::env::temp_dir().join(format!("singletable-{}-{name}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }

    #[test]
    fn workbench_prints_the_model_with_the_samples_of_a_file() {
        let samples = file(
            "samples.json",
            r#"{"Ticket": [{"id": "1", "team_id": 7, "status": "open", "title": "A", "labels": []}],
                "review": [{"id": "r1", "author": "ana", "score": 4, "title": "Good"}]}"#,
        );
        let (code, out, err) = run(&[
            "workbench",
            "--samples",
            &samples,
            "--provisioned",
            "5",
            "5",
        ]);
        assert_eq!(code, EXIT_OK, "{err}");
        let model = parse(&out);
        let ticket = singletable::item::encode(&ticket("1", Status::Open)).unwrap();
        let exported = &facet(&model, "Ticket").table_data;
        assert_eq!(exported.len(), 1);
        assert_eq!(
            exported[0]["GSI1PK"],
            singletable::wire::item(&ticket)["GSI1PK"]
        );
        assert_eq!(
            facet(&model, "Review").table_data.len(),
            1,
            "entity names match in any case"
        );
        assert_eq!(model.data_model[0].billing_mode, "PROVISIONED");

        let unknown = file("unknown.json", r#"{"Invoice": []}"#);
        let (code, _, err) = run(&["workbench", "--samples", &unknown]);
        assert_eq!(code, EXIT_USAGE);
        assert!(
            err.contains("no entity `Invoice`") && err.contains("Ticket, Review"),
            "{err}"
        );
        // A value that does not read as its entity: said where, without the value.
        let wrong = file(
            "wrong.json",
            r#"{"Ticket": [{"id": "secret@example.com"}]}"#,
        );
        let (code, _, err) = run(&["workbench", "--samples", &wrong]);
        assert_eq!(code, EXIT_USAGE);
        assert!(
            err.contains("a `Ticket` sample does not read as one"),
            "{err}"
        );
        assert!(!err.contains("secret@example.com"), "{err}");
    }

    #[test]
    fn import_workbench_writes_the_package_and_lists_the_decisions() {
        let model = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/workbench/RecurringPaymentsSchema.json"
        );
        let out = std::env::temp_dir().join(format!("singletable-{}-import", std::process::id()));
        let out = out.display().to_string();
        let (code, printed, err) = run(&["import-workbench", model, "--out", &out]);
        assert_eq!(code, EXIT_OK, "{err}");
        assert!(
            printed.contains("wrote package payments-system-model"),
            "{printed}"
        );
        assert!(
            printed.contains("NEEDS A DECISION: Receipts: `SK` holds a `processed_date`"),
            "{printed}"
        );
        let lib = std::fs::read_to_string(format!("{out}/src/lib.rs")).unwrap();
        assert!(lib.contains("sk = \"SUB#{sub_id}#SKU#{sku}\""), "{lib}");
        let manifest = std::fs::read_to_string(format!("{out}/Cargo.toml")).unwrap();
        assert!(
            manifest.contains("singletable = { version = \"0.1.0\" }"),
            "{manifest}"
        );
        let _ = std::fs::remove_dir_all(&out);

        let (code, _, err) = run(&["import-workbench", "/nonexistent.json", "--out", "/tmp/x"]);
        assert_eq!(code, EXIT_USAGE);
        assert!(err.contains("/nonexistent.json"), "{err}");
    }
}
