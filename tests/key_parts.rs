//! Key parts: every type renders to text whose order is the value's order, and every rendered
//! key parses back exactly (property tests), including through the engine.

mod common;

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
// Templates built by hand, as the derive builds them (their segments are derive data).
use singletable::__private::Segment;
use singletable::key::{KeyField, KeyTemplate};
use singletable::{Entity, KeyError, Table};

const PAIR: KeyTemplate = KeyTemplate {
    source: "A#{first}#B#{second}",
    segments: &[
        Segment::Literal("A#"),
        Segment::Field {
            name: "first",
            width: None,
            number: 0,
        },
        Segment::Literal("#B#"),
        Segment::Field {
            name: "second",
            width: None,
            number: 1,
        },
    ],
};

fn one(width: Option<u8>) -> KeyTemplate {
    let segments: &'static [Segment] = Box::leak(Box::new([
        Segment::Literal("N#"),
        Segment::Field {
            name: "n",
            width,
            number: 0,
        },
    ]));
    KeyTemplate {
        source: "N#{n}",
        segments,
    }
}

fn round_trip<T: KeyField + PartialEq + std::fmt::Debug>(template: &KeyTemplate, value: &T) -> T {
    let rendered = template.render(&[value]).unwrap();
    let parts = template.split(&rendered).unwrap();
    template.parse_part::<T>(&rendered, 0, parts[0]).unwrap()
}

proptest! {
    #[test]
    fn strings_round_trip_or_are_refused_for_a_separator(first in ".*", second in ".*") {
        match PAIR.render(&[&first, &second]) {
            Ok(rendered) => {
                let parts = PAIR.split(&rendered).unwrap();
                prop_assert_eq!(parts, vec![first.as_str(), second.as_str()]);
            }
            Err(KeyError::Separator { field, separator, .. }) => {
                prop_assert_eq!(separator, '#');
                let value = if field == "first" { &first } else { &second };
                prop_assert!(value.contains('#'));
            }
            Err(other) => prop_assert!(false, "unexpected {other}"),
        }
    }

    /// Wherever the separator stands in the value, and whichever field holds it (the last
    /// one included, which nothing follows).
    #[test]
    fn separators_in_values_are_refused(prefix in "[a-z]{0,5}", suffix in "[a-z]{0,5}", last: bool) {
        let value = format!("{prefix}#{suffix}");
        let rendered = if last { PAIR.render(&[&"x", &value]) } else { PAIR.render(&[&value, &"x"]) };
        let refused = matches!(rendered, Err(KeyError::Separator { separator: '#', .. }));
        prop_assert!(refused);
    }

    /// Two different pairs of values without separators never render the same key.
    #[test]
    fn keys_of_different_values_differ(a in "[^#]{0,6}", b in "[^#]{0,6}", c in "[^#]{0,6}", d in "[^#]{0,6}") {
        prop_assume!((&a, &b) != (&c, &d));
        prop_assert_ne!(PAIR.render(&[&a, &b]).unwrap(), PAIR.render(&[&c, &d]).unwrap());
    }

    #[test]
    fn u64_order_is_text_order(a: u64, b: u64) {
        let (ta, tb) = (one(None).render(&[&a]).unwrap(), one(None).render(&[&b]).unwrap());
        prop_assert_eq!(a.cmp(&b), ta.cmp(&tb));
        prop_assert_eq!(round_trip(&one(None), &a), a);
    }

    #[test]
    fn i64_order_is_text_order(a: i64, b: i64) {
        let (ta, tb) = (one(None).render(&[&a]).unwrap(), one(None).render(&[&b]).unwrap());
        prop_assert_eq!(a.cmp(&b), ta.cmp(&tb), "{} {}", ta, tb);
        prop_assert_eq!(round_trip(&one(None), &a), a);
    }

    #[test]
    fn i16_with_width_override_round_trips_or_reports_too_wide(a: i16) {
        let template = one(Some(4));
        match template.render(&[&a]) {
            Ok(_) => prop_assert_eq!(round_trip(&template, &a), a),
            Err(KeyError::TooWide { .. }) => prop_assert!(a.unsigned_abs() >= 10_000 || a > 9_999),
            Err(other) => prop_assert!(false, "unexpected {other}"),
        }
    }

    #[test]
    fn timestamps_order_is_text_order(a in 0i64..253_402_300_799, b in 0i64..253_402_300_799, na in 0u32..1_000_000_000) {
        use chrono::{DateTime, Utc};
        let ta: DateTime<Utc> = DateTime::from_timestamp(a, na).unwrap();
        let tb: DateTime<Utc> = DateTime::from_timestamp(b, 0).unwrap();
        let (ra, rb) = (one(None).render(&[&ta]).unwrap(), one(None).render(&[&tb]).unwrap());
        prop_assert_eq!(ta.cmp(&tb), ra.cmp(&rb));
        prop_assert_eq!(round_trip(&one(None), &ta), ta);
    }

    #[test]
    fn ulids_and_uuids_round_trip(bits: u128) {
        let ulid = ulid::Ulid(bits);
        prop_assert_eq!(round_trip(&one(None), &ulid), ulid);
        let uuid = uuid::Uuid::from_u128(bits);
        prop_assert_eq!(round_trip(&one(None), &uuid), uuid);
    }
}

#[test]
fn integer_padding_and_negative_numbers() {
    assert_eq!(one(None).render(&[&7u32]).unwrap(), "N#0000000007");
    assert_eq!(one(Some(6)).render(&[&42u64]).unwrap(), "N#000042");
    assert_eq!(one(None).render(&[&-1i32]).unwrap(), "N#-9999999999");
    assert_eq!(one(None).render(&[&-2i32]).unwrap(), "N#-9999999998");
    assert!(matches!(
        one(Some(2)).render(&[&100u8]),
        Err(KeyError::TooWide {
            needed: 3,
            width: 2,
            ..
        })
    ));
    assert!(one(None).split("N#12").is_ok());
    let parts = one(None).split("N#12").unwrap();
    assert!(
        one(None).parse_part::<u32>("N#12", 0, parts[0]).is_err(),
        "not the rendered width"
    );
    assert!(one(None).parse_part::<bool>("N#yes", 0, "yes").is_err());
}

#[test]
fn mismatched_keys_are_reported() {
    assert!(matches!(
        PAIR.split("X#1#B#2"),
        Err(KeyError::Mismatch { .. })
    ));
    assert!(matches!(
        PAIR.split("A#1#C#2"),
        Err(KeyError::Mismatch { .. })
    ));
    assert!(matches!(PAIR.render(&[&"", &""]), Ok(text) if text == "A##B#"));
}

#[derive(Table)]
#[dynamo(name = "parts", pk = "PK", sk = "SK")]
struct Parts;

#[derive(singletable::KeyPart, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
enum Priority {
    VeryHigh,
    Low,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Parts, pk = "S#{text}#U#{unsigned}#I#{signed}#B#{flag}#E#{priority}",
         sk = "T#{at}#D#{day}#UU#{uuid}#UL#{ulid}#W#{small:3}")]
struct EveryPart {
    text: String,
    unsigned: u64,
    signed: i32,
    flag: bool,
    priority: Priority,
    at: chrono::DateTime<chrono::Utc>,
    day: chrono::NaiveDate,
    uuid: uuid::Uuid,
    ulid: ulid::Ulid,
    small: u16,
}

#[tokio::test]
async fn every_key_part_type_round_trips_through_the_engine() {
    let db = match singletable::testing::table::<Parts>().await {
        Ok(db) => db,
        Err(error) => panic!("{error}"),
    };
    let item = EveryPart {
        text: "hello world/ünïcode".into(),
        unsigned: u64::MAX,
        signed: -42,
        flag: true,
        priority: Priority::VeryHigh,
        at: chrono::DateTime::from_timestamp(1_775_000_000, 123_456_789).unwrap(),
        day: chrono::NaiveDate::from_ymd_opt(2026, 4, 1).unwrap(),
        uuid: uuid::Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef),
        ulid: ulid::Ulid(0x0190_0000_0000_0000_0000_0000_0000_0001),
        small: 7,
    };
    db.put(&item).send().await.unwrap();
    let key = item.primary_key().unwrap();
    assert_eq!(
        key.partition(),
        "S#hello world/ünïcode#U#18446744073709551615#I#-9999999958#B#true#E#VERY_HIGH"
    );
    assert_eq!(
        key.sort(),
        Some("T#2026-03-31T23:33:20.123456789Z#D#2026-04-01#UU#01234567-89ab-cdef-0123-456789abcdef#UL#01J00000000000000000000001#W#007")
    );
    let read = db.get(key.clone()).send().await.unwrap();
    assert_eq!(read, item);
    // Parse the stored key back into every field.
    let sort = EveryPart::SCHEMA.sort_key.unwrap();
    let stored = key.sort().unwrap();
    let parts = sort.split(stored).unwrap();
    assert_eq!(
        sort.parse_part::<chrono::DateTime<chrono::Utc>>(stored, 0, parts[0])
            .unwrap(),
        item.at
    );
    assert_eq!(
        sort.parse_part::<chrono::NaiveDate>(stored, 1, parts[1])
            .unwrap(),
        item.day
    );
    assert_eq!(
        sort.parse_part::<uuid::Uuid>(stored, 2, parts[2]).unwrap(),
        item.uuid
    );
    assert_eq!(
        sort.parse_part::<ulid::Ulid>(stored, 3, parts[3]).unwrap(),
        item.ulid
    );
    assert_eq!(
        sort.parse_part::<u16>(stored, 4, parts[4]).unwrap(),
        item.small
    );
    let partition = EveryPart::SCHEMA.partition_key;
    let parts = partition.split(key.partition()).unwrap();
    assert_eq!(
        partition
            .parse_part::<i32>(key.partition(), 2, parts[2])
            .unwrap(),
        -42
    );
    assert_eq!(
        partition
            .parse_part::<Priority>(key.partition(), 4, parts[4])
            .unwrap(),
        Priority::VeryHigh
    );
}

/// Seed 003's layout without its date part: a document and its comments in one partition.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Parts, pk = "WS#{workspace}", sk = "DOC#{doc}")]
struct Document {
    workspace: String,
    doc: String,
    title: String,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Parts, pk = "WS#{workspace}", sk = "DOC#{doc}#CMT#{comment}")]
struct Comment {
    workspace: String,
    doc: String,
    comment: String,
    text: String,
}

/// A document whose last key part holds a comment's separators would render the comment's
/// key and replace it (reproduced: `doc = "r#CMT#c1"`). A string key part cannot contain a
/// separator of its template, wherever the part stands, so no key of one item can be another's.
#[tokio::test]
async fn a_key_part_with_a_separator_cannot_render_another_item_s_key() {
    let db = singletable::testing::table::<Parts>().await.unwrap();
    let comment = Comment {
        workspace: "w".into(),
        doc: "r".into(),
        comment: "c1".into(),
        text: "keep me".into(),
    };
    db.put(&comment).send().await.unwrap();
    let intruder = Document {
        workspace: "w".into(),
        doc: "r#CMT#c1".into(),
        title: "x".into(),
    };
    let refused = db.put(&intruder).send().await.unwrap_err();
    match &refused {
        singletable::Error::Key(KeyError::Separator {
            field, separator, ..
        }) => assert_eq!((*field, *separator), ("doc", '#')),
        other => panic!("expected a separator error, got {other:?}"),
    }
    assert!(
        refused.to_string().contains("DOC#{doc}"),
        "the message names the template: {refused}"
    );
    assert_eq!(
        db.get(comment.primary_key().unwrap()).send().await.unwrap(),
        comment,
        "the comment is untouched"
    );
    // The partition key part is a string too, and so is a lone constant-free field.
    assert!(matches!(
        Document::key("w#x", "d"),
        Err(KeyError::Separator {
            field: "workspace",
            ..
        })
    ));
}

/// Two entities whose primary key templates can meet: `Note { id: "x" }` and
/// `Memo { code: "x" }` would be one item.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Parts, pk = "NOTE#{id}", sk = "BODY")]
struct Note {
    id: String,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Parts, pk = "NOTE#{code}", sk = "BODY")]
struct Memo {
    code: String,
}

/// The second of two overlapping entities to render a key fails, naming both designs; the
/// first, and the entities that cannot meet (`Document`, `Comment`), go on working.
#[test]
fn entities_whose_keys_can_meet_are_refused_with_both_templates() {
    let first = Note::key("x")
        .map(|_| "Note")
        .or_else(|_| Memo::key("x").map(|_| "Memo"));
    let first = first.unwrap();
    let second = if first == "Note" {
        Memo::key("x").err()
    } else {
        Note::key("x").err()
    };
    let Some(KeyError::Overlap(overlap)) = second else {
        panic!("expected an overlap, got {second:?}");
    };
    assert_ne!(overlap.entity.entity, overlap.other.entity);
    assert_eq!(overlap.table, "Parts");
    assert_eq!(overlap.key, singletable::key::OverlappingKey::Primary);
    for keys in [overlap.entity, overlap.other] {
        assert!(keys.partition.starts_with("NOTE#{"), "{keys:?}");
    }
    let message = overlap.to_string();
    assert!(
        message.contains("pk = \"NOTE#{id}\", sk = \"BODY\""),
        "{message}"
    );
    assert!(
        message.contains("pk = \"NOTE#{code}\", sk = \"BODY\""),
        "{message}"
    );
    assert!(Document::key("w", "d").is_ok() && Comment::key("w", "d", "c").is_ok());
}

#[derive(Table)]
#[dynamo(
    name = "boards",
    pk = "PK",
    sk = "SK",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
struct Boards;

/// `Bug` and `Chore` have disjoint primary keys, but on `GSI1` a bug with `id: "x"` and a
/// chore with `name: "x"` of one team have the same index key.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Boards, pk = "BUG#{id}", sk = "BUG", gsi1pk = "TEAM#{team}", gsi1sk = "OPEN#{id}")]
struct Bug {
    id: String,
    team: String,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Boards, pk = "CHORE#{name}", sk = "CHORE", gsi1pk = "TEAM#{team}", gsi1sk = "OPEN#{name}")]
struct Chore {
    name: String,
    team: String,
}

/// Index keys are checked like primary keys: the second entity to render a key fails, naming
/// the index and both entities' templates on it.
#[test]
fn entities_whose_index_keys_can_meet_are_refused_naming_the_index() {
    let first = Bug::key("x")
        .map(|_| "Bug")
        .or_else(|_| Chore::key("x").map(|_| "Chore"));
    let second = if first.unwrap() == "Bug" {
        Chore::key("x").err()
    } else {
        Bug::key("x").err()
    };
    let Some(KeyError::Overlap(overlap)) = second else {
        panic!("expected an overlap, got {second:?}");
    };
    assert_eq!(overlap.table, "Boards");
    assert_eq!(overlap.key, singletable::key::OverlappingKey::Index("GSI1"));
    let message = overlap.to_string();
    for part in [
        "gsi1pk = \"TEAM#{team}\"",
        "gsi1sk = \"OPEN#{id}\"",
        "gsi1sk = \"OPEN#{name}\"",
        "`Bug`",
        "`Chore`",
    ] {
        assert!(message.contains(part), "{part} in {message}");
    }
}

// The `KeyPart` contract as users check it on their own types: the library's types keep it
// over their whole domain, and the check names each way a custom implementation breaks it.
proptest! {
    #[test]
    fn the_library_s_key_parts_keep_the_contract(
        strings in prop::collection::vec("[^#\u{10FFFF}]{0,4}", 0..8),
        signed in prop::collection::vec(any::<i64>(), 0..8),
        times in prop::collection::vec((0i64..253_402_300_799, 0u32..1_000_000_000), 0..8),
        ids in prop::collection::vec(any::<u128>(), 0..8),
    ) {
        use singletable::key::{check_key_part, check_prefix_free};
        prop_assert_eq!(check_key_part(&strings), Ok(()));
        prop_assert_eq!(check_key_part(&signed), Ok(()));
        prop_assert_eq!(check_prefix_free(&signed), Ok(()));
        let times: Vec<chrono::DateTime<chrono::Utc>> = times
            .into_iter()
            .map(|(seconds, nanos)| chrono::DateTime::from_timestamp(seconds, nanos).unwrap())
            .collect();
        prop_assert_eq!(check_key_part(&times), Ok(()));
        prop_assert_eq!(check_prefix_free(&times), Ok(()));
        let uuids: Vec<uuid::Uuid> = ids.iter().copied().map(uuid::Uuid::from_u128).collect();
        prop_assert_eq!(check_key_part(&uuids), Ok(()));
        prop_assert_eq!(check_prefix_free(&uuids), Ok(()));
    }
}

/// A custom key part that writes numbers unpadded, so `10` sorts before `9`, and claims to be
/// prefix-free although `1` starts `10`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Unpadded(u32);

impl singletable::KeyPart for Unpadded {
    fn render_part(
        &self,
        _context: singletable::key::PartContext,
        out: &mut String,
    ) -> Result<(), KeyError> {
        out.push_str(&self.0.to_string());
        Ok(())
    }
}

impl KeyField for Unpadded {
    type Borrowed = Unpadded;

    fn parse_part(text: &str, _width: Option<u8>) -> Result<Self, singletable::key::PartError> {
        text.parse()
            .map(Unpadded)
            .map_err(|_| singletable::key::PartError {
                expected: "a number",
            })
    }
}

impl singletable::key::PrefixFree for Unpadded {}

#[test]
fn the_contract_check_names_how_a_custom_key_part_breaks_it() {
    use singletable::key::{check_key_part, check_prefix_free, KeyPartViolation};
    assert_eq!(
        check_key_part(&[Unpadded(9), Unpadded(10)]),
        Err(KeyPartViolation::Order {
            smaller: "Unpadded(9)".into(),
            smaller_text: "\"9\"".into(),
            larger: "Unpadded(10)".into(),
            larger_text: "\"10\"".into(),
        })
    );
    assert!(matches!(
        check_prefix_free(&[Unpadded(1), Unpadded(10)]),
        Err(KeyPartViolation::Prefix { .. })
    ));
    assert_eq!(check_key_part(&[Unpadded(1), Unpadded(7)]), Ok(()));
    // A value holding the separator does not render; one holding U+10FFFF is refused too.
    assert!(matches!(
        check_key_part(&["a#b".to_owned()]),
        Err(KeyPartViolation::Render { .. })
    ));
    assert!(matches!(
        check_key_part(&["a\u{10FFFF}".to_owned()]),
        Err(KeyPartViolation::Render { .. })
    ));
}

#[derive(Table)]
#[dynamo(
    name = "reserved",
    pk = "PK",
    sk = "SK",
    ttl = "expires_at",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
    gsi2(name = "ByAuthor", pk = "author")
)]
struct Reserved;

/// Pasted from hand-written DynamoDB code: the key as a field of its own.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Reserved, pk = "POST#{id}", sk = "POST")]
struct Pasted {
    id: String,
    #[serde(rename = "PK")]
    key: String,
}

/// Stored as GSI1's sort key, which its own `gsi1sk` template writes over it.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Reserved, pk = "SHADOW#{id}", sk = "SHADOW", gsi1pk = "SHADOWS", gsi1sk = "SHADOW#{id}")]
struct Shadow {
    id: String,
    #[serde(rename = "GSI1SK")]
    rank: String,
}

/// A time stored as the table's TTL attribute, without `#[dynamo(ttl)]`: DynamoDB would expire
/// its items while the library's reads would not hide them.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Reserved, pk = "STALE#{id}", sk = "STALE")]
struct Stale {
    id: String,
    expires_at: u64,
}

/// An attribute GSI2 keys on as it is belongs to the items, not to the library: an entity
/// that does not key GSI2 may hold one of that name too.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Reserved, pk = "ESSAY#{id}", sk = "ESSAY")]
struct Essay {
    id: String,
    author: String,
}

/// Where such attributes belong: the expiry marked so, and a field GSI2 keys on as it is.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Reserved, pk = "FINE#{id}", sk = "FINE", gsi2pk = author)]
struct Fine {
    id: String,
    author: String,
    #[dynamo(ttl)]
    expires_at: u64,
}

/// A field stored under an attribute the library writes would lose its value to the key
/// written over it, or key or expire the item by its own: the entity's first key says so,
/// naming the field and the attribute, and a put of it sends nothing.
#[tokio::test]
async fn a_field_stored_as_an_attribute_the_library_writes_is_refused() {
    for (refused, field, attribute) in [
        (Pasted::key("p").err(), "key", "PK"),
        (Shadow::key("s").err(), "rank", "GSI1SK"),
        (Stale::key("t").err(), "expires_at", "expires_at"),
    ] {
        let Some(error) = refused else {
            panic!("`{field}` stored as `{attribute}` was accepted");
        };
        let message = error.to_string();
        assert!(
            matches!(&error, KeyError::ReservedAttribute { field: f, attribute: a, .. } if (*f, *a) == (field, attribute)),
            "{error:?}"
        );
        assert!(message.contains("#[serde(rename"), "{message}");
    }
    assert!(Stale::key("t")
        .unwrap_err()
        .to_string()
        .contains("#[dynamo(ttl)]"));
    assert!(Fine::key("f").is_ok() && Essay::key("e").is_ok());

    let db = singletable::testing::table::<Reserved>().await.unwrap();
    let pasted = Pasted {
        id: "p".into(),
        key: "mine".into(),
    };
    let refused = db.put(&pasted).send().await.unwrap_err();
    assert!(
        matches!(
            refused,
            singletable::Error::Key(KeyError::ReservedAttribute { .. })
        ),
        "{refused:?}"
    );
    let fine = Fine {
        id: "f".into(),
        author: "ana".into(),
        expires_at: 4_102_444_800,
    };
    db.put(&fine).send().await.unwrap();
    assert_eq!(db.get(Fine::key("f").unwrap()).send().await.unwrap(), fine);
    let stored = common::raw_items(&db).await;
    assert_eq!(stored.len(), 1, "only the fine item is stored: {stored:?}");
}

/// Indexes keyed on attributes the library writes for its own ends: GSI1 lists items by
/// entity (its partition key is the entity attribute), GSI2 is the table's keys inverted.
#[derive(Table)]
#[dynamo(
    name = "listed",
    pk = "PK",
    sk = "SK",
    gsi1(name = "ByEntity", pk = "_type"),
    gsi2(name = "Inverted", pk = "SK", sk = "PK")
)]
struct Listed;

/// Its template for GSI1's key would write over the entity attribute.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Listed, pk = "BADGE#{id}", sk = "BADGE", gsi1pk = "TEAM#{team}")]
struct Badge {
    id: String,
    team: String,
}

/// Its templates for GSI2's keys would write over the table's keys.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Listed, pk = "FLIP#{id}", sk = "FLIP", gsi2pk = "UP#{id}", gsi2sk = "DOWN")]
struct Flip {
    id: String,
}

/// Writes neither: both indexes hold it as the library writes it.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Listed, pk = "MEDAL#{id}", sk = "MEDAL")]
struct Medal {
    id: String,
}

/// An index keyed on an attribute the library writes (the entity attribute, a table key)
/// holds what the library writes there: an entity's template for that key would write over
/// it, so that its items no longer read back (`WrongEntity`) or lose their key. The entity's
/// first key says so, and a put sends nothing.
#[tokio::test]
async fn an_index_key_template_over_an_attribute_the_library_writes_is_refused() {
    for (refused, index, attribute) in [
        (Badge::key("b").err(), "gsi1", "_type"),
        (Flip::key("f").err(), "gsi2", "SK"),
    ] {
        let Some(error) = refused else {
            panic!("a template for `{index}` over `{attribute}` was accepted");
        };
        assert!(
            matches!(&error, KeyError::IndexKeyOverLibraryAttribute { index: i, attribute: a, .. } if (*i, *a) == (index, attribute)),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(message.contains(&format!("`{index}pk")), "{message}");
    }
    // Over a table key, the message says what makes the table's key serve the index.
    let message = Flip::key("f").err().map(|error| error.to_string());
    assert!(
        message
            .as_deref()
            .is_some_and(|m| m.contains("`gsi2pk = \"FLIP\"`")),
        "{message:?}"
    );
    let db = singletable::testing::table::<Listed>().await.unwrap();
    let badge = Badge {
        id: "b".into(),
        team: "core".into(),
    };
    let refused = db.put(&badge).send().await.unwrap_err();
    assert!(matches!(refused, singletable::Error::Key(_)), "{refused:?}");
    let medal = Medal { id: "m".into() };
    db.put(&medal).send().await.unwrap();
    assert_eq!(
        db.get(Medal::key("m").unwrap()).send().await.unwrap(),
        medal
    );
    let stored = common::raw_items(&db).await;
    assert_eq!(stored.len(), 1, "only the medal is stored: {stored:?}");
}

/// Two entities of one table under one name, here two structs called `Card` in two modules
/// (the name defaults to the struct's): the entity attribute could not tell their items apart,
/// so each one's scans and collections would take the other's items as its own.
mod deck {
    #[derive(singletable::Entity, serde::Serialize, serde::Deserialize, Debug)]
    #[dynamo(table = super::Parts, pk = "DECK#{id}", sk = "CARD")]
    pub(super) struct Card {
        pub(super) id: String,
    }
}

mod hand {
    #[derive(singletable::Entity, serde::Serialize, serde::Deserialize, Debug)]
    #[dynamo(table = super::Parts, pk = "HAND#{id}", sk = "CARD")]
    pub(super) struct Card {
        pub(super) id: String,
    }
}

/// The second of two entities named alike to render a key fails, naming both by their keys.
#[test]
fn two_entities_of_one_table_under_one_name_are_refused() {
    let first = deck::Card::key("x")
        .map(|_| "DECK")
        .or_else(|_| hand::Card::key("x").map(|_| "HAND"));
    let second = match first.unwrap() {
        "DECK" => hand::Card::key("x").err(),
        _ => deck::Card::key("x").err(),
    };
    let Some(KeyError::Overlap(overlap)) = second else {
        panic!("expected two entities under one name, got {second:?}");
    };
    assert_eq!(overlap.key, singletable::key::OverlappingKey::EntityName);
    assert_eq!(
        (overlap.entity.entity, overlap.other.entity),
        ("Card", "Card")
    );
    assert_ne!(overlap.entity.partition, overlap.other.partition);
    let message = overlap.to_string();
    assert!(message.contains("pk = \"DECK#{id}\""), "{message}");
    assert!(message.contains("pk = \"HAND#{id}\""), "{message}");
    assert!(message.contains("name = "), "{message}");
}

/// The table's keys inverted: GSI2's keys are its own sort and partition key templates, which
/// the table's keys already hold, so an order's lines are found by product.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Listed, pk = "ORDER#{order}", sk = "PRODUCT#{product}",
         gsi2pk = "PRODUCT#{product}", gsi2sk = "ORDER#{order}")]
struct Line {
    order: String,
    product: String,
    quantity: u32,
}

/// The same, but sparse: a rule that left the index keys out would leave out the item's key.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Listed, pk = "CART#{cart}", sk = "ITEM#{item}",
         gsi2pk = "ITEM#{item}", gsi2sk = "CART#{cart}", gsi2_when = CartItem::is_listed(listed))]
struct CartItem {
    cart: String,
    item: String,
    listed: bool,
}

impl CartItem {
    fn is_listed(listed: &bool) -> bool {
        *listed
    }
}

#[tokio::test]
async fn an_inverted_index_is_written_by_the_tables_own_keys() {
    let db = singletable::testing::table::<Listed>().await.unwrap();
    for (order, product) in [("o1", "p1"), ("o2", "p1"), ("o2", "p2")] {
        let line = Line {
            order: order.into(),
            product: product.into(),
            quantity: 1,
        };
        db.put(&line).send().await.unwrap();
    }
    let orders: Vec<String> = db
        .query(Line::gsi2("p1"))
        .all()
        .await
        .unwrap()
        .into_iter()
        .map(|line| line.order)
        .collect();
    assert_eq!(orders, ["o1", "o2"]);
    let one = db
        .query(Line::gsi2("p1"))
        .sort(Line::ORDER, "o2".to_owned())
        .all()
        .await
        .unwrap();
    assert_eq!(one.len(), 1);
    // An update of a line rewrites no key: the table's keys never change in place.
    let updated = db
        .update(Line::key("o2", "p2").unwrap())
        .set(Line::QUANTITY, 5)
        .send()
        .await
        .unwrap();
    assert_eq!(updated.quantity, 5);
    let refused = CartItem::key("c", "i").err();
    assert!(
        matches!(
            &refused,
            Some(KeyError::IndexKeyOverLibraryAttribute { index: "gsi2", .. })
        ),
        "{refused:?}"
    );
    let message = refused.map(|error| error.to_string()).unwrap_or_default();
    assert!(message.contains("no `gsi2_when` rule"), "{message}");
}
