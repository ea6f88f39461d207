//! Why a migration step failed.

use std::path::PathBuf;

/// Why a migration step could not proceed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MigrationError {
    /// The live table differs from the declaration in a way no `UpdateTable` can fix (a
    /// different primary key, a missing local index, an index of the same name with other
    /// keys); nothing was changed.
    #[error("table {table:?} cannot be brought to the declared schema online: {}", .problems.join("; "))]
    Blocked {
        /// The table.
        table: String,
        /// What differs, one sentence each.
        problems: Vec<String>,
    },
    /// The table belongs to a CloudFormation stack (it carries the `aws:cloudformation:stack-name`
    /// tag CloudFormation sets): a change made here would drift from the stack's template, and
    /// the next stack update would undo it. Nothing was changed.
    #[error("table {table:?} belongs to CloudFormation stack {stack:?}: a change made here would drift from the stack's template. Make it in the template (`CreateTable::cloudformation`, the CLI's `infra`, prints the table's resource), or apply with `force()` (`apply --force`)")]
    StackManaged {
        /// The table.
        table: String,
        /// The stack, from the tag.
        stack: String,
    },
    /// The table does not exist (and the step needs it).
    #[error("table {table:?} does not exist; run `apply` (or `db.admin().ensure_table()`) first")]
    TableMissing {
        /// The table.
        table: String,
    },
    /// A checkpoint file could not be read or written.
    #[error("checkpoint {}: {message}", .path.display())]
    Checkpoint {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A checkpoint file belongs to another sweep (table, entity, version or segments).
    #[error("checkpoint {} belongs to another sweep: {message}", .path.display())]
    CheckpointMismatch {
        /// The file.
        path: PathBuf,
        /// What differs.
        message: String,
    },
    /// An option outside what the step accepts.
    #[error("invalid {option}: {message}")]
    InvalidOption {
        /// The option.
        option: &'static str,
        /// Why.
        message: String,
    },
    /// The stored primary key is not the one the entity's current templates render: a key
    /// change needs a copy to new keys and a delete (see [`Db::rekey`](crate::Db::rekey)), not
    /// a backfill.
    #[error("{entity} at {stored}: the current key templates render {rendered}; a changed key template needs a copy to the new key, not a backfill")]
    KeyChanged {
        /// The entity.
        entity: &'static str,
        /// The key in the table.
        stored: crate::KeyText,
        /// The key the current templates render.
        rendered: crate::KeyText,
    },
    /// DynamoDB still left some of a distributed sweep's records unread when the resends ran
    /// out (`UnprocessedKeys` on every answer): the table's read capacity is exhausted.
    /// Nothing was changed; read again once the load is lower.
    #[error("distributed sweep {sweep:?}: DynamoDB left {unread} of its records unread after {requests} BatchGetItem requests; the table's read capacity is exhausted, try again later")]
    Unprocessed {
        /// The sweep.
        sweep: String,
        /// The records still unread.
        unread: usize,
        /// The requests sent, resends included.
        requests: usize,
    },
    /// Marking a migration complete before verification says it is done.
    #[error("the migration of {entity} to schema version {schema_version} is not done: {reason}")]
    NotDone {
        /// The entity.
        entity: &'static str,
        /// The version migrated to.
        schema_version: u32,
        /// What is missing.
        reason: String,
    },
}
