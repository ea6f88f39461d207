//! # singletable
//!
//! DynamoDB single-table design, checked at compile time. Declare a table and its entities
//! with derives; get key builders, index maintenance and typed operations that run through
//! `aws-sdk-dynamodb`.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use singletable::{Entity, KeyPart, Table};
//!
//! #[derive(Table)]
//! #[dynamo(name = "app", pk = "PK", sk = "SK", gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
//! pub struct App;
//!
//! #[derive(KeyPart, Serialize, Deserialize, Clone, Copy, PartialEq, Debug)]
//! #[serde(rename_all = "lowercase")]
//! pub enum Status { Open, Pending, Closed }
//!
//! #[derive(Entity, Serialize, Deserialize)]
//! #[dynamo(table = App, pk = "TICKET#{id}", sk = "TICKET",
//!          gsi1pk = "TEAM#{team_id}", gsi1sk = "STATUS#{status}#TICKET#{id}")]
//! pub struct Ticket { pub id: String, pub team_id: u32, pub status: Status, pub title: String }
//!
//! let key = Ticket::key("8842")?;
//! assert_eq!(key.partition(), "TICKET#8842");
//! assert_eq!(key.sort(), Some("TICKET"));
//! # Ok::<(), singletable::KeyError>(())
//! ```
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
pub use singletable_runtime::item::{self, DecodeError, EncodeError, Item, KeyText, LimitError};
pub use singletable_runtime::key::{self, KeyError, KeyField, KeyPart, KeyTemplate, PrefixFree};
pub use singletable_runtime::managed;
pub use singletable_runtime::migrate::{self, Plan, Sweep, TableMigration};
pub use singletable_runtime::op::{self, query::Page, query::Projection, query::Query};
pub use singletable_runtime::rate::{self, Rate};
pub use singletable_runtime::retry::{self, RetryPolicy};
pub use singletable_runtime::schema::{self, schema_of, Entity, Table};
#[doc = include_str!("../docs/streams.md")]
pub use singletable_runtime::stream;
pub use singletable_runtime::stream::Change;
pub use singletable_runtime::ttl::{self, TtlValue};
pub use singletable_runtime::unique::{self, UniqueValue};
pub use singletable_runtime::wire::{self, Request};
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
