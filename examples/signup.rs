//! User signup with a unique email, on the local engine (or the endpoint in
//! `AWS_ENDPOINT_URL_DYNAMODB`): each write is printed with its cost before it is sent. A
//! team's members are listed through a `KEYS_ONLY` index and read whole by key.
//!
//! Run with `cargo run --example signup`.

use serde::{Deserialize, Serialize};
use singletable::{Db, Entity, Error, Table};

#[derive(Table)]
#[dynamo(
    name = "signup-example",
    pk = "PK",
    sk = "SK",
    gsi1(
        name = "ByTeam",
        pk = "GSI1PK",
        sk = "GSI1SK",
        projection = "keys_only"
    )
)]
pub struct App;

/// Emails are stored lower-cased, so that `Ana@Example.com` and `ana@example.com` collide.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "USER#{id}", sk = "USER",
         gsi1pk = "TEAM#{team}", gsi1sk = "USER#{id}")]
pub struct User {
    pub id: String,
    #[dynamo(unique)]
    pub email: String,
    pub name: String,
    pub team: String,
}

impl User {
    fn new(id: &str, email: &str, name: &str) -> User {
        User {
            id: id.into(),
            email: email.to_lowercase(),
            name: name.into(),
            team: "core".into(),
        }
    }
}

/// Signs a user up: `Ok(false)` when the email is taken.
async fn sign_up(db: &Db<App>, user: &User) -> Result<bool, Error> {
    let put = db.put(user).only_if_absent();
    let explain = put.explain()?;
    println!(
        // Ids only: an example that prints e-mails teaches logs to hold them.
        "sign up {}: {} with {} writes, {} WCU",
        user.id,
        explain.request.operation,
        explain.request.body["TransactItems"]
            .as_array()
            .map_or(1, Vec::len),
        explain.estimate.write_units
    );
    match put.send().await {
        Ok(()) => Ok(true),
        // The error's text hides the value and the owner's key (`error::show_values` shows
        // them); its fields hold both.
        Err(error @ Error::Unique { .. }) => {
            println!("  refused: {error}");
            Ok(false)
        }
        Err(error) => Err(error),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = singletable::local::client().await?;
    let db =
        Db::<App>::new(client).with_table_name(format!("signup-example-{}", std::process::id()));
    db.admin().ensure_table().await?;

    let ana = User::new("u1", "Ana@Example.com", "Ana");
    assert!(sign_up(&db, &ana).await?);
    // Another account with the same email, spelled otherwise, is refused.
    assert!(!sign_up(&db, &User::new("u2", "ana@example.com", "Impostor")).await?);

    // Strongly consistent: the sign-up just completed (an eventually consistent lookup may
    // not see it yet).
    let found = db
        .get_by_unique(User::EMAIL, "ana@example.com")
        .consistent()
        .await?;
    println!("found by email: {}", found.id);

    // Changing the email moves its sentinel in the same transaction: the old one is free.
    db.put(&User::new("u1", "ana@new.example.com", "Ana"))
        .send()
        .await?;
    assert!(sign_up(&db, &User::new("u3", "ana@example.com", "Another Ana")).await?);
    println!("u1's old email was freed and taken by u3");

    // Deleting the account frees its email too.
    db.delete(User::key("u1")?).send().await?;
    assert!(sign_up(&db, &User::new("u4", "ana@new.example.com", "Ana again")).await?);
    println!("every email has exactly one account");

    // The team index holds keys only, and its reads are hydrated by key. A global index is
    // eventually consistent: right after these sign-ups it may not list them all yet.
    // `explain` says what that trade costs: for users this small, KEYS_ONLY saves no write
    // unit and costs a read per member, so ALL would be the better choice; it pays off for
    // large items.
    let members = db.query(User::gsi1("core")).hydrate();
    let listed = members.all().await?;
    let ids: Vec<&str> = listed.items.iter().map(|user| user.id.as_str()).collect();
    println!("team core, through ByTeam (KEYS_ONLY) and BatchGetItem: {ids:?}");
    if let Some(member) = listed.items.first() {
        let cost = members.explain(member, 1000)?;
        println!(
            "1000 members: {} RCU to list and hydrate, {} through an ALL index; each write of \
             a user costs the index {} WCU, {} with ALL",
            cost.lean.read_units, cost.all.read_units, cost.lean.write_units, cost.all.write_units
        );
    }
    Ok(())
}
