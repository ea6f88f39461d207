use singletable::Table;

#[derive(Table)]
#[dynamo(name = "flat", pk = "PK", lsi1(name = "LSI1", pk = "LSI1PK"), gsi21(name = "GSI21", pk = "G"), gsi2(name = "GSI2"))]
pub struct Flat;

fn main() {}
