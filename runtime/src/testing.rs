//! Per-test tables on the local engine, in the spirit of `#[sqlx::test]`: each test gets its
//! own freshly created table, so tests run in parallel without seeing each other's data.

use crate::local::{self, LocalError};
use crate::{Db, Error, Table};
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Why a test table could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TestTableError {
    /// The local engine could not be started or reached.
    #[error(transparent)]
    Local(#[from] LocalError),
    /// Creating the table failed.
    #[error("creating the test table failed: {0}")]
    Create(#[from] Error),
}

/// A new, empty table for declaration `T`, named `<name>-<pid>-<n>`, on the engine from
/// [`local::sdk_config`] (dynoxide, moto, or whatever `AWS_ENDPOINT_URL_DYNAMODB` points at),
/// deleted when the returned guard is dropped. In a test:
/// `let db = singletable::testing::table::<App>().await?;`, then use `db` as a [`Db`].
pub async fn table<T: Table>() -> Result<TestTable<T>, TestTableError> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let client = local::client().await?;
    let name = format!(
        "{}-{}-{}",
        T::SCHEMA.name,
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let db = Db::new(client).with_table_name(name);
    db.admin().ensure_table().await?;
    Ok(TestTable { db })
}

/// A table made by [`table`] for one test: a [`Db`] (through `Deref`) that deletes its table
/// when dropped, even when the test panics, so that a long suite does not pile up tables in
/// the engine's memory.
#[derive(Debug)]
pub struct TestTable<T: Table> {
    db: Db<T>,
}

/// How long a dropped [`TestTable`] waits for its table's deletion; past it, the table is left
/// to the engine, which drops it when the process ends.
const DELETE_TIMEOUT: Duration = Duration::from_secs(10);

impl<T: Table> Deref for TestTable<T> {
    type Target = Db<T>;

    fn deref(&self) -> &Db<T> {
        &self.db
    }
}

impl<T: Table> Drop for TestTable<T> {
    fn drop(&mut self) {
        let name = self.db.table_name().to_owned();
        // Drop cannot await, and the test's runtime may be the single thread running this
        // drop, so the deletion runs on a thread of its own, with its own runtime and client
        // (a pooled connection of the test's client would wait on the blocked runtime).
        let deleted = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|error| error.to_string())?;
            runtime.block_on(async {
                let delete = async {
                    let client = local::client().await.map_err(|error| error.to_string())?;
                    client
                        .delete_table()
                        .table_name(&name)
                        .send()
                        .await
                        .map(drop)
                        .map_err(|error| Error::from(error).to_string())
                };
                match tokio::time::timeout(DELETE_TIMEOUT, delete).await {
                    Ok(outcome) => outcome,
                    Err(_) => Err(format!("no answer within {DELETE_TIMEOUT:?}")),
                }
            })
        })
        .join();
        match deleted {
            Ok(Ok(())) => {}
            Ok(Err(error)) => eprintln!(
                "singletable: the test table {} was not deleted: {error}",
                self.db.table_name()
            ),
            Err(_) => eprintln!(
                "singletable: deleting the test table {} panicked",
                self.db.table_name()
            ),
        }
    }
}

/// Writes `item` as it is, past the library's encoding and checks: how tests put the items
/// other tools wrote (missing attributes, wrong types, foreign entities) into a table.
pub async fn put_raw<T: Table>(db: &Db<T>, item: crate::Item) -> Result<(), Error> {
    db.raw_put("raw item", item).await
}

#[doc(hidden)]
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
        let table = match table::<T>().await {
            Ok(table) => table,
            Err(error) => panic!("could not create the test table: {error}"), // ok: the harness fails the test.
        };
        // The guard outlives the body, so the table is deleted after it, panic or not.
        test(table.db.clone()).await.check();
    });
}
