//! Whether two items hold the same data as DynamoDB sees it: sets are unordered, so an item
//! read back may list a set's elements in another order than the one written.

use super::Item;
use aws_sdk_dynamodb::types::AttributeValue;

/// The same attributes with the same values, sets compared as sets (at any depth).
pub fn same_item(left: &Item, right: &Item) -> bool {
    left.len() == right.len()
        && left.iter().all(|(name, value)| {
            right
                .get(name)
                .is_some_and(|other| same_value(value, other))
        })
}

fn same_value(left: &AttributeValue, right: &AttributeValue) -> bool {
    match (left, right) {
        (AttributeValue::Ss(left), AttributeValue::Ss(right))
        | (AttributeValue::Ns(left), AttributeValue::Ns(right)) => same_elements(left, right),
        (AttributeValue::Bs(left), AttributeValue::Bs(right)) => same_elements(left, right),
        (AttributeValue::L(left), AttributeValue::L(right)) => {
            left.len() == right.len()
                && left
                    .iter()
                    .zip(right)
                    .all(|(left, right)| same_value(left, right))
        }
        (AttributeValue::M(left), AttributeValue::M(right)) => same_item(left, right),
        (left, right) => left == right,
    }
}

/// The same elements, in any order (a set has no duplicates, so counting is not needed).
fn same_elements<T: PartialEq>(left: &[T], right: &[T]) -> bool {
    left.len() == right.len() && left.iter().all(|element| right.contains(element))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(pairs: &[(&str, AttributeValue)]) -> Item {
        pairs
            .iter()
            .map(|(name, value)| ((*name).to_owned(), value.clone()))
            .collect()
    }

    fn strings(values: &[&str]) -> Vec<String> {
        values.iter().map(|value| (*value).to_owned()).collect()
    }

    #[test]
    fn sets_are_equal_in_any_order_at_any_depth() {
        let written = item(&[
            ("tags", AttributeValue::Ss(strings(&["b", "a", "c"]))),
            ("sizes", AttributeValue::Ns(strings(&["3", "1"]))),
            (
                "nested",
                AttributeValue::M(item(&[("ids", AttributeValue::Ss(strings(&["x", "y"])))])),
            ),
        ]);
        let read = item(&[
            ("tags", AttributeValue::Ss(strings(&["a", "b", "c"]))),
            ("sizes", AttributeValue::Ns(strings(&["1", "3"]))),
            (
                "nested",
                AttributeValue::M(item(&[("ids", AttributeValue::Ss(strings(&["y", "x"])))])),
            ),
        ]);
        assert!(same_item(&written, &read));
    }

    /// A set of tags and a list of numbers, with `extra` attributes.
    fn tags_and_list(tags: &[&str], list: &[&str], extra: &[(&str, AttributeValue)]) -> Item {
        let mut built = item(&[
            ("tags", AttributeValue::Ss(strings(tags))),
            (
                "list",
                AttributeValue::L(
                    list.iter()
                        .map(|n| AttributeValue::N((*n).into()))
                        .collect(),
                ),
            ),
        ]);
        built.extend(item(extra));
        built
    }

    #[test]
    fn anything_else_must_match_exactly() {
        let base = tags_and_list(&["a", "b"], &["1", "2"], &[]);
        let other_set = tags_and_list(&["a", "c"], &["1", "2"], &[]);
        let reordered_list = tags_and_list(&["a", "b"], &["2", "1"], &[]);
        let more = tags_and_list(
            &["a", "b"],
            &["1", "2"],
            &[("extra", AttributeValue::Bool(true))],
        );
        assert!(same_item(&base, &base.clone()));
        assert!(!same_item(&base, &other_set));
        assert!(!same_item(&base, &reordered_list), "lists keep their order");
        assert!(!same_item(&base, &more) && !same_item(&more, &base));
        assert!(!same_item(
            &item(&[("n", AttributeValue::N("1".into()))]),
            &item(&[("n", AttributeValue::S("1".into()))])
        ));
    }
}
