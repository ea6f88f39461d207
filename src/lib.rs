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

pub use singletable_macros::{test, Collection, Entity, KeyPart, Table};
pub use singletable_runtime::*;

/// What generated code calls; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use singletable_runtime::__private::*;
}
