use singletable::Table;

// DynamoDB's names for tables and indexes: 3 to 255 characters of letters, digits, `_`, `-`, `.`.
#[derive(Table)]
#[dynamo(name = "ab", pk = "PK", sk = "SK")]
pub struct TooShort;

#[derive(Table)]
#[dynamo(name = "app", pk = "PK", sk = "SK", gsi1(name = "by team", pk = "GSI1PK", sk = "GSI1SK"))]
pub struct SpaceInIndex;

// Allowed: each character class, at the shortest.
#[derive(Table)]
#[dynamo(name = "a.b", pk = "PK", sk = "SK", gsi1(name = "G_1-x.y", pk = "GSI1PK", sk = "GSI1SK"))]
pub struct Fine;

fn main() {}
