// An index rule takes each field it names by reference, in the order named, and returns `bool`.
// A rule with another signature is one error, at the rule, saying which signature it needs.
use serde::{Deserialize, Serialize};
use singletable::{Entity, KeyPart, Table};

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK", gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"))]
pub struct App;

#[derive(KeyPart, Serialize, Deserialize, Clone, Copy, PartialEq)]
pub enum Status {
    Open,
    Closed,
}

// The field by value.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "TICKET#{id}", sk = "TICKET", gsi1pk = "TEAM#{team}", gsi1sk = "TICKET#{id}", gsi1_when = Ticket::is_open(status))]
pub struct Ticket {
    pub id: String,
    pub team: String,
    pub status: Status,
}

impl Ticket {
    fn is_open(status: Status) -> bool {
        status == Status::Open
    }
}

// Not a `bool`.
#[derive(Entity, Serialize, Deserialize)]
#[dynamo(table = App, pk = "TASK#{id}", sk = "TASK", gsi1pk = "TEAM#{team}", gsi1sk = "TASK#{id}", gsi1_when = Task::listed(status, team))]
pub struct Task {
    pub id: String,
    pub team: String,
    pub status: Status,
}

impl Task {
    fn listed(status: &Status, team: &String) -> Option<bool> {
        Some(*status == Status::Open && !team.is_empty())
    }
}

fn main() {}
