//! The live table's settings against its infrastructure code's: what the generated
//! CloudFormation and Terraform set to keep the data, and the throughput they declare.

use super::{LiveTable, Note, Plan};
use crate::op::table::Protection;

impl Plan {
    /// Notes each setting `declared` has and `live` lacks. Only what the infrastructure code
    /// turns on is compared: a setting it leaves off (an unprotected scratch table's) may be
    /// on in the table without harm. What the endpoint does not report is not compared.
    pub(super) fn compare_settings(&mut self, declared: &Protection, live: &LiveTable) {
        let mut note = |setting: &'static str, expected: String, found: String| {
            self.notes.push(Note::Setting {
                setting,
                expected,
                found,
            });
        };
        if declared.deletion_protection && live.deletion_protection == Some(false) {
            note("deletion_protection", "on".to_owned(), "off".to_owned());
        }
        if declared.point_in_time_recovery && live.point_in_time_recovery == Some(false) {
            note("point_in_time_recovery", "on".to_owned(), "off".to_owned());
        }
        // The infrastructure code always encrypts with KMS: the customer-managed key given,
        // or AWS's managed key for DynamoDB.
        let expected = declared.kms_key.as_ref().map_or_else(
            || "KMS (AWS managed key)".to_owned(),
            |key| format!("KMS {key}"),
        );
        let kms = live.encryption.starts_with("KMS");
        // A key given by ARN is compared; an alias or an id cannot be read from the ARN.
        let other_key = declared
            .kms_key
            .as_deref()
            .is_some_and(|key| key.starts_with("arn:") && live.encryption != format!("KMS {key}"));
        if !kms || other_key {
            note("encryption", expected, live.encryption.clone());
        }
        let units = |units: (i64, i64)| format!("{} read, {} write a second", units.0, units.1);
        if let Some(maximum) = declared.on_demand_maximum {
            let expected = (signed(maximum.read), signed(maximum.write));
            if live.on_demand_maximum.is_some_and(|live| live != expected) {
                let found = live.on_demand_maximum.map_or_else(String::new, units);
                note("on_demand_maximum", units(expected), found);
            }
        }
        if let Some(warm) = declared.warm_throughput {
            let expected = (signed(warm.read), signed(warm.write));
            if let Some(live) = live.warm_throughput {
                if live.0 < expected.0 || live.1 < expected.1 {
                    note("warm_throughput", units(expected), units(live));
                }
            }
        }
    }
}

/// Units as DynamoDB's descriptions count them.
fn signed(units: u64) -> i64 {
    i64::try_from(units).unwrap_or(i64::MAX)
}
