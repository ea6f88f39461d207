use serde::{Deserialize, Serialize};
use singletable::{Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK", gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
pub struct App;

// A shard part belongs in a partition key: in a sort key it only scatters one partition's
// order. The query written against the entity reports nothing more.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "TEAM#{team}", sk = "TICKET#{shard(id, 8)}#{id}")]
pub struct Ticket {
    pub team: u32,
    pub id: String,
}

async fn list(db: &singletable::Db<App>) -> Result<Vec<Ticket>, singletable::Error> {
    db.query(Ticket::partition(7u32)).all().await
}

fn main() {
    let _ = list;
}
