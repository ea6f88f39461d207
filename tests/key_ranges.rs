//! Key conditions against a model: for every key part type, in every position a sort key part
//! can take (alone, last after constant text, last after another part, before other key
//! text), random values from the type's whole domain are written, and every operator the
//! query builder accepts there (equality, a prefix of the parts, `lt`, `le`, `gt`, `ge`,
//! `between`) is sent to the engine. Each must return exactly the items whose part satisfies
//! it, in the value's own order, as filtering the values in memory does.
//!
//! A range on a part that other key text follows compiles only for a prefix-free type
//! (`PrefixFree`; `tests/ui/range_on_inner_string_part.rs`): strings and enums whose names
//! start one another get equality and prefixes there.
//!
//! `SINGLETABLE_RANGE_CASES` sets the cases per type and position (default 12).

mod common;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, KeyPart, Table};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| tokio::runtime::Runtime::new().unwrap())
}

fn cases() -> u32 {
    std::env::var("SINGLETABLE_RANGE_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(12)
}

/// A fresh partition for each case, so that cases share a table.
fn partition() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    NEXT.fetch_add(1, Ordering::SeqCst)
}

/// An operator on the part under test, with its bounds.
#[derive(Debug, Clone)]
enum Op<T> {
    Eq(T),
    Lt(T),
    Le(T),
    Gt(T),
    Ge(T),
    Between(T, T),
}

impl<T: Ord> Op<T> {
    /// Whether the model says `value` satisfies the operator.
    fn holds(&self, value: &T) -> bool {
        match self {
            Op::Eq(bound) => value == bound,
            Op::Lt(bound) => value < bound,
            Op::Le(bound) => value <= bound,
            Op::Gt(bound) => value > bound,
            Op::Ge(bound) => value >= bound,
            Op::Between(low, high) => low <= value && value <= high,
        }
    }
}

/// Operators whose bounds are some of the values written or any others of the domain.
fn ops<T: Clone + std::fmt::Debug + 'static>(
    values: Vec<T>,
    domain: BoxedStrategy<T>,
) -> impl Strategy<Value = (Vec<T>, Vec<Op<T>>)> {
    let written = prop::sample::select(values.clone());
    let bound = prop_oneof![written.clone(), domain.clone()].boxed();
    let op = prop_oneof![
        bound.clone().prop_map(Op::Eq),
        bound.clone().prop_map(Op::Lt),
        bound.clone().prop_map(Op::Le),
        bound.clone().prop_map(Op::Gt),
        bound.clone().prop_map(Op::Ge),
        (bound.clone(), bound).prop_map(|(low, high)| Op::Between(low, high)),
    ];
    prop::collection::vec(op, 1..5).prop_map(move |ops| (values.clone(), ops))
}

/// Values (1 to 6, repeats allowed), then operators on them.
fn case<T: Clone + std::fmt::Debug + 'static>(
    domain: BoxedStrategy<T>,
) -> impl Strategy<Value = (Vec<T>, Vec<Op<T>>)> {
    prop::collection::vec(domain.clone(), 1..6)
        .prop_flat_map(move |values| ops(values, domain.clone()))
}

/// Runs `check` on `cases()` random cases of `domain` on the engine, each in a fresh
/// partition of `db`'s table.
fn run<R: Table, T, F, Fut>(db: &Db<R>, domain: BoxedStrategy<T>, check: F)
where
    T: Clone + std::fmt::Debug + 'static,
    F: Fn(Db<R>, u32, Vec<T>, Vec<Op<T>>) -> Fut,
    Fut: std::future::Future<Output = Result<(), TestCaseError>>,
{
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&case(domain), |(values, ops)| {
            runtime().block_on(check(db.clone(), partition(), values, ops))
        })
        .unwrap();
}

/// An enum whose names start no other name: ranges on it are exact anywhere. Declared in
/// name order, so its `Ord` is its key text's order.
#[derive(KeyPart, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    High,
    Low,
    Mid,
}

/// An enum with a name that starts another (`A`, `Ab`): ranges only where it ends the key.
#[derive(KeyPart, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tag {
    A,
    Ab,
    B,
}

/// Sends `op` as the query's condition on `v` after `query`, and compares the values of
/// type `ty` returned with the model's.
macro_rules! compare {
    ($ty:ty, $query:expr, $field:expr, $op:expr, $expected:expr) => {{
        let query = $query;
        let found: Vec<_> = match $op.clone() {
            Op::Eq(bound) => query.sort($field, bound).all().await,
            Op::Lt(bound) => query.lt($field, bound).all().await,
            Op::Le(bound) => query.le($field, bound).all().await,
            Op::Gt(bound) => query.gt($field, bound).all().await,
            Op::Ge(bound) => query.ge($field, bound).all().await,
            Op::Between(low, high) => query.between($field, low, high).all().await,
        }
        .map_err(|error| TestCaseError::fail(format!("{:?}: {error}", $op)))?;
        let mut found: Vec<$ty> = found.into_iter().map(|item| item.v).collect();
        found.sort();
        let mut expected: Vec<$ty> = $expected;
        expected.sort();
        prop_assert_eq!(found, expected, "{:?}", $op);
    }};
}

/// The operators on a part that other key text follows: all of them for a prefix-free type,
/// equality alone otherwise.
macro_rules! inner {
    (ranges, $ty:ty, $db:expr, $p:expr, $op:expr, $expected:expr) => {
        compare!(
            $ty,
            $db.query(Inner::partition($p)),
            Inner::V,
            $op,
            $expected
        )
    };
    (equality, $ty:ty, $db:expr, $p:expr, $op:expr, $expected:expr) => {
        if let Op::Eq(bound) = $op.clone() {
            let found = $db
                .query(Inner::partition($p))
                .sort(Inner::V, bound)
                .all()
                .await
                .unwrap();
            let mut found: Vec<$ty> = found.into_iter().map(|item| item.v).collect();
            found.sort();
            prop_assert_eq!(found, $expected.clone(), "{:?}", $op);
        }
    };
}

/// The entities of one key part type `$ty`, one per position of the part under test, `v`.
/// `$inner` lists the operators a part before other key text admits: all of them for a
/// prefix-free type, equality alone otherwise.
macro_rules! positions {
    ($module:ident, $table:literal, $ty:ty, $domain:expr, inner: $inner:ident) => {
        mod $module {
            use super::*;

            /// A table of this type's entities alone: entities of one name and key share none.
            #[derive(Table)]
            #[dynamo(name = $table, pk = "PK", sk = "SK")]
            pub struct Ranges;

            /// The part alone is the sort key.
            #[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
            #[dynamo(table = Ranges, pk = "ALONE#{p}", sk = "{v}")]
            pub struct Alone {
                pub p: u32,
                pub v: $ty,
            }

            /// The last part, after constant text.
            #[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
            #[dynamo(table = Ranges, pk = "LAST#{p}", sk = "V#{v}")]
            pub struct Last {
                pub p: u32,
                pub v: $ty,
            }

            /// The last part, after another part the query gives.
            #[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
            #[dynamo(table = Ranges, pk = "SECOND#{p}", sk = "G#{g}#V#{v}")]
            pub struct Second {
                pub p: u32,
                pub g: u8,
                pub v: $ty,
            }

            /// A part that other key text follows.
            #[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
            #[dynamo(table = Ranges, pk = "INNER#{p}", sk = "V#{v}#N#{n}")]
            pub struct Inner {
                pub p: u32,
                pub v: $ty,
                pub n: u8,
            }

            fn domain() -> BoxedStrategy<$ty> {
                $domain.boxed()
            }

            /// Writes one item per distinct value at each position, and checks every
            /// operator at each.
            async fn check(
                db: Db<Ranges>,
                p: u32,
                values: Vec<$ty>,
                ops: Vec<Op<$ty>>,
            ) -> Result<(), TestCaseError> {
                let mut distinct = values.clone();
                distinct.sort();
                distinct.dedup();
                for (n, v) in distinct.iter().enumerate() {
                    let n = n as u8;
                    let v = v.clone();
                    db.put(&Alone { p, v: v.clone() }).send().await.unwrap();
                    db.put(&Last { p, v: v.clone() }).send().await.unwrap();
                    // Two of `g`, so that the given part must constrain the range.
                    for g in [0, 1] {
                        db.put(&Second { p, g, v: v.clone() }).send().await.unwrap();
                    }
                    db.put(&Inner { p, v, n }).send().await.unwrap();
                }
                for op in &ops {
                    let expected: Vec<$ty> =
                        distinct.iter().filter(|v| op.holds(v)).cloned().collect();
                    compare!(
                        $ty,
                        db.query(Alone::partition(p)),
                        Alone::V,
                        op,
                        expected.clone()
                    );
                    compare!(
                        $ty,
                        db.query(Last::partition(p)),
                        Last::V,
                        op,
                        expected.clone()
                    );
                    compare!(
                        $ty,
                        db.query(Second::partition(p)).sort(Second::G, 1),
                        Second::V,
                        op,
                        expected.clone()
                    );
                    inner!($inner, $ty, db, p, op, expected);
                }
                // A prefix of the parts: the given part alone.
                let given = db
                    .query(Second::partition(p))
                    .sort(Second::G, 0)
                    .all()
                    .await
                    .unwrap();
                prop_assert_eq!(given.len(), distinct.len());
                Ok(())
            }

            #[test]
            fn every_operator_returns_exactly_the_model_s_items() {
                let table = runtime()
                    .block_on(singletable::testing::table::<Ranges>())
                    .unwrap();
                run(&table, domain(), check);
            }
        }
    };
}

/// Strings from all of Unicode but the separator `#` (which values cannot hold) and U+10FFFF
/// (which bounds ranges), empty ones included. Most characters come from a few, below and
/// above the separator and beyond ASCII, so that values often start one another.
fn strings() -> impl Strategy<Value = String> {
    let few = prop::sample::select(vec![
        '\0',
        ' ',
        '"',
        '$',
        'a',
        'b',
        '~',
        '\u{e9}',
        '\u{10000}',
    ]);
    prop::collection::vec(
        prop_oneof![4 => few, 1 => any::<char>()]
            .prop_filter("not a separator", |c| *c != '#' && *c != '\u{10FFFF}'),
        0..4,
    )
    .prop_map(|chars| chars.into_iter().collect())
}

fn times() -> impl Strategy<Value = chrono::DateTime<chrono::Utc>> {
    (0i64..253_402_300_799, 0u32..1_000_000_000)
        .prop_map(|(seconds, nanos)| chrono::DateTime::from_timestamp(seconds, nanos).unwrap())
}

fn dates() -> impl Strategy<Value = chrono::NaiveDate> {
    (1i32..=3_652_059).prop_map(|days| chrono::NaiveDate::from_num_days_from_ce_opt(days).unwrap())
}

positions!(strings_, "strings", String, strings().prop_filter("an empty sort key", |s| !s.is_empty()), inner: equality);
positions!(u8s, "u8s", u8, any::<u8>(), inner: ranges);
positions!(i64s, "i64s", i64, prop_oneof![Just(i64::MIN), Just(i64::MAX), Just(0), any::<i64>()], inner: ranges);
positions!(u64s, "u64s", u64, prop_oneof![Just(u64::MAX), Just(0), any::<u64>()], inner: ranges);
positions!(bools, "bools", bool, any::<bool>(), inner: ranges);
positions!(timestamps, "timestamps", chrono::DateTime<chrono::Utc>, times(), inner: ranges);
positions!(days, "days", chrono::NaiveDate, dates(), inner: ranges);
positions!(uuids, "uuids", uuid::Uuid, any::<u128>().prop_map(uuid::Uuid::from_u128), inner: ranges);
positions!(ulids, "ulids", ulid::Ulid, any::<u128>().prop_map(ulid::Ulid::from), inner: ranges);
positions!(levels, "levels", Level, prop_oneof![Just(Level::High), Just(Level::Low), Just(Level::Mid)], inner: ranges);
positions!(tags, "tags", Tag, prop_oneof![Just(Tag::A), Just(Tag::Ab), Just(Tag::B)], inner: equality);
