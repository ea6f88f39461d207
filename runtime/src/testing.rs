//! Per-test tables on the local engine, in the spirit of `#[sqlx::test]`: each test gets its
//! own freshly created table, so tests run in parallel without seeing each other's data.

use crate::local::{self, LocalError};
use crate::{Db, Error, Table};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why a test table could not be made.
#[derive(Debug, thiserror::Error)]
pub enum TestTableError {
    /// The local engine could not be started or reached.
    #[error(transparent)]
    Local(#[from] LocalError),
    /// Creating the table failed.
    #[error("creating the test table failed: {0}")]
    Create(#[from] Error),
}

/// A new, empty table for declaration `T`, named `<name>-<pid>-<n>`, on the engine from
/// [`local::sdk_config`] (moto, or whatever `AWS_ENDPOINT_URL_DYNAMODB` points at).
/// In a test: `let db = singletable::testing::table::<App>().await?;`.
pub async fn table<T: Table>() -> Result<Db<T>, TestTableError> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let client = local::client().await?;
    let name = format!(
        "{}-{}-{}",
        T::SCHEMA.name,
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let db = Db::new(client).with_table_name(name);
    db.ensure_table().await?;
    Ok(db)
}
