//! The transaction form of the single-item writes: a put, update or delete in a transaction is
//! the request the operation sends alone, less what a transaction does not take (return
//! values, capacity reporting), so the two cannot differ.

use aws_sdk_dynamodb::error::BuildError;
use aws_sdk_dynamodb::operation::delete_item::builders::DeleteItemInputBuilder;
use aws_sdk_dynamodb::operation::put_item::builders::PutItemInputBuilder;
use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemInputBuilder;
use aws_sdk_dynamodb::types::{Delete, Put, TransactWriteItem, Update};

/// The put of `input`.
pub(crate) fn put(input: &PutItemInputBuilder) -> Result<TransactWriteItem, BuildError> {
    let put = Put::builder()
        .set_table_name(input.get_table_name().clone())
        .set_item(input.get_item().clone())
        .set_condition_expression(input.get_condition_expression().clone())
        .set_expression_attribute_names(input.get_expression_attribute_names().clone())
        .set_expression_attribute_values(input.get_expression_attribute_values().clone())
        .set_return_values_on_condition_check_failure(
            input.get_return_values_on_condition_check_failure().clone(),
        )
        .build()?;
    Ok(TransactWriteItem::builder().put(put).build())
}

/// The update of `input`.
pub(crate) fn update(input: &UpdateItemInputBuilder) -> Result<TransactWriteItem, BuildError> {
    let update = Update::builder()
        .set_table_name(input.get_table_name().clone())
        .set_key(input.get_key().clone())
        .set_update_expression(input.get_update_expression().clone())
        .set_condition_expression(input.get_condition_expression().clone())
        .set_expression_attribute_names(input.get_expression_attribute_names().clone())
        .set_expression_attribute_values(input.get_expression_attribute_values().clone())
        .set_return_values_on_condition_check_failure(
            input.get_return_values_on_condition_check_failure().clone(),
        )
        .build()?;
    Ok(TransactWriteItem::builder().update(update).build())
}

/// The delete of `input`.
pub(crate) fn delete(input: &DeleteItemInputBuilder) -> Result<TransactWriteItem, BuildError> {
    let delete = Delete::builder()
        .set_table_name(input.get_table_name().clone())
        .set_key(input.get_key().clone())
        .set_condition_expression(input.get_condition_expression().clone())
        .set_expression_attribute_names(input.get_expression_attribute_names().clone())
        .set_expression_attribute_values(input.get_expression_attribute_values().clone())
        .set_return_values_on_condition_check_failure(
            input.get_return_values_on_condition_check_failure().clone(),
        )
        .build()?;
    Ok(TransactWriteItem::builder().delete(delete).build())
}
