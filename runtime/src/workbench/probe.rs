//! An entity's attribute types as its `Deserialize` asks for them, for attributes no sample
//! item holds: each field is read alone from a deserializer that notes the first thing the
//! field's type asks for (a string, a number, a sequence, a map, ..) and stops it there. A
//! type that asks for anything (`deserialize_any`: untagged enums, JSON values, some `with`
//! modules) has no type this way, and is left to sample items.

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use std::cell::Cell;

/// The DynamoDB type (`S`, `N`, `B`, `BOOL`, `NULL`, `L`, `M`) each attribute of `E` reads
/// as, by attribute name, for the fields whose type says so.
pub(super) fn attribute_types<E: DeserializeOwned>() -> Vec<(&'static str, &'static str)> {
    let Some(names) = field_names::<E>() else {
        return Vec::new();
    };
    names
        .iter()
        .filter_map(|&name| {
            let asked = Cell::new(None);
            // Fails by design once the field's type has asked: only the question is kept.
            let _ = E::deserialize(Struct {
                field: Some(name),
                asked: &asked,
            });
            asked.get().map(|kind| (name, kind))
        })
        .collect()
}

/// The attribute names `E`'s `Deserialize` reads (after serde's renames), if it reads a
/// struct.
fn field_names<E: DeserializeOwned>() -> Option<&'static [&'static str]> {
    let names = Cell::new(None);
    let _ = E::deserialize(Names { names: &names });
    names.get()
}

/// The error every probe ends with.
#[derive(Debug)]
struct Stop;

impl std::fmt::Display for Stop {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("probe")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Stop
    }
}

/// Notes the field names a struct's `Deserialize` passes.
struct Names<'a> {
    names: &'a Cell<Option<&'static [&'static str]>>,
}

impl<'de> de::Deserializer<'de> for Names<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        self.names.set(Some(fields));
        Err(Stop)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// A struct of one field, `field`, whose value notes what its type asks for.
struct Struct<'a> {
    field: Option<&'static str>,
    asked: &'a Cell<Option<&'static str>>,
}

impl<'de> de::Deserializer<'de> for Struct<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_map(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

impl<'de> MapAccess<'de> for Struct<'_> {
    type Error = Stop;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Stop> {
        match self.field.take() {
            Some(name) => seed.deserialize(name.into_deserializer()).map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Stop> {
        seed.deserialize(Value { asked: self.asked })
    }
}

/// A value that notes the DynamoDB type its type asks for, then stops.
struct Value<'a> {
    asked: &'a Cell<Option<&'static str>>,
}

impl Value<'_> {
    fn asked<T>(self, kind: &'static str) -> Result<T, Stop> {
        self.asked.set(Some(kind));
        Err(Stop)
    }
}

macro_rules! asks {
    ($kind:literal: $($method:ident)*) => {
        $(fn $method<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            self.asked($kind)
        })*
    };
}

impl<'de> de::Deserializer<'de> for Value<'_> {
    type Error = Stop;

    asks!("BOOL": deserialize_bool);
    asks!("N": deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64);
    asks!("S": deserialize_char deserialize_str deserialize_string deserialize_identifier);
    asks!("B": deserialize_bytes deserialize_byte_buf);
    asks!("NULL": deserialize_unit);
    asks!("L": deserialize_seq);
    asks!("M": deserialize_map);

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Stop> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: V,
    ) -> Result<V::Value, Stop> {
        self.asked("NULL")
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Stop> {
        self.asked("L")
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        _: V,
    ) -> Result<V::Value, Stop> {
        self.asked("L")
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        self.asked("M")
    }

    /// A unit variant is stored as its name; serde_dynamo writes a variant with data as a map
    /// of one entry, which a type whose variants are all units never holds.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        self.asked("S")
    }
}
