//! Choosing what a query reads: the attributes of a [`Projection`] type, from the table or
//! any index (a lean one's entries, or whole items read in part).

use super::entry::{IndexEntry, ProjectionOf, Unselected};
use super::*;

impl<'db, E: Entity, I: QueryIndex, P, D: Decode> Query<'db, E, I, P, D> {
    /// Reads only the attributes of projection `T` (its `ProjectionExpression`, with the
    /// table's keys), as [`IndexEntry`] values: each item's key, and `T`. `T` is derived for
    /// the table or for this index with `#[derive(singletable::Projection)]`, which checks at
    /// compile time that the index holds every attribute it reads. On a lean index this is
    /// how its projected attributes are read; on the table or an index of all attributes it
    /// reads part of each item (a `ProjectionExpression` costs the same read capacity, but
    /// moves and decodes less). Examples: the `Projection` derive's documentation.
    // The bound on `D` is the method's, not the impl's: a second `select` then fails with
    // `Unselected`'s message (E0277), not with a bare "method exists but its trait bounds were
    // not satisfied" (E0599).
    pub fn select<T: ProjectionOf<E, I>>(mut self) -> Query<'db, E, I, P, IndexEntry<E, T>>
    where
        D: Unselected<E>,
    {
        let table = <E::Table as Table>::SCHEMA;
        // A merged query of a sharded partition also orders and resumes by the index's keys.
        let names = if self.is_sharded() {
            super::read::start_key_attributes(table, self.partition.index)
        } else {
            std::iter::once(table.partition_key)
                .chain(table.sort_key)
                .collect()
        };
        self.projection = (names.into_iter().chain(T::ATTRIBUTES.iter().copied()))
            .map(AttrPath::attribute)
            .collect();
        self.next(None)
    }
}
