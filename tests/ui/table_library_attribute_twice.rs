use singletable::Table;

// The library writes the entity attribute, the schema version attribute and the TTL attribute
// into items beside their keys: each needs an attribute of its own.

#[derive(Table)]
#[dynamo(name = "t_a", pk = "PK", sk = "SK", entity_attribute = "SK")]
struct EntityOnSortKey;

#[derive(Table)]
#[dynamo(name = "t_b", pk = "PK", sk = "SK", schema_version_attribute = "PK")]
struct VersionOnPartitionKey;

// The schema version attribute is `_sv` unless given.
#[derive(Table)]
#[dynamo(name = "t_c", pk = "PK", sk = "SK", entity_attribute = "_sv")]
struct EntityOnDefaultVersion;

// The entity attribute is `_type` unless given.
#[derive(Table)]
#[dynamo(name = "t_d", pk = "_type", sk = "SK")]
struct KeyOnDefaultEntity;

#[derive(Table)]
#[dynamo(name = "t_e", pk = "PK", sk = "SK", ttl = "_type")]
struct ExpiryOnDefaultEntity;

#[derive(Table)]
#[dynamo(name = "t_f", pk = "PK", sk = "SK", schema_version_attribute = "")]
struct EmptyVersion;

// DynamoDB's time to live reads a number, which a key attribute is not always.
#[derive(Table)]
#[dynamo(name = "t_g", pk = "PK", sk = "SK", ttl = "SK")]
struct ExpiryOnSortKey;

fn main() {}
