//! The seed's help-desk tickets, end to end on the local engine (or the endpoint in
//! `AWS_ENDPOINT_URL_DYNAMODB`): each request is printed before it is sent.
//!
//! Run with `cargo run --example tickets`. With the `cli` feature and arguments, it is the
//! table's command line instead (`singletable::cli`): `cargo run --example tickets --features
//! cli -- workbench --samples examples/tickets.samples.json` prints the table as a NoSQL
//! Workbench model (docs/workbench.md).

use serde::{Deserialize, Serialize};
use singletable::{Entity, KeyPart, OptionalExt, Table};

#[derive(Table)]
#[dynamo(
    name = "tickets-example",
    pk = "PK",
    sk = "SK",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
pub struct App;

#[derive(KeyPart, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Open,
    Pending,
    Closed,
}

/// Status is volatile, so it lives on the GSI sort key, never in the primary key; the GSI is
/// sparse: closed tickets leave the team's queue.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "TICKET#{id}", sk = "TICKET",
         gsi1pk = "TEAM#{team_id}", gsi1sk = "STATUS#{status}#TICKET#{id}",
         gsi1_when = Ticket::is_open(status))]
pub struct Ticket {
    pub id: String,
    pub team_id: u32,
    pub status: Status,
    pub title: String,
}

impl Ticket {
    fn is_open(status: &Status) -> bool {
        *status != Status::Closed
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    #[cfg(feature = "cli")]
    if std::env::args().len() > 1 {
        let db = singletable::Db::<App>::new(singletable::local::client().await?);
        let entities = singletable::cli::Entities::new().with::<Ticket>();
        let code = singletable::cli::run_with(
            db,
            entities,
            std::env::args_os(),
            Box::new(std::io::stdout()),
            Box::new(std::io::stderr()),
            false,
        )
        .await;
        std::process::exit(code.into());
    }
    println!(
        "engine: {}",
        singletable::local::endpoint_description().await?
    );
    let db = singletable::Db::<App>::new(singletable::local::client().await?);
    println!("\n{}", db.admin().create_table().params()?);
    let created = db.admin().ensure_table().await?;
    println!(
        "=> table {} {}",
        db.table_name(),
        if created { "created" } else { "already there" }
    );

    let ticket = Ticket {
        id: "8842".into(),
        team_id: 7,
        status: Status::Open,
        title: "Printer on fire".into(),
    };
    let put = db.put(&ticket);
    println!("\n{}", put.params()?);
    put.send().await?;
    println!("=> stored");

    let get = db.get(Ticket::key("8842")?).consistent();
    println!("\n{}", get.params()?);
    let read = get.send().await?;
    println!("=> {read:?}");

    // Status lives on the GSI sort key: changing it is one UpdateItem that also rewrites
    // GSI1SK, so the team's queue re-sorts. The team is supplied (and asserted) because
    // GSI1PK is recomputed too; leaving it out would not compile.
    let pending = db
        .update(Ticket::key("8842")?)
        .set(Ticket::STATUS, Status::Pending)
        .given(Ticket::TEAM_ID, 7);
    println!("\n{}", pending.params()?);
    println!("=> {:?}", pending.send().await?);

    // Closing takes the ticket out of the sparse queue: GSI1PK/GSI1SK are REMOVEd.
    let close = db
        .update(Ticket::key("8842")?)
        .set(Ticket::STATUS, Status::Closed)
        .given(Ticket::TEAM_ID, 7);
    println!("\n{}", close.params()?);
    println!("=> {:?}", close.send().await?);

    // The key attribute cannot be updated in place; this does not compile:
    //
    //     db.update(Ticket::key("8842")?).set(Ticket::ID, "8843".to_owned());
    //
    // error[E0277]: `id` is part of the primary key of `Ticket` (pk = "TICKET#{id}");
    //               keys cannot change in place

    let duplicate = db.put(&ticket).only_if_absent();
    println!("\n{}", duplicate.params()?);
    match duplicate.send().await {
        Err(error) if error.is_condition_failed() => println!("=> refused: {error}"),
        other => println!("=> unexpected: {other:?}"),
    }

    let delete = db.delete(Ticket::key("8842")?).only_if_exists();
    println!("\n{}", delete.params()?);
    delete.send().await?;
    println!("=> deleted");

    let gone = db.get(Ticket::key("8842")?).send().await.optional()?;
    println!("\n=> after delete: {gone:?}");
    Ok(())
}
