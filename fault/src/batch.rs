//! Batch answers with a part left unprocessed: `UnprocessedItems` of a `BatchWriteItem` or
//! `UnprocessedKeys` of a `BatchGetItem`, and the entries of one table's part.

use crate::http::{json_response, Message};
use serde_json::{json, Map, Value};

/// A batch's response with the part the partition limits held back added to what it reports
/// unprocessed; an error response as it is (the client resends the whole batch after an
/// error).
pub(crate) fn with_unprocessed(
    response: Message,
    unprocessed: Map<String, Value>,
    reads: bool,
) -> Message {
    if response.status() != Some(200) {
        return response;
    }
    let Ok(mut answer) = serde_json::from_slice::<Value>(&response.body) else {
        return response;
    };
    if !merge_unprocessed(&mut answer, unprocessed, reads) {
        return response;
    }
    json_response(200, "OK", &answer)
}

/// Merges a deferred part of a batch (in the shape of `UnprocessedItems` or
/// `UnprocessedKeys`) into what a batch's answer reports unprocessed; `false` when the answer
/// is not a JSON object.
pub(crate) fn merge_unprocessed(
    answer: &mut Value,
    deferred: Map<String, Value>,
    reads: bool,
) -> bool {
    let unprocessed_field = if reads {
        "UnprocessedKeys"
    } else {
        "UnprocessedItems"
    };
    let Some(answer_object) = answer.as_object_mut() else {
        return false;
    };
    let unprocessed = answer_object
        .entry(unprocessed_field)
        .or_insert_with(|| json!({}));
    if !unprocessed.is_object() {
        *unprocessed = json!({});
    }
    for (table, part) in deferred {
        let Some(unprocessed) = unprocessed.as_object_mut() else {
            break;
        };
        match unprocessed.get_mut(&table) {
            Some(existing) => {
                let moved = entries(&part, reads).cloned().unwrap_or_default();
                if let Some(list) = entries_mut(existing, reads) {
                    list.extend(moved);
                }
            }
            None => {
                unprocessed.insert(table, part);
            }
        }
    }
    true
}

/// The write requests (a list) or keys (`Keys` of a map) of one table's batch entry.
pub(crate) fn entries(entry: &Value, reads: bool) -> Option<&Vec<Value>> {
    if reads {
        entry.get("Keys")?.as_array()
    } else {
        entry.as_array()
    }
}

pub(crate) fn entries_mut(entry: &mut Value, reads: bool) -> Option<&mut Vec<Value>> {
    if reads {
        entry.get_mut("Keys")?.as_array_mut()
    } else {
        entry.as_array_mut()
    }
}
