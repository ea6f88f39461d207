//! NoSQL Workbench models in: AWS's published designs (`tests/fixtures/workbench/`, MIT No
//! Attribution, from aws-samples/aws-dynamodb-examples) and one of ours whose facets hold
//! items of several key shapes, imported as packages. The fast tests read what the importer
//! writes. `imported_packages_pass_their_own_tests` builds each package, runs its tests (every
//! sample written and read back on the embedded engine, the schema exported again), and
//! compares the model each exports with the original; it builds a package per model, minutes
//! on a fresh machine, so it is ignored here and `.ci/run` runs it.

use serde_json::Value;
use singletable_cli::import::{self, Dependency, ImportError, Package};
use singletable_runtime::workbench::format::{Model, TableModel};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

const MODELS: [&str; 5] = [
    "ChatSystemSchema.json",
    "ComplaintManagementSchema.json",
    "RecurringPaymentsSchema.json",
    "SessionManagementSchema.json",
    "SeveralShapesSchema.json",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn fixture(name: &str) -> String {
    let path = root().join("tests/fixtures/workbench").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn imported(name: &str) -> Package {
    import::workbench(&fixture(name), &Dependency::Path(root())).expect("the model imports")
}

fn file<'p>(package: &'p Package, path: &str) -> &'p str {
    let found = package
        .files
        .iter()
        .find(|(file, _)| file == Path::new(path));
    found
        .map(|(_, text)| text.as_str())
        .unwrap_or_else(|| panic!("no {path}"))
}

fn lib(name: &str) -> String {
    file(&imported(name), "src/lib.rs").to_owned()
}

fn has(text: &str, wanted: &str) {
    assert!(text.contains(wanted), "no `{wanted}` in:\n{text}");
}

#[test]
fn templates_come_from_facet_aliases_and_the_attributes_keys_repeat() {
    let lib = lib("RecurringPaymentsSchema.json");
    has(&lib, "name = \"Subscription\"");
    has(&lib, "pk = \"ACC#{account_id}\"");
    has(&lib, "sk = \"SUB#{sub_id}#SKU#{sku}\"");
    // The key's SKU is the item's `SKU` attribute: one field.
    has(&lib, "#[serde(rename = \"SKU\")]\n    pub sku: String,");
    // The receipt's key has a date the item's `ProcessedDate` attribute is not: said so.
    has(&lib, "sk = \"REC#{processed_date_key}#SKU#{sku}\"");
    has(
        &lib,
        "NEEDS A DECISION: `SK` holds a `processed_date` that is not the item's `ProcessedDate`",
    );
    has(
        &lib,
        "NEEDS A DECISION: `SKU` in `SK` is taken as constant text from one sample",
    );
    // Indexes on plain attributes, with their projections less the keys.
    has(&lib, "gsi1(name = \"GSI-1\", pk = \"NextReminderDate\", sk = \"LastReminderDate\", projection = [\"SKU\", \"Email\", \"NextPaymentDate\"])");
    has(&lib, "gsi1pk = next_reminder_date,");
    has(&lib, "pub payment_details: BTreeMap<String, String>,");
    has(&lib, "#[serde(rename = \"TTL\")]\n    pub ttl: i64,");
    has(&lib, "provisioned(5, 5)?.auto_scaling(10, 10, 70)");
}

#[test]
fn a_model_without_facets_is_grouped_by_the_shapes_of_its_keys() {
    let chat = lib("ChatSystemSchema.json");
    has(&chat, "name = \"User\",\n    pk = \"User:{user}\",\n    sk = \"{sk}\",\n    gsi1pk = room_id,\n    gsi1sk = created_at,");
    has(
        &chat,
        "name = \"RoomMeta\",\n    pk = \"Room:{room}\",\n    sk = \"meta\",\n)]",
    );
    let complaints = lib("ComplaintManagementSchema.json");
    has(
        &complaints,
        "pk = \"{pk}\",\n    sk = \"comm#{comm_date}#{comm_id}\",",
    );
    has(
        &complaints,
        "pk = \"{complaint_id}\",\n    sk = \"metadata\",",
    );
    has(&complaints, "pub agent_id: Option<String>,");
    has(
        &complaints,
        "#[serde(default, skip_serializing_if = \"Vec::is_empty\", with = \"serde_dynamo::string_set\")]\n    pub attachments: Vec<String>,",
    );
    let sessions = lib("SessionManagementSchema.json");
    // An inverted index: each entity writes its table keys' templates there.
    has(&sessions, "pk = \"suuid#{suuid}\",\n    sk = \"child#suuid#{child_suuid}\",\n    gsi1pk = \"child#suuid#{child_suuid}\",\n    gsi1sk = \"suuid#{suuid}\",");
    has(&sessions, "sk = \"c#{c}\",");
}

#[test]
fn a_facet_of_several_shapes_is_an_entity_per_shape_and_what_needs_a_decision_is_left_out() {
    let package = imported("SeveralShapesSchema.json");
    let lib = file(&package, "src/lib.rs");
    has(
        lib,
        "name = \"MemberProfile\",\n    pk = \"MEMBER#{member_id}\",\n    sk = \"PROFILE\",",
    );
    has(
        lib,
        "name = \"MemberLoan\",\n    pk = \"MEMBER#{member_id}\",\n    sk = \"LOAN#{loan}#{sk}\",",
    );
    has(lib, "name = \"Book\",");
    has(
        lib,
        "NEEDS A DECISION: `SK`'s alias `Kind` names 1 part, and the key has 2",
    );
    has(lib, "pub fine: f64,");
    has(lib, "pub joined: i64,");
    has(lib, "pub active: bool,");
    has(lib, "pub address: MemberProfileAddress,");
    has(lib, "pub floor: Option<i64>,");
    has(
        lib,
        "#[serde(rename = \"Ratings\", default, skip_serializing_if = \"Vec::is_empty\", with = \"serde_dynamo::number_set\")]\n    pub ratings: Vec<i64>,",
    );
    has(lib, "pub shelves: Vec<String>,");
    has(lib, "NEEDS A DECISION: `Note` needs a decision: it is NULL");
    has(
        lib,
        "NEEDS A DECISION: `Cover` needs a decision: binary values need a decision",
    );
    let test = file(&package, "tests/sample_items.rs");
    has(test, "// Left out: its `Note` needs a decision: it is NULL");
    has(
        test,
        "// Left out: its `Cover` needs a decision: binary values",
    );
    assert_eq!(
        test.matches("round_trip::<").count(),
        4,
        "every sample but the two left out"
    );
    assert!(package
        .decisions
        .iter()
        .any(|decision| decision.starts_with("MemberProfile: `Note`")));
}

#[test]
fn what_is_not_a_model_or_has_keys_the_library_cannot_write_is_refused() {
    let not_a_model = import::workbench("{\"ModelName\": 3}", &Dependency::Version("0.1".into()));
    assert!(
        matches!(not_a_model, Err(ImportError::NotAModel { .. })),
        "{not_a_model:?}"
    );
    let mut model: Value = serde_json::from_str(&fixture("ChatSystemSchema.json")).expect("JSON");
    model["DataModel"][0]["KeyAttributes"]["PartitionKey"]["AttributeType"] = "N".into();
    match import::workbench(&model.to_string(), &Dependency::Version("0.1".into())) {
        Err(ImportError::KeyType {
            table,
            attribute,
            found,
        }) => {
            assert_eq!(
                (table.as_str(), attribute.as_str(), found.as_str()),
                ("Chat", "PK", "N")
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn the_package_depends_on_singletable_as_asked() {
    let by_version = import::workbench(
        &fixture("ChatSystemSchema.json"),
        &Dependency::Version("0.1".into()),
    )
    .expect("imports");
    has(
        file(&by_version, "Cargo.toml"),
        "singletable = { version = \"0.1\" }",
    );
    let by_path = imported("ChatSystemSchema.json");
    has(file(&by_path, "Cargo.toml"), "singletable = { path = ");
    has(file(&by_path, "Cargo.toml"), "[workspace]");
}

/// Builds every imported package and runs its tests: each sample written and read back, and
/// the schema exported again, which is then compared with the original model.
#[test]
#[ignore = "builds a package per model (minutes on a fresh machine); .ci/run runs it"]
fn imported_packages_pass_their_own_tests() {
    let work = root().join("target/workbench-import");
    let target = work.join("target");
    let mut failures = Vec::new();
    for name in MODELS {
        let package = imported(name);
        let directory = work.join(&package.name);
        let _ = std::fs::remove_dir_all(directory.join("src"));
        package.write(&directory).expect("the package is written");
        // The workspace's lock file, so the package builds the versions CI tested.
        std::fs::copy(root().join("Cargo.lock"), directory.join("Cargo.lock")).expect("Cargo.lock");
        let status = Command::new(env!("CARGO"))
            .args(["test", "--quiet", "--manifest-path"])
            .arg(directory.join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", &target)
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .status()
            .expect("cargo runs");
        if !status.success() {
            failures.push(format!("{name}: the package's tests failed"));
            continue;
        }
        let original: Model = serde_json::from_str(&fixture(name)).expect("the fixture is a model");
        for table in &original.data_model {
            let crate_name = package.name.replace('-', "_");
            let exported = target
                .join("tmp")
                .join(format!("{crate_name}.{}.workbench.json", table.table_name));
            let exported =
                std::fs::read_to_string(&exported).expect("the package exported its model");
            let exported: Model = serde_json::from_str(&exported).expect("the export is a model");
            failures.extend(round_trip(name, &package, table, &exported.data_model[0]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What differs between a table of the original model and its export, beyond what the
/// library adds by design (each item's entity and schema version attributes and the fields
/// read from its keys; an `INCLUDE` index also holds the entity attribute).
fn round_trip(
    model: &str,
    package: &Package,
    original: &TableModel,
    exported: &TableModel,
) -> Vec<String> {
    let mut differences = Vec::new();
    let mut differ = |what: String| differences.push(format!("{model}: {what}"));
    if original.table_name != exported.table_name {
        differ(format!(
            "table name {} became {}",
            original.table_name, exported.table_name
        ));
    }
    if original.key_attributes != exported.key_attributes {
        differ(format!(
            "keys {:?} became {:?}",
            original.key_attributes, exported.key_attributes
        ));
    }
    if original.billing_mode != exported.billing_mode {
        differ(format!(
            "billing {} became {}",
            original.billing_mode, exported.billing_mode
        ));
    }
    let throughput = |table: &TableModel| {
        table
            .provisioned_capacity_settings
            .as_ref()
            .map(|settings| settings["ProvisionedThroughput"].clone())
    };
    if throughput(original) != throughput(exported) {
        differ(format!(
            "throughput {:?} became {:?}",
            throughput(original),
            throughput(exported)
        ));
    }
    let keys: BTreeSet<&str> = [
        Some(&original.key_attributes.partition_key),
        original.key_attributes.sort_key.as_ref(),
    ]
    .into_iter()
    .flatten()
    .map(|key| key.attribute_name.as_str())
    .collect();
    for index in &original.global_secondary_indexes {
        let Some(twin) = exported
            .global_secondary_indexes
            .iter()
            .find(|twin| twin.index_name == index.index_name)
        else {
            differ(format!("index {} is missing", index.index_name));
            continue;
        };
        if index.key_attributes != twin.key_attributes {
            differ(format!(
                "index {}'s keys {:?} became {:?}",
                index.index_name, index.key_attributes, twin.key_attributes
            ));
        }
        if index.projection.projection_type != twin.projection.projection_type {
            differ(format!(
                "index {}'s projection {} became {}",
                index.index_name, index.projection.projection_type, twin.projection.projection_type
            ));
        }
        let listed = |names: &[String]| -> BTreeSet<String> {
            names
                .iter()
                .filter(|name| !keys.contains(name.as_str()) && name.as_str() != "_type")
                .cloned()
                .collect()
        };
        if listed(&index.projection.non_key_attributes)
            != listed(&twin.projection.non_key_attributes)
        {
            differ(format!(
                "index {}'s attributes {:?} became {:?}",
                index.index_name,
                index.projection.non_key_attributes,
                twin.projection.non_key_attributes
            ));
        }
    }
    let exported_items: Vec<&Value> = (exported.table_facets.iter())
        .flat_map(|facet| &facet.table_data)
        .collect();
    let test = file(package, "tests/sample_items.rs");
    let original_items = (original
        .table_facets
        .iter()
        .flat_map(|facet| &facet.table_data))
    .chain(&original.table_data);
    for item in original_items {
        let json = serde_json::to_string(item).unwrap_or_default();
        if test.contains(&format!("// {json}")) {
            continue; // Left out of the test, with its reason: not exported either.
        }
        let same_key = |other: &&&Value| keys.iter().all(|key| other.get(*key) == item.get(*key));
        match exported_items.iter().find(same_key) {
            None => differ(format!("item {json} is not exported")),
            Some(twin) => {
                for (name, value) in item.as_object().into_iter().flatten() {
                    if twin.get(name) != Some(value) {
                        differ(format!("item {json}: `{name}` became {:?}", twin.get(name)));
                    }
                }
            }
        }
    }
    if original.table_facets.is_empty() {
        return differences;
    }
    let facets: BTreeSet<&str> = exported
        .table_facets
        .iter()
        .map(|facet| facet.facet_name.as_str())
        .collect();
    for facet in &original.table_facets {
        let named = facets
            .iter()
            .any(|name| name.starts_with(&names_of(&facet.facet_name)));
        if !named {
            differences.push(format!("{model}: facet {} is missing", facet.facet_name));
        }
    }
    differences
}

/// A facet's name as the importer names its entities.
fn names_of(facet: &str) -> String {
    facet
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}
