// DynamoDB names each index of a table once: a second index under a name already taken, given
// or by default (the slot in capitals), is one error at that index.
use singletable::Table;

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK",
         gsi1(name = "ByTeam", pk = "GSI1PK", sk = "GSI1SK"),
         gsi2(name = "ByTeam", pk = "GSI2PK", sk = "GSI2SK"),
         gsi3(name = "GSI4", pk = "GSI3PK", sk = "GSI3SK"),
         gsi4(pk = "GSI4PK", sk = "GSI4SK"))]
pub struct App;

fn main() {}
