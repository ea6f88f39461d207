//! Any Lambda event for DynamoDB decodes record by record, as typed changes or typed errors
//! (`records` reads each through `raw` and leaves the library's items out):
//! the records' keys and images are other tools' data, and the event itself what Lambda (or
//! anything posing as it) sends.
#![no_main]

mod common;

use aws_lambda_events::event::dynamodb::Event;
use common::{FuzzItem, Rich, Ticket};
use libfuzzer_sys::fuzz_target;
use singletable::stream::lambda::records;

fuzz_target!(|data: &[u8]| {
    let Ok(event) = serde_json::from_slice::<Event>(data) else {
        return;
    };
    records::<Ticket>(event.clone()).for_each(drop);
    records::<Rich>(event.clone()).for_each(drop);
    records::<FuzzItem>(event).for_each(drop);
});
