//! The derives on every awkward shape a user can write, in the spirit of serde's `test_gen.rs`:
//! names that generated code also uses, raw identifiers, nested modules, a module without the
//! prelude, and user types named like the standard library's. Compiling is the test; the few
//! runtime checks confirm that the names resolve to what they should.

#![allow(dead_code, non_camel_case_types)]

mod common;
use common::Needs;

use serde::{Deserialize, Serialize};
use singletable::{Collection, Entity, KeyPart, Table};

#[derive(Table)]
#[dynamo(
    name = "hygiene",
    pk = "PK",
    sk = "SK",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
pub struct App;

/// Entities named like the generic parameters and traits generated code uses (the traits'
/// own names are out of scope here, so the entities can take them).
pub mod named_like_generated_names {
    use serde::{Deserialize, Serialize};

    macro_rules! entity_named {
        ($($name:ident => $prefix:literal),* $(,)?) => {$(
            #[derive(singletable::Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
            #[dynamo(table = crate::App, pk = $prefix, sk = "{id}", gsi1pk = $prefix, gsi1sk = "{id}")]
            pub struct $name {
                pub id: String,
                pub count: u32,
            }
        )*};
    }

    entity_named! {
        T => "T", P => "P", S => "S", E => "E", M => "M", F => "F", I => "I", D => "D",
        Key => "KEY", Table => "TABLE", Entity => "ENTITY", Field => "FIELD", Db => "DB",
        Item => "ITEM", Error => "ERROR",
    }
}

use named_like_generated_names::T;

#[derive(KeyPart, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Plain,
    Fancy,
}

/// Fields named like every generated item.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = App, pk = "NAMES#{key}", sk = "{partition}#{r#type}",
         gsi1pk = "NAMES#{table}", gsi1sk = "{gsi1}")]
pub struct Names {
    pub key: String,
    pub schema: u32,
    pub partition: u32,
    pub table: String,
    pub gsi1: String,
    pub version: u64,
    pub primary_key: String,
    pub r#type: Kind,
    pub update_state: u32,
}

pub mod nested {
    pub mod deeper {
        use serde::{Deserialize, Serialize};

        #[derive(singletable::Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
        #[dynamo(table = crate::App, pk = "NESTED#{id}", sk = "NESTED")]
        pub(crate) struct Nested {
            pub(crate) id: String,
        }
    }
}

/// User types named like the standard library's, in scope where the derives expand.
mod shadowed {
    #![allow(clippy::all)]
    use serde::{Deserialize, Serialize};

    pub struct Option;
    pub struct Result;
    pub struct String;
    pub struct Vec;
    pub struct Box;
    pub struct Some;
    pub struct None;
    pub struct Ok;
    pub struct Err;

    #[derive(singletable::Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
    #[dynamo(table = crate::App, pk = "SHADOWED#{id}", sk = "SHADOWED")]
    pub struct Shadowed {
        pub id: std::string::String,
        pub tags: std::vec::Vec<std::string::String>,
        pub note: std::option::Option<std::string::String>,
    }
}

/// Without the prelude. The `Entity` derive is left out: its compile-time explanations are
/// `#[diagnostic::on_unimplemented]` traits, and rustc resolves the `diagnostic` namespace
/// through the tool prelude, which `#[no_implicit_prelude]` removes (an error no derive can
/// avoid on stable); its entities are declared outside and used here.
#[no_implicit_prelude]
mod without_prelude {
    #[derive(::singletable::Table)]
    #[dynamo(name = "bare", pk = "PK", sk = "SK")]
    pub struct Bare;

    #[derive(
        ::singletable::KeyPart,
        ::serde::Serialize,
        ::serde::Deserialize,
        ::std::clone::Clone,
        ::std::marker::Copy,
        ::std::fmt::Debug,
        ::std::cmp::PartialEq,
    )]
    pub enum Tone {
        Low,
        High,
    }

    #[derive(::singletable::Collection, ::std::fmt::Debug)]
    pub enum Everything {
        Names(super::Names),
        T(super::T),
    }
}

#[derive(Collection, Debug)]
pub enum Mixed {
    Names(Names),
    T(T),
}

#[singletable::test]
async fn the_names_resolve_to_what_they_should(db: singletable::Db<App>) {
    if common::skips(Needs::IndexReadAfterWrite) {
        return;
    }
    // The entity schema, under a name no field path shadows (`Names::SCHEMA` is the path of
    // the field `schema`).
    assert_eq!(singletable::schema_of::<Names>().name, "Names");
    assert_eq!(Names::SCHEMA.name(), "schema");
    let names = Names {
        key: "k".into(),
        schema: 1,
        partition: 2,
        table: "t".into(),
        gsi1: "g".into(),
        version: 3,
        primary_key: "p".into(),
        r#type: Kind::Fancy,
        update_state: 4,
    };
    db.put(&names).send().await.unwrap();
    let key = Names::key("k", 2u32, Kind::Fancy).unwrap();
    assert_eq!(key.sort(), Some("0000000002#fancy"));
    let read = db
        .update(key)
        .set(Names::SCHEMA, 9)
        .set(Names::VERSION, 4)
        .send()
        .await
        .unwrap();
    assert_eq!((read.schema, read.version), (9, 4));
    let by_index = db.query(Names::gsi1("t")).all().await.unwrap();
    assert_eq!(by_index.len(), 1);

    let t = T {
        id: "1".into(),
        count: 1,
    };
    db.put(&t).send().await.unwrap();
    let updated = db
        .update(T::key("1").unwrap())
        .add(T::COUNT, 2)
        .send()
        .await
        .unwrap();
    assert_eq!(updated.count, 3);
    let listed = db
        .query(T::gsi1())
        .sort(T::ID, "1".to_owned())
        .all()
        .await
        .unwrap();
    assert_eq!(listed, [updated]);
}
