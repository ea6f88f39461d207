//! The transaction form of the single-item writes: a put, update or delete in a transaction is
//! the request the operation sends alone, less what a transaction does not take (return
//! values, capacity reporting), so the two cannot differ.

use aws_sdk_dynamodb::error::BuildError;
use aws_sdk_dynamodb::operation::delete_item::builders::DeleteItemInputBuilder;
use aws_sdk_dynamodb::operation::put_item::builders::PutItemInputBuilder;
use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemInputBuilder;
use aws_sdk_dynamodb::types::{Delete, Put, TransactWriteItem, Update};

/// `$name(&$Input) -> TransactWriteItem`: the `$Write` of a transaction from a request's
/// input, copying the fields both have (`$own` are those of this kind of write).
macro_rules! transaction_form {
    ($(#[$doc:meta])* $name:ident, $Input:ty, $Write:ident, $write:ident, [$(($set:ident, $get:ident)),*]) => {
        $(#[$doc])*
        pub(crate) fn $name(input: &$Input) -> Result<TransactWriteItem, BuildError> {
            let write = $Write::builder()
                .set_table_name(input.get_table_name().clone())
                $(.$set(input.$get().clone()))*
                .set_condition_expression(input.get_condition_expression().clone())
                .set_expression_attribute_names(input.get_expression_attribute_names().clone())
                .set_expression_attribute_values(input.get_expression_attribute_values().clone())
                .set_return_values_on_condition_check_failure(
                    input.get_return_values_on_condition_check_failure().clone(),
                )
                .build()?;
            Ok(TransactWriteItem::builder().$write(write).build())
        }
    };
}

transaction_form!(
    /// The put of `input`.
    put, PutItemInputBuilder, Put, put, [(set_item, get_item)]
);
transaction_form!(
    /// The update of `input`.
    update, UpdateItemInputBuilder, Update, update,
    [(set_key, get_key), (set_update_expression, get_update_expression)]
);
transaction_form!(
    /// The delete of `input`.
    delete, DeleteItemInputBuilder, Delete, delete, [(set_key, get_key)]
);
