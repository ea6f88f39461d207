//! What the fuzz targets share: a table, entities of many shapes, and the expression checker.
#![allow(dead_code)]

use serde::{Deserialize, Serialize};
use singletable::{Entity, KeyPart, Table};
use std::collections::{BTreeSet, HashMap};

#[derive(Table)]
#[dynamo(
    name = "fuzz",
    pk = "PK",
    sk = "SK",
    stream = "new_and_old_images",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
pub struct Fuzz;

/// Both entities of the table, for stream records of either.
#[derive(singletable::Collection, Debug, PartialEq)]
pub enum FuzzItem {
    Ticket(Ticket),
    Rich(Rich),
}

#[derive(KeyPart, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Open,
    Closed,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Fuzz, pk = "TICKET#{id}", sk = "TICKET",
         gsi1pk = "TEAM#{team_id}", gsi1sk = "STATUS#{status}#TICKET#{id}")]
pub struct Ticket {
    pub id: String,
    pub team_id: u32,
    pub status: Status,
    pub title: String,
    pub tags: Vec<String>,
    pub owner: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Address {
    pub city: String,
    pub zip: Option<u32>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum Shape {
    Circle { radius: f64 },
    Square(u16),
    Empty,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Fuzz, pk = "RICH#{id}", sk = "RICH#{seq}")]
pub struct Rich {
    pub id: String,
    pub seq: i64,
    pub small: u8,
    pub ratio: f64,
    pub flag: bool,
    pub letters: Option<Vec<u16>>,
    pub scores: HashMap<String, i32>,
    pub labels: BTreeSet<String>,
    pub address: Address,
    pub shape: Shape,
    pub pair: (u8, String),
    pub at: chrono::DateTime<chrono::Utc>,
    pub bytes: Vec<u8>,
}

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

/// Panics unless `expression` is made of placeholders, keywords, operators and list
/// indexes only.
pub fn assert_placeholders_only(expression: &str) {
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
                assert!(
                    end > position + 1 && chars.get(end) == Some(&']'),
                    "{expression:?}"
                );
                position = end;
            }
            '#' | ':' => {
                let prefix = if c == '#' { 'n' } else { 'v' };
                assert_eq!(chars.get(position + 1), Some(&prefix), "{expression:?}");
                let end = run(position + 2, |c| c.is_ascii_digit());
                assert!(end > position + 2, "{expression:?}");
                position = end;
            }
            c if c.is_ascii_alphabetic() => {
                let end = run(position, |c| c.is_ascii_alphanumeric() || c == '_');
                let word: String = chars[position..end].iter().collect();
                assert!(
                    KEYWORDS.contains(&word.as_str()),
                    "{word:?} in {expression:?}"
                );
                position = end;
            }
            other => panic!("{other:?} in {expression:?}"),
        }
    }
}
