//! A `tracing` layer that keeps the library's spans (target `singletable`) as they close,
//! with each field's value and the type it was recorded as, and the library's events inside
//! each span.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

/// The type a field's value was recorded as, in the conventions' words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    String,
    Boolean,
    Int,
    Double,
    /// Recorded through `Debug` (a value the library formats, such as a request id).
    Other,
}

/// A closed span of the library: its fields, and the library's events inside it.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    pub fields: BTreeMap<String, String>,
    pub kinds: BTreeMap<String, Kind>,
    pub events: Vec<BTreeMap<String, String>>,
}

struct Fields<'a>(
    &'a mut BTreeMap<String, String>,
    Option<&'a mut BTreeMap<String, Kind>>,
);

impl Fields<'_> {
    fn put(&mut self, field: &Field, text: String, kind: Kind) {
        self.0.insert(field.name().to_owned(), text);
        if let Some(kinds) = self.1.as_mut() {
            kinds.insert(field.name().to_owned(), kind);
        }
    }
}

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.put(field, format!("{value:?}"), Kind::Other);
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, value.to_owned(), Kind::String);
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, value.to_string(), Kind::Boolean);
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, value.to_string(), Kind::Int);
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, value.to_string(), Kind::Int);
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, value.to_string(), Kind::Double);
    }
}

/// Records the library's spans as they close.
#[derive(Clone, Default)]
pub struct Capture(Arc<Mutex<Vec<Captured>>>);

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attributes: &Attributes<'_>, id: &Id, context: Context<'_, S>) {
        if attributes.metadata().target() != "singletable" {
            return;
        }
        let mut captured = Captured::default();
        attributes.record(&mut Fields(&mut captured.fields, Some(&mut captured.kinds)));
        if let Some(span) = context.span(id) {
            span.extensions_mut().insert(captured);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, context: Context<'_, S>) {
        if let Some(span) = context.span(id) {
            if let Some(captured) = span.extensions_mut().get_mut::<Captured>() {
                values.record(&mut Fields(&mut captured.fields, Some(&mut captured.kinds)));
            }
        }
    }

    fn on_event(&self, event: &Event<'_>, context: Context<'_, S>) {
        // The library's events; the SDK's own (which log response bodies at `TRACE`) are the
        // application's to filter.
        if event.metadata().target() != "singletable" {
            return;
        }
        let Some(scope) = context.event_scope(event) else {
            return;
        };
        // The nearest library span above the event (the SDK's own spans sit in between).
        for span in scope {
            if let Some(captured) = span.extensions_mut().get_mut::<Captured>() {
                let mut fields = BTreeMap::new();
                event.record(&mut Fields(&mut fields, None));
                captured.events.push(fields);
                return;
            }
        }
    }

    fn on_close(&self, id: Id, context: Context<'_, S>) {
        if let Some(span) = context.span(&id) {
            if let Some(captured) = span.extensions_mut().remove::<Captured>() {
                self.0.lock().unwrap().push(captured);
            }
        }
    }
}

impl Capture {
    pub fn take(&self) -> Vec<Captured> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }

    /// Takes the spans of the requests to `table`, leaving the others' (of tests that run
    /// beside this one under one global subscriber).
    pub fn take_table(&self, table: &str) -> Vec<Captured> {
        let names = serde_json::to_string(&[table]).unwrap();
        let mut all = self.0.lock().unwrap();
        let (mine, others) = std::mem::take(&mut *all)
            .into_iter()
            .partition(|span| span.fields.get("aws.dynamodb.table_names") == Some(&names));
        *all = others;
        mine
    }
}

/// A field's value as text; the test fails, naming the span, when the span has no such field.
pub fn field<'a>(span: &'a Captured, name: &str) -> &'a str {
    span.fields
        .get(name)
        .map(String::as_str)
        .unwrap_or_else(|| panic!("{name} missing from {span:#?}"))
}
