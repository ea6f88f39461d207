//! Why a cursor cannot resume a query.

/// Why a cursor cannot resume a query.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid cursor: {reason}")]
pub struct CursorError {
    /// What is wrong with it.
    pub reason: String,
}

impl CursorError {
    pub(crate) fn new(reason: impl Into<String>) -> CursorError {
        CursorError {
            reason: reason.into(),
        }
    }
}
