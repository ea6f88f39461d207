//! [`Db`]: one table of one [`Table`] declaration, reached through an SDK client.

use crate::schema::Table;
use std::marker::PhantomData;
use std::sync::Arc;

/// A handle to the DynamoDB table declared by `T`: the entry point of every operation.
///
/// Cheap to clone. The table name defaults to the declaration's `name` and can be overridden
/// (per environment, or per test as [`crate::testing`] does).
pub struct Db<T> {
    client: aws_sdk_dynamodb::Client,
    table_name: Arc<str>,
    table: PhantomData<fn() -> T>,
}

impl<T: Table> Db<T> {
    /// A handle using the table name from the declaration.
    pub fn new(client: aws_sdk_dynamodb::Client) -> Self {
        Db {
            client,
            table_name: Arc::from(T::SCHEMA.name),
            table: PhantomData,
        }
    }

    /// The same handle on a table with another name.
    pub fn with_table_name(mut self, name: impl Into<String>) -> Self {
        self.table_name = Arc::from(name.into());
        self
    }

    /// The table name requests use.
    pub fn table_name(&self) -> &str {
        &self.table_name
    }

    /// The SDK client, for anything singletable does not cover.
    pub fn client(&self) -> &aws_sdk_dynamodb::Client {
        &self.client
    }
}

impl<T> Clone for Db<T> {
    fn clone(&self) -> Self {
        Db {
            client: self.client.clone(),
            table_name: self.table_name.clone(),
            table: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for Db<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("table_name", &self.table_name)
            .finish()
    }
}
