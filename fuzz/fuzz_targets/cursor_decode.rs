//! Any text is a cursor or a typed error; a cursor that decodes encodes back to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use singletable::op::query::Cursor;

fuzz_target!(|data: &[u8]| {
    let texts = [
        String::from_utf8_lossy(data).into_owned(),
        // Past base64, so the JSON and key parsing are reached too.
        aws_smithy_types::base64::encode(data),
    ];
    for text in texts {
        if let Ok(cursor) = Cursor::decode(&text) {
            assert_eq!(Cursor::decode(&cursor.encode()).unwrap(), cursor);
        }
    }
});
