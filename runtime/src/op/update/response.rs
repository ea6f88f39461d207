//! Reading an update's response: the item returned, or what a failed condition means.

use crate::error::Error;
use crate::op::{condition_failure, Expectations};
use crate::schema::Entity;
use crate::write::Written;
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
                if let Some(applied) = resent
                    .then(|| self.applied_by_guard(current.as_ref()))
                    .flatten()
                {
                    return applied;
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

    /// What a failed condition of a resent update means when its guard finds its own value in
    /// the item: the lost attempt was applied. For `ALL_NEW`, the item as it is; the item
    /// before it is no longer known.
    fn applied_by_guard(
        &self,
        current: Option<&crate::Item>,
    ) -> Option<Result<crate::Item, Error>> {
        let ((path, value), returning) = self.guard.as_ref()?;
        let current = current.filter(|item| !self.expiry.has_expired(item))?;
        if path.value_in(current) != Some(value) {
            return None;
        }
        Some(match returning {
            ReturnValue::AllNew => Ok(current.clone()),
            _ => Err(Error::Ambiguous {
                entity: E::SCHEMA.name,
                key: self.key.text(),
                message: "a lost attempt was applied (the resend found the guard's value), and the item before it is not known".to_owned(),
            }),
        })
    }
}
