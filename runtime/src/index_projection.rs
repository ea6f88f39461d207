//! What a secondary index holds of each item besides its keys, as data for `CreateTable` and
//! the migration plan, and as a type that decides what queries of the index return.

use std::fmt;

/// What a secondary index holds of each item besides its keys (the table's `gsi1(projection =
/// ..)`). DynamoDB cannot change it on an existing index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexProjection {
    /// Every attribute (`ALL`, the default): reads return whole items, and every write of an
    /// item writes all of it to the index too.
    All,
    /// The table's and the index's key attributes (`KEYS_ONLY`): reads return keys, which
    /// [`Hydrate`](crate::op::query::Hydrate) turns into items. On a table with a TTL the
    /// derive declares `keys_only` as an `Include` of the entity and TTL attributes instead,
    /// so that reads can hide expired entries.
    KeysOnly,
    /// The keys and these attributes (`INCLUDE`). The table's entity attribute, and its TTL
    /// attribute if it declares one, are listed too, so that reads keep telling entities
    /// apart and hiding expired items.
    Include(&'static [&'static str]),
}

impl IndexProjection {
    /// DynamoDB's `ProjectionType`.
    pub fn projection_type(&self) -> &'static str {
        match self {
            IndexProjection::All => "ALL",
            IndexProjection::KeysOnly => "KEYS_ONLY",
            IndexProjection::Include(_) => "INCLUDE",
        }
    }

    /// DynamoDB's `NonKeyAttributes`: an `INCLUDE` index's list.
    pub fn non_key_attributes(&self) -> &'static [&'static str] {
        match self {
            IndexProjection::Include(attributes) => attributes,
            _ => &[],
        }
    }
}

impl fmt::Display for IndexProjection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.projection_type())?;
        if let IndexProjection::Include(attributes) = self {
            // Sorted, as the live projection is, since DynamoDB keeps no order.
            let mut sorted = attributes.to_vec();
            sorted.sort_unstable();
            write!(f, " [{}]", sorted.join(", "))?;
        }
        Ok(())
    }
}

#[doc(hidden)]
/// An index's projection as a type, which decides what its queries return: [`ProjectsAll`]
/// entities, the other two [`IndexEntry`](crate::op::query::IndexEntry) values.
pub trait ProjectionKind: Send + Sync + 'static {}

#[doc(hidden)]
/// `projection = "all"` as a type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectsAll {}
#[doc(hidden)]
/// `projection = "keys_only"` as a type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectsKeys {}
#[doc(hidden)]
/// `projection = [..]` as a type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectsSome {}

impl ProjectionKind for ProjectsAll {}
impl ProjectionKind for ProjectsKeys {}
impl ProjectionKind for ProjectsSome {}
