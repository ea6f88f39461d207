use serde::{Deserialize, Serialize};
use singletable::{Entity, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK", gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
pub struct App;

// One shard is no spread, and each shard costs a request per query.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "TICKET#{id}", sk = "TICKET", gsi1pk = "TEAM#{team}#{shard(id, 1)}", gsi1sk = "T#{id}")]
pub struct Ticket {
    pub team: u32,
    pub id: String,
}

fn main() {}
