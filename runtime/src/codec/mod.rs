//! An item is a map of attributes. These adapters put serde's top-level struct (or map)
//! straight into the SDK's item map and take it back out, with every attribute value encoded
//! or decoded by `serde_dynamo`: the items `serde_dynamo::{to_item, from_item}` give, without
//! their second map (`serde_dynamo`'s own item type, converted to or from the SDK's), and with
//! the name of the attribute an error is about.

// One concept a file: this one is the serde adapter and names `Item`; `error.rs` holds the
// errors of encoding, decoding and DynamoDB's size limits; `equality.rs` item equality. Below
// the schema, which names `Item` in the `Entity` trait.

mod equality;
mod error;

pub use equality::same_item;
pub use error::{DecodeError, EncodeError, LimitError};

use aws_sdk_dynamodb::types::AttributeValue;
use serde::de::value::StrDeserializer;
use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::ser::{self, Impossible, Serialize};
use std::collections::HashMap;
use std::fmt;

/// A DynamoDB item: attribute names to values.
pub type Item = HashMap<String, AttributeValue>;

/// Why an item could not be encoded or decoded, and at which attribute (`None`: the item as
/// a whole, such as a missing field).
#[derive(Debug)]
pub(crate) struct CodecError {
    pub(crate) attribute: Option<String>,
    pub(crate) message: String,
}

impl CodecError {
    pub(crate) fn at(attribute: String, error: impl fmt::Display) -> Self {
        CodecError {
            attribute: Some(attribute),
            message: error.to_string(),
        }
    }

    fn whole(error: impl fmt::Display) -> Self {
        CodecError {
            attribute: None,
            message: error.to_string(),
        }
    }

    /// The attribute path for messages: `.` for the item itself.
    pub(crate) fn path(&self) -> String {
        self.attribute.clone().unwrap_or_else(|| ".".to_owned())
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.attribute {
            Some(attribute) => write!(f, "attribute `{attribute}`: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for CodecError {}

impl ser::Error for CodecError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        CodecError::whole(message)
    }
}

impl de::Error for CodecError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        CodecError::whole(message)
    }

    /// A field the item lacks is named as its attribute, not as the item.
    fn missing_field(field: &'static str) -> Self {
        CodecError::at(field.to_owned(), "missing from the item")
    }
}

impl From<serde_dynamo::Error> for CodecError {
    fn from(error: serde_dynamo::Error) -> Self {
        CodecError::whole(error)
    }
}

/// Serializes `value` (a struct or a map) as an item, with room for `extra` attributes the
/// caller adds (keys, the entity attribute).
pub(crate) fn to_item<T: Serialize + ?Sized>(value: &T, extra: usize) -> Result<Item, CodecError> {
    value.serialize(ItemSerializer { extra })
}

/// Deserializes an item as `T`.
pub(crate) fn from_item<T: de::DeserializeOwned>(item: Item) -> Result<T, CodecError> {
    T::deserialize(ItemDeserializer { item })
}

fn not_an_item() -> CodecError {
    CodecError::whole("an item must serialize as a struct or a map")
}

/// `serde_dynamo`'s map, converted to the SDK's: what the rarer shapes (a map, an enum
/// variant) cost, as they would with `serde_dynamo::to_item`.
fn into_item(value: serde_dynamo::AttributeValue) -> Result<Item, CodecError> {
    match value {
        serde_dynamo::AttributeValue::M(map) => Ok(map
            .into_iter()
            .map(|(name, value)| (name, value.into()))
            .collect()),
        _ => Err(not_an_item()),
    }
}

type Dynamo = serde_dynamo::Serializer;

/// Serializer methods for shapes that are never an item.
macro_rules! refuse {
    ($($method:ident($($argument:ty),*) -> $out:ty;)*) => {
        $(fn $method(self, $(_: $argument),*) -> Result<$out, CodecError> {
            Err(not_an_item())
        })*
    };
}

/// Serializer methods for enum variants with fields, left to serde_dynamo.
macro_rules! delegate_variants {
    ($($method:ident -> $out:ident;)*) => {
        $(fn $method(
            self,
            name: &'static str,
            index: u32,
            variant: &'static str,
            len: usize,
        ) -> Result<Self::$out, CodecError> {
            Ok(Converted(ser::Serializer::$method(Dynamo {}, name, index, variant, len)?))
        })*
    };
}

struct ItemSerializer {
    extra: usize,
}

impl ser::Serializer for ItemSerializer {
    type Ok = Item;
    type Error = CodecError;
    type SerializeSeq = Impossible<Item, CodecError>;
    type SerializeTuple = Impossible<Item, CodecError>;
    type SerializeTupleStruct = Impossible<Item, CodecError>;
    type SerializeTupleVariant = Converted<<Dynamo as ser::Serializer>::SerializeTupleVariant>;
    type SerializeMap = Converted<<Dynamo as ser::Serializer>::SerializeMap>;
    type SerializeStruct = StructSerializer;
    type SerializeStructVariant = Converted<<Dynamo as ser::Serializer>::SerializeStructVariant>;

    fn serialize_struct(self, _: &'static str, len: usize) -> Result<StructSerializer, CodecError> {
        Ok(StructSerializer {
            item: Item::with_capacity(len + self.extra),
        })
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, CodecError> {
        Ok(Converted(ser::Serializer::serialize_map(Dynamo {}, len)?))
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Item, CodecError> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<Item, CodecError> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Item, CodecError> {
        into_item(ser::Serializer::serialize_newtype_variant(
            Dynamo {},
            name,
            index,
            variant,
            value,
        )?)
    }

    delegate_variants! {
        serialize_tuple_variant -> SerializeTupleVariant;
        serialize_struct_variant -> SerializeStructVariant;
    }

    refuse! {
        serialize_bool(bool) -> Item;
        serialize_i8(i8) -> Item;
        serialize_i16(i16) -> Item;
        serialize_i32(i32) -> Item;
        serialize_i64(i64) -> Item;
        serialize_u8(u8) -> Item;
        serialize_u16(u16) -> Item;
        serialize_u32(u32) -> Item;
        serialize_u64(u64) -> Item;
        serialize_f32(f32) -> Item;
        serialize_f64(f64) -> Item;
        serialize_char(char) -> Item;
        serialize_str(&str) -> Item;
        serialize_bytes(&[u8]) -> Item;
        serialize_none() -> Item;
        serialize_unit() -> Item;
        serialize_unit_struct(&'static str) -> Item;
        serialize_unit_variant(&'static str, u32, &'static str) -> Item;
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
    }
}

/// A struct's fields, each one an attribute of the item.
struct StructSerializer {
    item: Item,
}

impl ser::SerializeStruct for StructSerializer {
    type Ok = Item;
    type Error = CodecError;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
    ) -> Result<(), CodecError> {
        let value: aws_sdk_dynamodb::types::AttributeValue =
            serde_dynamo::to_attribute_value(value)
                .map_err(|error| CodecError::at(name.to_owned(), error))?;
        // `None` is no attribute, as DynamoDB models absence (and sparse indexes need it).
        if !value.is_null() {
            self.item.insert(name.to_owned(), value);
        }
        Ok(())
    }

    fn end(self) -> Result<Item, CodecError> {
        Ok(self.item)
    }
}

/// `serde_dynamo`'s own serializer for a shape that is rarely an item, converted at the end.
struct Converted<S>(S);

impl<S> ser::SerializeMap for Converted<S>
where
    S: ser::SerializeMap<Ok = serde_dynamo::AttributeValue, Error = serde_dynamo::Error>,
{
    type Ok = Item;
    type Error = CodecError;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), CodecError> {
        Ok(self.0.serialize_key(key)?)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CodecError> {
        Ok(self.0.serialize_value(value)?)
    }

    fn end(self) -> Result<Item, CodecError> {
        into_item(self.0.end()?)
    }
}

impl<S> ser::SerializeStructVariant for Converted<S>
where
    S: ser::SerializeStructVariant<Ok = serde_dynamo::AttributeValue, Error = serde_dynamo::Error>,
{
    type Ok = Item;
    type Error = CodecError;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
    ) -> Result<(), CodecError> {
        Ok(self.0.serialize_field(name, value)?)
    }

    fn end(self) -> Result<Item, CodecError> {
        into_item(self.0.end()?)
    }
}

impl<S> ser::SerializeTupleVariant for Converted<S>
where
    S: ser::SerializeTupleVariant<Ok = serde_dynamo::AttributeValue, Error = serde_dynamo::Error>,
{
    type Ok = Item;
    type Error = CodecError;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CodecError> {
        Ok(self.0.serialize_field(value)?)
    }

    fn end(self) -> Result<Item, CodecError> {
        into_item(self.0.end()?)
    }
}

/// An item as a map whose values `serde_dynamo` deserializes one by one.
struct ItemDeserializer {
    item: Item,
}

impl<'de> de::Deserializer<'de> for ItemDeserializer {
    type Error = CodecError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, CodecError> {
        visitor.visit_map(Attributes {
            entries: self.item.into_iter(),
            current: None,
            name: String::new(),
        })
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, CodecError> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, CodecError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, CodecError> {
        // An externally tagged enum (`{"Variant": …}`): rare as an item, left to serde_dynamo.
        let map = serde_dynamo::AttributeValue::M(serde_dynamo::Item::from(self.item).into());
        Ok(de::Deserializer::deserialize_enum(
            serde_dynamo::Deserializer::from_attribute_value(map),
            name,
            variants,
            visitor,
        )?)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// The attributes of an item, handed to serde's visitor name by name.
struct Attributes {
    entries: std::collections::hash_map::IntoIter<String, aws_sdk_dynamodb::types::AttributeValue>,
    current: Option<aws_sdk_dynamodb::types::AttributeValue>,
    name: String,
}

impl<'de> MapAccess<'de> for Attributes {
    type Error = CodecError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, CodecError> {
        let Some((name, value)) = self.entries.next() else {
            return Ok(None);
        };
        let key = seed
            .deserialize(StrDeserializer::<CodecError>::new(&name))
            .map_err(|error| CodecError::at(name.clone(), error.message))?;
        self.name = name;
        self.current = Some(value);
        Ok(Some(key))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, CodecError> {
        let Some(value) = self.current.take() else {
            return Err(CodecError::whole("a value was asked for before its name"));
        };
        let name = std::mem::take(&mut self.name);
        let value = serde_dynamo::AttributeValue::from(value);
        // Containers are tracked so that an error names the element (`tags[1]`); a scalar's
        // error is about the attribute itself, which this map already knows.
        let container = !matches!(
            value,
            serde_dynamo::AttributeValue::S(_)
                | serde_dynamo::AttributeValue::N(_)
                | serde_dynamo::AttributeValue::B(_)
                | serde_dynamo::AttributeValue::Bool(_)
                | serde_dynamo::AttributeValue::Null(_)
        );
        let deserializer = serde_dynamo::Deserializer::from_attribute_value(value);
        if !container {
            return seed
                .deserialize(deserializer)
                .map_err(|error| CodecError::at(name, error));
        }
        let mut track = serde_path_to_error::Track::new();
        seed.deserialize(serde_path_to_error::Deserializer::new(
            deserializer,
            &mut track,
        ))
        .map_err(|error| {
            let within = track.path().to_string();
            let path = match within.as_str() {
                "." => name,
                seq if seq.starts_with('[') => format!("{name}{seq}"),
                nested => format!("{name}.{nested}"),
            };
            CodecError::at(path, error)
        })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};
    use std::collections::{BTreeMap, HashSet};

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
    struct Address {
        city: String,
        zip: Option<u32>,
    }

    #[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
    #[serde(rename_all = "lowercase")]
    enum Shape {
        Dot,
        Circle(f64),
        Rect { width: u16, height: u16 },
    }

    #[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
    struct Extra {
        note: String,
    }

    #[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
    struct Everything {
        id: String,
        #[serde(rename = "teamId")]
        team: u32,
        negative: i64,
        ratio: f64,
        flag: bool,
        missing: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        skipped: Option<String>,
        tags: Vec<String>,
        #[serde(with = "serde_dynamo::string_set")]
        labels: HashSet<String>,
        bytes: Vec<u8>,
        address: Address,
        shapes: Vec<Shape>,
        counts: BTreeMap<String, u64>,
        #[serde(flatten)]
        extra: Extra,
    }

    #[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
    struct Plain {
        id: String,
        tags: Vec<String>,
        address: Address,
        shape: Shape,
    }

    fn everything() -> Everything {
        Everything {
            id: "t-1".to_owned(),
            team: 7,
            negative: -40,
            ratio: 0.25,
            flag: true,
            missing: None,
            skipped: None,
            tags: vec!["a".to_owned(), "b".to_owned()],
            labels: HashSet::from(["x".to_owned(), "y".to_owned()]),
            bytes: vec![0, 255],
            address: Address {
                city: "Oslo".to_owned(),
                zip: Some(150),
            },
            shapes: vec![
                Shape::Dot,
                Shape::Circle(1.5),
                Shape::Rect {
                    width: 2,
                    height: 3,
                },
            ],
            counts: BTreeMap::from([("open".to_owned(), 3)]),
            extra: Extra {
                note: "flattened".to_owned(),
            },
        }
    }

    fn plain() -> Plain {
        Plain {
            id: "p-1".to_owned(),
            tags: vec!["a".to_owned()],
            address: Address {
                city: "Bergen".to_owned(),
                zip: None,
            },
            shape: Shape::Rect {
                width: 1,
                height: 2,
            },
        }
    }

    /// The same items as serde_dynamo's, and the same values back: a struct (the fast path)
    /// and a struct with a flattened field (serialized as a map).
    #[test]
    fn items_match_serde_dynamo() -> TestResult {
        let value = plain();
        let ours = to_item(&value, 3)?;
        let theirs: Item = serde_dynamo::to_item(&value)?;
        assert_eq!(ours, theirs);
        assert_eq!(from_item::<Plain>(ours)?, value);

        let value = everything();
        let ours = to_item(&value, 0)?;
        let theirs: Item = serde_dynamo::to_item(&value)?;
        assert_eq!(ours, theirs);
        assert_eq!(from_item::<Everything>(ours)?, value);
        let theirs: Everything = serde_dynamo::from_item(theirs)?;
        assert_eq!(theirs, value);
        Ok(())
    }

    #[test]
    fn enums_and_maps_at_the_top_match_serde_dynamo() -> TestResult {
        for shape in [
            Shape::Circle(2.0),
            Shape::Rect {
                width: 4,
                height: 5,
            },
        ] {
            let ours = to_item(&shape, 0)?;
            let theirs: Item = serde_dynamo::to_item(&shape)?;
            assert_eq!(ours, theirs);
            assert_eq!(from_item::<Shape>(ours)?, shape);
        }
        let map = BTreeMap::from([("a".to_owned(), 1u8), ("b".to_owned(), 2)]);
        let ours = to_item(&map, 0)?;
        assert_eq!(ours, serde_dynamo::to_item::<_, Item>(&map)?);
        assert_eq!(from_item::<BTreeMap<String, u8>>(ours)?, map);
        Ok(())
    }

    #[test]
    fn values_that_are_not_items_are_refused() -> TestResult {
        for error in [
            to_item(&5u8, 0).err().ok_or("expected an error")?,
            to_item("text", 0).err().ok_or("expected an error")?,
            to_item(&vec![1, 2], 0).err().ok_or("expected an error")?,
            to_item(&Shape::Dot, 0).err().ok_or("expected an error")?,
        ] {
            assert_eq!(error.attribute, None);
            assert!(error.message.contains("struct or a map"), "{error}");
        }
        Ok(())
    }

    /// Errors name the attribute, and the element within it for lists and maps.
    #[test]
    fn errors_name_the_attribute() -> TestResult {
        let good = to_item(&plain(), 0)?;
        let with = |name: &str, value: AttributeValue| {
            let mut item = good.clone();
            item.insert(name.to_owned(), value);
            from_item::<Plain>(item).err().ok_or("expected an error")
        };
        let path = |error: CodecError| error.path();
        use aws_sdk_dynamodb::types::AttributeValue;
        assert_eq!(path(with("id", AttributeValue::N("1".to_owned()))?), "id");
        assert_eq!(
            path(with(
                "tags",
                AttributeValue::L(vec![
                    AttributeValue::S("a".to_owned()),
                    AttributeValue::Bool(true)
                ])
            )?),
            "tags[1]"
        );
        let address = Item::from([("city".to_owned(), AttributeValue::N("3".to_owned()))]);
        assert_eq!(
            path(with("address", AttributeValue::M(address))?),
            "address.city"
        );
        let mut missing = good.clone();
        missing.remove("id");
        let error = from_item::<Plain>(missing)
            .err()
            .ok_or("expected an error")?;
        assert_eq!(
            error.path(),
            "id",
            "a missing field is named as its attribute"
        );
        assert!(error.message.contains("missing"), "{error}");
        Ok(())
    }

    #[test]
    fn encode_errors_name_the_attribute() -> TestResult {
        #[derive(Serialize)]
        struct Bad {
            ok: u8,
            map: BTreeMap<(u8, u8), u8>,
        }
        let error = to_item(
            &Bad {
                ok: 1,
                map: BTreeMap::from([((1, 2), 3)]),
            },
            0,
        )
        .err()
        .ok_or("expected an error")?;
        assert_eq!(error.path(), "map");
        Ok(())
    }
}
