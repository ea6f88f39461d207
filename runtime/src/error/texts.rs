//! Every error's text, by default and with values shown: keys and values a user's data holds
//! (an e-mail in a key, in a unique value, in a message serde wrote) appear only with
//! [`show_values`](super::show_values) on.

use super::batch::{BatchWriteOutput, UnprocessedWrite, WriteOperation};
use super::cancel::{CancellationCode, CancellationReason, TransactionCanceled};
use super::cursor::CursorError;
use super::migration::MigrationError;
use super::stream::StreamError;
use super::transaction::TransactionError;
use super::write_kind::WriteKind;
use super::*;
use crate::key::text::with_values_shown;
use aws_sdk_dynamodb::error::SdkError;

/// A value of the user's in every slot that can hold one.
const SECRET: &str = "ana@example.com";

fn key() -> KeyText {
    KeyText {
        partition: ("PK", format!("USER#{SECRET}")),
        sort: Some(("SK", format!("EMAIL#{SECRET}"))),
    }
}

/// One error of every variant, and of every variant of the errors they wrap that carries a
/// key or a value, each holding [`SECRET`] wherever it can.
fn every_error() -> Vec<Error> {
    let decode = vec![
        DecodeError::WrongEntity {
            key: key(),
            attribute: "_type",
            expected: "User",
            found: Some("Order".to_owned()),
        },
        DecodeError::KeyMismatch {
            entity: "User",
            key: key(),
            rendered: key(),
        },
        DecodeError::KeyShape {
            entity: "User",
            key: key(),
        },
        DecodeError::FieldFromKey {
            entity: "User",
            key: key(),
            field: "email",
            attribute: "SK",
            template: "EMAIL#{email}",
            reason: format!("expected \"#\" after a field in \"{SECRET}\""),
        },
        DecodeError::Attribute {
            entity: "User",
            key: key(),
            attribute: "age".to_owned(),
            message: format!("invalid type: string \"{SECRET}\", expected u32"),
        },
    ];
    let keys = vec![
        KeyError::Ambiguous {
            field: "email",
            value: SECRET.to_owned(),
            separator: "#",
            template: "EMAIL#{email}#X",
        },
        KeyError::Separator {
            field: "email",
            value: SECRET.to_owned(),
            separator: '@',
            template: "EMAIL@{email}",
        },
        KeyError::TooWide {
            field: "phone",
            value: SECRET.to_owned(),
            width: 4,
            needed: 11,
            template: "PHONE#{phone:4}",
        },
        KeyError::Unrepresentable {
            field: "email",
            reason: format!("{SECRET:?} holds U+10FFFF"),
        },
        KeyError::Empty {
            template: "{email}",
        },
        KeyError::EmptyIndexKey {
            attribute: "GSI1PK",
            index: "gsi1",
        },
        KeyError::TooLong {
            key: SECRET.repeat(200),
            size: 3000,
            max: 2048,
            role: "partition",
        },
        KeyError::Mismatch {
            key: SECRET.to_owned(),
            template: "USER#{id}",
            reason: format!("expected \"USER#\" at \"{SECRET}\""),
        },
    ];
    let limits = vec![
        LimitError::ItemSize {
            key: key(),
            size: 500_000,
            max: 409_600,
        },
        LimitError::UniqueValueSize {
            entity: "User",
            field: "email",
            size: 3000,
            max: 2000,
        },
    ];
    let reason = CancellationReason {
        position: 0,
        kind: WriteKind::Put,
        entity: "User",
        key: key(),
        code: CancellationCode::ConditionalCheckFailed,
        message: Some(format!("the item holds {SECRET}")),
        item: None,
    };
    let unprocessed = UnprocessedWrite {
        operation: WriteOperation::Put,
        entity: "User",
        key: key(),
        item: Item::new(),
    };
    let timeout: SdkError<aws_sdk_dynamodb::operation::get_item::GetItemError, HttpResponse> =
        SdkError::timeout_error("no answer");
    let mut errors = vec![
        Error::NotFound {
            entity: "User",
            key: key(),
        },
        Error::ConditionFailed {
            entity: "User",
            key: key(),
            current: None,
        },
        Error::VersionConflict {
            entity: "User",
            key: key(),
            expected: 2,
            found: 3,
            current: None,
        },
        Error::Cursor(CursorError::new("it was sealed for another query")),
        Error::Ambiguous {
            entity: "User",
            key: key(),
            message: "the response was lost".to_owned(),
            cause: None,
        },
        Error::Unread {
            entity: "User",
            key: key(),
            source: Box::new(Error::NotFound {
                entity: "User",
                key: key(),
            }),
        },
        Error::VersionOverflow {
            entity: "User",
            key: key(),
            version: u64::MAX,
        },
        Error::AmbiguousTransaction {
            token: "token".to_owned(),
            attempts: 3,
            message: "the response was lost".to_owned(),
            cause: None,
        },
        Error::Encode {
            entity: "User",
            message: format!("cannot serialize \"{SECRET}\""),
        },
        Error::Transaction(TransactionError::SameItem {
            first: 0,
            first_kind: WriteKind::Put,
            second: 1,
            second_kind: WriteKind::Delete,
            key: key(),
        }),
        Error::Transaction(TransactionError::RekeyKeepsKey { key: key() }),
        Error::TransactionCanceled(Box::new(TransactionCanceled {
            reasons: vec![reason],
            attempts: 1,
        })),
        Error::Update(UpdateError::Empty { entity: "User" }),
        Error::NotProjected {
            index: "gsi2",
            attribute: "email".to_owned(),
            projection: "KEYS_ONLY".to_owned(),
        },
        Error::Rate(crate::rate::RateError::NotPositive(-1.0)),
        Error::Build(aws_sdk_dynamodb::error::BuildError::missing_field(
            "key", "a key",
        )),
        Error::Wait {
            table: "app".to_owned(),
            message: "timed out".to_owned(),
        },
        Error::Service(ServiceError::new(timeout)),
        Error::DuplicateWrite {
            key: key(),
            first: WriteOperation::Put,
            second: WriteOperation::Delete,
        },
        Error::BatchWrite {
            partial: Box::new(BatchWriteOutput {
                written: 1,
                requests: 1,
                unprocessed: vec![unprocessed],
                rate: None,
            }),
            source: Box::new(Error::NotFound {
                entity: "User",
                key: key(),
            }),
        },
        Error::OutOfRange {
            parameter: "Limit",
            value: 0,
            min: 1,
            max: 1000,
        },
        Error::Migration(MigrationError::KeyChanged {
            entity: "User",
            stored: key(),
            rendered: key(),
        }),
        Error::Stream(Box::new(StreamError::Decode {
            sequence_number: "1".to_owned(),
            key: key(),
            image: "new image",
            source: Box::new(DecodeError::KeyShape {
                entity: "User",
                key: key(),
            }),
        })),
        Error::Unique {
            entity: "User",
            field: "email",
            value: SECRET.to_owned(),
            owner_key: Some(key()),
        },
        Error::AppendPointerTaken {
            entity: "Note",
            key: key(),
            holder: "User".to_owned(),
        },
    ];
    errors.extend(decode.into_iter().map(Error::Decode));
    errors.extend(keys.into_iter().map(Error::Key));
    errors.extend(limits.into_iter().map(Error::Limit));
    errors
}

/// Fails to compile when `Error` gains a variant, so that [`every_error`] is looked at again.
fn listed(error: &Error) -> bool {
    match error {
        Error::NotFound { .. }
        | Error::ConditionFailed { .. }
        | Error::VersionConflict { .. }
        | Error::Cursor(_)
        | Error::Ambiguous { .. }
        | Error::Unread { .. }
        | Error::VersionOverflow { .. }
        | Error::AmbiguousTransaction { .. }
        | Error::Key(_)
        | Error::Decode(_)
        | Error::Encode { .. }
        | Error::Transaction(_)
        | Error::TransactionCanceled(_)
        | Error::Update(_)
        | Error::NotProjected { .. }
        | Error::Limit(_)
        | Error::Rate(_)
        | Error::Build(_)
        | Error::Wait { .. }
        | Error::Service(_)
        | Error::DuplicateWrite { .. }
        | Error::BatchWrite { .. }
        | Error::OutOfRange { .. }
        | Error::Migration(_)
        | Error::Stream(_)
        | Error::Unique { .. }
        | Error::AppendPointerTaken { .. } => true,
    }
}

#[test]
fn no_error_text_holds_a_value_unless_values_are_shown() {
    let errors = every_error();
    let kinds: std::collections::BTreeSet<&str> = errors.iter().map(Error::kind).collect();
    // Every variant of `Error` is among them.
    assert_eq!(kinds.len(), 27, "{kinds:?}");
    let mut showing = 0;
    for error in &errors {
        assert!(listed(error));
        let hidden = with_values_shown(false, || error.to_string());
        assert!(
            !hidden.contains(SECRET),
            "{} shows a value: {hidden}",
            error.kind()
        );
        let shown = with_values_shown(true, || error.to_string());
        showing += usize::from(shown.contains(SECRET));
    }
    // Every error that holds a value shows it when asked: all but the few that hold none.
    let without_values = errors
        .iter()
        .filter(|error| {
            matches!(
                error,
                Error::Cursor(_)
                    | Error::AmbiguousTransaction { .. }
                    | Error::Update(_)
                    | Error::NotProjected { .. }
                    | Error::Rate(_)
                    | Error::Build(_)
                    | Error::Wait { .. }
                    | Error::Service(_)
                    | Error::OutOfRange { .. }
                    | Error::Key(KeyError::Empty { .. } | KeyError::EmptyIndexKey { .. })
                    | Error::Limit(LimitError::UniqueValueSize { .. })
            )
        })
        .count();
    assert_eq!(showing, errors.len() - without_values);
}
