//! Rust sets as DynamoDB sets, for `ADD` and `DELETE`.

use aws_sdk_dynamodb::types::AttributeValue;

/// serde writes Rust sets as lists; `ADD` and `DELETE` need DynamoDB sets (`SS`, `NS`, `BS`).
/// Numbers and anything else pass through unchanged.
pub(crate) fn as_set(value: AttributeValue) -> AttributeValue {
    let AttributeValue::L(elements) = value else {
        return value;
    };
    if let Some(strings) = all_of(&elements, AttributeValue::as_s) {
        return AttributeValue::Ss(strings);
    }
    if let Some(numbers) = all_of(&elements, AttributeValue::as_n) {
        return AttributeValue::Ns(numbers);
    }
    match all_of(&elements, AttributeValue::as_b) {
        Some(binaries) => AttributeValue::Bs(binaries),
        None => AttributeValue::L(elements),
    }
}

/// The stored form of a field written with `serde_dynamo`'s `string_set`, `number_set` or
/// `binary_set`, from serde's plain form (a list): a DynamoDB set, or no attribute for an empty
/// one (DynamoDB stores no empty set). The derive names it as a set field's `FieldOf::STORED`.
#[doc(hidden)]
pub fn stored_as_set(value: AttributeValue) -> Result<Option<AttributeValue>, String> {
    match value {
        AttributeValue::L(elements) if elements.is_empty() => Ok(None),
        AttributeValue::Null(true) => Ok(None),
        other => Ok(Some(as_set(other))),
    }
}

/// The elements as one type, if there are some and all are of it.
pub(crate) fn all_of<'a, T: Clone + 'a>(
    elements: &'a [AttributeValue],
    as_type: impl Fn(&'a AttributeValue) -> Result<&'a T, &'a AttributeValue>,
) -> Option<Vec<T>> {
    let all: Option<Vec<T>> = elements
        .iter()
        .map(|element| as_type(element).ok().cloned())
        .collect();
    all.filter(|all| !all.is_empty())
}

#[cfg(test)]
mod tests {
    use super::as_set;
    use aws_sdk_dynamodb::primitives::Blob;
    use aws_sdk_dynamodb::types::AttributeValue;

    pub(super) fn list(elements: Vec<AttributeValue>) -> AttributeValue {
        AttributeValue::L(elements)
    }

    #[test]
    pub(super) fn lists_of_one_scalar_type_become_sets() {
        let s = |text: &str| AttributeValue::S(text.to_owned());
        let n = |text: &str| AttributeValue::N(text.to_owned());
        let b = |bytes: &[u8]| AttributeValue::B(Blob::new(bytes));
        assert_eq!(
            as_set(list(vec![s("a"), s("b")])),
            AttributeValue::Ss(vec!["a".into(), "b".into()])
        );
        assert_eq!(
            as_set(list(vec![n("1"), n("2")])),
            AttributeValue::Ns(vec!["1".into(), "2".into()])
        );
        assert_eq!(
            as_set(list(vec![b(b"x")])),
            AttributeValue::Bs(vec![Blob::new(b"x")])
        );
        // Mixed or empty lists, and anything else, pass through unchanged.
        assert_eq!(
            as_set(list(vec![s("a"), n("1")])),
            list(vec![s("a"), n("1")])
        );
        assert_eq!(as_set(list(Vec::new())), list(Vec::new()));
        assert_eq!(as_set(n("3")), n("3"));
    }
}
