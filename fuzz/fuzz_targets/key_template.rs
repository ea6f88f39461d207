//! Keys render only what parses back; integers keep their order as text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use singletable::__private::Segment;
use singletable::key::{KeyTemplate, PartContext};
use singletable::{KeyError, KeyField, KeyPart};

/// Templates with tricky constants: repeated, overlapping with themselves, multibyte.
const TEMPLATES: &[KeyTemplate] = &[
    KeyTemplate {
        source: "A#{a}#B#{b}",
        segments: &[
            Segment::Literal("A#"),
            Segment::Field {
                name: "a",
                width: None,
                number: 0,
            },
            Segment::Literal("#B#"),
            Segment::Field {
                name: "b",
                width: None,
                number: 1,
            },
        ],
    },
    KeyTemplate {
        source: "{a}aba{b}ab",
        segments: &[
            Segment::Field {
                name: "a",
                width: None,
                number: 0,
            },
            Segment::Literal("aba"),
            Segment::Field {
                name: "b",
                width: None,
                number: 1,
            },
            Segment::Literal("ab"),
        ],
    },
    KeyTemplate {
        source: "é{a}éé{b}",
        segments: &[
            Segment::Literal("é"),
            Segment::Field {
                name: "a",
                width: None,
                number: 0,
            },
            Segment::Literal("éé"),
            Segment::Field {
                name: "b",
                width: None,
                number: 1,
            },
        ],
    },
    KeyTemplate {
        source: "{a}##{b}#",
        segments: &[
            Segment::Field {
                name: "a",
                width: None,
                number: 0,
            },
            Segment::Literal("##"),
            Segment::Field {
                name: "b",
                width: None,
                number: 1,
            },
            Segment::Literal("#"),
        ],
    },
];

#[derive(Debug, arbitrary::Arbitrary)]
struct Input {
    template: u8,
    a: String,
    b: String,
    key: String,
    numbers: (i64, i64, u32, u8),
}

fn text<T: KeyPart>(value: T, width: Option<u8>) -> Result<String, KeyError> {
    let mut out = String::new();
    value.render_part(
        PartContext {
            field: "n",
            width,
            template: "{n}",
            // "{n}" has no constant text, so no separators.
            segments: &[],
        },
        &mut out,
    )?;
    Ok(out)
}

fuzz_target!(|input: Input| {
    let template = &TEMPLATES[usize::from(input.template) % TEMPLATES.len()];
    if let Ok(key) = template.render(&[&input.a, &input.b]) {
        assert_eq!(
            template.split(&key).unwrap(),
            [input.a.as_str(), input.b.as_str()]
        );
    }
    let _ = template.split(&input.key);
    let (a, b, c, width) = input.numbers;
    let (ta, tb) = (text(a, None).unwrap(), text(b, None).unwrap());
    assert_eq!(a.cmp(&b), ta.cmp(&tb));
    assert_eq!(i64::parse_part(&ta, None).unwrap(), a);
    if let Ok(tc) = text(c, Some(width)) {
        assert_eq!(u32::parse_part(&tc, Some(width)).unwrap(), c);
    }
    let _ = u64::parse_part(&input.key, Some(width));
    let _ = i32::parse_part(&input.key, None);
    let _ = <chrono::DateTime<chrono::Utc>>::parse_part(&input.key, None);
});
