//! Which schema version wrote an item.

/// The schema version an item records, `0` when it has none (it was written before versions
/// were recorded, so it is older than any version).
pub fn item_schema_version(item: &crate::Item, table: &crate::schema::TableSchema) -> Option<u32> {
    match item.get(table.schema_version_attribute) {
        None => Some(0),
        Some(aws_sdk_dynamodb::types::AttributeValue::N(number)) => number.parse().ok(),
        // Another type: not a version this library wrote.
        Some(_) => None,
    }
}
