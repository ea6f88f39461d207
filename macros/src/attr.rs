//! `#[dynamo(...)]` attributes as written, before cross-attribute validation.

use crate::ctxt::Ctxt;
use crate::settings;
use crate::template::Template;
use syn::meta::ParseNestedMeta;
use syn::parse::Parse;
use syn::{Attribute, Expr, Ident, LitStr, Path};

/// Which index slot, parsed from `gsi3pk`, `lsi1sk`, `gsi2(...)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Slot {
    Global(u8),
    Local(u8),
}

impl Slot {
    /// `gsi3` → `Global(3)`; numbers outside DynamoDB's limits (20 global, 5 local) are `None`.
    pub fn parse(text: &str) -> Option<Slot> {
        let (kind, number): (fn(u8) -> Slot, &str) = if let Some(rest) = text.strip_prefix("gsi") {
            (Slot::Global, rest)
        } else if let Some(rest) = text.strip_prefix("lsi") {
            (Slot::Local, rest)
        } else {
            return None;
        };
        let number: u8 = number.parse().ok()?;
        let slot = kind(number);
        let max = match slot {
            Slot::Global(_) => 20,
            Slot::Local(_) => 5,
        };
        (number >= 1 && number <= max && !number.to_string().starts_with('0')).then_some(slot)
    }

    pub fn name(self) -> String {
        match self {
            Slot::Global(number) => format!("gsi{number}"),
            Slot::Local(number) => format!("lsi{number}"),
        }
    }
}

/// `gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")` on a table.
pub struct TableIndexAttr {
    pub slot: Slot,
    pub slot_ident: Path,
    pub name: Option<LitStr>,
    /// One attribute, or up to four for a multi-attribute key.
    pub pk: Vec<LitStr>,
    pub sk: Vec<LitStr>,
    /// One type per attribute (default `S`).
    pub pk_type: Vec<LitStr>,
    pub sk_type: Vec<LitStr>,
    /// `projection = "keys_only"` (or `"all"`), or `projection = ["status", "title"]`.
    pub projection: Option<ProjectionAttr>,
}

impl TableIndexAttr {
    /// The index's name in DynamoDB: as given, or the slot in capitals (`GSI1`).
    pub fn dynamo_name(&self) -> String {
        match &self.name {
            Some(name) => name.value(),
            None => self.slot.name().to_uppercase(),
        }
    }
}

/// An index's `projection = ..` as written.
pub enum ProjectionAttr {
    /// `"all"` or `"keys_only"` (validated later).
    Named(LitStr),
    /// The attributes of an `INCLUDE` projection, with the setting's path for messages.
    Include(Path, Vec<LitStr>),
}

/// `#[dynamo(...)]` on a `Table`.
#[derive(Default)]
pub struct TableAttrs {
    pub name: Option<LitStr>,
    pub pk: Option<LitStr>,
    pub sk: Option<LitStr>,
    pub entity_attribute: Option<LitStr>,
    pub schema_version_attribute: Option<LitStr>,
    /// The attribute DynamoDB's time to live reads (`ttl = "expires_at"`).
    pub ttl: Option<LitStr>,
    /// The stream view type (`stream = "new_and_old_images"`).
    pub stream: Option<LitStr>,
    pub indexes: Vec<TableIndexAttr>,
}

impl TableAttrs {
    /// The attribute naming each item's entity: as given, or `_type`.
    pub fn entity_attribute_name(&self) -> String {
        (self.entity_attribute.as_ref()).map_or_else(|| "_type".to_owned(), LitStr::value)
    }

    /// The attribute holding each item's schema version: as given, or `_sv`.
    pub fn schema_version_attribute_name(&self) -> String {
        (self.schema_version_attribute.as_ref()).map_or_else(|| "_sv".to_owned(), LitStr::value)
    }
}

pub fn table_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> TableAttrs {
    let mut out = TableAttrs::default();
    each_setting(cx, attrs, |cx, key, meta| {
        let key = key.to_owned();
        match key.as_str() {
            "name" => set_once(cx, &meta, &mut out.name),
            "pk" => set_once(cx, &meta, &mut out.pk),
            "sk" => set_once(cx, &meta, &mut out.sk),
            "entity_attribute" => set_once(cx, &meta, &mut out.entity_attribute),
            "schema_version_attribute" => set_once(cx, &meta, &mut out.schema_version_attribute),
            "ttl" => set_once(cx, &meta, &mut out.ttl),
            "stream" => set_once(cx, &meta, &mut out.stream),
            _ => match Slot::parse(&key) {
                Some(slot) => {
                    let mut index = TableIndexAttr {
                        slot,
                        slot_ident: meta.path.clone(),
                        name: None,
                        pk: Vec::new(),
                        sk: Vec::new(),
                        pk_type: Vec::new(),
                        sk_type: Vec::new(),
                        projection: None,
                    };
                    meta.parse_nested_meta(|inner| {
                        let key = inner
                            .path
                            .get_ident()
                            .map(Ident::to_string)
                            .unwrap_or_default();
                        match key.as_str() {
                            "name" => set_once(cx, &inner, &mut index.name),
                            "pk" => set_names(cx, &inner, &mut index.pk),
                            "sk" => set_names(cx, &inner, &mut index.sk),
                            "pk_type" => set_names(cx, &inner, &mut index.pk_type),
                            "sk_type" => set_names(cx, &inner, &mut index.sk_type),
                            "projection" => set_projection(cx, &inner, &mut index.projection),
                            _ => Err(inner.error(settings::TABLE_INDEX.unknown(&key))),
                        }
                    })?;
                    if out.indexes.iter().any(|known| known.slot == slot) {
                        cx.error_spanned_by(&meta.path, format!("index `{key}` is declared twice"));
                    } else {
                        out.indexes.push(index);
                    }
                    Ok(())
                }
                None => Err(meta.error(settings::TABLE.unknown(&key))),
            },
        }
    });
    out
}

/// `#[dynamo(entity = Ticket, index = gsi1)]` on a `Projection`.
#[derive(Default)]
pub struct ProjectionAttrs {
    pub entity: Option<Path>,
    /// The index slot as written, and what it names; none for the table itself.
    pub index: Option<(Ident, Option<Slot>)>,
}

pub fn projection_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> ProjectionAttrs {
    let mut out = ProjectionAttrs::default();
    each_setting(cx, attrs, |cx, key, meta| {
        let key = key.to_owned();
        match key.as_str() {
            "entity" => {
                let path: Path = meta.value()?.parse()?;
                if out.entity.replace(path).is_some() {
                    cx.error_spanned_by(&meta.path, "`entity` is given twice");
                }
                Ok(())
            }
            "index" => {
                let slot: Ident = meta.value()?.parse()?;
                let parsed = Slot::parse(&slot.to_string());
                if out.index.replace((slot, parsed)).is_some() {
                    cx.error_spanned_by(&meta.path, "`index` is given twice");
                }
                Ok(())
            }
            _ => Err(meta.error(settings::PROJECTION.unknown(&key))),
        }
    });
    out
}

/// `gsi1_when = is_open(status)`: a rule function and the fields it reads.
pub struct WhenRule {
    pub expr: Expr,
    pub function: Path,
    pub arguments: Vec<Ident>,
}

/// An entity's templates and rule for one index slot.
pub struct EntityIndexAttr {
    pub slot: Slot,
    pub pk: Option<Template>,
    pub sk: Option<Template>,
    /// `gsi2pk = author` or `gsi4pk = [tenant, region]`: the index reads these fields'
    /// attributes as they are.
    pub pk_attributes: Vec<Ident>,
    /// `gsi2sk = created_at` or `gsi4sk = [created_at, id]`.
    pub sk_attributes: Vec<Ident>,
    pub when: Option<WhenRule>,
    /// The first attribute path naming this slot, for errors about the slot as a whole.
    pub first_path: Path,
}

/// `#[dynamo(...)]` on an `Entity`.
#[derive(Default)]
pub struct EntityAttrs {
    /// Settings that were written, valid or not (so an invalid `pk` is not also "missing").
    pub given: Vec<String>,
    pub table: Option<Path>,
    pub schema_version: Option<syn::LitInt>,
    pub name: Option<LitStr>,
    pub pk: Option<Template>,
    pub sk: Option<Template>,
    pub indexes: Vec<EntityIndexAttr>,
    /// `unique(tenant, slug)`: a value made of several fields that no two items share.
    pub unique: Vec<Vec<Ident>>,
}

pub fn entity_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> EntityAttrs {
    let mut out = EntityAttrs::default();
    each_setting(cx, attrs, |cx, key, meta| {
        let key = key.to_owned();
        out.given.push(key.clone());
        match key.as_str() {
            "table" => {
                let path: Path = meta.value()?.parse()?;
                if out.table.replace(path).is_some() {
                    cx.error_spanned_by(&meta.path, "`table` is given twice");
                }
                Ok(())
            }
            "name" => set_once(cx, &meta, &mut out.name),
            "schema_version" => {
                let version: syn::LitInt = meta.value()?.parse()?;
                if version
                    .base10_parse::<u32>()
                    .map_or(true, |version| version == 0)
                {
                    cx.error_spanned_by(&version, "`schema_version` is a whole number from 1");
                }
                if out.schema_version.replace(version).is_some() {
                    cx.error_spanned_by(&meta.path, "`schema_version` is given twice");
                }
                Ok(())
            }
            "pk" => set_template(cx, &meta, &mut out.pk),
            "sk" => set_template(cx, &meta, &mut out.sk),
            "unique" => {
                let mut fields = Vec::new();
                meta.parse_nested_meta(|inner| {
                    match inner.path.get_ident() {
                        Some(field) => fields.push(field.clone()),
                        None => cx.error_spanned_by(&inner.path, "name a field of the entity"),
                    }
                    Ok(())
                })?;
                if fields.len() < 2 {
                    cx.error_spanned_by(&meta.path, "`unique(..)` names two or more fields; mark a single field `#[dynamo(unique)]`");
                }
                out.unique.push(fields);
                Ok(())
            }
            _ => {
                let Some((slot, part)) = index_key(&key) else {
                    return Err(meta.error(settings::ENTITY.unknown(&key)));
                };
                let position = match out.indexes.iter().position(|index| index.slot == slot) {
                    Some(position) => position,
                    None => {
                        out.indexes.push(EntityIndexAttr {
                            slot,
                            pk: None,
                            sk: None,
                            pk_attributes: Vec::new(),
                            sk_attributes: Vec::new(),
                            when: None,
                            first_path: meta.path.clone(),
                        });
                        out.indexes.len() - 1
                    }
                };
                let index = &mut out.indexes[position];
                match part {
                    IndexPart::Pk => {
                        set_index_key(cx, &meta, &mut index.pk, &mut index.pk_attributes)
                    }
                    IndexPart::Sk => {
                        set_index_key(cx, &meta, &mut index.sk, &mut index.sk_attributes)
                    }
                    IndexPart::When => {
                        let rule = parse_when(&meta)?;
                        if index.when.replace(rule).is_some() {
                            cx.error_spanned_by(&meta.path, format!("`{key}` is given twice"));
                        }
                        Ok(())
                    }
                }
            }
        }
    });
    out.indexes.sort_by_key(|index| index.slot);
    out
}

enum IndexPart {
    Pk,
    Sk,
    When,
}

fn index_key(key: &str) -> Option<(Slot, IndexPart)> {
    let (slot, part) = if let Some(slot) = key.strip_suffix("_when") {
        (slot, IndexPart::When)
    } else if let Some(slot) = key.strip_suffix("pk") {
        (slot, IndexPart::Pk)
    } else if let Some(slot) = key.strip_suffix("sk") {
        (slot, IndexPart::Sk)
    } else {
        return None;
    };
    Some((Slot::parse(slot)?, part))
}

fn parse_when(meta: &ParseNestedMeta) -> syn::Result<WhenRule> {
    let expr: Expr = meta.value()?.parse()?;
    let help = "write the rule as a call naming the fields it reads, e.g. `gsi1_when = Ticket::is_open(status)` with `fn is_open(status: &Status) -> bool`: updates re-evaluate the rule from those fields";
    match &expr {
        Expr::Call(call) => {
            let Expr::Path(function) = &*call.func else {
                return Err(syn::Error::new_spanned(
                    &call.func,
                    format!("expected a function path; {help}"),
                ));
            };
            let mut arguments = Vec::new();
            for argument in &call.args {
                match argument {
                    Expr::Path(path) if path.path.get_ident().is_some() => {
                        arguments.extend(path.path.get_ident().cloned());
                    }
                    other => {
                        return Err(syn::Error::new_spanned(
                            other,
                            format!("rule arguments must be field names; {help}"),
                        ))
                    }
                }
            }
            Ok(WhenRule {
                function: function.path.clone(),
                arguments,
                expr: expr.clone(),
            })
        }
        other => Err(syn::Error::new_spanned(
            other,
            format!("the rule must name the fields it reads; {help}"),
        )),
    }
}

fn set_once(cx: &mut Ctxt, meta: &ParseNestedMeta, slot: &mut Option<LitStr>) -> syn::Result<()> {
    let value: LitStr = meta.value()?.parse()?;
    if slot.replace(value).is_some() {
        cx.error_spanned_by(&meta.path, "this setting is given twice");
    }
    Ok(())
}

/// An index key: a template string, or field names whose attributes the index reads as they
/// are (`author`, or `[tenant, region]` for a multi-attribute key).
fn set_index_key(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta,
    template: &mut Option<Template>,
    attributes: &mut Vec<Ident>,
) -> syn::Result<()> {
    let value = meta.value()?;
    if value.peek(LitStr) {
        return set_template_value(cx, meta, value.parse()?, template);
    }
    let fields: Vec<Ident> = if value.peek(syn::token::Bracket) {
        let content;
        syn::bracketed!(content in value);
        content
            .parse_terminated(Ident::parse, syn::Token![,])?
            .into_iter()
            .collect()
    } else {
        vec![value.parse().map_err(|error| {
            syn::Error::new(error.span(), "expected a key template string (`\"TEAM#{team_id}\"`), a field name (`author`) or a list of up to four (`[tenant, region]`)")
        })?]
    };
    if fields.is_empty() || fields.len() > 4 {
        cx.error_spanned_by(
            &meta.path,
            "a multi-attribute key has one to four attributes",
        );
    }
    if template.is_some() || !attributes.is_empty() {
        cx.error_spanned_by(&meta.path, "this index key is given twice");
    }
    *attributes = fields;
    Ok(())
}

/// One string, or a list of up to four (`["tenant", "region"]`).
fn set_names(cx: &mut Ctxt, meta: &ParseNestedMeta, names: &mut Vec<LitStr>) -> syn::Result<()> {
    let value = meta.value()?;
    let given: Vec<LitStr> = if value.peek(syn::token::Bracket) {
        let content;
        syn::bracketed!(content in value);
        content
            .parse_terminated(
                |input: syn::parse::ParseStream| input.parse::<LitStr>(),
                syn::Token![,],
            )?
            .into_iter()
            .collect()
    } else {
        vec![value.parse()?]
    };
    if given.is_empty() || given.len() > 4 {
        cx.error_spanned_by(&meta.path, "a key has one to four attributes");
    }
    if !names.is_empty() {
        cx.error_spanned_by(&meta.path, "this setting is given twice");
    }
    *names = given;
    Ok(())
}

/// Calls `setting` with each `key = ..` of every `#[dynamo(..)]` in `attrs` and its value's
/// parser; a parse error is collected, and the other attributes are still read.
fn each_setting(
    cx: &mut Ctxt,
    attrs: &[Attribute],
    mut setting: impl FnMut(&mut Ctxt, &str, ParseNestedMeta) -> syn::Result<()>,
) {
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("dynamo")) {
        let result = attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(Ident::to_string)
                .unwrap_or_default();
            setting(cx, &key, meta)
        });
        if let Err(error) = result {
            cx.syn_error(error);
        }
    }
}

fn set_projection(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta,
    slot: &mut Option<ProjectionAttr>,
) -> syn::Result<()> {
    let value = meta.value()?;
    let projection = if value.peek(syn::token::Bracket) {
        let content;
        syn::bracketed!(content in value);
        let attributes = content
            .parse_terminated(
                |input: syn::parse::ParseStream| input.parse::<LitStr>(),
                syn::Token![,],
            )?
            .into_iter()
            .collect();
        ProjectionAttr::Include(meta.path.clone(), attributes)
    } else {
        ProjectionAttr::Named(value.parse()?)
    };
    if slot.is_some() {
        cx.error_spanned_by(&meta.path, "this setting is given twice");
    }
    *slot = Some(projection);
    Ok(())
}

fn set_template(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta,
    slot: &mut Option<Template>,
) -> syn::Result<()> {
    let value: LitStr = meta.value()?.parse()?;
    set_template_value(cx, meta, value, slot)
}

fn set_template_value(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta,
    value: LitStr,
    slot: &mut Option<Template>,
) -> syn::Result<()> {
    match Template::parse(&value) {
        Ok(template) => {
            if slot.replace(template).is_some() {
                cx.error_spanned_by(&meta.path, "this template is given twice");
            }
        }
        Err(error) => cx.syn_error(error),
    }
    Ok(())
}

/// `#[serde(rename = "...")]` on a field or variant, if any.
pub fn serde_rename(attrs: &[Attribute]) -> Option<String> {
    serde_string(attrs, "rename")
}

/// `#[serde(rename_all = "...")]` on a container, if any.
pub fn serde_rename_all(attrs: &[Attribute]) -> Option<String> {
    serde_string(attrs, "rename_all")
}

/// The `#[serde(..)]` settings of a field that change where or how it is stored, each with the
/// tokens that wrote it (for errors spanned there).
#[derive(Default)]
pub struct SerdeField {
    /// `skip` or `skip_serializing`: never written.
    pub unstored: Option<Path>,
    /// `skip_deserializing`: written, but never read back.
    pub unread: Option<Path>,
    pub skip_serializing_if: Option<Path>,
    pub flatten: Option<Path>,
    pub borrow: Option<Path>,
    /// `with = ".."` or `serialize_with = ".."`: the stored form is that function's.
    pub written_with: Option<(Path, String)>,
    /// `rename(serialize = "a", deserialize = "b")` with two different names.
    pub split_rename: Option<Path>,
}

/// The `#[serde(..)]` settings of a field that the derives must honour or refuse.
pub fn serde_field(attrs: &[Attribute]) -> SerdeField {
    let mut out = SerdeField::default();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("serde")) {
        // Other settings are serde's business, and serde reports their mistakes.
        let _ = attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(Ident::to_string)
                .unwrap_or_default();
            let path = meta.path.clone();
            match key.as_str() {
                "skip" => {
                    out.unstored = Some(path.clone());
                    out.unread = Some(path);
                }
                "skip_serializing" => out.unstored = Some(path),
                "skip_deserializing" => out.unread = Some(path),
                "flatten" => out.flatten = Some(path),
                "borrow" => {
                    out.borrow = Some(path);
                    if meta.input.peek(syn::Token![=]) {
                        let _: Expr = meta.value()?.parse()?;
                    }
                }
                "skip_serializing_if" => {
                    out.skip_serializing_if = Some(path);
                    let _: Expr = meta.value()?.parse()?;
                }
                "with" | "serialize_with" => {
                    let value: LitStr = meta.value()?.parse()?;
                    out.written_with = Some((path, value.value()));
                }
                "rename" if meta.input.peek(syn::token::Paren) => {
                    let mut names = Vec::new();
                    meta.parse_nested_meta(|inner| {
                        let value: LitStr = inner.value()?.parse()?;
                        names.push(value.value());
                        Ok(())
                    })?;
                    if names.windows(2).any(|pair| pair[0] != pair[1]) {
                        out.split_rename = Some(path);
                    }
                }
                _ if meta.input.peek(syn::Token![=]) => {
                    let _: Expr = meta.value()?.parse()?;
                }
                _ if meta.input.peek(syn::token::Paren) => {
                    meta.parse_nested_meta(|_| Ok(()))?;
                }
                _ => {}
            }
            Ok(())
        });
    }
    out
}

/// The container `#[serde(..)]` settings an entity cannot have, with the tokens that wrote
/// them and why.
pub fn serde_container_refusals(attrs: &[Attribute]) -> Vec<(Path, &'static str)> {
    let mut refused = Vec::new();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            let key = meta.path.get_ident().map(Ident::to_string).unwrap_or_default();
            let why = match key.as_str() {
                "deny_unknown_fields" => Some("the item also holds the library's attributes (its keys, the entity and schema version attributes, index keys), which serde would refuse as unknown; validate fields yourself after reading"),
                "tag" | "content" | "untagged" => Some("an entity is one struct, and the entity attribute already says what each item is; a tag would add an attribute the typed paths do not know"),
                "transparent" => Some("an item is a map of attributes, one per field; a transparent struct is stored as its one field's value"),
                "from" | "into" | "try_from" => Some("the derive stores the struct's own fields as the item's attributes, and typed paths and key templates point at them; a conversion would store another shape"),
                _ => None,
            };
            if let Some(why) = why {
                refused.push((meta.path.clone(), why));
            }
            if meta.input.peek(syn::Token![=]) {
                let _: Expr = meta.value()?.parse()?;
            } else if meta.input.peek(syn::token::Paren) {
                meta.parse_nested_meta(|_| Ok(()))?;
            }
            Ok(())
        });
    }
    refused
}

fn serde_string(attrs: &[Attribute], wanted: &str) -> Option<String> {
    let mut found = None;
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("serde")) {
        // Other serde settings are serde's business; only read the one asked for.
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(wanted) {
                if let Ok(value) = meta.value().and_then(|value| value.parse::<LitStr>()) {
                    found = Some(value.value());
                }
            } else if meta.input.peek(syn::Token![=]) {
                let _: Expr = meta.value()?.parse()?;
            } else if meta.input.peek(syn::token::Paren) {
                meta.parse_nested_meta(|_| Ok(()))?;
            }
            Ok(())
        });
    }
    found
}

/// The attribute serde writes field `ident` under: its `rename`, or the container's
/// `rename_all` applied to its name.
pub fn serde_attribute_name(field: &syn::Field, ident: &Ident, rename_all: Option<&str>) -> String {
    let rust_name = ident.to_string();
    let rust_name = rust_name.strip_prefix("r#").unwrap_or(&rust_name);
    serde_rename(&field.attrs).unwrap_or_else(|| match rename_all {
        Some(rule) => apply_rename_all(rule, rust_name, false),
        None => rust_name.to_owned(),
    })
}

/// Applies a serde `rename_all` rule to a Rust name.
pub fn apply_rename_all(rule: &str, name: &str, is_variant: bool) -> String {
    let words = split_words(name, is_variant);
    match rule {
        "lowercase" => name.to_lowercase(),
        "UPPERCASE" => name.to_uppercase(),
        "PascalCase" => words.iter().map(|word| capitalize(word)).collect(),
        "camelCase" => words
            .iter()
            .enumerate()
            .map(|(position, word)| {
                if position == 0 {
                    word.to_lowercase()
                } else {
                    capitalize(word)
                }
            })
            .collect(),
        "snake_case" => words.join("_").to_lowercase(),
        "SCREAMING_SNAKE_CASE" => words.join("_").to_uppercase(),
        "kebab-case" => words.join("-").to_lowercase(),
        "SCREAMING-KEBAB-CASE" => words.join("-").to_uppercase(),
        _ => name.to_owned(),
    }
}

fn split_words(name: &str, is_variant: bool) -> Vec<String> {
    if !is_variant {
        return name
            .split('_')
            .filter(|word| !word.is_empty())
            .map(str::to_owned)
            .collect();
    }
    let mut words: Vec<String> = Vec::new();
    for c in name.chars() {
        match words.last_mut() {
            Some(word) if !c.is_uppercase() => word.push(c),
            _ => words.push(c.to_string()),
        }
    }
    words
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first
            .to_uppercase()
            .chain(chars.flat_map(char::to_lowercase))
            .collect(),
        None => String::new(),
    }
}

/// A field the library maintains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldRole {
    Version,
    CreatedAt,
    UpdatedAt,
    /// The item's expiry time, which DynamoDB's time to live reads.
    Ttl,
}

impl FieldRole {
    pub fn name(self) -> &'static str {
        match self {
            FieldRole::Version => "version",
            FieldRole::CreatedAt => "created_at",
            FieldRole::UpdatedAt => "updated_at",
            FieldRole::Ttl => "ttl",
        }
    }

    /// Why a field of this role cannot be part of a key.
    pub fn not_in_keys(self) -> &'static str {
        match self {
            FieldRole::Version | FieldRole::UpdatedAt => "the library changes it on every write, and a key cannot change in place",
            FieldRole::CreatedAt => "the library sets it when the item is created and a put that replaces the item keeps the stored one, which the keys it writes cannot know",
            FieldRole::Ttl => "an expiry changes when an item's life is extended, and a key cannot change in place",
        }
    }
}

/// The settings of one field.
#[derive(Default)]
pub struct FieldAttrs {
    /// `#[dynamo(version)]`, `#[dynamo(created_at)]`, `#[dynamo(updated_at)]` or
    /// `#[dynamo(ttl)]`, with the path that says so.
    pub role: Option<(FieldRole, Path)>,
    /// `#[dynamo(unique)]`: no two items of the entity share the value.
    pub unique: Option<Path>,
}

/// `#[dynamo(..)]` on a field.
pub fn field_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> FieldAttrs {
    let mut out = FieldAttrs::default();
    each_setting(cx, attrs, |cx, key, meta| {
        let key = key.to_owned();
        let found = match key.as_str() {
            "version" => FieldRole::Version,
            "created_at" => FieldRole::CreatedAt,
            "updated_at" => FieldRole::UpdatedAt,
            "ttl" => FieldRole::Ttl,
            "unique" => {
                if out.unique.replace(meta.path.clone()).is_some() {
                    cx.error_spanned_by(&meta.path, "`unique` is given twice");
                }
                return Ok(());
            }
            _ => return Err(meta.error(settings::FIELD.unknown(&key))),
        };
        if out.role.replace((found, meta.path.clone())).is_some() {
            cx.error_spanned_by(&meta.path, "a field can have one role only");
        }
        Ok(())
    });
    out
}
