// A key names each attribute once: a sort key attribute that is the partition key's, on the
// table or an index, or an attribute listed twice in a multi-attribute key, would make one
// template write over the other (and DynamoDB's CreateTable refuses it). One error each, at
// the second name.
use singletable::Table;

#[derive(Table)]
#[dynamo(name = "same", pk = "PK", sk = "PK")]
pub struct Same;

#[derive(Table)]
#[dynamo(name = "indexes", pk = "PK", sk = "SK",
         gsi1(name = "GSI1", pk = "G", sk = "G"),
         gsi2(name = "GSI2", pk = ["tenant", "tenant"]),
         gsi3(name = "GSI3", pk = ["tenant", "region"], sk = ["day", "region"]),
         lsi1(name = "LSI1", sk = "PK"))]
pub struct Indexes;

fn main() {}
