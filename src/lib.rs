//! # singletable
//!
//! DynamoDB single-table design, checked at compile time. Declare a table and its entities
//! with derives; a [`Db`] then writes, reads and queries them through `aws-sdk-dynamodb`,
//! keeping every index key right, and refuses at compile time what DynamoDB would refuse or
//! silently get wrong.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use singletable::{Db, Entity, KeyPart, Table};
//!
//! #[derive(Table)]
//! #[dynamo(name = "app", pk = "PK", sk = "SK", gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
//! pub struct App;
//!
//! #[derive(KeyPart, Serialize, Deserialize, Clone, Copy, PartialEq, Debug)]
//! #[serde(rename_all = "lowercase")]
//! pub enum Status { Open, Pending, Closed }
//!
//! #[derive(Entity, Serialize, Deserialize, Debug, PartialEq)]
//! #[dynamo(table = App, pk = "TICKET#{id}", sk = "TICKET",
//!          gsi1pk = "TEAM#{team_id}", gsi1sk = "STATUS#{status}#TICKET#{id}")]
//! pub struct Ticket { pub id: String, pub team_id: u32, pub status: Status, pub title: String }
//!
//! async fn tickets(db: &Db<App>) -> Result<(), singletable::Error> {
//!     let ticket = Ticket { id: "8842".into(), team_id: 7, status: Status::Open, title: "Printer".into() };
//!     db.put(&ticket).send().await?;                                   // PutItem, GSI1 keys included
//!     let read = db.get(Ticket::key("8842")?).send().await?;            // GetItem
//!     assert_eq!(read, ticket);
//!     let moved = db
//!         .update(Ticket::key("8842")?)
//!         .set(Ticket::STATUS, Status::Pending)                          // rewrites GSI1SK too,
//!         .given(Ticket::TEAM_ID, 7)                                     // from the other input
//!         .send()
//!         .await?;
//!     assert_eq!(moved.status, Status::Pending);
//!     let pending = db
//!         .query(Ticket::gsi1(7))                                        // TEAM#0000000007
//!         .sort(Ticket::STATUS, Status::Pending)                         // begins_with STATUS#pending#
//!         .all()
//!         .await?;
//!     assert_eq!(pending.len(), 1);
//!     Ok(())
//! }
//! # tokio::runtime::Runtime::new()?.block_on(async {
//! #     let db = singletable::testing::table::<App>().await?;
//! #     tickets(&db).await?;
//! #     Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A `Db` comes from a client (`Db::<App>::new(aws_sdk_dynamodb::Client::new(&config))`);
//! the [`testing`] and [`local`] modules (feature `local`) give one on an embedded engine.
//! Every operation builds one request, which `params()` prints and `send()` sends.
//!
//! ## The modules, by task
//!
//! | task | start at |
//! | --- | --- |
//! | model a table | the derives [`Table`](derive@Table), [`Entity`](derive@Entity), [`KeyPart`](derive@KeyPart), [`Collection`](derive@Collection), [`Projection`](derive@Projection); keys in [`key`], the schema data in [`schema`] |
//! | write | [`Db::put`], [`Db::update`], [`Db::delete`], [`Db::rekey`], [`Db::transaction`], [`Db::batch_write`]; conditions and update paths in [`expr`] |
//! | read | [`Db::get`], [`Db::query`] (pages and cursors in [`op::query`]), [`Db::scan`], [`Db::batch_get`] |
//! | migrate | [`Db::admin`]: the table, its migration plan, sweeps and backfills ([`migrate`]) |
//! | stream | [`stream`]: typed records, a reader with checkpoints, Lambda events |
//! | operate | [`error`] (what each error means and whether to retry), [`retry`], [`cost`] (`explain()`), [`rate`], [`infra`] (IAM, CloudFormation, Terraform), [`workbench`] (NoSQL Workbench models), tracing in [`Db::trace_values`] |
//! | test | [`testing`], [`local`], `#[singletable::test]` |
#![warn(missing_docs)]
// On docs.rs (nightly, `--cfg docsrs`), each feature-gated item says which feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

#[doc = include_str!("../docs/derive/table.md")]
pub use singletable_macros::Table;

#[doc = include_str!("../docs/derive/entity.md")]
pub use singletable_macros::Entity;

#[doc = include_str!("../docs/derive/key_part.md")]
pub use singletable_macros::KeyPart;

#[doc = include_str!("../docs/derive/collection.md")]
pub use singletable_macros::Collection;

#[doc = include_str!("../docs/derive/projection.md")]
pub use singletable_macros::Projection;

#[doc = include_str!("../docs/derive/test.md")]
pub use singletable_macros::test;

// Each module by name with the items most programs use, as sqlx's facade does; what a module
// holds is public API, and derive support lives in `__private` alone.
pub use singletable_runtime::cost::{self, Estimate, Explain};
pub use singletable_runtime::error::{self, Error, OptionalExt};
pub use singletable_runtime::expr::{self, AttributeType, Comparison, Condition, Field};
#[doc = include_str!("../docs/infra.md")]
pub use singletable_runtime::infra;
pub use singletable_runtime::infra::{CloudFormationTable, IamPolicy};
pub use singletable_runtime::item::{self, DecodeError, EncodeError, Item, LimitError};
pub use singletable_runtime::key::{
    self, KeyError, KeyField, KeyPart, KeyTemplate, KeyText, PrefixFree,
};
pub use singletable_runtime::managed;
pub use singletable_runtime::migrate::{self, Plan, Sweep, TableMigration};
pub use singletable_runtime::op::{self, query::Page, query::Projection, query::Query};
pub use singletable_runtime::rate::{self, Rate};
pub use singletable_runtime::retry::{self, RetryPolicy};
pub use singletable_runtime::schema::{self, schema_of, Entity, Table};
#[doc = include_str!("../docs/streams.md")]
pub use singletable_runtime::stream;
pub use singletable_runtime::ttl::{self, TtlValue};
pub use singletable_runtime::unique::{self, GetByUnique, UniqueValue};
pub use singletable_runtime::wire::{self, Request};
/// The table as a NoSQL Workbench data model: see the module's page, and
/// [docs/workbench.md](https://github.com/singletable/singletable/blob/main/docs/workbench.md).
///
/// ```
/// # use serde::{Deserialize, Serialize};
/// # use singletable::{Db, Entity, Table};
/// #[derive(Table)]
/// #[dynamo(name = "app", pk = "PK", sk = "SK", gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
/// struct App;
///
/// #[derive(Entity, Serialize, Deserialize)]
/// #[dynamo(table = App, pk = "TICKET#{id}", sk = "TICKET",
///          gsi1pk = "TEAM#{team_id}", gsi1sk = "TICKET#{id}")]
/// struct Ticket { id: String, team_id: u32, title: String }
///
/// # fn export(db: &Db<App>) -> Result<(), singletable::workbench::WorkbenchError> {
/// let model = db
///     .admin()
///     .workbench_model()
///     .sample(&Ticket { id: "8842".into(), team_id: 7, title: "Printer".into() })?
///     .to_json()?;
/// assert!(model.contains(r#""PartitionKeyAlias": "TICKET#id""#));
/// assert!(model.contains(r#""GSI1PK": {"#));
/// # Ok(())
/// # }
/// # let config = aws_sdk_dynamodb::Config::builder()
/// #     .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
/// #     .build();
/// # export(&Db::<App>::new(aws_sdk_dynamodb::Client::from_conf(config)))?;
/// # Ok::<(), singletable::workbench::WorkbenchError>(())
/// ```
pub use singletable_runtime::workbench;
pub use singletable_runtime::{Admin, Consumed, Db, Key};

// `local` and `testing` (feature `local`), however the runtime was built; nothing, and so
// unused, when it was built without.
#[allow(unused_imports)]
pub use singletable_runtime::gated::*;

/// The migration command line (feature `cli`); see the `singletable-cli` crate.
#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub use singletable_cli as cli;

#[doc(hidden)]
pub use singletable_runtime::__private;
