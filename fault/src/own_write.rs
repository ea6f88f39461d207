//! Telling the library's report of a failed condition from the SDK's resend of a write the
//! engine had already applied.

use aws_sdk_dynamodb::types::AttributeValue;
use singletable_runtime::error::Error;
use singletable_runtime::item::{self, Item};
use singletable_runtime::schema::Entity;

/// Whether `error` is a failed condition whose current item is exactly what `written` put
/// there: the signature of a conditional put ([`singletable_runtime::op::put::Put::only_if_absent`], or a
/// versioned put) whose response was lost after the engine applied it, and which the SDK then
/// resent. The library reports that as [`Error::ConditionFailed`] or
/// [`Error::VersionConflict`]; a test uses this to tell it from a real conflict.
///
/// Timestamps the library maintains are not compared (they are set when the request is
/// built); a versioned entity is expected at the version after the one it carries.
pub fn is_own_write<E: Entity>(error: &Error, written: &E) -> bool {
    let current = match error {
        Error::ConditionFailed {
            current: Some(current),
            ..
        }
        | Error::VersionConflict {
            current: Some(current),
            ..
        } => current,
        _ => return false,
    };
    let Ok(mut expected) = item::encode(written) else {
        return false;
    };
    let managed = E::SCHEMA.managed;
    if let Some(attribute) = managed.version {
        let version = singletable_runtime::__private::version_of(expected.get(attribute));
        expected.insert(
            attribute.to_owned(),
            AttributeValue::N((version + 1).to_string()),
        );
    }
    let ignored = [
        managed.created_at.map(|timestamp| timestamp.attribute),
        managed.updated_at.map(|timestamp| timestamp.attribute),
    ];
    let compared = |item: &Item| -> Item {
        item.iter()
            .filter(|(name, _)| !ignored.contains(&Some(name.as_str())))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect()
    };
    item::same_item(&compared(current), &compared(&expected))
}
