//! Why a table cannot be exported as a NoSQL Workbench model as asked.

use crate::error::Error;

/// What keeps a table, or a sample item of it, out of a NoSQL Workbench model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkbenchError {
    /// An index keyed on more than one attribute, which the model format (3.0) cannot state:
    /// it keys an index on one partition key attribute and at most one sort key attribute.
    #[error(
        "index `{index}` keys on several attributes ({attributes}); NoSQL Workbench's model \
         format 3.0 keys an index on one partition key and one sort key attribute"
    )]
    MultiAttributeKey {
        /// The index's name.
        index: &'static str,
        /// Its key attributes, comma-separated.
        attributes: String,
    },
    /// Two entities store one attribute with two types: a model gives an attribute one type
    /// per table.
    #[error(
        "attribute `{attribute}` is {first} in `{first_entity}` and {second} in \
         `{second_entity}`; a NoSQL Workbench model gives an attribute one type per table"
    )]
    AttributeType {
        /// The attribute's name.
        attribute: String,
        /// Its type in the first entity that has it.
        first: &'static str,
        /// That entity's name.
        first_entity: &'static str,
        /// Its type in the other.
        second: &'static str,
        /// The other entity's name.
        second_entity: &'static str,
    },
    /// A sample value that a put would refuse (it does not encode, or a key cannot render).
    #[error("a sample `{entity}` cannot be written: {source}")]
    Sample {
        /// The entity's name.
        entity: &'static str,
        /// Why a put would refuse it.
        #[source]
        source: Box<Error>,
    },
}
