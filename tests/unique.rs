//! Unique values: sentinel items written, moved and removed in the item's own transactions,
//! judged by reading the table raw afterwards.

mod common;
use common::Needs;

use aws_sdk_dynamodb::types::AttributeValue;
use serde::{Deserialize, Serialize};
use singletable::{Entity, Error, Table};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Table)]
#[dynamo(name = "unique", pk = "PK", sk = "SK")]
struct App;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "USER#{id}", sk = "USER")]
struct User {
    id: String,
    #[dynamo(unique)]
    email: String,
    /// Unique only when present.
    #[dynamo(unique)]
    phone: Option<String>,
    name: String,
}

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "PAGE#{id}", sk = "PAGE", unique(tenant, slug))]
struct Page {
    id: String,
    tenant: String,
    slug: String,
}

fn user(id: &str, email: &str) -> User {
    User {
        id: id.into(),
        email: email.into(),
        phone: None,
        name: format!("user {id}"),
    }
}

async fn table() -> singletable::testing::TestTable<App> {
    singletable::testing::table::<App>().await.unwrap()
}

fn text(item: &singletable::Item, name: &str) -> String {
    match item.get(name) {
        Some(AttributeValue::S(text)) => text.clone(),
        other => format!("{other:?}"),
    }
}

/// The sentinels in the table, as (value key, owner partition key), and the users' emails by
/// their partition key; asserts every user has its sentinel and every sentinel its user.
async fn check_sentinels(db: &singletable::Db<App>) -> BTreeMap<String, String> {
    let items = common::raw_items(db).await;
    let mut sentinels = BTreeMap::new();
    let mut emails = BTreeMap::new();
    for item in &items {
        match text(item, "_type").as_str() {
            "_unique" => {
                let pk = text(item, "PK");
                if pk.starts_with("_UNIQUE#User#email#") {
                    sentinels.insert(pk, text(item, "owner_pk"));
                }
            }
            "User" => {
                emails.insert(text(item, "PK"), text(item, "email"));
            }
            _ => {}
        }
    }
    let expected: BTreeMap<String, String> = emails
        .iter()
        .map(|(owner, email)| (format!("_UNIQUE#User#email#{email}"), owner.clone()))
        .collect();
    assert_eq!(sentinels, expected, "sentinels and users disagree");
    emails
}

/// Puts `item`, which must be refused for a taken value: the field and value it names.
async fn refused<E: Entity<Table = T>, T: Table>(
    db: &singletable::Db<T>,
    item: &E,
) -> (&'static str, String) {
    match db.put(item).send().await {
        Err(Error::Unique { field, value, .. }) => (field, value),
        other => panic!("expected Error::Unique, got {other:?}"),
    }
}

#[tokio::test]
async fn a_taken_value_is_a_typed_error_and_writes_nothing() {
    let db = table().await;
    db.put(&user("u1", "ana@example.com")).send().await.unwrap();
    let error = db
        .put(&user("u2", "ana@example.com"))
        .send()
        .await
        .unwrap_err();
    match &error {
        Error::Unique {
            entity,
            field,
            value,
            owner_key,
        } => {
            assert_eq!(
                (*entity, *field, value.as_str()),
                ("User", "email", "ana@example.com")
            );
            assert_eq!(
                owner_key.as_ref().map(|key| key.partition.1.as_str()),
                Some("USER#u1")
            );
        }
        other => panic!("expected Error::Unique, got {other:?}"),
    }
    assert!(db
        .get(User::key("u2").unwrap())
        .send()
        .await
        .unwrap_err()
        .is_not_found());
    // Writing the same item again keeps its own value.
    db.put(&user("u1", "ana@example.com")).send().await.unwrap();
    check_sentinels(&db).await;
}

#[tokio::test]
async fn a_changed_value_moves_its_sentinel_and_frees_the_old_one() {
    let db = table().await;
    db.put(&user("u1", "old@example.com")).send().await.unwrap();
    db.put(&user("u1", "new@example.com")).send().await.unwrap();
    // The old value is free again, the new one is taken.
    db.put(&user("u2", "old@example.com")).send().await.unwrap();
    refused(&db, &user("u3", "new@example.com")).await;
    let found = db
        .get_by_unique(User::EMAIL, "new@example.com")
        .await
        .unwrap();
    assert_eq!(found.id, "u1");
    check_sentinels(&db).await;

    // A delete releases the value.
    db.delete(User::key("u1").unwrap()).send().await.unwrap();
    let error = db
        .get_by_unique(User::EMAIL, "new@example.com")
        .await
        .unwrap_err();
    assert!(error.is_not_found(), "{error:?}");
    db.put(&user("u3", "new@example.com")).send().await.unwrap();
    check_sentinels(&db).await;
}

#[tokio::test]
async fn an_optional_value_is_unique_only_when_present() {
    let db = table().await;
    db.put(&user("u1", "a@example.com")).send().await.unwrap();
    db.put(&user("u2", "b@example.com")).send().await.unwrap();
    let with_phone = User {
        phone: Some("+4712345678".into()),
        ..user("u3", "c@example.com")
    };
    db.put(&with_phone).send().await.unwrap();
    let clash = User {
        phone: Some("+4712345678".into()),
        ..user("u4", "d@example.com")
    };
    assert_eq!(refused(&db, &clash).await.0, "phone");
    // Nothing of the failed put was written, not even its free email.
    db.put(&user("u5", "d@example.com")).send().await.unwrap();
}

#[tokio::test]
async fn a_compound_value_is_unique_as_a_whole() {
    let db = table().await;
    let page = |id: &str, tenant: &str, slug: &str| Page {
        id: id.into(),
        tenant: tenant.into(),
        slug: slug.into(),
    };
    db.put(&page("p1", "acme", "pricing")).send().await.unwrap();
    db.put(&page("p2", "globex", "pricing"))
        .send()
        .await
        .unwrap();
    let (field, value) = refused(&db, &page("p3", "acme", "pricing")).await;
    assert_eq!(field, "tenant+slug");
    assert_eq!(value, r#"["acme","pricing"]"#);
}

/// An update that sets a unique value moves its sentinel in the update's own transaction: the
/// old value is released (if still this item's), the new one claimed, or the update refused.
#[tokio::test]
async fn an_update_of_a_unique_value_moves_its_sentinel() {
    let db = table().await;
    db.put(&user("u1", "old@example.com")).send().await.unwrap();
    db.put(&user("u2", "taken@example.com"))
        .send()
        .await
        .unwrap();
    let updated = db
        .update(User::key("u1").unwrap())
        .set(User::EMAIL, "new@example.com")
        .set(User::NAME, "Ana")
        .send()
        .await
        .unwrap();
    assert_eq!(
        (updated.email.as_str(), updated.name.as_str()),
        ("new@example.com", "Ana")
    );
    assert_eq!(
        db.get_by_unique(User::EMAIL, "new@example.com")
            .await
            .unwrap()
            .id,
        "u1"
    );
    // The old value is free again.
    db.put(&user("u3", "old@example.com")).send().await.unwrap();
    check_sentinels(&db).await;

    // A value another item holds refuses the whole update: nothing is written.
    let error = db
        .update(User::key("u1").unwrap())
        .set(User::EMAIL, "taken@example.com")
        .set(User::NAME, "Impostor")
        .send()
        .await
        .unwrap_err();
    match &error {
        Error::Unique {
            field, owner_key, ..
        } => {
            assert_eq!(*field, "email");
            assert_eq!(
                owner_key.as_ref().map(|key| key.partition.1.as_str()),
                Some("USER#u2")
            );
        }
        other => panic!("expected Error::Unique, got {other:?}"),
    }
    let unchanged = db.get(User::key("u1").unwrap()).send().await.unwrap();
    assert_eq!(
        (unchanged.email.as_str(), unchanged.name.as_str()),
        ("new@example.com", "Ana")
    );
    check_sentinels(&db).await;

    // An optional value: set claims it, `None` releases it.
    db.update(User::key("u1").unwrap())
        .set(User::PHONE, Some("+4711111111".to_owned()))
        .send()
        .await
        .unwrap();
    let clash = User {
        phone: Some("+4711111111".into()),
        ..user("u4", "d@example.com")
    };
    assert_eq!(refused(&db, &clash).await.0, "phone");
    let old = db
        .update(User::key("u1").unwrap())
        .set(User::PHONE, None)
        .send_returning_old()
        .await
        .unwrap();
    assert_eq!(old.phone.as_deref(), Some("+4711111111"));
    db.put(&clash).send().await.unwrap();

    // It explains itself as the transaction it sends.
    let explain = db
        .update(User::key("u1").unwrap())
        .set(User::EMAIL, "other@example.com")
        .explain()
        .unwrap();
    assert_eq!(explain.request.operation, "TransactWriteItems");
    assert_eq!(
        explain.request.body["TransactItems"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );

    // An update of an item that is not there is NotFound, and claims nothing.
    let missing = db
        .update(User::key("nobody").unwrap())
        .set(User::EMAIL, "ghost@example.com")
        .send()
        .await
        .unwrap_err();
    assert!(missing.is_not_found(), "{missing:?}");
    db.put(&user("u5", "ghost@example.com"))
        .send()
        .await
        .unwrap();
    check_sentinels(&db).await;
}

#[tokio::test]
async fn an_update_of_part_of_a_compound_value_moves_the_whole_sentinel() {
    let db = table().await;
    let page = |id: &str, tenant: &str, slug: &str| Page {
        id: id.into(),
        tenant: tenant.into(),
        slug: slug.into(),
    };
    db.put(&page("p1", "acme", "pricing")).send().await.unwrap();
    db.put(&page("p2", "acme", "about")).send().await.unwrap();
    db.update(Page::key("p1").unwrap())
        .set(Page::SLUG, "plans")
        .send()
        .await
        .unwrap();
    // ("acme", "pricing") is free, ("acme", "plans") is p1's.
    db.put(&page("p3", "acme", "pricing")).send().await.unwrap();
    let (field, _) = refused(&db, &page("p4", "acme", "plans")).await;
    assert_eq!(field, "tenant+slug");
    let clash = db
        .update(Page::key("p1").unwrap())
        .set(Page::SLUG, "about")
        .send()
        .await
        .unwrap_err();
    assert!(matches!(clash, Error::Unique { .. }), "{clash:?}");
}

/// A transaction the caller assembles cannot keep sentinels, so an update of a unique value
/// (or of the expiry they carry) in one does not compile (tests/ui/unique_update_in_transaction.rs).
/// Its other fields change in one, and a unique value given as the update's assertion too.
#[tokio::test]
async fn other_fields_change_inside_a_hand_built_transaction() {
    let db = table().await;
    db.put(&user("u1", "a@example.com")).send().await.unwrap();
    db.transaction()
        .with(db.update(User::key("u1").unwrap()).set(User::NAME, "Ana"))
        .send()
        .await
        .unwrap();
    let given = db.update(User::key("u1").unwrap());
    let given = given
        .given(User::EMAIL, "a@example.com")
        .set(User::NAME, "Ann");
    db.transaction().with(given).send().await.unwrap();
    let stale = db.update(User::key("u1").unwrap());
    let stale = stale
        .given(User::EMAIL, "b@example.com")
        .set(User::NAME, "Bo");
    let refused = db.transaction().with(stale).send().await.unwrap_err();
    assert!(
        matches!(refused, Error::TransactionCanceled(_)),
        "{refused:?}"
    );
    let stored = db.get(User::key("u1").unwrap()).send().await.unwrap();
    assert_eq!(stored.name, "Ann");
    check_sentinels(&db).await;
}

#[tokio::test]
async fn a_rekey_moves_the_values_with_the_item() {
    let db = table().await;
    let from = user("u1", "ana@example.com");
    db.put(&from).send().await.unwrap();
    let to = User {
        id: "u9".into(),
        ..from.clone()
    };
    db.rekey(&from, &to).send().await.unwrap();
    let found = db
        .get_by_unique(User::EMAIL, "ana@example.com")
        .await
        .unwrap();
    assert_eq!(found.id, "u9");
    refused(&db, &user("u2", "ana@example.com")).await;
    check_sentinels(&db).await;
}

/// 8 writers in flight at once, creating users whose emails overlap: each email ends with
/// exactly one owner, every user has its sentinel and every sentinel its user, and each
/// writer's result agrees with the table.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_writers_leave_one_owner_per_value_and_no_orphans() {
    let db = table().await;
    const WRITERS: usize = 8;
    const USERS_EACH: usize = 4;
    const EMAILS: usize = 6;
    let db = &*db;
    let writers = (0..WRITERS).map(|writer| async move {
        let mut outcomes = Vec::new();
        for n in 0..USERS_EACH {
            let id = format!("w{writer}-{n}");
            let email = format!("e{}@example.com", (writer + n) % EMAILS);
            let result = db.put(&user(&id, &email)).send().await;
            outcomes.push((id, email, result));
        }
        outcomes
    });
    let outcomes: Vec<_> = futures::future::join_all(writers)
        .await
        .into_iter()
        .flatten()
        .collect();
    let emails = check_sentinels(db).await;
    let owners: BTreeSet<&String> = emails.values().collect();
    assert_eq!(
        owners.len(),
        emails.len(),
        "an email has two owners: {emails:?}"
    );
    for (id, email, result) in &outcomes {
        let stored = emails.get(&format!("USER#{id}"));
        match result {
            Ok(()) => assert_eq!(stored, Some(email), "{id} was acknowledged"),
            Err(Error::Unique { .. }) => assert_eq!(stored, None, "{id} was refused"),
            Err(other) => panic!("{id}: unexpected {other:?}"),
        }
    }
    assert_eq!(emails.len(), EMAILS, "every email has its one owner");
}

/// 8 writers in flight at once, each moving its own user's email by update to emails from a
/// pool the others draw from: every email ends with at most one owner and its sentinel, every
/// user's email is the last one its writer was told it got, and refusals name a taken value.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_updates_of_unique_values_keep_one_owner_each() {
    const WRITERS: usize = 8;
    const UPDATES_EACH: usize = 6;
    const EMAILS: usize = 12;
    let table = table().await;
    let db = &*table;
    for writer in 0..WRITERS {
        let email = format!("e{writer}@example.com");
        db.put(&user(&format!("w{writer}"), &email))
            .send()
            .await
            .unwrap();
    }
    let writers = (0..WRITERS).map(|writer| async move {
        let mut rng = fastrand::Rng::with_seed(writer as u64);
        let mut current = format!("e{writer}@example.com");
        let mut moves = 0;
        for _ in 0..UPDATES_EACH {
            let email = format!("e{}@example.com", rng.usize(..EMAILS));
            let sent = db
                .update(User::key(format!("w{writer}")).unwrap())
                .set(User::EMAIL, email.as_str())
                .send()
                .await;
            match sent {
                Ok(updated) => {
                    assert_eq!(updated.email, email);
                    current = email;
                    moves += 1;
                }
                Err(Error::Unique { value, .. }) => assert_eq!(value, email),
                Err(other) => panic!("w{writer}: unexpected {other:?}"),
            }
        }
        (writer, current, moves)
    });
    let outcomes = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        futures::future::join_all(writers),
    )
    .await
    .expect("the race ends within its bound");
    let emails = check_sentinels(db).await;
    let owners: BTreeSet<&String> = emails.values().collect();
    assert_eq!(
        owners.len(),
        emails.len(),
        "an email has two owners: {emails:?}"
    );
    let mut moved = 0;
    for (writer, current, moves) in outcomes {
        assert_eq!(
            emails.get(&format!("USER#w{writer}")),
            Some(&current),
            "w{writer}'s last acknowledged email"
        );
        moved += moves;
    }
    assert!(moved > 0, "no update went through");
}

/// Creates, email changes (by put and by update) and deletes of users with emails from a small
/// pool, through a proxy
/// that fails 8% of requests (throttling, 5xx, timeouts, dropped connections, responses lost
/// after the write): each acknowledged write is in the table, each refused one left it as it
/// was, and afterwards every email has one owner and every sentinel its user.
#[tokio::test]
async fn under_faults_every_value_keeps_one_owner_and_its_sentinel() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    use singletable::OptionalExt;
    use singletable_fault::{self as fault, FaultPlan};
    let plain = table().await;
    let (client, stats) = fault::client(FaultPlan::new(4242, 0.08)).await.unwrap();
    let faulty = singletable::Db::<App>::new(client).with_table_name(plain.table_name());
    let mut rng = fastrand::Rng::with_seed(4242);
    let mut refused = 0;
    let operations: u32 = std::env::var("SINGLETABLE_FAULT_OPS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(300);
    for op in 0..operations {
        let id = format!("u{}", rng.u32(0..12));
        let email = format!("e{}@example.com", rng.u32(0..8));
        let key = || User::key(id.as_str()).unwrap();
        let before = plain
            .get(key())
            .consistent()
            .send()
            .await
            .optional()
            .unwrap();
        let choice = rng.u8(0..5);
        let delete = choice == 0;
        let result = tokio::time::timeout(std::time::Duration::from_secs(60), async {
            match choice {
                0 => faulty.delete(key()).send().await,
                // An update changes the email of an existing user; of a missing one, nothing.
                1 | 2 => match faulty
                    .update(key())
                    .set(User::EMAIL, email.as_str())
                    .send()
                    .await
                {
                    Err(error) if error.is_not_found() && before.is_none() => Ok(()),
                    other => other.map(drop),
                },
                _ => faulty.put(&user(&id, &email)).send().await,
            }
        })
        .await
        .expect("an operation finished within its bound");
        let after = plain
            .get(key())
            .consistent()
            .send()
            .await
            .optional()
            .unwrap();
        // A delete, or an update of a missing user, leaves no user.
        let applied = if delete || (before.is_none() && (1..=2).contains(&choice)) {
            after.is_none()
        } else {
            after.as_ref().map(|user| user.email.as_str()) == Some(email.as_str())
        };
        match result {
            Ok(()) => assert!(applied, "op {op}: acknowledged, but {id} is {after:?}"),
            Err(Error::Unique { .. }) => {
                refused += 1;
                assert_eq!(after, before, "op {op}: refused, but {id} changed");
            }
            // A fault the retries could not hide: the write happened or it did not.
            Err(_) => assert!(applied || after == before, "op {op}: {id} is {after:?}"),
        }
    }
    check_sentinels(&plain).await;
    let report = stats.report();
    assert!(
        report.injected_total() > 0 && report.injected_after_apply() > 0,
        "faults on both sides of the write: {report}"
    );
    assert!(refused > 0, "some writes met a taken email");
}

#[tokio::test]
async fn explain_shows_the_transaction_and_its_doubled_capacity() {
    let db = table().await;
    let explain = db.put(&user("u1", "ana@example.com")).explain().unwrap();
    assert_eq!(explain.request.operation, "TransactWriteItems");
    let items = explain.request.body["TransactItems"].as_array().unwrap();
    // The item and the claim of its email (no phone, so no claim of one).
    assert_eq!(items.len(), 2, "{:#}", explain.request.body);
    assert_eq!(
        explain.estimate.write_units, 4.0,
        "{:?}",
        explain.estimate.lines
    );
}

/// Items written before `email` was unique have no sentinels: the claim sweep writes them,
/// reports the value two items share, and from then on the values are kept.
/// A user as written before its email was unique: no sentinel.
fn raw(id: &str, email: &str) -> singletable::Item {
    singletable::Item::from([
        ("PK".to_owned(), AttributeValue::S(format!("USER#{id}"))),
        ("SK".to_owned(), AttributeValue::S("USER".to_owned())),
        ("_type".to_owned(), AttributeValue::S("User".to_owned())),
        ("_sv".to_owned(), AttributeValue::N("1".to_owned())),
        ("id".to_owned(), AttributeValue::S(id.to_owned())),
        ("email".to_owned(), AttributeValue::S(email.to_owned())),
        ("name".to_owned(), AttributeValue::S(format!("user {id}"))),
    ])
}

#[tokio::test]
async fn the_claim_sweep_covers_existing_items_and_reports_duplicates() {
    let db = table().await;
    for (id, email) in [
        ("u1", "a@example.com"),
        ("u2", "b@example.com"),
        ("u3", "a@example.com"),
    ] {
        singletable::testing::put_raw(&db, raw(id, email))
            .await
            .unwrap();
    }
    let report = db
        .admin()
        .claim_unique_values::<User>()
        .send()
        .await
        .unwrap();
    assert_eq!((report.items, report.claimed), (3, 2), "{report:?}");
    let [duplicate] = report.duplicates.as_slice() else {
        panic!("one duplicate: {report:?}");
    };
    assert_eq!(
        (duplicate.field, duplicate.value.as_str()),
        ("email", "a@example.com")
    );
    let pair: BTreeSet<&str> = [
        duplicate.item.partition.1.as_str(),
        duplicate.holder.as_ref().unwrap().partition.1.as_str(),
    ]
    .into();
    assert_eq!(pair, BTreeSet::from(["USER#u1", "USER#u3"]));
    // Swept again, nothing new is claimed twice and the duplicate is still reported.
    let again = db
        .admin()
        .claim_unique_values::<User>()
        .segments(2)
        .send()
        .await
        .unwrap();
    assert_eq!((again.claimed, again.duplicates.len()), (2, 1), "{again:?}");
    refused(&db, &user("u4", "b@example.com")).await;
}

#[derive(Table)]
#[dynamo(name = "invites", pk = "PK", sk = "SK", ttl = "expires_at")]
struct Invites;

#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Invites, pk = "INVITE#{id}", sk = "INVITE")]
struct Invite {
    id: String,
    #[dynamo(unique)]
    code: String,
    #[dynamo(ttl)]
    expires_at: u64,
}

/// An invite whose code is `WELCOME`, expiring at `expires_at` (epoch seconds).
fn welcome(id: &str, expires_at: u64) -> Invite {
    Invite {
        id: id.into(),
        code: "WELCOME".into(),
        expires_at,
    }
}

fn now_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A table where `WELCOME` was `i1`'s, which expired a minute ago, and is now `i2`'s.
async fn welcome_expired_and_taken_again() -> singletable::testing::TestTable<Invites> {
    let db = singletable::testing::table::<Invites>().await.unwrap();
    let now = now_seconds();
    db.put(&welcome("i1", now - 60)).send().await.unwrap();
    db.put(&welcome("i2", now + 3600)).send().await.unwrap();
    db
}

/// A sentinel expires with its item: the value of an expired item is free again, whether or
/// not the engine has deleted the two yet.
#[tokio::test]
async fn an_expired_items_value_is_free_again() {
    let db = welcome_expired_and_taken_again().await;
    refused(&db, &welcome("i3", now_seconds() + 3600)).await;
    let found = db.get_by_unique(Invite::CODE, "WELCOME").await.unwrap();
    assert_eq!(found.id, "i2");
    // Deleting the expired item (if the engine has not yet) leaves i2's sentinel alone.
    db.delete(Invite::key("i1").unwrap()).send().await.unwrap();
    let found = db.get_by_unique(Invite::CODE, "WELCOME").await.unwrap();
    assert_eq!(found.id, "i2");
}

/// A claim sweep passes over expired items: their values are free already (their sentinels
/// expire with them), so a value another item has taken since is no duplicate, and the
/// operator is not sent to fix data that is not wrong.
#[tokio::test]
async fn a_claim_sweep_passes_over_expired_items() {
    let db = welcome_expired_and_taken_again().await;
    let report = db
        .admin()
        .claim_unique_values::<Invite>()
        .send()
        .await
        .unwrap();
    assert!(report.duplicates.is_empty(), "{report:?}");
    assert_eq!((report.items, report.claimed), (1, 1), "{report:?}");
}

/// The code sentinels in the table, by value: the partition key of the item each names.
async fn invite_codes(db: &singletable::Db<Invites>) -> BTreeMap<String, String> {
    common::raw_items(db)
        .await
        .iter()
        .filter(|item| text(item, "_type") == "_unique")
        .map(|item| (text(item, "value"), text(item, "owner_pk")))
        .collect()
}

/// A write onto the key of an expired item replaces it, whether a put or a rekey: the expired
/// item's values are released with it, so that no sentinel is left naming the new item for a
/// value it does not hold; but not a value another item has taken since. (The writes run an
/// hour ahead of real time, so that the engine's own time to live deletes nothing here.)
#[tokio::test]
async fn a_write_onto_an_expired_items_key_releases_its_values() {
    let table = singletable::testing::table::<Invites>().await.unwrap();
    let later = || std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    let db = table.clone().with_clock(later);
    let (soon, after) = (now_seconds() + 600, now_seconds() + 7200);
    let invite = |id: &str, code: &str, expires_at| Invite {
        id: id.into(),
        code: code.into(),
        expires_at,
    };
    for (id, code) in [("i1", "SPRING"), ("i2", "SUMMER"), ("i3", "DUSK")] {
        table.put(&invite(id, code, soon)).send().await.unwrap();
    }
    let moving = invite("i4", "AUTUMN", after);
    db.put(&moving).send().await.unwrap();
    // A put over expired i1.
    db.put(&invite("i1", "WINTER", after)).send().await.unwrap();
    // A rekey onto expired i2; then onto expired i3, whose value i5 has taken since.
    let moved = invite("i2", "AUTUMN", after);
    db.rekey(&moving, &moved).send().await.unwrap();
    let taker = invite("i5", "DUSK", after);
    db.put(&taker).send().await.unwrap();
    let moved_again = invite("i3", "AUTUMN", after);
    db.rekey(&moved, &moved_again).send().await.unwrap();
    let expected = [
        ("WINTER", "INVITE#i1"),
        ("AUTUMN", "INVITE#i3"),
        ("DUSK", "INVITE#i5"),
    ];
    let expected = expected.map(|(code, owner)| (code.to_owned(), owner.to_owned()));
    assert_eq!(invite_codes(&db).await, BTreeMap::from(expected));
    let found = db.get_by_unique(Invite::CODE, "AUTUMN").await;
    assert_eq!(found.unwrap(), moved_again);
    assert_eq!(db.get_by_unique(Invite::CODE, "DUSK").await.unwrap(), taker);
}

/// An update of a unique value where there is no item fails as every update does there, with
/// `NotFound`, whatever the value, and writes nothing: not with `Unique` for a value another
/// item holds, which would send the caller to change a value when the item is what is missing.
/// An expired item is absent to it, as to every write.
#[tokio::test]
async fn an_update_of_a_missing_item_is_not_found_whatever_its_value() {
    let db = table().await;
    db.put(&user("u1", "ana@example.com")).send().await.unwrap();
    for email in ["ana@example.com", "free@example.com"] {
        let update = db.update(User::key("u2").unwrap());
        let sent = update.set(User::EMAIL, email.to_owned()).send().await;
        assert!(
            matches!(sent, Err(Error::NotFound { .. })),
            "{email}: {sent:?}"
        );
    }
    check_sentinels(&db).await;
    let invites = welcome_expired_and_taken_again().await;
    let update = invites.update(Invite::key("i1").unwrap());
    let sent = update.set(Invite::CODE, "WELCOME".to_owned()).send().await;
    assert!(matches!(sent, Err(Error::NotFound { .. })), "{sent:?}");
}

/// `count` users written before their email was unique.
async fn raw_users(db: &singletable::Db<App>, count: u32) {
    for n in 0..count {
        let user = raw(&format!("u{n}"), &format!("e{n}@example.com"));
        singletable::testing::put_raw(db, user).await.unwrap();
    }
}

/// A claim sweep with a rate claims no faster than it, and holds it when nothing throttles:
/// 40 claims at 50 a second cannot end sooner than the 39 intervals after the first.
#[tokio::test]
async fn a_claim_sweep_holds_its_rate() {
    let db = table().await;
    raw_users(&db, 40).await;
    let started = std::time::Instant::now();
    let sweep = db.admin().claim_unique_values::<User>();
    let report = sweep.rate(singletable::Rate::ItemsPerSecond(50.0)).send();
    let report = report.await.unwrap();
    let elapsed = started.elapsed().as_secs_f64();
    assert_eq!(
        (report.claimed, report.rate),
        (40, Some(50.0)),
        "{report:?}"
    );
    assert!(elapsed >= 39.0 / 50.0 * 0.95, "40 claims in {elapsed:.2} s");
    check_sentinels(&db).await;
}

/// A claim sweep at 1,000 claims a second in `segments` segments, over `users` users written
/// before their email was unique, through the fault proxy with `plan`: its report and the
/// faults injected, once the sentinels are checked.
async fn claim_through_faults(
    users: u32,
    segments: u32,
    plan: singletable_fault::FaultPlan,
) -> (singletable::unique::ClaimReport, u64) {
    let db = table().await;
    raw_users(&db, users).await;
    let (client, stats) = singletable_fault::client(plan).await.unwrap();
    let faulty = singletable::Db::<App>::new(client).with_table_name(db.table_name());
    let sweep = faulty
        .admin()
        .claim_unique_values::<User>()
        .segments(segments);
    let report = sweep.rate(singletable::Rate::ItemsPerSecond(1000.0)).send();
    let report = report.await.unwrap();
    check_sentinels(&db).await;
    (report, stats.report().injected_total())
}

/// Claims refused for throughput (or in conflict) with the SDK's retries off: the sweep halves
/// its rate at each throttle, sends the claim again, and claims every value once.
#[tokio::test]
async fn a_throttled_claim_sweep_lowers_its_rate_and_claims_every_value() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    use singletable_fault::{Fault, FaultKind, FaultPlan};
    let plan = FaultPlan::new(5, 0.3)
        .with_kinds([
            Fault::before(FaultKind::ProvisionedThroughputExceeded),
            Fault::before(FaultKind::TransactionConflict),
        ])
        .without_sdk_retries();
    let (report, injected) = claim_through_faults(40, 2, plan).await;
    assert!(injected > 0, "no fault was injected");
    assert_eq!((report.items, report.claimed), (40, 40), "{report:?}");
    let rate = report.rate.unwrap();
    assert!(rate < 1000.0, "the rate was not lowered: {rate}");
}

/// Scan pages refused for throughput lower a claim sweep's rate as its throttled claims do
/// (and as a backfill sweep's throttled pages lower its rate): the table is short of capacity
/// whichever request met it. Only the scans are throttled here, one per segment and each
/// refused or not as the plan's seeded draws say.
#[tokio::test]
async fn a_claim_sweep_whose_scans_are_throttled_lowers_its_rate() {
    if common::skips(Needs::FaultProxy) {
        return;
    }
    use singletable_fault::{Fault, FaultKind, FaultPlan};
    let plan = FaultPlan::new(3, 0.5)
        .with_kinds([Fault::before(FaultKind::ProvisionedThroughputExceeded)])
        .only_operations(["Scan"])
        .without_sdk_retries();
    let (report, injected) = claim_through_faults(30, 4, plan).await;
    assert!(injected > 0, "no scan was refused");
    assert_eq!((report.items, report.claimed), (30, 30), "{report:?}");
    let rate = report.rate.unwrap();
    let lowered = format!("{injected} refused scans did not lower the rate: {rate}");
    assert!(rate < 1000.0, "{lowered}");
}

#[cfg(feature = "cli")]
mod cli {
    use super::*;
    use singletable::cli::{Entities, EXIT_FAILURE, EXIT_OK, EXIT_USAGE};

    /// An entity without unique values.
    #[derive(Entity, Serialize, Deserialize)]
    #[dynamo(table = App, pk = "NOTE#{id}", sk = "NOTE")]
    struct Note {
        id: String,
    }

    async fn run(db: &singletable::Db<App>, args: &[&str]) -> (u8, String, String) {
        let entities = Entities::new().with::<User>().with::<Note>();
        common::run_cli(db, entities, "migrate", args).await
    }

    /// `claim` covers the users written before their email was unique, exits 1 while two
    /// share one (naming both), and 0 once that is fixed; an entity without unique values is a
    /// usage error.
    #[tokio::test]
    async fn the_command_line_claims_unique_values_and_reports_shared_ones() {
        let db = table().await;
        raw_users(&db, 3).await;
        singletable::testing::put_raw(&db, raw("u9", "e0@example.com"))
            .await
            .unwrap();
        // The shared value and the keys are customer data: hidden unless asked for.
        let (code, out, err) = run(&db, &["claim", "--entity", "user"]).await;
        assert_eq!(code, EXIT_FAILURE, "{out}{err}");
        assert!(
            out.contains("email ‹hidden›: claimed for PK = ‹hidden›"),
            "{out}"
        );
        assert!(
            !out.contains("e0@example.com") && !out.contains("USER#"),
            "{out}"
        );
        let args = [
            "--json",
            "--show-values",
            "claim",
            "--entity",
            "user",
            "--rate",
            "100",
        ];
        let (code, out, err) = run(&db, &args).await;
        assert_eq!(code, EXIT_FAILURE, "{out}{err}");
        let report: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(report["items"], 4, "{report}");
        assert_eq!(report["claimed"], 3, "{report}");
        assert_eq!(report["rate"], 100.0, "{report}");
        let shared = &report["duplicates"][0];
        assert_eq!(shared["value"], "e0@example.com", "{report}");
        let holders = [&shared["holder"], &shared["item"]].map(|key| key.to_string());
        assert!(
            holders.iter().any(|key| key.contains("USER#u9")),
            "{report}"
        );
        // Fixed: u9 takes another email, with its sentinel; claimed again, nothing is shared.
        let mut fixed = user("u9", "e9@example.com");
        fixed.name = "user u9".into();
        db.put(&fixed).send().await.unwrap();
        let (code, out, err) = run(&db, &["claim", "--entity", "User"]).await;
        assert_eq!(code, EXIT_OK, "{out}{err}");
        assert!(out.contains("claimed 4 values of 4 items"), "{out}");
        assert!(out.contains("no value is shared"), "{out}");
        check_sentinels(&db).await;
        let (code, _, err) = run(&db, &["claim", "--entity", "Note"]).await;
        assert_eq!(code, EXIT_USAGE, "{err}");
        assert!(err.contains("Note has no unique values to claim"), "{err}");
    }
}

/// A unique value too long for its sentinel's key (`_UNIQUE#User#email#<value>`, over
/// DynamoDB's 2,048 bytes for a partition key, which DynamoDB rejects and some engines take)
/// is refused before anything is sent, naming the field, and a lookup of it finds nothing:
/// no item can have claimed it.
#[tokio::test]
async fn a_unique_value_too_long_for_its_sentinel_is_refused_before_sending() {
    let db = table().await;
    let long = format!("{}@example.com", "a".repeat(2_100));
    let error = db.put(&user("u1", &long)).send().await.unwrap_err();
    match &error {
        Error::Limit(singletable::LimitError::UniqueValueSize {
            entity,
            field,
            size,
            max,
        }) => {
            assert_eq!((*entity, *field), ("User", "email"));
            assert_eq!(*size, long.len());
            assert_eq!(*max, 2_048 - "_UNIQUE#User#email#".len());
        }
        other => panic!("expected Error::Limit(UniqueValueSize), got {other:?}"),
    }
    assert!(db
        .get(User::key("u1").unwrap())
        .send()
        .await
        .unwrap_err()
        .is_not_found());
    // The longest value that fits is taken.
    let longest = "b".repeat(2_048 - "_UNIQUE#User#email#".len());
    db.put(&user("u2", &longest)).send().await.unwrap();
    assert_eq!(
        db.get_by_unique(User::EMAIL, &longest).await.unwrap().id,
        "u2"
    );
    // An update to a value too long, likewise.
    let error = db
        .update(User::key("u2").unwrap())
        .set(User::EMAIL, long.clone())
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::Limit(singletable::LimitError::UniqueValueSize { .. })
        ),
        "{error:?}"
    );
    assert!(db
        .get_by_unique(User::EMAIL, &long)
        .await
        .unwrap_err()
        .is_not_found());
    check_sentinels(&db).await;
    // An item written before the field was unique: the claim sweep stops at it, and says why.
    singletable::testing::put_raw(&db, raw("u3", &long))
        .await
        .unwrap();
    let swept = db.admin().claim_unique_values::<User>().send().await;
    assert!(
        matches!(
            swept,
            Err(Error::Limit(singletable::LimitError::UniqueValueSize {
                field: "email",
                ..
            }))
        ),
        "{swept:?}"
    );
    // Given a value that fits, that item is written: the long value never had a sentinel, so
    // there is none to release (a delete at a key that long, DynamoDB would refuse).
    db.put(&user("u3", "c@example.com")).send().await.unwrap();
    assert_eq!(
        db.get_by_unique(User::EMAIL, "c@example.com")
            .await
            .unwrap()
            .id,
        "u3"
    );
    check_sentinels(&db).await;
}

/// A lookup right after the write that claimed the value, while the table's eventually
/// consistent reads lag: the default lookup may not find it yet (DynamoDB's documented
/// behaviour), a consistent one does.
#[tokio::test]
async fn a_consistent_lookup_finds_a_value_claimed_just_before() {
    use singletable_fault::{FaultPlan, IndexLag};
    if common::skips(Needs::FaultProxy) {
        return;
    }
    let lag = std::time::Duration::from_millis(600);
    let plan = FaultPlan::new(9, 0.0).with_index_lag(IndexLag::new(lag, lag));
    let (client, stats) = singletable_fault::client(plan).await.unwrap();
    let table = table().await;
    let db = singletable::Db::<App>::new(client).with_table_name(table.table_name());
    // Copies the table to the lagging replica before the write.
    assert!(db.scan::<User>().all().await.unwrap().is_empty());
    let ana = user("u1", "ana@example.com");
    db.put(&ana).send().await.unwrap();
    let written = std::time::Instant::now();
    let found = db
        .get_by_unique(User::EMAIL, "ana@example.com")
        .consistent()
        .await;
    let eventually = db.get_by_unique(User::EMAIL, "ana@example.com").await;
    if written.elapsed() < lag {
        assert!(
            matches!(eventually, Err(Error::NotFound { .. })),
            "{eventually:?}"
        );
    }
    assert_eq!(found.unwrap(), ana);
    stats.caught_up().await;
    assert_eq!(
        db.get_by_unique(User::EMAIL, "ana@example.com")
            .await
            .unwrap(),
        ana
    );
}
