//! An update's actions applied to an item the library holds, as DynamoDB applies them to a
//! stored one: how [`or_create`](super::Update::or_create) makes the item it creates from its
//! initial value. Where DynamoDB would refuse an action on that item (`SET x = x + :v` of a
//! missing `x`), so does this.

use crate::expr::path::PathStep;
use crate::expr::update::{Action, SetValue};
use crate::expr::AttrPath;
use crate::item::Item;
use aws_sdk_dynamodb::types::AttributeValue;

/// Applies `actions` to `item` in order; the reason, where one cannot apply.
pub(super) fn apply_actions(item: &mut Item, actions: &[Action]) -> Result<(), String> {
    for action in actions {
        apply(item, action).map_err(|reason| format!("`{}`: {reason}", describe(action.path())))?;
    }
    Ok(())
}

fn apply(item: &mut Item, action: &Action) -> Result<(), String> {
    let path = action.path();
    let current = path.value_in(item).cloned();
    let new = match (action, current) {
        (Action::Remove(_), _) => return remove(item, path),
        (Action::Set(_, SetValue::Value(value)), _) => value.clone(),
        (Action::Set(_, SetValue::IfNotExists(value)), current) => {
            current.unwrap_or_else(|| value.clone())
        }
        (Action::Set(_, SetValue::Plus(value)), Some(current)) => {
            add_numbers(&current, value, false)?
        }
        (Action::Set(_, SetValue::Minus(value)), Some(current)) => {
            add_numbers(&current, value, true)?
        }
        (Action::Set(_, SetValue::CountUp(value)), current) => {
            let zero = AttributeValue::N("0".to_owned());
            add_numbers(&current.unwrap_or(zero), value, false)?
        }
        (Action::Set(_, SetValue::Append(value)), Some(current)) => join_lists(&current, value)?,
        (Action::Set(_, SetValue::Prepend(value)), Some(current)) => join_lists(value, &current)?,
        (Action::Set(..), None) => return Err("the attribute it reads is missing".to_owned()),
        // `ADD` of a number to a missing attribute starts from 0; of a set, from no members.
        (Action::Add(_, value), None) => value.clone(),
        (Action::Add(_, value), Some(current @ AttributeValue::N(_))) => {
            add_numbers(&current, value, false)?
        }
        (Action::Add(_, value), Some(current)) => set_members(&current, value, true)?,
        (Action::Delete(_, _), None) => return Ok(()),
        (Action::Delete(_, value), Some(current)) => {
            let left = set_members(&current, value, false)?;
            // A set cannot be empty: deleting its last members removes the attribute.
            if is_empty_set(&left) {
                return remove(item, path);
            }
            left
        }
    };
    put(item, path, new)
}

/// The value at `path`'s parent, to write into.
fn parent<'a>(
    item: &'a mut Item,
    path: &AttrPath,
) -> Result<Option<&'a mut AttributeValue>, String> {
    let steps = path.steps();
    let Some((_, above)) = steps.split_last() else {
        return Ok(None);
    };
    let mut value = item
        .get_mut(path.root())
        .ok_or("the document it is in is missing")?;
    for step in above {
        value = match (step, value) {
            (PathStep::Name(name), AttributeValue::M(entries)) => entries.get_mut(name),
            (PathStep::Index(index), AttributeValue::L(items)) => items.get_mut(*index),
            _ => None,
        }
        .ok_or("the document it is in is missing")?;
    }
    Ok(Some(value))
}

fn put(item: &mut Item, path: &AttrPath, value: AttributeValue) -> Result<(), String> {
    let Some(container) = parent(item, path)? else {
        item.insert(path.root().to_owned(), value);
        return Ok(());
    };
    match (path.steps().last(), container) {
        (Some(PathStep::Name(name)), AttributeValue::M(entries)) => {
            entries.insert(name.clone(), value);
        }
        // DynamoDB appends at the end for an index past it.
        (Some(PathStep::Index(index)), AttributeValue::L(items)) => match items.get_mut(*index) {
            Some(slot) => *slot = value,
            None => items.push(value),
        },
        _ => return Err("its document is not a map or a list".to_owned()),
    }
    Ok(())
}

fn remove(item: &mut Item, path: &AttrPath) -> Result<(), String> {
    let Some(container) = parent(item, path)? else {
        item.remove(path.root());
        return Ok(());
    };
    match (path.steps().last(), container) {
        (Some(PathStep::Name(name)), AttributeValue::M(entries)) => {
            entries.remove(name);
        }
        (Some(PathStep::Index(index)), AttributeValue::L(items)) if *index < items.len() => {
            items.remove(*index);
        }
        _ => {}
    }
    Ok(())
}

/// `a + b` (or `a - b`), exactly for integers; numbers with a fraction as `f64`, the type an
/// entity's field holds them in.
fn add_numbers(
    a: &AttributeValue,
    b: &AttributeValue,
    subtract: bool,
) -> Result<AttributeValue, String> {
    let (AttributeValue::N(a), AttributeValue::N(b)) = (a, b) else {
        return Err("an operand is not a number".to_owned());
    };
    if let (Ok(x), Ok(y)) = (a.parse::<i128>(), b.parse::<i128>()) {
        let sum = if subtract {
            x.checked_sub(y)
        } else {
            x.checked_add(y)
        };
        return sum
            .map(|sum| AttributeValue::N(sum.to_string()))
            .ok_or_else(|| "the result is beyond the numbers it can add".to_owned());
    }
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => Ok(AttributeValue::N(
            if subtract { x - y } else { x + y }.to_string(),
        )),
        _ => Err(format!("{a:?} or {b:?} is not a number")),
    }
}

fn join_lists(first: &AttributeValue, second: &AttributeValue) -> Result<AttributeValue, String> {
    match (first, second) {
        (AttributeValue::L(first), AttributeValue::L(second)) => Ok(AttributeValue::L(
            first.iter().chain(second).cloned().collect(),
        )),
        _ => Err("an operand is not a list".to_owned()),
    }
}

/// The union (`add`) or difference of two sets of one type.
fn set_members(
    current: &AttributeValue,
    given: &AttributeValue,
    add: bool,
) -> Result<AttributeValue, String> {
    fn combine<T: Clone + PartialEq>(current: &[T], given: &[T], add: bool) -> Vec<T> {
        let mut members: Vec<T> = current
            .iter()
            .filter(|member| add || !given.contains(member))
            .cloned()
            .collect();
        if add {
            members.extend(
                given
                    .iter()
                    .filter(|member| !current.contains(member))
                    .cloned(),
            );
        }
        members
    }
    match (current, given) {
        (AttributeValue::Ss(current), AttributeValue::Ss(given)) => {
            Ok(AttributeValue::Ss(combine(current, given, add)))
        }
        (AttributeValue::Ns(current), AttributeValue::Ns(given)) => {
            Ok(AttributeValue::Ns(combine(current, given, add)))
        }
        (AttributeValue::Bs(current), AttributeValue::Bs(given)) => {
            Ok(AttributeValue::Bs(combine(current, given, add)))
        }
        _ => Err("the attribute and the value are not sets of one type".to_owned()),
    }
}

fn is_empty_set(value: &AttributeValue) -> bool {
    match value {
        AttributeValue::Ss(members) | AttributeValue::Ns(members) => members.is_empty(),
        AttributeValue::Bs(members) => members.is_empty(),
        _ => false,
    }
}

/// A path for messages: `tags[2]`, `labels.team`.
fn describe(path: &AttrPath) -> String {
    let mut text = path.root().to_owned();
    for step in path.steps() {
        match step {
            PathStep::Name(name) => {
                text.push('.');
                text.push_str(name);
            }
            PathStep::Index(index) => text.push_str(&format!("[{index}]")),
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(text: &str) -> AttributeValue {
        AttributeValue::N(text.to_owned())
    }

    fn s(text: &str) -> AttributeValue {
        AttributeValue::S(text.to_owned())
    }

    fn applied(item: &Item, action: Action) -> Result<Item, String> {
        let mut item = item.clone();
        apply_actions(&mut item, &[action]).map(|()| item)
    }

    #[test]
    fn actions_apply_as_dynamodb_applies_them() -> Result<(), String> {
        let item = Item::from([
            ("count".to_owned(), n("41")),
            ("price".to_owned(), n("1.5")),
            (
                "tags".to_owned(),
                AttributeValue::Ss(vec!["a".into(), "b".into()]),
            ),
            ("list".to_owned(), AttributeValue::L(vec![s("x"), s("y")])),
            (
                "map".to_owned(),
                AttributeValue::M(Item::from([("k".to_owned(), s("v"))])),
            ),
        ]);
        let path = AttrPath::attribute;
        let count = applied(&item, Action::Set(path("count"), SetValue::Plus(n("1"))))?;
        assert_eq!(count["count"], n("42"));
        let less = applied(&item, Action::Set(path("count"), SetValue::Minus(n("50"))))?;
        assert_eq!(less["count"], n("-9"));
        let price = applied(&item, Action::Add(path("price"), n("0.25")))?;
        assert_eq!(price["price"], n("1.75"));
        let counted = applied(&item, Action::Set(path("new"), SetValue::CountUp(n("1"))))?;
        assert_eq!(counted["new"], n("1"));
        let added = applied(
            &item,
            Action::Add(
                path("tags"),
                AttributeValue::Ss(vec!["b".into(), "c".into()]),
            ),
        )?;
        assert_eq!(
            added["tags"],
            AttributeValue::Ss(vec!["a".into(), "b".into(), "c".into()])
        );
        let emptied = applied(
            &item,
            Action::Delete(
                path("tags"),
                AttributeValue::Ss(vec!["a".into(), "b".into()]),
            ),
        )?;
        assert!(!emptied.contains_key("tags"), "a set cannot be empty");
        let appended = applied(
            &item,
            Action::Set(
                path("list"),
                SetValue::Append(AttributeValue::L(vec![s("z")])),
            ),
        )?;
        assert_eq!(
            appended["list"],
            AttributeValue::L(vec![s("x"), s("y"), s("z")])
        );
        let prepended = applied(
            &item,
            Action::Set(
                path("list"),
                SetValue::Prepend(AttributeValue::L(vec![s("w")])),
            ),
        )?;
        assert_eq!(
            prepended["list"],
            AttributeValue::L(vec![s("w"), s("x"), s("y")])
        );
        let dropped = applied(&item, Action::Remove(path("list").index(0)))?;
        assert_eq!(dropped["list"], AttributeValue::L(vec![s("y")]));
        let nested = applied(
            &item,
            Action::Set(path("map").key("j"), SetValue::Value(s("w"))),
        )?;
        let AttributeValue::M(entries) = &nested["map"] else {
            return Err("not a map".to_owned());
        };
        assert_eq!(entries.len(), 2);
        let kept = applied(
            &item,
            Action::Set(path("count"), SetValue::IfNotExists(n("0"))),
        )?;
        assert_eq!(kept["count"], n("41"));
        Ok(())
    }

    #[test]
    fn what_dynamodb_refuses_is_refused() {
        let item = Item::from([("name".to_owned(), s("a"))]);
        let path = AttrPath::attribute;
        for action in [
            Action::Set(path("missing"), SetValue::Plus(n("1"))),
            Action::Set(path("missing"), SetValue::Append(AttributeValue::L(vec![]))),
            Action::Set(path("name"), SetValue::Plus(n("1"))),
            Action::Set(path("missing").key("k"), SetValue::Value(s("v"))),
        ] {
            let refused = applied(&item, action.clone());
            assert!(refused.is_err(), "{action:?} applied: {refused:?}");
        }
    }
}
