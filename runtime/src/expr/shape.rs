//! Requests that differ only in their values render to the same expression text and names:
//! an update of a ticket's status has one shape whatever the status. Each thread keeps the
//! text, names and value placeholders of the shapes it has rendered, so a repeated request only
//! places its values, as a hand-written request places its values around string literals.
//!
//! A shape is recognised by its exact pieces (fixed text and names compared by address, list
//! indexes, where values go), never by a hash, so two shapes can never be confused. Names made
//! at run time (map keys) are not cached: their text would have to be compared too.

use super::placeholders::{AnyExpression, Name, Names, Placeholders, Sink, Values};
use aws_sdk_dynamodb::types::AttributeValue;
use std::cell::RefCell;

/// How many shapes a thread keeps; a program has a few per operation it sends, so more means
/// shapes made from data (`IN` lists of many lengths), which are rendered without caching
/// once the cache is full.
const MAX_SHAPES: usize = 64;

/// One piece of an expression, as the shape cache compares it. Fixed text and known names
/// are compared by address and length: the same literal is the same text (equal text at
/// another address only makes another entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    Text(*const u8, usize),
    Name(*const u8, usize),
    Index(usize),
    Value,
    /// The end of one expression of a request.
    End,
}

/// Records the pieces of expressions, noting whether they can be cached, and takes their
/// values in reading order: all that a request of a known shape needs, in one pass.
pub(crate) struct Recorder<'a> {
    pieces: &'a mut Vec<Piece>,
    values: &'a mut Vec<AttributeValue>,
    cacheable: bool,
}

impl Sink for Recorder<'_> {
    #[inline]
    fn text(&mut self, text: &'static str) {
        self.pieces.push(Piece::Text(text.as_ptr(), text.len()));
    }

    #[inline]
    fn name(&mut self, name: Name<'_>) {
        match name {
            Name::Known(name) => self.pieces.push(Piece::Name(name.as_ptr(), name.len())),
            Name::Dynamic(_) => self.cacheable = false,
        }
    }

    #[inline]
    fn index(&mut self, index: usize) {
        self.pieces.push(Piece::Index(index));
    }

    fn value(&mut self, value: &mut AttributeValue) {
        self.pieces.push(Piece::Value);
        self.values
            .push(std::mem::replace(value, AttributeValue::Null(true)));
    }

    fn new_value(&mut self, make: impl FnOnce() -> AttributeValue) {
        self.pieces.push(Piece::Value);
        self.values.push(make());
    }
}

/// Writes the text of expressions whose values are already placed, numbering their
/// placeholders in the same order.
pub(crate) struct TextWriter<'a> {
    placeholders: &'a mut Placeholders,
    out: &'a mut String,
    values: usize,
}

impl Sink for TextWriter<'_> {
    fn text(&mut self, text: &'static str) {
        self.out.push_str(text);
    }

    fn name(&mut self, name: Name<'_>) {
        self.placeholders.push_name(name.as_str(), self.out);
    }

    fn index(&mut self, index: usize) {
        super::placeholders::push_index(self.out, index);
    }

    fn value(&mut self, _: &mut AttributeValue) {
        super::placeholders::push_placeholder(self.out, ":v", self.values);
        self.values += 1;
    }

    fn new_value(&mut self, _: impl FnOnce() -> AttributeValue) {
        super::placeholders::push_placeholder(self.out, ":v", self.values);
        self.values += 1;
    }
}

/// A rendered shape.
struct Rendered {
    pieces: Box<[Piece]>,
    texts: Vec<String>,
    names: Names,
    values: ValueSlots,
}

#[derive(Default)]
struct Shapes {
    /// The pieces and values of the request being rendered (kept to reuse their allocations).
    scratch: Vec<Piece>,
    values: Vec<AttributeValue>,
    rendered: Vec<Rendered>,
}

thread_local! {
    static SHAPES: RefCell<Shapes> = RefCell::new(Shapes::default());
}

/// Renders each expression to its text, the expressions sharing placeholders; from this
/// thread's cache when it has rendered their shape before.
pub(crate) fn render<const N: usize>(
    mut expressions: [&mut dyn AnyExpression; N],
) -> ([String; N], Placeholders) {
    let mut placeholders = Placeholders::default();
    // `None` (or an error, when the thread is shutting down) before anything was recorded.
    let cached = SHAPES.try_with(|shapes| {
        let mut shapes = shapes.try_borrow_mut().ok()?;
        let shapes = &mut *shapes;
        shapes.scratch.clear();
        shapes.values.clear();
        let mut recorder = Recorder {
            pieces: &mut shapes.scratch,
            values: &mut shapes.values,
            cacheable: true,
        };
        for expression in expressions.iter_mut() {
            expression.record(&mut recorder);
            recorder.pieces.push(Piece::End);
        }
        let cacheable = recorder.cacheable;
        if cacheable {
            if let Some(rendered) = shapes
                .rendered
                .iter()
                .find(|rendered| *rendered.pieces == *shapes.scratch)
            {
                if let Some(values) = rendered.values.place(&mut shapes.values) {
                    placeholders.set_names(rendered.names.clone());
                    placeholders.set_values(values);
                    return Some(std::array::from_fn(|index| {
                        rendered.texts.get(index).cloned().unwrap_or_default()
                    }));
                }
            }
        }
        for value in shapes.values.drain(..) {
            placeholders.insert_value(value);
        }
        let texts = write_texts(&mut expressions, &mut placeholders);
        if cacheable && shapes.rendered.len() < MAX_SHAPES {
            if let Some(values) = ValueSlots::new(placeholders.value_slots()) {
                shapes.rendered.push(Rendered {
                    pieces: shapes.scratch.as_slice().into(),
                    texts: texts.to_vec(),
                    names: placeholders.names().unwrap_or_default(),
                    values,
                });
            }
        }
        Some(texts)
    });
    match cached {
        Ok(Some(texts)) => (texts, placeholders),
        _ => render_fresh(&mut expressions),
    }
}

/// A shape's value placeholders: a map of `NULL`s to copy (a copy keeps the map's layout, so
/// a request's values go into their slots without hashing a placeholder again), and where
/// each of its entries takes its value from.
struct ValueSlots {
    map: Values,
    /// For each entry of `map`, in its order, the position of its value in reading order:
    /// the number after `:v`.
    positions: Box<[usize]>,
}

impl ValueSlots {
    /// The slots of `map`, or `None` unless each placeholder is `:v` and a distinct position
    /// below the number of values, as [`Placeholders::insert_value`] writes them.
    ///
    /// [`Placeholders::insert_value`]: super::placeholders::Placeholders::insert_value
    fn new(map: Values) -> Option<Self> {
        let count = map.len();
        let mut taken = vec![false; count];
        let positions = map
            .keys()
            .map(|placeholder| {
                let position = placeholder.strip_prefix(":v")?.parse::<usize>().ok()?;
                let taken = taken.get_mut(position)?;
                (!std::mem::replace(taken, true)).then_some(position)
            })
            .collect::<Option<Box<[usize]>>>()?;
        Some(ValueSlots { map, positions })
    }

    /// `values`, in reading order, in a copy of the placeholders, or `None` (values
    /// untouched) if they do not fit. They always do: a request of this shape has as many
    /// values, and a copy of a map lists its entries in the map's order; both are checked
    /// (the order is hashbrown's, not a documented promise), as a mistake would send `NULL`
    /// or a value under another placeholder.
    fn place(&self, values: &mut Vec<AttributeValue>) -> Option<Values> {
        if values.len() != self.positions.len() {
            return None;
        }
        let mut placed = self.map.clone();
        if !placed.keys().eq(self.map.keys()) {
            return None;
        }
        for ((_, slot), position) in placed.iter_mut().zip(self.positions.iter()) {
            if let Some(value) = values.get_mut(*position) {
                std::mem::swap(slot, value);
            }
        }
        values.clear();
        Some(placed)
    }
}

/// The texts of expressions whose values are placed.
fn write_texts<const N: usize>(
    expressions: &mut [&mut dyn AnyExpression; N],
    placeholders: &mut Placeholders,
) -> [String; N] {
    let mut values = 0;
    expressions.each_mut().map(|expression| {
        let mut out = String::with_capacity(64);
        let mut writer = TextWriter {
            placeholders: &mut *placeholders,
            out: &mut out,
            values,
        };
        expression.write_text(&mut writer);
        values = writer.values;
        out
    })
}

/// Renders expressions without the cache.
fn render_fresh<const N: usize>(
    expressions: &mut [&mut dyn AnyExpression; N],
) -> ([String; N], Placeholders) {
    let mut placeholders = Placeholders::default();
    let texts = expressions
        .each_mut()
        .map(|expression| super::placeholders::render(*expression, &mut placeholders));
    (texts, placeholders)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::condition::{AllOf, Comparison, EntityFilter, Keeps, Node, Operand};
    use crate::expr::update::{Action, Actions, SetValue};
    use crate::expr::AttrPath;

    fn number(n: u32) -> AttributeValue {
        AttributeValue::N(n.to_string())
    }

    /// An update of `status` with a condition on `team`, with values `n`.
    fn update(n: u32) -> (Actions, AllOf) {
        let actions = Actions::new(vec![
            Action::Set(AttrPath::attribute("status"), SetValue::Value(number(n))),
            Action::Remove(AttrPath::attribute("GSI1SK")),
            Action::Set(AttrPath::attribute("count"), SetValue::Plus(number(n + 1))),
        ]);
        let condition = AllOf(vec![
            Node::Exists(AttrPath::attribute("PK")),
            Node::Compare(
                Operand::Path(AttrPath::attribute("team")),
                Comparison::Eq,
                Operand::Value(number(n + 2)),
            ),
        ]);
        (actions, condition)
    }

    fn uncached(expressions: &mut [&mut dyn AnyExpression; 2]) -> ([String; 2], Placeholders) {
        render_fresh(expressions)
    }

    #[test]
    fn a_repeated_shape_renders_as_a_fresh_one_with_its_own_values() {
        for n in [1, 2, 3] {
            let (mut actions, mut condition) = update(n);
            let cached = render([&mut actions, &mut condition]);
            let (mut actions, mut condition) = update(n);
            assert_eq!(cached, uncached(&mut [&mut actions, &mut condition]));
        }
        assert_eq!(
            update_text(7).0,
            [
                "SET #n0 = :v0, #n1 = #n1 + :v1 REMOVE #n2",
                "attribute_exists(#n3) AND #n4 = :v2"
            ]
        );
    }

    fn update_text(n: u32) -> ([String; 2], Placeholders) {
        let (mut actions, mut condition) = update(n);
        render([&mut actions, &mut condition])
    }

    #[test]
    fn values_take_their_places_on_a_cached_shape() {
        let (_, first) = update_text(10);
        let (_, second) = update_text(20);
        let values = second.values().unwrap_or_default();
        assert_eq!(values.get(":v0"), Some(&number(20)));
        assert_eq!(values.get(":v1"), Some(&number(21)));
        assert_eq!(values.get(":v2"), Some(&number(22)));
        assert_eq!(first.names(), second.names());
    }

    fn slots(placeholders: &[&str]) -> Option<ValueSlots> {
        ValueSlots::new(
            placeholders
                .iter()
                .map(|placeholder| (placeholder.to_string(), AttributeValue::Null(true)))
                .collect(),
        )
    }

    #[test]
    fn value_slots_take_only_the_placeholders_a_request_writes() {
        // Each of `:v0` to `:v(n-1)` once; anything else is not cached.
        assert!(slots(&[]).is_some());
        assert!(slots(&[":v1", ":v0", ":v2"]).is_some());
        assert!(
            slots(&[":v0", ":v2"]).is_none(),
            "past the number of values"
        );
        assert!(slots(&[":v1", ":v01"]).is_none(), "two slots for one value");
        assert!(slots(&[":x0"]).is_none());
        assert!(slots(&[":v"]).is_none());
        assert!(slots(&[":v-0"]).is_none());
    }

    #[test]
    fn value_slots_place_each_value_under_its_placeholder_or_touch_none() -> Result<(), String> {
        let slots = slots(&[":v2", ":v0", ":v1"]).ok_or("no slots for three values")?;
        let mut values = vec![number(0), number(1)];
        assert_eq!(slots.place(&mut values), None);
        assert_eq!(
            values,
            [number(0), number(1)],
            "values kept when they do not fit"
        );
        values.push(number(2));
        let placed = slots.place(&mut values);
        assert!(values.is_empty());
        let expected: Values = [(":v0", 0), (":v1", 1), (":v2", 2)]
            .into_iter()
            .map(|(placeholder, n)| (placeholder.to_owned(), number(n)))
            .collect();
        assert_eq!(placed, Some(expected));
        Ok(())
    }

    #[test]
    fn shapes_differ_by_their_pieces_not_their_text() {
        let render_one = |node: Node| {
            let mut condition = AllOf(vec![node]);
            render([&mut condition]).0
        };
        let compare = |comparison| {
            Node::Compare(
                Operand::Path(AttrPath::attribute("n")),
                comparison,
                Operand::Value(number(1)),
            )
        };
        assert_eq!(render_one(compare(Comparison::Lt)), ["#n0 < :v0"]);
        assert_eq!(render_one(compare(Comparison::Ge)), ["#n0 >= :v0"]);
        assert_eq!(render_one(compare(Comparison::Lt)), ["#n0 < :v0"]);
        let indexed = |index| Node::Exists(AttrPath::attribute("tags").index(index));
        assert_eq!(render_one(indexed(1)), ["attribute_exists(#n0[1])"]);
        assert_eq!(render_one(indexed(12)), ["attribute_exists(#n0[12])"]);
    }

    #[test]
    fn names_made_at_run_time_are_rendered_every_time() {
        for key in ["team", "floor"] {
            let mut condition = AllOf(vec![Node::Exists(AttrPath::attribute("labels").key(key))]);
            let (texts, placeholders) = render([&mut condition]);
            assert_eq!(texts, ["attribute_exists(#n0.#n1)"]);
            let names = placeholders.names().unwrap_or_default();
            assert_eq!(names.get("#n1").map(String::as_str), Some(key));
        }
    }

    #[test]
    fn made_values_are_placed_on_a_cached_shape() {
        for entity in ["Ticket", "Comment"] {
            let mut filter = EntityFilter {
                attribute: "_type",
                keeps: Keeps::Entity(entity),
                user: None,
                expiry: crate::ttl::Expiry {
                    attribute: None,
                    now: 0,
                },
            };
            let (texts, placeholders) = render([&mut filter]);
            assert_eq!(
                texts,
                ["#n0 = :v0 OR attribute_not_exists(#n0) OR NOT attribute_type(#n0, :v1)"]
            );
            let values = placeholders.values().unwrap_or_default();
            assert_eq!(
                values.get(":v0"),
                Some(&AttributeValue::S(entity.to_owned()))
            );
            assert_eq!(values.get(":v1"), Some(&AttributeValue::S("S".to_owned())));
        }
    }

    /// Gives every value of an expression a new number, in reading order.
    struct Renumber(u32);

    impl Sink for Renumber {
        fn text(&mut self, _: &'static str) {}
        fn name(&mut self, _: Name<'_>) {}
        fn index(&mut self, _: usize) {}
        fn value(&mut self, value: &mut AttributeValue) {
            self.0 += 1;
            *value = number(self.0);
        }
        fn new_value(&mut self, _: impl FnOnce() -> AttributeValue) {}
    }

    mod generated {
        use super::*;
        use crate::expr::Expression;
        use proptest::prelude::*;

        const NAMES: &[&str] = &["status", "team", "PK", "GSI1SK", "tags", "count"];

        fn path() -> impl Strategy<Value = AttrPath> {
            (prop::sample::select(NAMES), prop::option::of(0usize..12)).prop_map(|(root, index)| {
                match index {
                    Some(index) => AttrPath::attribute(root).index(index),
                    None => AttrPath::attribute(root),
                }
            })
        }

        fn operand() -> impl Strategy<Value = Operand> {
            prop_oneof![
                (0u32..100).prop_map(|n| Operand::Value(number(n))),
                path().prop_map(Operand::Path),
                path().prop_map(Operand::Size),
            ]
        }

        fn node() -> impl Strategy<Value = Node> {
            let comparison = prop::sample::select(vec![
                Comparison::Eq,
                Comparison::Ne,
                Comparison::Lt,
                Comparison::Ge,
            ]);
            let leaf = prop_oneof![
                (operand(), comparison, operand()).prop_map(|(a, c, b)| Node::Compare(a, c, b)),
                (operand(), operand(), operand()).prop_map(|(a, b, c)| Node::Between(a, b, c)),
                (operand(), proptest::collection::vec(operand(), 1..4))
                    .prop_map(|(a, list)| Node::In(a, list)),
                (path(), operand()).prop_map(|(p, o)| Node::BeginsWith(p, o)),
                path().prop_map(Node::Exists),
                path().prop_map(|p| Node::Type(p, crate::expr::AttributeType::Number)),
            ];
            leaf.prop_recursive(3, 12, 2, |inner| {
                prop_oneof![
                    (inner.clone(), inner.clone())
                        .prop_map(|(a, b)| Node::And(Box::new(a), Box::new(b))),
                    (inner.clone(), inner.clone())
                        .prop_map(|(a, b)| Node::Or(Box::new(a), Box::new(b))),
                    inner.prop_map(|a| Node::Not(Box::new(a))),
                ]
            })
        }

        fn action() -> impl Strategy<Value = Action> {
            let value = (0u32..100).prop_map(number);
            prop_oneof![
                (path(), value.clone()).prop_map(|(p, v)| Action::Set(p, SetValue::Value(v))),
                (path(), value.clone()).prop_map(|(p, v)| Action::Set(p, SetValue::Prepend(v))),
                (path(), value.clone()).prop_map(|(p, v)| Action::Set(p, SetValue::CountUp(v))),
                path().prop_map(Action::Remove),
                (path(), value).prop_map(|(p, v)| Action::Add(p, v)),
            ]
        }

        proptest! {
            /// A borrowed tree (a query's filter, sent again by every page) renders as the same
            /// tree owned, fresh and from the cache.
            #[test]
            fn borrowed_trees_render_as_owned_ones(node in node()) {
                SHAPES.with(|shapes| shapes.borrow_mut().rendered.clear());
                let borrowed = || EntityFilter { attribute: "_type", keeps: Keeps::All, user: Some(&node), expiry: crate::ttl::Expiry { attribute: None, now: 0 } };
                let fresh = render_fresh(&mut [&mut borrowed()]);
                render([&mut borrowed()]);
                let cached = render([&mut borrowed()]);
                let owned = render_fresh(&mut [&mut AllOf(vec![node.clone()])]);
                // The second rendering found the shape the first stored.
                prop_assert_eq!(SHAPES.with(|shapes| shapes.borrow().rendered.len()), 1);
                prop_assert_eq!(&fresh, &owned);
                prop_assert_eq!(&cached, &owned);
            }

            /// Any request of a shape seen before renders exactly as it would fresh, with its
            /// own values.
            #[test]
            fn cached_shapes_render_as_fresh_ones(
                actions in proptest::collection::vec(action(), 1..5),
                nodes in proptest::collection::vec(node(), 0..3),
            ) {
                // A cache of its own per case, so that the first rendering always stores the
                // shape and the second always finds it (a full cache would render both fresh).
                SHAPES.with(|shapes| shapes.borrow_mut().rendered.clear());
                let request = || (Actions::new(actions.clone()), AllOf(nodes.clone()));
                let (mut first_actions, mut first_nodes) = request();
                render([&mut first_actions, &mut first_nodes]);
                let (mut actions, mut nodes) = request();
                let mut renumber = Renumber(1000);
                actions.walk(&mut renumber);
                nodes.walk(&mut renumber);
                let (mut fresh_actions, mut fresh_nodes) = (actions.clone(), nodes.clone());
                let cached = render([&mut actions, &mut nodes]);
                prop_assert_eq!(SHAPES.with(|shapes| shapes.borrow().rendered.len()), 1);
                prop_assert_eq!(cached, render_fresh(&mut [&mut fresh_actions, &mut fresh_nodes]));
            }
        }
    }

    #[test]
    fn a_full_cache_still_renders() {
        // More shapes than the cache keeps: `IN` lists of every length up to the limit.
        for length in 1..=MAX_SHAPES + 8 {
            let options = (0..length)
                .map(|n| Operand::Value(number(n as u32)))
                .collect();
            let mut condition = AllOf(vec![Node::In(
                Operand::Path(AttrPath::attribute("n")),
                options,
            )]);
            let (texts, placeholders) = render([&mut condition]);
            assert_eq!(
                placeholders.values().map(|values| values.len()),
                Some(length)
            );
            assert!(
                texts[0].ends_with(&format!(":v{})", length - 1)),
                "{texts:?}"
            );
        }
    }
}
