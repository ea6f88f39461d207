//! What a query refuses before sending.

/// A query that would read something its index does not hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// A filter reads an attribute a lean index does not project: the index's items lack it,
    /// so the filter would drop every one of them.
    #[error(
        "the filter reads `{attribute}`, which index {index} does not hold (it projects \
         {projection}), so it would drop every item: filter on an attribute the index \
         projects, or hydrate and filter the items"
    )]
    NotProjected {
        /// The index.
        index: &'static str,
        /// The attribute the filter reads.
        attribute: String,
        /// What the index projects.
        projection: String,
    },
}
