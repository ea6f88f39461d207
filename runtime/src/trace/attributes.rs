//! The attributes OpenTelemetry's conventions define for each DynamoDB operation, read where
//! every request passes: from the input the SDK is about to send, the address it sends it to
//! and the output it read (the interceptor in `mod.rs` calls these). So each operation's span
//! has them however the library built the request.
//!
//! `tracing` has no array values: an attribute the conventions type `string[]` is recorded
//! as the JSON text of that array (`["App"]`), which an exporter can parse back.

use crate::wire::describe::Describe;
use aws_sdk_dynamodb::operation::batch_get_item::BatchGetItemInput;
use aws_sdk_dynamodb::operation::batch_write_item::BatchWriteItemInput;
use aws_sdk_dynamodb::operation::create_table::CreateTableInput;
use aws_sdk_dynamodb::operation::get_item::GetItemInput;
use aws_sdk_dynamodb::operation::query::QueryInput;
use aws_sdk_dynamodb::operation::scan::{ScanInput, ScanOutput};
use aws_sdk_dynamodb::operation::update_table::UpdateTableInput;
use aws_sdk_dynamodb::types::ProvisionedThroughput;
use aws_smithy_runtime_api::client::interceptors::context::{Input, Output};
use tracing::Span;

/// A list as the JSON text of a `string[]` attribute.
pub(crate) fn string_array<T: AsRef<str>>(items: impl IntoIterator<Item = T>) -> String {
    let items: Vec<String> = items
        .into_iter()
        .map(|item| item.as_ref().to_owned())
        .collect();
    serde_json::to_string(&items).unwrap_or_default()
}

/// Each described part as JSON text, in a `string[]` attribute's form.
fn described<T: Describe>(parts: &[T]) -> String {
    string_array(parts.iter().map(|part| part.describe().to_string()))
}

/// The request's attributes: what it asks to read, and how.
pub(crate) fn record_input(span: &Span, input: &Input) {
    if let Some(input) = input.downcast_ref::<QueryInput>() {
        reads(span, input.consistent_read, input.projection_expression());
        record_some(span, "aws.dynamodb.limit", input.limit.map(i64::from));
        record_some(span, "aws.dynamodb.scan_forward", input.scan_index_forward);
        record_some(
            span,
            "aws.dynamodb.select",
            input.select().map(|select| select.as_str()),
        );
    } else if let Some(input) = input.downcast_ref::<ScanInput>() {
        reads(span, input.consistent_read, input.projection_expression());
        record_some(span, "aws.dynamodb.limit", input.limit.map(i64::from));
        record_some(
            span,
            "aws.dynamodb.select",
            input.select().map(|select| select.as_str()),
        );
        record_some(span, "aws.dynamodb.segment", input.segment.map(i64::from));
        let total = input.total_segments.map(i64::from);
        record_some(span, "aws.dynamodb.total_segments", total);
        record_some(span, "aws.dynamodb.index_name", input.index_name());
    } else if let Some(input) = input.downcast_ref::<GetItemInput>() {
        reads(span, input.consistent_read, input.projection_expression());
    } else if let Some(input) = input.downcast_ref::<BatchGetItemInput>() {
        if let Some(items) = input.request_items() {
            span.record("aws.dynamodb.table_names", string_array(items.keys()));
        }
    } else if let Some(input) = input.downcast_ref::<BatchWriteItemInput>() {
        if let Some(items) = input.request_items() {
            span.record("aws.dynamodb.table_names", string_array(items.keys()));
        }
    } else if let Some(input) = input.downcast_ref::<CreateTableInput>() {
        let indexes = input.global_secondary_indexes();
        if !indexes.is_empty() {
            span.record("aws.dynamodb.global_secondary_indexes", described(indexes));
        }
        let indexes = input.local_secondary_indexes();
        if !indexes.is_empty() {
            span.record("aws.dynamodb.local_secondary_indexes", described(indexes));
        }
        provisioned(span, input.provisioned_throughput());
    } else if let Some(input) = input.downcast_ref::<UpdateTableInput>() {
        let definitions = input.attribute_definitions();
        if !definitions.is_empty() {
            span.record("aws.dynamodb.attribute_definitions", described(definitions));
        }
        let updates = input.global_secondary_index_updates();
        if !updates.is_empty() {
            span.record(
                "aws.dynamodb.global_secondary_index_updates",
                described(updates),
            );
        }
        provisioned(span, input.provisioned_throughput());
    }
}

/// The response's attributes: how many items a scan matched and read (the conventions define
/// them for `Scan` only).
pub(crate) fn record_output(span: &Span, output: &Output) {
    if let Some(output) = output.downcast_ref::<ScanOutput>() {
        span.record("aws.dynamodb.count", i64::from(output.count));
        span.record(
            "aws.dynamodb.scanned_count",
            i64::from(output.scanned_count),
        );
    }
}

/// Where the request goes: the endpoint's host and port (the scheme's default when the
/// endpoint names none).
pub(crate) fn record_server(span: &Span, uri: &str) {
    let Ok(uri) = uri.parse::<http::Uri>() else {
        return;
    };
    if let Some(host) = uri.host() {
        span.record("server.address", host);
    }
    let default = if uri.scheme_str() == Some("http") {
        80
    } else {
        443
    };
    span.record("server.port", i64::from(uri.port_u16().unwrap_or(default)));
}

fn reads(span: &Span, consistent: Option<bool>, projection: Option<&str>) {
    // DynamoDB's default is an eventually consistent read: the attribute says which it was.
    span.record("aws.dynamodb.consistent_read", consistent.unwrap_or(false));
    record_some(span, "aws.dynamodb.projection", projection);
}

fn provisioned(span: &Span, throughput: Option<&ProvisionedThroughput>) {
    if let Some(throughput) = throughput {
        let read = Some(throughput.read_capacity_units() as f64);
        let write = Some(throughput.write_capacity_units() as f64);
        record_some(span, "aws.dynamodb.provisioned_read_capacity", read);
        record_some(span, "aws.dynamodb.provisioned_write_capacity", write);
    }
}

fn record_some<V: tracing::Value>(span: &Span, field: &str, value: Option<V>) {
    if let Some(value) = value {
        span.record(field, value);
    }
}
