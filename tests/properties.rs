//! Property tests of what must hold for any input: key templates render and parse back
//! exactly, cursors and items from anywhere decode or fail with a typed error (never a panic),
//! and no attribute name or value ever lands in expression text: every one goes through a
//! `#n`/`:v` placeholder.

use aws_sdk_dynamodb::types::AttributeValue;
use aws_smithy_types::Blob;
use proptest::collection::{hash_map, vec};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
// The expression trees, their placeholders and template segments are internal: these
// properties reach them as generated code does.
use singletable::__private::expr::{
    self as update, Action, AttrPath, Node, Operand, Placeholders, SetValue,
};
use singletable::__private::Segment;
use singletable::expr::{AttributeType, Comparison};
use singletable::item::Item;
use singletable::key::{KeyTemplate, PartContext};
use singletable::op::query::Cursor;
use singletable::{Db, Entity, KeyError, KeyField, KeyPart, Table};
use std::collections::{BTreeMap, BTreeSet, HashMap};

#[derive(Table)]
#[dynamo(
    name = "props",
    pk = "PK",
    sk = "SK",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
struct Props;

#[derive(KeyPart, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Status {
    Open,
    Closed,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Props, pk = "TICKET#{id}", sk = "TICKET",
         gsi1pk = "TEAM#{team_id}", gsi1sk = "STATUS#{status}#TICKET#{id}")]
struct Ticket {
    id: String,
    team_id: u32,
    status: Status,
    title: String,
    tags: Vec<String>,
    owner: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Address {
    city: String,
    zip: Option<u32>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
enum Shape {
    Circle { radius: f64 },
    Square(u16),
    Empty,
}

/// Many serde shapes, for decoding arbitrary items.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Props, pk = "RICH#{id}", sk = "RICH#{seq}")]
struct Rich {
    id: String,
    seq: i64,
    small: u8,
    ratio: f64,
    flag: bool,
    letters: Option<Vec<u16>>,
    scores: HashMap<String, i32>,
    labels: BTreeSet<String>,
    address: Address,
    shape: Shape,
    pair: (u8, String),
    at: chrono::DateTime<chrono::Utc>,
    day: Option<chrono::NaiveDate>,
    uuid: uuid::Uuid,
    ulid: ulid::Ulid,
    bytes: Vec<u8>,
    unit: (),
}

/// Attribute names made of everything an expression must never contain raw.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Props, pk = "W#{id}", sk = "W#{seq}",
         gsi1pk = "WG#{hash}", gsi1sk = "{seq}")]
struct Weird {
    id: String,
    seq: u32,
    #[serde(rename = "a#b")]
    hash: String,
    #[serde(rename = "x:y")]
    colon: u32,
    #[serde(rename = "p.q")]
    dot: String,
    #[serde(rename = "l[0]")]
    bracket: Vec<String>,
    #[serde(rename = "with space")]
    space: Option<String>,
    #[serde(rename = "ünï 名")]
    unicode: i64,
    #[serde(rename = "size")]
    size: u64,
    #[serde(rename = "#n0")]
    fake_name: String,
    #[serde(rename = ":v0")]
    fake_value: String,
    #[serde(rename = "AND) OR (x")]
    injection: String,
}

fn offline() -> Db<Props> {
    let client = aws_sdk_dynamodb::Client::from_conf(
        aws_sdk_dynamodb::Config::builder()
            .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
            .build(),
    );
    Db::new(client)
}

// ---------------------------------------------------------------------------------------
// Strategies

/// Attribute names: the characters expressions use, reserved words, placeholders, and
/// anything at all.
fn any_name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "#n0",
            ":v0",
            "#n1 = :v0",
            "a.b",
            "l[0]",
            "with space",
            "AND",
            "OR",
            "NOT",
            "size",
            "status",
            "name",
            "SET",
            ")",
            "(",
            ",",
            "ünï 名",
            "",
            "--",
            "a=b",
            "<>",
        ])
        .prop_map(str::to_owned),
        any::<String>(),
        "[#:.\\[\\] a-z0-9()=<>,]{0,12}",
    ]
}

/// Number texts, valid and not.
fn number_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|n| n.to_string()),
        "[-+]?[0-9]{0,45}(\\.[0-9]{0,6})?([eE][-+]?[0-9]{1,4})?",
        any::<String>(),
    ]
}

fn blob() -> impl Strategy<Value = Blob> {
    vec(any::<u8>(), 0..8).prop_map(Blob::new)
}

/// Any attribute value, nested up to 4 levels.
fn any_value() -> impl Strategy<Value = AttributeValue> {
    let leaf = prop_oneof![
        any::<String>().prop_map(AttributeValue::S),
        number_text().prop_map(AttributeValue::N),
        blob().prop_map(AttributeValue::B),
        any::<bool>().prop_map(AttributeValue::Bool),
        any::<bool>().prop_map(AttributeValue::Null),
        vec(any::<String>(), 0..4).prop_map(AttributeValue::Ss),
        vec(number_text(), 0..4).prop_map(AttributeValue::Ns),
        vec(blob(), 0..3).prop_map(AttributeValue::Bs),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..6).prop_map(AttributeValue::L),
            hash_map(any_name(), inner, 0..6).prop_map(AttributeValue::M),
        ]
    })
}

/// Items with the entity's field names (and others), sometimes marked as the entity.
fn item_for(fields: &'static [&'static str], entity: &'static str) -> impl Strategy<Value = Item> {
    let name = prop_oneof![
        3 => prop::sample::select(fields).prop_map(str::to_owned),
        1 => any_name(),
    ];
    (hash_map(name, any_value(), 0..12), any::<bool>()).prop_map(move |(mut item, marked)| {
        if marked {
            item.insert("_type".to_owned(), AttributeValue::S(entity.to_owned()));
        }
        item
    })
}

/// A valid encoded `Rich` with each attribute, with some probability, replaced by anything.
fn damaged_rich() -> impl Strategy<Value = Item> {
    let rich = Rich {
        id: "r".into(),
        seq: -3,
        small: 7,
        ratio: 0.5,
        flag: true,
        letters: Some(vec![1, 2]),
        scores: HashMap::from([("a".to_owned(), -1)]),
        labels: BTreeSet::from(["x".to_owned()]),
        address: Address {
            city: "Oslo".into(),
            zip: Some(150),
        },
        shape: Shape::Circle { radius: 1.5 },
        pair: (1, "one".into()),
        at: chrono::DateTime::UNIX_EPOCH,
        day: chrono::NaiveDate::from_ymd_opt(2024, 2, 29),
        uuid: uuid::Uuid::nil(),
        ulid: ulid::Ulid::nil(),
        bytes: vec![0, 255],
        unit: (),
    };
    let valid = singletable::item::encode(&rich).unwrap();
    let names: Vec<String> = valid.keys().cloned().collect();
    vec((any::<u8>(), any_value()), names.len()).prop_map(move |changes| {
        let mut item = valid.clone();
        for (name, (roll, value)) in names.iter().zip(changes) {
            match roll % 8 {
                0 => {
                    item.insert(name.clone(), value);
                }
                1 => {
                    item.remove(name);
                }
                _ => {}
            }
        }
        item
    })
}

// ---------------------------------------------------------------------------------------
// Key templates

fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

/// A template of 1 to 4 fields with constant text between them (the derive rejects adjacent
/// fields), and optional constant text before the first and after the last.
fn any_template() -> impl Strategy<Value = KeyTemplate> {
    let literal = prop_oneof![
        prop::sample::select(vec!["#", "##", "#T#", "é", "ab", "aba", "::", "-"])
            .prop_map(str::to_owned),
        "\\PC{1,4}",
    ];
    (
        1usize..=4,
        proptest::option::of(literal.clone()),
        vec(literal, 4),
        proptest::option::of("\\PC{1,3}"),
    )
        .prop_map(|(fields, first, between, last)| {
            let mut segments = Vec::new();
            if let Some(first) = first {
                segments.push(Segment::Literal(leak(first)));
            }
            for (position, literal) in between.into_iter().enumerate().take(fields) {
                if position > 0 {
                    segments.push(Segment::Literal(leak(literal)));
                }
                segments.push(Segment::Field {
                    name: leak(format!("f{position}")),
                    width: None,
                    number: position as u16,
                });
            }
            if let Some(last) = last {
                segments.push(Segment::Literal(leak(last)));
            }
            let source = segments
                .iter()
                .map(|segment| match segment {
                    Segment::Literal(text) => (*text).to_owned(),
                    Segment::Field { name, .. } => format!("{{{name}}}"),
                    Segment::Shard { name, count, .. } => format!("{{shard({name}, {count})}}"),
                })
                .collect::<String>();
            KeyTemplate {
                source: leak(source),
                segments: Box::leak(segments.into_boxed_slice()),
            }
        })
}

/// Values that often contain the template's own constants.
fn key_value() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), "[#Tabé:-]{0,6}", Just(String::new()),]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// A key renders only if it splits back into exactly its values; a refusal is
    /// justified: the plain concatenation would not split back, or a value holds one of the
    /// template's separators.
    #[test]
    fn key_templates_render_only_what_parses_back(
        template in any_template(),
        values in vec(key_value(), 4),
    ) {
        let fields = template.fields().count();
        let values = &values[..fields];
        let parts: Vec<&dyn KeyPart> = values.iter().map(|value| value as &dyn KeyPart).collect();
        match template.render(&parts) {
            Ok(key) => {
                let split = template.split(&key).unwrap();
                prop_assert_eq!(split, values.iter().map(String::as_str).collect::<Vec<_>>());
                // Every prefix a query uses is a prefix of the key.
                for given in 0..fields {
                    if let Ok(prefix) = template.render_prefix(&parts, given) {
                        prop_assert!(key.starts_with(&prefix), "{prefix:?} / {key:?}");
                    }
                }
            }
            Err(KeyError::Ambiguous { .. }) => {
                let mut naive = String::new();
                let mut next = values.iter();
                for segment in template.segments {
                    match segment {
                        Segment::Literal(text) => naive.push_str(text),
                        Segment::Field { .. } => naive.push_str(next.next().unwrap()),
                        Segment::Shard { .. } => unreachable!("the strategy makes no shard parts"),
                    }
                }
                let split = template.split(&naive);
                prop_assert!(
                    split.as_deref() != Ok(&values.iter().map(String::as_str).collect::<Vec<_>>()[..]),
                    "refused {values:?} in {}, yet {naive:?} splits back", template.source
                );
            }
            Err(KeyError::Empty { .. }) => {
                prop_assert!(values.iter().all(String::is_empty));
            }
            // A refused separator is in the value, and the template's constants hold it.
            Err(KeyError::Separator { field, value, separator, .. }) => {
                prop_assert!(value.contains(separator) && !separator.is_alphanumeric());
                prop_assert!(template.segments.iter().any(|segment| {
                    matches!(segment, Segment::Literal(text) if text.contains(separator))
                }), "{separator:?} of `{field}` is not in {}", template.source);
            }
            Err(other) => prop_assert!(false, "unexpected {other}"),
        }
    }

    /// Templates the overlap check calls disjoint never render the same key, whatever values
    /// (strings, so any text their templates accept) they are given.
    #[test]
    fn templates_called_disjoint_never_render_one_key(
        a in any_template(),
        b in any_template(),
        left in vec(key_value(), 4),
        right in vec(key_value(), 4),
    ) {
        // Pairs that may overlap are the check's refusals; only the disjoint ones are judged.
        if singletable::key::may_overlap(&a, &b) {
            return Ok(());
        }
        let render = |template: &KeyTemplate, values: &[String]| {
            let parts: Vec<&dyn KeyPart> = values[..template.fields().count()]
                .iter()
                .map(|value| value as &dyn KeyPart)
                .collect();
            template.render(&parts).ok()
        };
        if let (Some(left), Some(right)) = (render(&a, &left), render(&b, &right)) {
            prop_assert_ne!(&left, &right, "{} and {}", a.source, b.source);
        }
        // The strong form: no key of one is a key the other can render (read it back as the
        // other's values, and render those).
        for (from, to, values) in [(&a, &b, &left), (&b, &a, &right)] {
            let Some(key) = render(from, values) else { continue };
            let Ok(parts) = to.split(&key) else { continue };
            let values: Vec<String> = parts.iter().map(|part| (*part).to_owned()).chain(std::iter::repeat(String::new())).take(4).collect();
            prop_assert_ne!(render(to, &values), Some(key.clone()), "{} renders {:?} of {}", to.source, key, from.source);
        }
    }

    /// Splitting any text against any template returns parts or a typed error.
    #[test]
    fn splitting_any_text_never_panics(template in any_template(), key in any::<String>()) {
        if let Ok(parts) = template.split(&key) {
            prop_assert_eq!(parts.len(), template.fields().count());
        }
    }

    /// Generated key constructors agree with the templates' parser.
    #[test]
    fn generated_keys_parse_back(id in key_value(), team in any::<u32>(), open in any::<bool>()) {
        let status = if open { Status::Open } else { Status::Closed };
        let schema = Ticket::SCHEMA;
        match Ticket::key(&id) {
            Ok(key) => {
                prop_assert_eq!(schema.partition_key.split(key.partition()).unwrap(), vec![id.as_str()]);
                prop_assert_eq!(key.sort(), Some("TICKET"));
            }
            Err(KeyError::Separator { separator, .. }) => prop_assert!(id.contains(separator)),
            Err(error) => prop_assert!(matches!(error, KeyError::TooLong { .. }), "{}", error),
        }
        let ticket = Ticket { id: id.clone(), team_id: team, status, title: String::new(), tags: Vec::new(), owner: None };
        if let Ok(item) = singletable::item::encode(&ticket) {
            let gsi1sk = item["GSI1SK"].as_s().unwrap();
            let template = schema.indexes[0].sort_key.unwrap();
            let parts = template.split(gsi1sk).unwrap();
            prop_assert_eq!(Status::parse_part(parts[0], None).unwrap(), status);
            prop_assert_eq!(parts[1], id.as_str());
        }
    }

    /// Integers parse back and sort as text exactly as they sort as numbers.
    #[test]
    fn integer_key_parts_round_trip_and_keep_their_order(
        a in any::<i64>(), b in any::<i64>(), c in any::<u32>(), d in any::<u32>(),
        e in any::<i8>(), width in 1u8..=20, small in any::<u16>(),
    ) {
        fn text<T: KeyPart>(value: T, width: Option<u8>) -> Result<String, KeyError> {
            let mut out = String::new();
            value.render_part(PartContext { field: "n", width, template: "{n}", segments: &[] }, &mut out)?;
            Ok(out)
        }
        let (ta, tb) = (text(a, None).unwrap(), text(b, None).unwrap());
        prop_assert_eq!(i64::parse_part(&ta, None).unwrap(), a);
        prop_assert_eq!(a.cmp(&b), ta.cmp(&tb), "{} / {}", ta, tb);
        let (tc, td) = (text(c, None).unwrap(), text(d, None).unwrap());
        prop_assert_eq!(u32::parse_part(&tc, None).unwrap(), c);
        prop_assert_eq!(c.cmp(&d), tc.cmp(&td));
        let te = text(e, None).unwrap();
        prop_assert_eq!(i8::parse_part(&te, None).unwrap(), e);
        // A width override: renders when the value fits, and then parses back.
        match text(small, Some(width)) {
            Ok(rendered) => {
                prop_assert_eq!(rendered.len(), usize::from(width));
                prop_assert_eq!(u16::parse_part(&rendered, Some(width)).unwrap(), small);
            }
            Err(error) => prop_assert!(matches!(error, KeyError::TooWide { .. }), "{}", error),
        }
    }

    /// Integer parsing of any text is a value or a typed error.
    #[test]
    fn integer_parts_parse_any_text_without_panicking(text in any::<String>(), width in proptest::option::of(any::<u8>())) {
        let _ = u64::parse_part(&text, width);
        let _ = i64::parse_part(&text, width);
        let _ = i8::parse_part(&text, width);
        let _ = u8::parse_part(&text, width);
        let _ = bool::parse_part(&text, width);
        let _ = Status::parse_part(&text, width);
        let _ = <chrono::DateTime<chrono::Utc>>::parse_part(&text, width);
        let _ = chrono::NaiveDate::parse_part(&text, width);
        let _ = uuid::Uuid::parse_part(&text, width);
        let _ = ulid::Ulid::parse_part(&text, width);
    }
}

// ---------------------------------------------------------------------------------------
// Cursors, wire JSON and items

/// Any JSON, nested up to 4 levels.
fn any_json() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>().prop_map(serde_json::Value::from),
        any::<String>().prop_map(serde_json::Value::String),
        prop::sample::select(vec!["S", "N", "B", "M", "L", "SS", "i", "k"])
            .prop_map(|text| serde_json::Value::String(text.to_owned())),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..5).prop_map(serde_json::Value::Array),
            hash_map(
                prop::sample::select(vec![
                    "S", "N", "B", "M", "L", "SS", "NS", "BS", "BOOL", "NULL", "i", "k", "x"
                ])
                .prop_map(str::to_owned),
                inner,
                0..4
            )
            .prop_map(|map| serde_json::Value::Object(map.into_iter().collect())),
        ]
    })
}

fn base64(bytes: &[u8]) -> String {
    aws_smithy_types::base64::encode(bytes)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any text is a cursor or a typed error.
    #[test]
    fn cursor_decoding_of_any_text_never_panics(text in any::<String>()) {
        let _ = Cursor::decode(&text);
    }

    /// Any base64 of any JSON (so decoding gets past base64 and JSON) is a cursor or a
    /// typed error; a cursor that decodes encodes back to itself.
    #[test]
    fn cursor_decoding_of_any_json_never_panics(json in any_json(), bytes in vec(any::<u8>(), 0..64)) {
        for text in [base64(json.to_string().as_bytes()), base64(&bytes)] {
            if let Ok(cursor) = Cursor::decode(&text) {
                prop_assert_eq!(Cursor::decode(&cursor.encode()).unwrap(), cursor);
            }
        }
    }

    /// A cursor over any key round-trips through its text.
    #[test]
    fn cursors_round_trip(key in hash_map(any_name(), any_value(), 0..4), index in proptest::option::of(any::<String>())) {
        let body = serde_json::json!({ "i": index, "k": singletable::wire::item(&key) });
        let cursor = Cursor::decode(&base64(body.to_string().as_bytes())).unwrap();
        prop_assert_eq!(Cursor::decode(&cursor.encode()).unwrap(), cursor);
    }

    /// DynamoDB JSON round-trips, and any JSON parses or fails with a typed error.
    #[test]
    fn wire_json_round_trips(value in any_value(), json in any_json()) {
        let text = singletable::wire::value(&value);
        prop_assert_eq!(singletable::wire::parse_value(&text).unwrap(), value);
        let _ = singletable::wire::parse_value(&json);
        let _ = singletable::wire::parse_item(&json);
    }

    /// Any item decodes or fails with a typed error naming the key and attribute.
    #[test]
    fn item_decoding_never_panics(
        ticket in item_for(&["id", "team_id", "status", "title", "tags", "owner", "PK", "SK"], "Ticket"),
        rich in item_for(&["id", "seq", "small", "ratio", "flag", "letters", "scores", "labels", "address", "shape", "pair", "at", "day", "uuid", "ulid", "bytes", "unit"], "Rich"),
        damaged in damaged_rich(),
    ) {
        let _ = singletable::item::item_size(&ticket);
        let _ = singletable::item::key_text::<Props>(&ticket);
        let _ = singletable::item::decode::<Ticket>(ticket);
        let _ = singletable::item::decode::<Rich>(rich);
        let _ = singletable::item::item_size(&damaged);
        let _ = singletable::item::decode::<Rich>(damaged);
    }
}

// ---------------------------------------------------------------------------------------
// Expressions

/// Words an expression may contain: DynamoDB's operators and functions.
const KEYWORDS: &[&str] = &[
    "AND",
    "OR",
    "NOT",
    "BETWEEN",
    "IN",
    "SET",
    "REMOVE",
    "ADD",
    "DELETE",
    "attribute_exists",
    "attribute_not_exists",
    "attribute_type",
    "begins_with",
    "contains",
    "size",
    "if_not_exists",
    "list_append",
];

/// Checks that `expression` is made of placeholders, keywords, operators and list indexes
/// only, and returns the placeholders it uses.
fn placeholders_in(expression: &str) -> Result<(BTreeSet<String>, BTreeSet<String>), String> {
    let mut names = BTreeSet::new();
    let mut values = BTreeSet::new();
    let chars: Vec<char> = expression.chars().collect();
    let mut position = 0;
    let run = |from: usize, test: fn(char) -> bool| {
        let mut end = from;
        while end < chars.len() && test(chars[end]) {
            end += 1;
        }
        end
    };
    while position < chars.len() {
        let c = chars[position];
        match c {
            ' ' | '(' | ')' | ',' | '.' | ']' | '=' | '+' | '-' => position += 1,
            '<' | '>' => {
                position += 1;
                if position < chars.len() && matches!(chars[position], '=' | '>') {
                    position += 1;
                }
            }
            '[' => {
                let end = run(position + 1, |c| c.is_ascii_digit());
                if end == position + 1 || chars.get(end) != Some(&']') {
                    return Err(format!("bad index at {position} in {expression:?}"));
                }
                position = end;
            }
            '#' | ':' => {
                let prefix = if c == '#' { 'n' } else { 'v' };
                if chars.get(position + 1) != Some(&prefix) {
                    return Err(format!("bad placeholder at {position} in {expression:?}"));
                }
                let end = run(position + 2, |c| c.is_ascii_digit());
                if end == position + 2 {
                    return Err(format!("bad placeholder at {position} in {expression:?}"));
                }
                let placeholder: String = chars[position..end].iter().collect();
                if c == '#' {
                    names.insert(placeholder);
                } else {
                    values.insert(placeholder);
                }
                position = end;
            }
            c if c.is_ascii_alphabetic() => {
                let end = run(position, |c| c.is_ascii_alphanumeric() || c == '_');
                let word: String = chars[position..end].iter().collect();
                if !KEYWORDS.contains(&word.as_str()) {
                    return Err(format!("word {word:?} in {expression:?}"));
                }
                position = end;
            }
            other => return Err(format!("character {other:?} in {expression:?}")),
        }
    }
    Ok((names, values))
}

/// Checks a request's expressions: only placeholders carry names and values, every
/// placeholder used is defined, every one defined is used, and the names are `expected`.
fn check_request(
    body: &serde_json::Value,
    expected_names: &BTreeSet<String>,
) -> Result<(), String> {
    let mut used_names = BTreeSet::new();
    let mut used_values = BTreeSet::new();
    for field in [
        "ConditionExpression",
        "UpdateExpression",
        "KeyConditionExpression",
        "FilterExpression",
    ] {
        if let Some(expression) = body.get(field).and_then(|value| value.as_str()) {
            let (names, values) = placeholders_in(expression)?;
            used_names.extend(names);
            used_values.extend(values);
        }
    }
    let defined = |field: &str| -> BTreeMap<String, serde_json::Value> {
        body.get(field)
            .and_then(|value| value.as_object())
            .map(|map| map.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    };
    let names = defined("ExpressionAttributeNames");
    let values = defined("ExpressionAttributeValues");
    if names.keys().cloned().collect::<BTreeSet<_>>() != used_names {
        return Err(format!(
            "names defined {:?}, used {used_names:?}",
            names.keys()
        ));
    }
    if values.keys().cloned().collect::<BTreeSet<_>>() != used_values {
        return Err(format!(
            "values defined {:?}, used {used_values:?}",
            values.keys()
        ));
    }
    let mapped: BTreeSet<String> = names
        .values()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    if !expected_names.is_subset(&mapped) {
        return Err(format!("names {mapped:?} miss some of {expected_names:?}"));
    }
    Ok(())
}

fn any_path() -> impl Strategy<Value = AttrPath> {
    (
        any_name(),
        vec(
            prop_oneof![any_name().prop_map(Ok), (0usize..1000).prop_map(Err)],
            0..3,
        ),
    )
        .prop_map(|(root, steps)| {
            steps
                .into_iter()
                .fold(AttrPath::attribute(root), |path, step| match step {
                    Ok(name) => path.key(&name),
                    Err(index) => path.index(index),
                })
        })
}

fn any_operand() -> impl Strategy<Value = Operand> {
    prop_oneof![
        any_value().prop_map(Operand::Value),
        any_path().prop_map(Operand::Path),
        any_path().prop_map(Operand::Size),
    ]
}

fn any_node() -> impl Strategy<Value = Node> {
    let comparison = prop::sample::select(vec![
        Comparison::Eq,
        Comparison::Ne,
        Comparison::Lt,
        Comparison::Le,
        Comparison::Gt,
        Comparison::Ge,
    ]);
    let kind = prop::sample::select(vec![
        AttributeType::String,
        AttributeType::Number,
        AttributeType::Map,
        AttributeType::NumberSet,
    ]);
    let leaf = prop_oneof![
        (any_operand(), comparison, any_operand()).prop_map(|(a, c, b)| Node::Compare(a, c, b)),
        (any_operand(), any_operand(), any_operand()).prop_map(|(a, b, c)| Node::Between(a, b, c)),
        (any_operand(), vec(any_operand(), 1..4)).prop_map(|(a, list)| Node::In(a, list)),
        (any_path(), any_operand()).prop_map(|(p, o)| Node::BeginsWith(p, o)),
        (any_path(), any_operand()).prop_map(|(p, o)| Node::Contains(p, o)),
        any_path().prop_map(Node::Exists),
        any_path().prop_map(Node::NotExists),
        (any_path(), kind).prop_map(|(p, k)| Node::Type(p, k)),
    ];
    leaf.prop_recursive(3, 16, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Node::And(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Node::Or(Box::new(a), Box::new(b))),
            inner.prop_map(|a| Node::Not(Box::new(a))),
        ]
    })
}

fn any_action() -> impl Strategy<Value = Action> {
    let set_value = prop_oneof![
        any_value().prop_map(SetValue::Value),
        any_value().prop_map(SetValue::IfNotExists),
        any_value().prop_map(SetValue::Plus),
        any_value().prop_map(SetValue::Minus),
        any_value().prop_map(SetValue::Append),
        any_value().prop_map(SetValue::Prepend),
        any_value().prop_map(SetValue::CountUp),
    ];
    prop_oneof![
        (any_path(), set_value).prop_map(|(p, v)| Action::Set(p, v)),
        any_path().prop_map(Action::Remove),
        (any_path(), any_value()).prop_map(|(p, v)| Action::Add(p, v)),
        (any_path(), any_value()).prop_map(|(p, v)| Action::Delete(p, v)),
    ]
}

/// The names a path uses.
fn path_names(path: &AttrPath, names: &mut BTreeSet<String>) {
    let mut placeholders = Placeholders::default();
    let mut out = String::new();
    path.render(&mut placeholders, &mut out);
    names.extend(placeholders.names().unwrap_or_default().into_values());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any condition tree renders to placeholders and operators only, its names map holds
    /// every name it uses, and its values map every value.
    #[test]
    fn conditions_never_put_names_or_values_into_expression_text(node in any_node()) {
        let mut placeholders = Placeholders::default();
        let text = node.to_expression(&mut placeholders);
        let (names, values) = placeholders_in(&text).map_err(TestCaseError::fail)?;
        let defined: BTreeSet<String> = placeholders.names().unwrap_or_default().into_keys().collect();
        prop_assert_eq!(names, defined);
        let defined: BTreeSet<String> = placeholders.values().unwrap_or_default().into_keys().collect();
        prop_assert_eq!(values, defined);
    }

    /// The same for update expressions.
    #[test]
    fn updates_never_put_names_or_values_into_expression_text(actions in vec(any_action(), 1..6)) {
        let mut placeholders = Placeholders::default();
        let text = update::render(actions.clone(), &mut placeholders);
        let (names, values) = placeholders_in(&text).map_err(TestCaseError::fail)?;
        let defined: BTreeSet<String> = placeholders.names().unwrap_or_default().into_keys().collect();
        prop_assert_eq!(&names, &defined);
        let mut expected = BTreeSet::new();
        for action in &actions {
            match action {
                Action::Set(path, _) | Action::Remove(path) | Action::Add(path, _) | Action::Delete(path, _) => {
                    path_names(path, &mut expected)
                }
            }
        }
        let mapped: BTreeSet<String> = placeholders.names().unwrap_or_default().into_values().collect();
        prop_assert_eq!(mapped, expected);
        let defined: BTreeSet<String> = placeholders.values().unwrap_or_default().into_keys().collect();
        prop_assert_eq!(values, defined);
    }

    /// Through the typed API, with attribute names full of `#`, `:`, `.`, `[`, spaces,
    /// unicode and reserved words, and any values: every request's expressions are
    /// placeholders only.
    #[test]
    fn typed_requests_never_put_user_text_into_expressions(
        id in key_value(),
        seq in any::<u32>(),
        text in any::<String>(),
        number in any::<i64>(),
        count in any::<u64>(),
        words in vec(any::<String>(), 0..4),
    ) {
        let db = offline();
        let weird = Weird {
            id: id.clone(), seq, hash: text.clone(), colon: seq, dot: text.clone(), bracket: words.clone(),
            space: Some(text.clone()), unicode: number, size: count, fake_name: text.clone(),
            fake_value: text.clone(), injection: text.clone(),
        };
        let attributes: BTreeSet<String> = ["a#b", "x:y", "p.q", "l[0]", "with space", "ünï 名", "size", "#n0", ":v0", "AND) OR (x"]
            .into_iter().map(str::to_owned).collect();
        let condition = || Weird::HASH.eq(&text)
            .and(Weird::COLON.gt(seq).or(Weird::DOT.begins_with(&text)))
            .and(Weird::BRACKET.exists().not())
            .and(Weird::SPACE.eq(Some(text.clone())))
            .and(Weird::UNICODE.between(number, number))
            .and(Weird::SIZE.size(Comparison::Ge, count))
            .and(Weird::FAKE_NAME.is_in([&text, &"x".to_owned()]))
            .and(Weird::FAKE_VALUE.contains(&text))
            .and(Weird::INJECTION.ne(&text));
        let mut requests = Vec::new();
        if let Ok(request) = db.put(&weird).condition(condition()).params() {
            requests.push(request.body);
        }
        if let Ok(key) = Weird::key(&id, seq) {
            if let Ok(request) = db.delete(key.clone()).condition(condition()).params() {
                requests.push(request.body);
            }
            let update = db.update(key)
                .set(Weird::DOT, text.clone())
                .set(Weird::HASH, text.clone())
                .add(Weird::SIZE, count)
                .remove(Weird::SPACE)
                .append(Weird::BRACKET, words.clone())
                .condition(condition())
                .params();
            if let Ok(request) = update {
                requests.push(request.body);
            }
        }
        if let Ok(request) = db.query(Weird::gsi1(&text)).filter(condition()).params() {
            requests.push(request.body);
        }
        if let Ok(requests_of_scan) = db.scan::<Weird>().filter(condition()).params() {
            requests.extend(requests_of_scan.into_iter().map(|request| request.body));
        }
        // A key part holding a template's separator is refused; the scan is built anyway.
        let keyed = !id.contains('#') && !text.contains('#');
        prop_assert!(requests.len() >= if keyed { 3 } else { 1 }, "{} requests built", requests.len());
        for body in &requests {
            check_request(body, &BTreeSet::new()).map_err(TestCaseError::fail)?;
            for field in ["ConditionExpression", "FilterExpression"] {
                if body.get(field).is_some() {
                    let names: BTreeSet<String> = body["ExpressionAttributeNames"].as_object().unwrap()
                        .values().filter_map(|v| v.as_str().map(str::to_owned)).collect();
                    prop_assert!(attributes.is_subset(&names), "{names:?}");
                }
            }
        }
    }
}

/// The weird names are stored as they are: the placeholders protect the expressions, not the
/// items.
#[test]
fn weird_attribute_names_are_stored_verbatim() {
    let weird = Weird {
        id: "1".into(),
        seq: 2,
        hash: "h".into(),
        colon: 3,
        dot: "d".into(),
        bracket: vec!["b".into()],
        space: None,
        unicode: -4,
        size: 5,
        fake_name: "n".into(),
        fake_value: "v".into(),
        injection: "i".into(),
    };
    let item = singletable::item::encode(&weird).unwrap();
    for name in [
        "a#b",
        "x:y",
        "p.q",
        "l[0]",
        "ünï 名",
        "size",
        "#n0",
        ":v0",
        "AND) OR (x",
    ] {
        assert!(
            item.contains_key(name),
            "{name} missing from {:?}",
            item.keys()
        );
    }
    assert_eq!(singletable::item::decode::<Weird>(item).unwrap(), weird);
}

/// The expression checker itself rejects raw names and values.
#[test]
fn the_expression_checker_rejects_raw_text() {
    assert!(placeholders_in("#n0 = :v0 AND attribute_exists(#n1.#n2[3])").is_ok());
    for raw in [
        "#n0 = status",
        "#n0 = :v0 AND name",
        "#n0 = 'x'",
        "#x = :v0",
        "#n0[a] = :v0",
        "#n0 = 5",
        "ünï = :v0",
    ] {
        assert!(placeholders_in(raw).is_err(), "{raw}");
    }
}

/// `ADD` of elements to a set needs a set value (`SS`, `NS`, `BS`); DynamoDB rejects `ADD` of
/// a list.
#[test]
fn adding_to_a_set_sends_a_set() {
    let request = offline()
        .update(Rich::key("r", 1).unwrap())
        .add(Rich::LABELS, BTreeSet::from(["x".to_owned()]))
        .params()
        .unwrap();
    let value = &request.body["ExpressionAttributeValues"][":v0"];
    assert!(value.get("SS").is_some(), "ADD sends {value}");
}
