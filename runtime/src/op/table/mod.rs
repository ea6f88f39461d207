//! `CreateTable` from a [`Table`] declaration, and "create if missing".

mod protection;

pub(crate) use protection::Protection;
#[cfg(test)]
pub(crate) use protection::Units;

use crate::error::Error;
use crate::rate::{Limiter, Rate};
use crate::schema::StreamViewType;
use crate::schema::{IndexKind, IndexSchema, ScalarType, Table};
use crate::wire::{describe, Request};
use crate::{Admin, Db};
use aws_sdk_dynamodb::error::BuildError;
use aws_sdk_dynamodb::operation::create_table::builders::CreateTableInputBuilder;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType,
    LocalSecondaryIndex, Projection, ProjectionType, ScalarAttributeType, StreamSpecification,
};

/// The `CreateTable` request for a declaration: on-demand billing, each index with its declared
/// projection; templated key attributes are strings, others have the declared type. The same
/// value gives the table as infrastructure code ([`cloudformation`](Self::cloudformation),
/// [`terraform`](Self::terraform)).
#[derive(Debug, Clone)]
pub struct CreateTable {
    /// The client `send` uses.
    client: aws_sdk_dynamodb::Client,
    pub(crate) table_name: String,
    pub(crate) attributes: Vec<(&'static str, ScalarType)>,
    pub(crate) partition_key: &'static str,
    pub(crate) sort_key: Option<&'static str>,
    pub(crate) indexes: Vec<&'static IndexSchema>,
    pub(crate) stream: Option<StreamViewType>,
    /// Turned on after the table is created (`UpdateTimeToLive`), or declared with it by
    /// infrastructure code.
    pub(crate) ttl_attribute: Option<&'static str>,
    /// What the infrastructure code adds to keep the data (not sent by `send`).
    pub(crate) protection: Protection,
}

impl<T: Table> Db<T> {
    /// The limiter that holds `rate` on this table; `DescribeTable` tells the provisioned
    /// capacity when the rate is a share of it (a read, sent again while throttled or after
    /// a lost response, as the jobs that pace themselves resend theirs).
    pub(crate) async fn limiter(&self, rate: Rate) -> Result<Limiter, Error> {
        rate.check()?;
        let provisioned = if rate.needs_capacity() {
            let described = self.describe_table().await?;
            described
                .table()
                .and_then(|table| table.provisioned_throughput())
                .and_then(|throughput| throughput.write_capacity_units())
        } else {
            None
        };
        Ok(Limiter::new(rate, self.table_name(), provisioned)?)
    }
}

impl<'db, T: Table> Admin<'db, T> {
    /// The `CreateTable` request for this table.
    pub fn create_table(&self) -> CreateTable {
        let schema = T::SCHEMA;
        let mut attributes = vec![(schema.partition_key, ScalarType::String)];
        attributes.extend(schema.sort_key.map(|name| (name, ScalarType::String)));
        let mut indexes = Vec::new();
        for index in schema.indexes {
            attributes.extend(index.key_attributes().map(|key| (key.name, key.kind)));
            indexes.push(index);
        }
        attributes.sort_unstable_by_key(|(name, _)| *name);
        attributes.dedup_by_key(|(name, _)| *name);
        CreateTable {
            client: self.db.client().clone(),
            table_name: self.db.table_name().to_owned(),
            attributes,
            partition_key: schema.partition_key,
            sort_key: schema.sort_key,
            indexes,
            stream: schema.stream,
            ttl_attribute: schema.ttl_attribute,
            protection: Protection::default(),
        }
    }

    /// Creates the table if it does not exist, waits until it is active, and enables time to
    /// live when the table declares a TTL attribute; returns whether it created it. (A table
    /// that exists is left as it is: [`Admin::table_migration`](crate::Admin::table_migration)
    /// plans and applies the differences.)
    pub async fn ensure_table(&self) -> Result<bool, Error> {
        match self.db.describe_table().await {
            Ok(_) => return Ok(false),
            Err(error)
                if error
                    .as_service_error()
                    .is_some_and(|e| e.is_resource_not_found_exception()) => {}
            Err(error) => return Err(error.into()),
        }
        let created = self.create_table().send().await;
        match created {
            Ok(()) => {}
            // Another process created it between our describe and create.
            Err(Error::Service(error))
                if matches!(
                    error.service_error(),
                    Some(aws_sdk_dynamodb::Error::ResourceInUseException(_))
                ) => {}
            Err(error) => return Err(error),
        }
        self.db.wait_until_table_exists().await?;
        if let Some(attribute) = T::SCHEMA.ttl_attribute {
            self.db.enable_ttl(attribute).await?;
        }
        Ok(true)
    }
}

/// A stream of this view, enabled.
pub(crate) fn stream_specification(
    view: StreamViewType,
) -> Result<StreamSpecification, BuildError> {
    StreamSpecification::builder()
        .stream_enabled(true)
        .stream_view_type(view.sdk())
        .build()
}

/// Key attributes as `(name, is_partition)`, partition attributes first.
type KeyNames<'a> = &'a [(&'static str, bool)];

/// The key schema elements: `HASH` for partition attributes, `RANGE` for sort attributes.
pub(crate) fn key_schema(
    keys: KeyNames<'_>,
) -> Result<Vec<KeySchemaElement>, aws_sdk_dynamodb::error::BuildError> {
    keys.iter()
        .map(|(name, partition)| {
            KeySchemaElement::builder()
                .attribute_name(*name)
                .key_type(if *partition {
                    KeyType::Hash
                } else {
                    KeyType::Range
                })
                .build()
        })
        .collect()
}

/// An index's key attributes as `(name, is_partition)`.
pub(crate) fn index_keys(index: &IndexSchema) -> Vec<(&'static str, bool)> {
    index
        .partition_keys
        .iter()
        .map(|key| (key.name, true))
        .chain(index.sort_keys.iter().map(|key| (key.name, false)))
        .collect()
}

/// The index's projection, as `CreateTable` and `UpdateTable` take it.
pub(crate) fn projection(index: &IndexSchema) -> Projection {
    let attributes = index.projection.non_key_attributes();
    Projection::builder()
        .projection_type(ProjectionType::from(index.projection.projection_type()))
        .set_non_key_attributes(
            (!attributes.is_empty())
                .then(|| attributes.iter().map(|name| (*name).to_owned()).collect()),
        )
        .build()
}

/// The SDK's name for a key type.
pub(crate) fn scalar_attribute_type(kind: ScalarType) -> ScalarAttributeType {
    match kind {
        ScalarType::String => ScalarAttributeType::S,
        ScalarType::Number => ScalarAttributeType::N,
        ScalarType::Binary => ScalarAttributeType::B,
    }
}

impl CreateTable {
    pub(crate) fn table_keys(&self) -> Vec<(&'static str, bool)> {
        std::iter::once((self.partition_key, true))
            .chain(self.sort_key.map(|name| (name, false)))
            .collect()
    }

    /// The request this operation sends.
    pub fn params(&self) -> Result<Request, Error> {
        Ok(describe::request("CreateTable", &self.input()?))
    }

    /// Sends the request (it fails if the table exists; see [`Admin::ensure_table`]).
    pub async fn send(self) -> Result<(), Error> {
        crate::send::create_table(&self.client, &self.table_name, self.input()?).await
    }

    /// The request, as the SDK's input: what `send` sends and `params` prints.
    fn input(&self) -> Result<CreateTableInputBuilder, BuildError> {
        let mut input = CreateTableInputBuilder::default()
            .table_name(&self.table_name)
            .billing_mode(BillingMode::PayPerRequest)
            .set_key_schema(Some(key_schema(&self.table_keys())?));
        if let Some(view) = self.stream {
            input = input.stream_specification(stream_specification(view)?);
        }
        for (name, kind) in &self.attributes {
            let definition = AttributeDefinition::builder()
                .attribute_name(*name)
                .attribute_type(scalar_attribute_type(*kind))
                .build()?;
            input = input.attribute_definitions(definition);
        }
        for index in &self.indexes {
            let keys = Some(key_schema(&index_keys(index))?);
            match index.kind {
                IndexKind::Global => {
                    let index = GlobalSecondaryIndex::builder()
                        .index_name(index.name)
                        .set_key_schema(keys)
                        .projection(projection(index))
                        .build()?;
                    input = input.global_secondary_indexes(index);
                }
                IndexKind::Local => {
                    let index = LocalSecondaryIndex::builder()
                        .index_name(index.name)
                        .set_key_schema(keys)
                        .projection(projection(index))
                        .build()?;
                    input = input.local_secondary_indexes(index);
                }
            }
        }
        Ok(input)
    }
}
