use super::*;
use crate::schema::{IndexProjection, KeyAttribute};

static GSI1: IndexSchema = IndexSchema {
    slot: "gsi1",
    name: "GSI1",
    kind: IndexKind::Global,
    partition_key: "GSI1PK",
    sort_key: Some("GSI1SK"),
    partition_keys: &[KeyAttribute {
        name: "GSI1PK",
        kind: ScalarType::String,
    }],
    sort_keys: &[KeyAttribute {
        name: "GSI1SK",
        kind: ScalarType::String,
    }],
    projection: IndexProjection::All,
};
static GSI2: IndexSchema = IndexSchema {
    slot: "gsi2",
    name: "GSI2",
    kind: IndexKind::Global,
    partition_key: "GSI2PK",
    sort_key: Some("GSI2SK"),
    partition_keys: &[KeyAttribute {
        name: "GSI2PK",
        kind: ScalarType::String,
    }],
    sort_keys: &[KeyAttribute {
        name: "GSI2SK",
        kind: ScalarType::Number,
    }],
    projection: IndexProjection::All,
};
static INDEXES: [IndexSchema; 2] = [GSI1, GSI2];
pub(super) static SCHEMA: TableSchema = TableSchema {
    type_name: "App",
    name: "app",
    partition_key: "PK",
    sort_key: Some("SK"),
    entity_attribute: "_type",
    schema_version_attribute: "_sv",
    indexes: &INDEXES,
    ttl_attribute: None,
    stream: None,
};

fn live(indexes: &[(&str, &str, &str)]) -> LiveTable {
    LiveTable {
        identity: None,
        ttl: None,
        stream: None,
        stream_arn: None,
        name: "app".into(),
        status: "ACTIVE".into(),
        partition_key: Some("PK".into()),
        sort_key: Some("SK".into()),
        attributes: vec![("PK".into(), "S".into()), ("SK".into(), "S".into())],
        global_indexes: indexes
            .iter()
            .map(|(name, pk, status)| LiveIndex {
                name: (*name).into(),
                partition_key: Some((*pk).into()),
                sort_key: Some(format!("{}SK", &pk[..4])),
                status: Some((*status).into()),
                backfilling: false,
                item_count: None,
                projection: Some("ALL".into()),
            })
            .collect(),
        local_indexes: Vec::new(),
        item_count: Some(3),
        provisioned: None,
        deletion_protection: Some(true),
        encryption: "KMS arn:aws:kms:eu-west-1:123456789012:key/k1".into(),
        point_in_time_recovery: Some(true),
        on_demand_maximum: Some((-1, -1)),
        warm_throughput: Some((12_000, 4_000)),
    }
}

#[test]
fn a_missing_table_is_created_whole() {
    let plan = Plan::compare("app", &SCHEMA, &[], None, false);
    assert_eq!(
        plan.actions,
        [PlanAction::CreateTable {
            global_indexes: vec!["GSI1", "GSI2"],
            local_indexes: vec![]
        }]
    );
    assert!(plan.backfills.is_empty());
}

#[test]
fn missing_indexes_are_created_and_unused_ones_only_reported() -> Result<(), String> {
    let plan = Plan::compare(
        "app",
        &SCHEMA,
        &[],
        Some(live(&[
            ("GSI1", "GSI1PK", "ACTIVE"),
            ("OLD", "OLDXPK", "ACTIVE"),
        ])),
        false,
    );
    assert_eq!(plan.up_to_date, ["GSI1"]);
    assert_eq!(plan.actions.len(), 1, "{plan}");
    let Some(PlanAction::CreateIndex(change)) = plan.actions.first() else {
        return Err(format!("expected one index to create: {plan}"));
    };
    assert_eq!(change.index.name, "GSI2");
    assert_eq!(
        change.new_attribute_definitions,
        [
            ("GSI2PK", ScalarType::String),
            ("GSI2SK", ScalarType::Number)
        ]
    );
    assert!(
        plan.to_string().contains("defining GSI2PK:S, GSI2SK:N"),
        "{plan}"
    );
    assert_eq!(
        plan.notes,
        [Note::UnusedIndex {
            index: "OLD".into(),
            deleted: false
        }]
    );
    let deleting = Plan::compare(
        "app",
        &SCHEMA,
        &[],
        Some(live(&[
            ("GSI1", "GSI1PK", "ACTIVE"),
            ("OLD", "OLDXPK", "ACTIVE"),
        ])),
        true,
    );
    assert_eq!(
        deleting.actions.last(),
        Some(&PlanAction::DeleteIndex {
            index: "OLD".into()
        })
    );
    Ok(())
}

#[test]
fn an_index_still_building_is_awaited_and_other_keys_block() {
    let plan = Plan::compare(
        "app",
        &SCHEMA,
        &[],
        Some(live(&[
            ("GSI1", "GSI1PK", "CREATING"),
            ("GSI2", "OTHRPK", "ACTIVE"),
        ])),
        false,
    );
    assert_eq!(
        plan.actions,
        [PlanAction::AwaitIndex {
            index: "GSI1",
            status: "CREATING".into()
        }]
    );
    assert!(plan.is_blocked());
    assert!(plan.blockers[0].to_string().contains("OTHRPK"), "{plan}");
}

/// The plan's actions on time to live and the stream (the indexes aside).
fn ttl_and_stream_actions(plan: &Plan) -> Vec<PlanAction> {
    plan.actions
        .iter()
        .filter(|action| {
            matches!(
                action,
                PlanAction::EnableTtl { .. } | PlanAction::EnableStream { .. }
            )
        })
        .cloned()
        .collect()
}

static DECLARED: TableSchema = TableSchema {
    ttl_attribute: Some("expires_at"),
    stream: Some(StreamViewType::NewImage),
    ..SCHEMA
};

#[test]
fn ttl_and_stream_that_differ_block_and_undeclared_ones_are_left_alone() {
    let mut other = live(&[]);
    other.ttl = Some(("gone_at".into(), "ENABLED".into()));
    other.stream = Some("KEYS_ONLY".into());
    let plan = Plan::compare("app", &DECLARED, &[], Some(other.clone()), false);
    let blockers: Vec<String> = plan.blockers.iter().map(ToString::to_string).collect();
    assert_eq!(blockers.len(), 2, "{blockers:?}");
    assert!(blockers[0].contains("gone_at (ENABLED)"), "{blockers:?}");
    assert!(blockers[1].contains("KEYS_ONLY"), "{blockers:?}");

    let plan = Plan::compare("app", &SCHEMA, &[], Some(other), false);
    assert_eq!(
        plan.notes,
        [
            Note::UndeclaredTtl {
                attribute: "gone_at".into()
            },
            Note::UndeclaredStream {
                view: "KEYS_ONLY".into()
            }
        ]
    );
    assert_eq!(ttl_and_stream_actions(&plan), []);

    // A disabled TTL is no TTL: the declared one is turned on.
    let mut disabled = live(&[]);
    disabled.ttl = None;
    let plan = Plan::compare("app", &DECLARED, &[], Some(disabled), false);
    assert_eq!(
        ttl_and_stream_actions(&plan),
        [
            PlanAction::EnableTtl {
                attribute: "expires_at"
            },
            PlanAction::EnableStream {
                view: StreamViewType::NewImage
            }
        ]
    );
}

#[test]
fn settings_the_infrastructure_code_turns_on_are_compared() {
    use crate::op::table::Protection;
    let settings = |declared: &Protection, live: &LiveTable| {
        let mut plan = Plan::compare("app", &SCHEMA, &[], Some(live.clone()), false);
        plan.notes.clear();
        plan.compare_settings(declared, live);
        plan.notes
            .iter()
            .map(|note| match note {
                Note::Setting {
                    setting,
                    expected,
                    found,
                } => format!("{setting}: {found} (expected {expected})"),
                other => format!("{other:?}"),
            })
            .collect::<Vec<_>>()
    };
    let protected = live(&[]);
    assert_eq!(
        settings(&Protection::default(), &protected),
        Vec::<String>::new()
    );
    // What the endpoint does not report is not compared.
    let unknown = LiveTable {
        deletion_protection: None,
        point_in_time_recovery: None,
        on_demand_maximum: None,
        warm_throughput: None,
        ..protected.clone()
    };
    assert_eq!(
        settings(&Protection::default(), &unknown),
        Vec::<String>::new()
    );
    let bare = LiveTable {
        deletion_protection: Some(false),
        point_in_time_recovery: Some(false),
        encryption: "AWS owned key".into(),
        ..protected.clone()
    };
    assert_eq!(
        settings(&Protection::default(), &bare),
        [
            "deletion_protection: off (expected on)",
            "point_in_time_recovery: off (expected on)",
            "encryption: AWS owned key (expected KMS (AWS managed key))",
        ]
    );
    // An unprotected table's code turns neither on: only encryption is still expected.
    let scratch = Protection {
        retain: false,
        deletion_protection: false,
        point_in_time_recovery: false,
        ..Protection::default()
    };
    assert_eq!(
        settings(&scratch, &bare),
        ["encryption: AWS owned key (expected KMS (AWS managed key))"]
    );
    // A key given by ARN must be the table's; an alias cannot be compared.
    let other_key = Protection {
        kms_key: Some("arn:aws:kms:eu-west-1:123456789012:key/k2".into()),
        ..Protection::default()
    };
    assert_eq!(settings(&other_key, &protected).len(), 1);
    let alias = Protection {
        kms_key: Some("alias/orders".into()),
        ..Protection::default()
    };
    assert_eq!(settings(&alias, &protected), Vec::<String>::new());
    // Throughput as declared: a maximum exactly, warm throughput at least.
    let throughput = Protection {
        on_demand_maximum: Some(crate::op::table::Units {
            read: 100,
            write: 50,
        }),
        warm_throughput: Some(crate::op::table::Units {
            read: 20_000,
            write: 4_000,
        }),
        ..Protection::default()
    };
    assert_eq!(
        settings(&throughput, &protected),
        [
            "on_demand_maximum: -1 read, -1 write a second (expected 100 read, 50 write a second)",
            "warm_throughput: 12000 read, 4000 write a second (expected 20000 read, 4000 write a second)",
        ]
    );
}
