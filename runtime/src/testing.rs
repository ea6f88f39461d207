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

/// Writes `item` as it is, past the library's encoding and checks: how tests put the items
/// other tools wrote (missing attributes, wrong types, foreign entities) into a table.
pub async fn put_raw<T: Table>(db: &Db<T>, item: crate::Item) -> Result<(), Error> {
    db.client()
        .put_item()
        .table_name(db.table_name())
        .set_item(Some(item))
        .send()
        .await?;
    Ok(())
}

/// What a `#[singletable::test]` body may return: nothing, or a `Result` whose error fails the
/// test with its `Debug` text.
pub trait TestOutcome {
    /// Fails the test on an error.
    fn check(self);
}

impl TestOutcome for () {
    fn check(self) {}
}

impl<E: std::fmt::Debug> TestOutcome for Result<(), E> {
    fn check(self) {
        if let Err(error) = self {
            panic!("test failed: {error:?}"); // ok: failing the test is this harness's job.
        }
    }
}

/// Runs one `#[singletable::test]`: a fresh table for `T`, then the test body on its own
/// runtime. What `#[singletable::test]` expands to; usable directly from a plain `#[test]`.
pub fn run<T, F, Fut>(test: F)
where
    T: Table,
    F: FnOnce(Db<T>) -> Fut,
    Fut: std::future::Future,
    Fut::Output: TestOutcome,
{
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("could not start a tokio runtime: {error}"), // ok: the test harness fails the test.
    };
    runtime.block_on(async move {
        let db = match table::<T>().await {
            Ok(db) => db,
            Err(error) => panic!("could not create the test table: {error}"), // ok: the harness fails the test.
        };
        test(db).await.check();
    });
}
