//! Cursors a web app can hand to its clients: with a `CursorKey` on the `Db`, a cursor is
//! opaque, bound to the query that made it, refused when edited, and may expire. Without one it
//! stays plain base64 JSON, as documented.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Serialize};
use singletable::op::query::{Cursor, CursorKey};
use singletable::testing::TestTable;
use singletable::{Db, Entity, Error, Table};
use std::time::Duration;

#[derive(Table)]
#[dynamo(name = "cursors", pk = "PK", sk = "SK")]
struct Shop;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Shop, pk = "SHOP#{shop}", sk = "ORDER#{number:6}")]
struct Order {
    shop: String,
    number: u32,
    secret_note: String,
}

const SECRET: &[u8; 32] = b"0123456789abcdef0123456789abcdef";

async fn seeded() -> TestTable<Shop> {
    let db = singletable::testing::table::<Shop>().await.unwrap();
    let mut batch = db.batch_write();
    for shop in ["north", "south"] {
        for number in 0..40 {
            batch = batch.put(&Order {
                shop: shop.into(),
                number,
                secret_note: format!("note {number}"),
            });
        }
    }
    assert!(batch.send().await.unwrap().unprocessed.is_empty());
    db
}

fn sealed(db: &Db<Shop>, key: CursorKey) -> Db<Shop> {
    db.clone().with_cursor_key(key)
}

/// The cursor text of the first page of `north`'s orders, 10 per page.
async fn first_cursor(db: &Db<Shop>) -> String {
    let page = db
        .query(Order::partition("north"))
        .limit(10)
        .page(None)
        .await
        .unwrap();
    page.cursor.unwrap().encode()
}

fn refused(result: Result<singletable::op::query::Page<Order>, Error>) -> String {
    match result {
        Err(Error::Cursor(error)) => error.reason,
        other => panic!("expected a cursor error, got {other:?}"),
    }
}

#[tokio::test]
async fn sealed_cursors_page_through_every_item_once_and_hide_the_keys() {
    let table = seeded().await;
    let db = sealed(&table, CursorKey::new(SECRET).unwrap());
    let query = db.query(Order::partition("north")).limit(7);
    let mut numbers = Vec::new();
    let mut cursor: Option<Cursor> = None;
    for _ in 0..20 {
        let page = query.page(cursor.as_ref()).await.unwrap();
        numbers.extend(page.items.iter().map(|order| order.number));
        let Some(next) = page.cursor else {
            cursor = None;
            break;
        };
        let text = next.encode();
        // Safe in a URL's query string as it is: `+` would read as a space there.
        assert!(
            text.bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_'),
            "{text}"
        );
        let bytes = URL_SAFE_NO_PAD.decode(&text).unwrap();
        let visible = String::from_utf8_lossy(&bytes);
        // The key attributes as the plain cursor's JSON writes them, quoted: a bare "PK" turns
        // up by chance in about one ciphertext in 600 (two bytes in some 110), which made this
        // test fail at random.
        for leak in ["SHOP#", "ORDER#", "north", "\"PK\"", "\"SK\""] {
            assert!(!visible.contains(leak), "{leak:?} readable in {visible:?}");
        }
        cursor = Some(Cursor::decode(&text).unwrap());
    }
    assert!(cursor.is_none(), "pagination does not end");
    assert_eq!(numbers, (0..40).collect::<Vec<u32>>());
}

#[tokio::test]
async fn an_edited_sealed_cursor_is_refused() {
    let table = seeded().await;
    let db = sealed(&table, CursorKey::new(SECRET).unwrap());
    let text = first_cursor(&db).await;
    let bytes = URL_SAFE_NO_PAD.decode(&text).unwrap();
    // Flip one bit of each byte in turn: of the version, the expiry, the tag and the contents.
    for position in 0..bytes.len() {
        let mut edited = bytes.clone();
        edited[position] ^= 0x01;
        let Ok(cursor) = Cursor::decode(&URL_SAFE_NO_PAD.encode(&edited)) else {
            continue;
        };
        let query = db.query(Order::partition("north")).limit(10);
        let result = query.page(Some(&cursor)).await;
        assert!(
            matches!(result, Err(Error::Cursor(_))),
            "byte {position} edited, and the cursor was accepted"
        );
    }
    // Cut short.
    let short = URL_SAFE_NO_PAD.encode(&bytes[..20]);
    assert!(Cursor::decode(&short).is_err());
}

#[tokio::test]
async fn a_sealed_cursor_resumes_only_the_query_that_made_it() {
    let table = seeded().await;
    let db = sealed(&table, CursorKey::new(SECRET).unwrap());
    let cursor = Cursor::decode(&first_cursor(&db).await).unwrap();
    // The same query, with another page size, resumes.
    let resumed = db
        .query(Order::partition("north"))
        .limit(25)
        .page(Some(&cursor))
        .await
        .unwrap();
    assert_eq!(resumed.items.first().map(|order| order.number), Some(10));
    // Another partition, a sort condition, a filter, the other direction: refused.
    let reasons = [
        refused(
            db.query(Order::partition("south"))
                .limit(10)
                .page(Some(&cursor))
                .await,
        ),
        refused(
            db.query(Order::partition("north"))
                .sort(Order::NUMBER, 20)
                .limit(10)
                .page(Some(&cursor))
                .await,
        ),
        refused(
            db.query(Order::partition("north"))
                .filter(Order::SECRET_NOTE.ne("x".to_owned()))
                .limit(10)
                .page(Some(&cursor))
                .await,
        ),
        refused(
            db.query(Order::partition("north"))
                .descending()
                .limit(10)
                .page(Some(&cursor))
                .await,
        ),
    ];
    for reason in reasons {
        assert!(reason.contains("another query"), "{reason}");
    }
    // The in-process cursor of a page is bound the same way, before it is ever encoded.
    let page = db
        .query(Order::partition("north"))
        .limit(10)
        .page(None)
        .await
        .unwrap();
    let reason = refused(
        db.query(Order::partition("south"))
            .limit(10)
            .page(page.cursor.as_ref())
            .await,
    );
    assert!(reason.contains("another query"), "{reason}");
}

#[tokio::test]
async fn keys_must_match_and_unsigned_cursors_are_refused_where_cursors_are_sealed() {
    let table = seeded().await;
    let keyed = sealed(&table, CursorKey::new(SECRET).unwrap());
    let other_key = sealed(&table, CursorKey::new(&[9u8; 32]).unwrap());
    let sealed_cursor = Cursor::decode(&first_cursor(&keyed).await).unwrap();
    let plain_cursor = Cursor::decode(&first_cursor(&table).await).unwrap();
    let query = |db: &Db<Shop>, cursor: &Cursor| {
        let db = db.clone();
        let cursor = cursor.clone();
        async move {
            db.query(Order::partition("north"))
                .limit(10)
                .page(Some(&cursor))
                .await
        }
    };
    assert!(refused(query(&other_key, &sealed_cursor).await).contains("edited"));
    assert!(refused(query(&keyed, &plain_cursor).await).contains("unsigned"));
    assert!(refused(query(&table, &sealed_cursor).await).contains("no cursor key"));
    // Unsigned cursors stay readable and resume on a Db without a key, as documented.
    let page = query(&table, &plain_cursor).await.unwrap();
    assert_eq!(page.items.first().map(|order| order.number), Some(10));
    assert!(
        CursorKey::new(b"short").is_err(),
        "secrets under 32 bytes are refused"
    );
}

/// A secret rotates without breaking the cursors clients hold: the new secret is deployed
/// with the old one as previous (cursors sealed with the old one still resume, new ones are
/// sealed with the new one), then alone (the old secret's cursors are refused, with why).
#[tokio::test]
async fn a_secret_rotates_without_breaking_cursors_in_flight() {
    const NEW: &[u8; 32] = b"fedcba9876543210fedcba9876543210";
    let table = seeded().await;
    let old = sealed(&table, CursorKey::new(SECRET).unwrap());
    let rotating = sealed(
        &table,
        CursorKey::new(NEW).unwrap().with_previous(SECRET).unwrap(),
    );
    let rotated = sealed(&table, CursorKey::new(NEW).unwrap());
    let resume = |db: &Db<Shop>, cursor: &str| {
        let db = db.clone();
        let cursor = Cursor::decode(cursor).unwrap();
        async move {
            db.query(Order::partition("north"))
                .limit(10)
                .page(Some(&cursor))
                .await
        }
    };
    let first = |page: singletable::op::query::Page<Order>| page.items.first().map(|o| o.number);
    let before = first_cursor(&old).await;
    assert_eq!(first(resume(&rotating, &before).await.unwrap()), Some(10));
    let during = first_cursor(&rotating).await;
    assert_eq!(first(resume(&rotated, &during).await.unwrap()), Some(10));
    assert!(refused(resume(&old, &during).await).contains("does not hold"));
    let reason = refused(resume(&rotated, &before).await);
    assert!(reason.contains("does not hold"), "{reason}");
}

#[tokio::test]
async fn a_sealed_cursor_expires() {
    let table = seeded().await;
    let db = sealed(
        &table,
        CursorKey::new(SECRET)
            .unwrap()
            .expire_after(Duration::from_millis(1)),
    );
    let cursor = Cursor::decode(&first_cursor(&db).await).unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let reason = refused(
        db.query(Order::partition("north"))
            .limit(10)
            .page(Some(&cursor))
            .await,
    );
    assert!(reason.contains("expired"), "{reason}");
    let fresh = sealed(
        &table,
        CursorKey::new(SECRET)
            .unwrap()
            .expire_after(Duration::from_secs(600)),
    );
    let cursor = Cursor::decode(&first_cursor(&fresh).await).unwrap();
    let page = fresh
        .query(Order::partition("north"))
        .limit(10)
        .page(Some(&cursor))
        .await
        .unwrap();
    assert_eq!(page.items.first().map(|order| order.number), Some(10));
}

/// `.limit(n)` bounds the items DynamoDB evaluates, so behind a filter pages come back short or
/// empty; a full page keeps asking until it holds `n` items or the query ends, and its cursor
/// resumes after the last item it returned.
#[tokio::test]
async fn full_pages_hold_their_size_through_a_filter() {
    let db = seeded().await;
    let query = || {
        db.query(Order::partition("north"))
            .filter(Order::NUMBER.ge(30u32))
    };
    let short = query().limit(4).page(None).await.unwrap();
    assert!(
        short.items.is_empty(),
        "the first four evaluated fail the filter"
    );
    let mut numbers = Vec::new();
    let mut cursor: Option<Cursor> = None;
    let mut sizes = Vec::new();
    loop {
        let page = query().full_page(4, cursor.as_ref()).await.unwrap();
        sizes.push(page.items.len());
        numbers.extend(page.items.iter().map(|order| order.number));
        match page.cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(numbers, (30..40).collect::<Vec<u32>>());
    assert_eq!(&sizes[..2], [4, 4], "{sizes:?}");
    assert!(
        query().full_page(0, None).await.is_err(),
        "a page of no items"
    );
}

/// A cursor as this library wrote it before its position was serde-derived (the first page
/// of `north`, 10 per page): clients hold such cursors, and unsigned ones never expire.
const CURSOR_OF_THE_OLD_CODE: &str =
    "eyJpIjpudWxsLCJrIjp7IlBLIjp7IlMiOiJTSE9QI25vcnRoIn0sIlNLIjp7IlMiOiJPUkRFUiMwMDAwMDkifX19";

#[tokio::test]
async fn a_cursor_written_by_the_old_code_still_resumes() {
    let table = seeded().await;
    let cursor = Cursor::decode(CURSOR_OF_THE_OLD_CODE).unwrap();
    let page = table
        .query(Order::partition("north"))
        .limit(10)
        .page(Some(&cursor))
        .await
        .unwrap();
    let numbers: Vec<u32> = page.items.iter().map(|order| order.number).collect();
    assert_eq!(numbers, (10..20).collect::<Vec<u32>>());
}
