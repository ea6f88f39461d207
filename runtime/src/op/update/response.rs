//! Reading an update's response: the item returned, or what a failed condition means.

use crate::error::Error;
use crate::op::{condition_failure, Expectations};
use crate::schema::Entity;
use crate::send::write::Written;
use crate::{Db, Key};
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};

/// What an update's condition requires: an existing item, unexpired by `expiry`, at
/// `expected_version` if given, whose version can still be counted up.
pub(super) fn expectations<E: Entity>(
    expected_version: Option<u64>,
    expiry: crate::ttl::Expiry,
) -> Expectations {
    let managed = E::SCHEMA.managed;
    Expectations {
        requires_existing: true,
        version: managed.version.zip(expected_version),
        version_max: managed
            .version
            .map(|attribute| (attribute, managed.version_max)),
        expiry,
    }
}

/// What a sent update keeps to read its response.
pub(super) struct Sent<'db, E: Entity> {
    pub(super) db: &'db Db<E::Table>,
    pub(super) key: Key<E>,
    pub(super) expected_version: Option<u64>,
    pub(super) expiry: crate::ttl::Expiry,
    /// The update's guard ([`Update::advance`](super::Update::advance)) and what it returns.
    pub(super) guard: Option<((crate::expr::AttrPath, AttributeValue), ReturnValue)>,
}

impl<E: Entity> Sent<'_, E> {
    /// The item an update returned, decoded.
    pub(super) fn decode(&self, item: crate::Item) -> Result<E, Error> {
        if item.is_empty() {
            // The condition guarantees the item existed; an engine that returns nothing
            // leaves nothing to decode.
            return Err(Error::NotFound {
                entity: E::SCHEMA.name,
                key: self.key.text(),
            });
        }
        Ok(crate::item::decode(item)?)
    }

    /// The attributes a write returned, or what its failed condition means for this update
    /// (`resent`: after an attempt whose response was lost).
    pub(super) fn returned(&self, written: Written) -> Result<crate::Item, Error> {
        match written {
            Written::Applied { attributes, .. } => Ok(attributes.unwrap_or_default()),
            Written::ConditionFailed { current, resent } => {
                if let Some(replayed) = self.replayed(current.as_ref(), resent) {
                    return replayed;
                }
                Err(condition_failure(
                    E::SCHEMA.name,
                    self.key.text(),
                    current.as_ref(),
                    expectations::<E>(self.expected_version, self.expiry),
                ))
            }
        }
    }

    /// What a failed condition means when the update's guard finds its own value in the item:
    /// the update with that value is applied, once. After a lost response the library cannot
    /// tell its own lost attempt from an earlier update sent with the same value, so neither
    /// case claims to know: for `ALL_NEW`, the item as it is; for the other return values,
    /// the item before is not known (after a lost response, [`Error::Ambiguous`]; otherwise
    /// this attempt wrote nothing, and its failed condition stands).
    fn replayed(
        &self,
        current: Option<&crate::Item>,
        resent: bool,
    ) -> Option<Result<crate::Item, Error>> {
        let ((path, value), returning) = self.guard.as_ref()?;
        let current = current.filter(|item| !self.expiry.has_expired(item))?;
        if path.value_in(current) != Some(value) {
            return None;
        }
        match returning {
            ReturnValue::AllNew => Some(Ok(current.clone())),
            _ if resent => Some(Err(Error::Ambiguous {
                entity: E::SCHEMA.name,
                key: self.key.text(),
                message: "the resend found the guard's value: the update with it is applied, and the item before it is not known".to_owned(),
                cause: None,
            })),
            _ => None,
        }
    }
}
