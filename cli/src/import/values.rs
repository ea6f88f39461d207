//! What Rust type holds each attribute of an entity, read from the sample items' values in
//! DynamoDB's JSON (`{"S": ..}`, `{"N": ..}`, `{"M": {..}}`, ..).
//!
//! Strings are `String`; numbers `i64` when every sample is an integer written as Rust writes
//! it, else `f64` when every sample reads back as written; `BOOL` is `bool`; `SS` and `NS` are
//! `Vec`s stored as sets (`serde_dynamo::string_set`, `number_set`); a list of one type is a
//! `Vec` of it. **A map whose values all have one type becomes a `BTreeMap<String, T>`; a map
//! whose values differ becomes a nested struct** with a field per key the samples hold. What
//! has no exact Rust form here (binary values, `NULL`, which the library stores as no
//! attribute, numbers that would not read back as written, lists of mixed types) needs a
//! decision, and its samples are left out of the test with the reason.

use serde_json::Value;

/// A Rust type for an attribute.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Kind {
    String,
    Integer,
    Float,
    Bool,
    StringSet,
    NumberSet(Box<Kind>),
    List(Box<Kind>),
    Map(Box<Kind>),
    /// A nested struct.
    Struct(StructFields),
}

/// A nested struct's fields: each attribute's name, kind, and whether some sample lacks it.
pub(super) type StructFields = Vec<(String, Kind, bool)>;

/// Why an attribute's samples have no one Rust type.
pub(super) type Undecided = String;

/// The kind that holds every one of `values` (each a DynamoDB JSON value), or why none does.
pub(super) fn kind_of(values: &[&Value]) -> Result<Kind, Undecided> {
    let tags: Vec<(&str, &Value)> = values
        .iter()
        .map(|value| tagged(value))
        .collect::<Result<_, _>>()?;
    let Some((first, _)) = tags.first() else {
        return Err("no sample holds it".to_owned());
    };
    if let Some((other, _)) = tags.iter().find(|(tag, _)| tag != first) {
        return Err(format!("its samples are of two types, {first} and {other}"));
    }
    let inner: Vec<&Value> = tags.iter().map(|(_, inner)| *inner).collect();
    match *first {
        "S" => Ok(Kind::String),
        "N" => number_kind(inner.iter().filter_map(|value| value.as_str())),
        "BOOL" => Ok(Kind::Bool),
        "SS" => Ok(Kind::StringSet),
        "NS" => {
            let numbers = inner.iter().filter_map(|set| set.as_array()).flatten();
            number_kind(numbers.filter_map(Value::as_str))
                .map(|kind| Kind::NumberSet(Box::new(kind)))
        }
        "L" => {
            let elements: Vec<&Value> = inner
                .iter()
                .filter_map(|list| list.as_array())
                .flatten()
                .collect();
            if elements.is_empty() {
                return Err("its lists are empty, so their elements' type is unknown".to_owned());
            }
            kind_of(&elements)
                .map(|kind| Kind::List(Box::new(kind)))
                .map_err(|why| format!("a list whose elements have no one type: {why}"))
        }
        "M" => map_kind(&inner),
        "NULL" => Err("it is NULL, which the library stores as no attribute (a `None`)".to_owned()),
        "B" | "BS" => Err("binary values need a decision (`serde_bytes`, or a string)".to_owned()),
        other => Err(format!("DynamoDB has no type `{other}`")),
    }
}

/// A DynamoDB JSON value's one key and its content.
fn tagged(value: &Value) -> Result<(&str, &Value), Undecided> {
    match value
        .as_object()
        .map(|object| object.iter().collect::<Vec<_>>())
        .as_deref()
    {
        Some([(tag, inner)]) => Ok((tag.as_str(), inner)),
        _ => Err(format!("`{value}` is not a DynamoDB JSON value")),
    }
}

fn number_kind<'a>(numbers: impl Iterator<Item = &'a str>) -> Result<Kind, Undecided> {
    let numbers: Vec<&str> = numbers.collect();
    let integer = |text: &&str| {
        text.parse::<i64>()
            .is_ok_and(|number| number.to_string() == *text)
    };
    if numbers.iter().all(integer) {
        return Ok(Kind::Integer);
    }
    let exact_float = |text: &&str| {
        text.parse::<f64>()
            .is_ok_and(|number| number.to_string() == *text)
    };
    match numbers.iter().find(|text| !exact_float(text)) {
        None => Ok(Kind::Float),
        Some(text) => Err(format!(
            "the number {text} would not read back as written as an `i64` or an `f64`"
        )),
    }
}

fn map_kind(maps: &[&Value]) -> Result<Kind, Undecided> {
    let maps: Vec<&serde_json::Map<String, Value>> =
        maps.iter().filter_map(|map| map.as_object()).collect();
    let values: Vec<&Value> = maps.iter().flat_map(|map| map.values()).collect();
    if let Ok(kind) = kind_of(&values) {
        return Ok(Kind::Map(Box::new(kind)));
    }
    let mut keys: Vec<&String> = Vec::new();
    for key in maps.iter().flat_map(|map| map.keys()) {
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    let fields = keys
        .into_iter()
        .map(|key| {
            let values: Vec<&Value> = maps.iter().filter_map(|map| map.get(key)).collect();
            let optional = values.len() < maps.len();
            kind_of(&values)
                .map(|kind| (key.clone(), kind, optional))
                .map_err(|why| format!("its key `{key}`: {why}"))
        })
        .collect::<Result<_, _>>()?;
    Ok(Kind::Struct(fields))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kind(values: &[Value]) -> Result<Kind, Undecided> {
        kind_of(&values.iter().collect::<Vec<_>>())
    }

    #[test]
    fn numbers_are_integers_or_floats_that_read_back_as_written() {
        assert_eq!(
            kind(&[json!({"N": "1700318200"}), json!({"N": "-3"})]),
            Ok(Kind::Integer)
        );
        assert_eq!(
            kind(&[json!({"N": "12.99"}), json!({"N": "3"})]),
            Ok(Kind::Float)
        );
        assert!(kind(&[json!({"N": "007"})]).is_err());
    }

    #[test]
    fn maps_of_one_type_are_maps_and_the_rest_structs() {
        let uniform = json!({"M": {"card": {"S": "1234"}, "address": {"S": "12 Bridge St"}}});
        assert_eq!(kind(&[uniform]), Ok(Kind::Map(Box::new(Kind::String))));
        let mixed = json!({"M": {"card": {"S": "1234"}, "default": {"BOOL": true}}});
        let other = json!({"M": {"card": {"S": "9"}}});
        assert_eq!(
            kind(&[mixed, other]),
            Ok(Kind::Struct(vec![
                ("card".to_owned(), Kind::String, false),
                ("default".to_owned(), Kind::Bool, true),
            ]))
        );
    }

    #[test]
    fn what_has_no_exact_form_is_undecided() {
        assert!(kind(&[json!({"S": "a"}), json!({"N": "1"})]).is_err());
        assert!(kind(&[json!({"NULL": true})]).is_err());
        assert!(kind(&[json!({"B": "AAE="})]).is_err());
    }
}
