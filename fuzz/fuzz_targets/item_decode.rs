//! Any DynamoDB JSON item decodes as an entity or fails with a typed error.
#![no_main]

mod common;

use common::{Fuzz, Rich, Ticket};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let Ok(mut item) = singletable::wire::parse_item(&json) else {
        return;
    };
    let _ = singletable::item::item_size(&item);
    let _ = singletable::item::key_text::<Fuzz>(&item);
    let _ = singletable::item::decode::<Ticket>(item.clone());
    let _ = singletable::item::decode::<Rich>(item.clone());
    // Again as each entity, so the fields are reached past the entity check.
    for entity in ["Ticket", "Rich"] {
        item.insert(
            "_type".to_owned(),
            aws_sdk_dynamodb::types::AttributeValue::S(entity.to_owned()),
        );
        let _ = singletable::item::decode::<Ticket>(item.clone());
        let _ = singletable::item::decode::<Rich>(item.clone());
    }
});
