//! `#[derive(Entity)]`: the entity's schema, key builders, field paths and checks.

use super::markers::Markers;
use super::queries::expand_queries;
use super::tokens::{private, respan};
use super::update_state::{expand_update_state, index_inputs};
use crate::ast::{Entity, StoredForm};
use crate::attr::FieldRole;
use crate::ctxt::Ctxt;
use crate::template::{Piece, Template};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, Ident};

pub fn derive_entity(input: &DeriveInput) -> TokenStream {
    let mut cx = Ctxt::default();
    let Some(mut entity) = Entity::from_syn(&mut cx, input) else {
        return cx.to_compile_errors();
    };
    if entity.named {
        entity.recover_misspelt_template_fields(&mut cx);
        entity.validate(&mut cx);
    }
    if cx.blocks_expansion() {
        return [cx.to_compile_errors(), entity_stub(&entity)]
            .into_iter()
            .collect();
    }
    // No error, or only broken design rules: the whole expansion, beside them.
    [cx.to_compile_errors(), expand_entity(&entity)]
        .into_iter()
        .collect()
}

/// After an error, an impl that keeps the rest of the user's code type-checking, so the error
/// they see is the one that matters.
fn entity_stub(entity: &Entity) -> TokenStream {
    let st = private();
    // Without `table = ..`, a stand-in that collections holding the entity accept.
    let table = match &entity.attrs.table {
        Some(table) => quote!(#table),
        None => quote!(#st::UnknownTable),
    };
    let ident = entity.ident;
    let name = ident.to_string();
    quote! {
        #[automatically_derived]
        impl #st::Entity for #ident {
            type Table = #table;
            type UpdateState = ();
            type TransactionRule = #st::AnyUpdate;
            const SCHEMA: &'static #st::EntitySchema = &#st::EntitySchema {
                name: #name,
                partition_key: #st::KeyTemplate { source: "", segments: &[] },
                sort_key: #st::None,
                indexes: &[],
                fields: &[],
                managed: #st::ManagedFields { version: #st::None, version_max: 0, created_at: #st::None, updated_at: #st::None, ttl: #st::None },
                unique: &[],
                schema_version: 1,
            };
            fn key_input(&self, _: usize) -> #st::Option<&dyn ::core::any::Any> {
                #st::None
            }
        }
    }
}

/// Field `name`'s number in `entity`, as a template segment carries it. Validation rejects a
/// template field the entity lacks; were one left, its number would find no field, and
/// rendering would report it missing.
fn field_number(entity: &Entity, name: &str) -> proc_macro2::Literal {
    let number = entity
        .fields
        .iter()
        .position(|field| syn::ext::IdentExt::unraw(field.ident) == name)
        .and_then(|position| u16::try_from(position).ok())
        .unwrap_or(u16::MAX);
    proc_macro2::Literal::u16_unsuffixed(number)
}

fn template_const(entity: &Entity, template: &Template) -> TokenStream {
    let st = private();
    let source = &template.literal;
    let segments = template.pieces.iter().map(|piece| match piece {
        Piece::Literal(text) => quote!(#st::Segment::Literal(#text)),
        Piece::Field { name, width } => {
            let width = match width {
                Some(width) => quote!(#st::Some(#width)),
                None => quote!(#st::None),
            };
            let number = field_number(entity, name);
            quote!(#st::Segment::Field { name: #name, width: #width, number: #number })
        }
        Piece::Shard { name, count } => {
            let number = field_number(entity, name);
            quote!(#st::Segment::Shard { name: #name, number: #number, count: #count })
        }
    });
    quote!(#st::KeyTemplate { source: #source, segments: &[#(#segments),*] })
}

fn expand_entity(entity: &Entity) -> TokenStream {
    let st = private();
    let ident = entity.ident;
    let (Some(table), Some(pk)) = (&entity.attrs.table, &entity.attrs.pk) else {
        return TokenStream::new();
    };
    let name = entity
        .attrs
        .name
        .as_ref()
        .map(|name| name.value())
        .unwrap_or_else(|| ident.to_string());
    let pk_value = template_const(entity, pk);
    let mut consts = vec![quote!(const __PK: #st::KeyTemplate = #pk_value;)];
    let mut checks = Vec::new();
    let sk_schema;
    match &entity.attrs.sk {
        Some(sk) => {
            let value = template_const(entity, sk);
            consts.push(quote!(const __SK: #st::KeyTemplate = #value;));
            sk_schema = quote!(#st::Some(__SK));
            checks.push(respan(
                quote!(const _: () = <#table as #st::HasSortKey>::CHECKED;),
                sk.literal.span(),
            ));
        }
        None => {
            sk_schema = quote!(#st::None);
            checks.push(respan(
                quote!(const _: () = <#table as #st::HasNoSortKey>::CHECKED;),
                pk.literal.span(),
            ));
        }
    }

    let mut templates: Vec<&Template> = vec![pk];
    templates.extend(&entity.attrs.sk);
    for index in &entity.attrs.indexes {
        templates.extend(index.pk.iter().chain(&index.sk));
    }
    let mut index_schemas = Vec::new();
    for index in &entity.attrs.indexes {
        let slot_name = index.slot.name();
        let slot = format_ident!("{}", slot_name);
        let upper = slot_name.to_uppercase();
        let index_const = format_ident!("__{}", upper);
        // The sort key template's span, when there is one: its check then reports an
        // undeclared index at the same place as the schema constant, so rustc shows it once.
        let spanned = index.sk.as_ref().or(index.pk.as_ref());
        let span = spanned
            .map(|template| template.literal.span())
            .or_else(|| {
                index
                    .pk_attributes
                    .iter()
                    .chain(&index.sk_attributes)
                    .next()
                    .map(Ident::span)
            })
            .unwrap_or_else(Span::call_site);
        let declared = respan(
            quote!(<#table as #st::DeclaresIndex<#st::index::#slot>>),
            span,
        );
        consts.push(quote_spanned! {span=>
            const #index_const: &#st::IndexSchema = #declared::INDEX;
        });
        let pk_schema = match &index.pk {
            Some(template) => {
                let template_name = format_ident!("__{}_PK", upper);
                let value = template_const(entity, template);
                consts.push(quote!(const #template_name: #st::KeyTemplate = #value;));
                quote!(#st::Some(#template_name))
            }
            None => quote!(#st::None),
        };
        let sk_schema = match &index.sk {
            Some(template) => {
                let template_name = format_ident!("__{}_SK", upper);
                let value = template_const(entity, template);
                consts.push(quote!(const #template_name: #st::KeyTemplate = #value;));
                checks.push(respan(
                    quote!(const _: () = <#declared::SortKey as #st::IndexSortKeyDeclared>::CHECKED;),
                    template.literal.span(),
                ));
                quote!(#st::Some(#template_name))
            }
            None if !index.sk_attributes.is_empty() => {
                checks.push(respan(
                    quote!(const _: () = <#declared::SortKey as #st::IndexSortKeyDeclared>::CHECKED;),
                    span,
                ));
                quote!(#st::None)
            }
            None => {
                checks.push(respan(
                    quote!(const _: () = <#declared::SortKey as #st::IndexSortKeyAbsent<#st::index::#slot>>::CHECKED;),
                    span,
                ));
                quote!(#st::None)
            }
        };
        // Keys read from the item as they are: the table's index must name the same attributes,
        // in the same order, with the attributes' DynamoDB types.
        let mut key_attributes = Vec::new();
        for (role, attributes) in [
            ("partition", &index.pk_attributes),
            ("sort", &index.sk_attributes),
        ] {
            let keys = match role {
                "partition" => quote!(#index_const.partition_keys),
                _ => quote!(#index_const.sort_keys),
            };
            let mut names = Vec::new();
            for (position, attribute) in attributes.iter().enumerate() {
                let Some(field) = entity.field(&attribute.to_string()) else {
                    continue;
                };
                let name = &field.attribute;
                let ty = field.ty;
                let name_message = format!(
                    "the table's `{slot_name}` {role} key attribute number {} must be `{name}`: `{slot_name}{}k` reads that attribute of the item as is",
                    position + 1,
                    &role[..1],
                );
                let type_message = format!(
                    "the table's `{slot_name}` {role} key type of `{name}` must match `{}`'s DynamoDB type: set `{}k_type` on the table's `{slot_name}` (\"S\", \"N\" or \"B\")",
                    field.ident,
                    &role[..1]
                );
                let count = attributes.len();
                let count_message = format!(
                    "the table's `{slot_name}` must have {count} {role} key attribute(s), as `{slot_name}{}k` lists",
                    &role[..1]
                );
                consts.push(respan(
                    quote! {
                        const _: () = ::core::assert!(#keys.len() == #count, #count_message);
                        const _: () = ::core::assert!(#st::key_name_is(#keys, #position, #name), #name_message);
                        const _: () = ::core::assert!(
                            #st::key_kind_is(#keys, #position, <#ty as #st::ScalarAttribute>::TYPE),
                            #type_message
                        );
                    },
                    attribute.span(),
                ));
                names.push(name.clone());
            }
            key_attributes.push(quote!(&[#(#names),*]));
        }
        let (partition_attributes, sort_attributes) = (&key_attributes[0], &key_attributes[1]);
        let rule = match &index.when {
            Some(rule) => {
                let expr = &rule.expr;
                let source = quote!(#expr).to_string().replace(' ', "");
                let function = &rule.function;
                let inputs = rule.arguments.iter().map(|argument| argument.to_string());
                let types: Vec<_> = (rule.arguments.iter())
                    .map(|argument| entity.field(&argument.to_string()).map(|field| field.ty))
                    .collect();
                let arguments = (types.iter().enumerate())
                    .map(|(position, ty)| quote!(argument(#position)?.downcast_ref::<#ty>()?));
                // Through a function pointer of the one signature a rule may have, so that a
                // rule with another is one error at the rule that names the signature needed.
                quote!(#st::Some(#st::IndexRule {
                    source: #source,
                    inputs: &[#(#inputs),*],
                    evaluate: |argument| {
                        let rule: fn(#(&#types),*) -> bool = #function;
                        #st::Some(rule(#(#arguments),*))
                    },
                }))
            }
            None => quote!(#st::None),
        };
        index_schemas.push(quote! {
            #st::EntityIndex {
                index: #index_const,
                partition_key: #pk_schema,
                sort_key: #sk_schema,
                partition_attributes: #partition_attributes,
                sort_attributes: #sort_attributes,
                rule: #rule,
            }
        });
    }

    // Key constructor arguments: the primary key's fields, in order of first appearance.
    let key_fields = entity.primary_key_fields();
    let key_params = key_fields.iter().filter_map(|name| {
        let field = entity.field(name)?;
        let ident = field.ident;
        let template = if pk.fields().any(|field| field == *name) {
            Some(pk)
        } else {
            entity.attrs.sk.as_ref()
        };
        let span = template
            .map(|template| template.literal.span())
            .unwrap_or_else(Span::call_site);
        let ty = field.ty;
        let ty = respan(quote!(#st::KeyArg<#ty>), span);
        Some(quote!(#ident: impl #ty))
    });
    let markers = Markers::new(entity);
    let index_inputs = index_inputs(entity);
    let marker_items = markers.items(entity, &index_inputs.1);
    let (field_schemas, field_paths) = expand_fields(entity, &markers, &templates);
    let (update_state, update_state_items) = expand_update_state(entity, &markers, &index_inputs);
    let transaction_rule = if entity.has_unique_values() {
        quote!(Self)
    } else {
        quote!(#st::AnyUpdate)
    };
    let (query_constructors, query_items) = expand_queries(entity, &markers);
    let managed = expand_managed(entity, &mut checks);
    let ttl_check = entity.fields.iter().find_map(|field| {
        let (FieldRole::Ttl, path) = field.role.as_ref()? else {
            return None;
        };
        let attribute = &field.attribute;
        let field_name = syn::ext::IdentExt::unraw(field.ident).to_string();
        let entity_name = ident.to_string();
        Some(respan(
            quote! {
                const _: () = if let #st::Some(message) = #st::ttl_attribute_mismatch(<#table as #st::Table>::SCHEMA, #entity_name, #field_name, #attribute) {
                    // Evaluated by the compiler in this constant, from the user's own
                    // declarations: the compile error that explains the design mistake.
                    ::core::panic!("{}", message.as_str()) // ok: a const; it never runs in the program.
                };
            },
            path.span(),
        ))
    });
    let (unique_schemas, unique_impls) = expand_unique(entity, &markers, &mut checks);
    // One marker either way: `expect_version` needs a version, a batch put needs none.
    let versioned = if entity
        .fields
        .iter()
        .any(|field| matches!(field.role, Some((FieldRole::Version, _))))
    {
        quote!(#[automatically_derived] impl #st::Versioned for #ident {})
    } else {
        quote!(#[automatically_derived] impl #st::Unversioned for #ident {})
    };
    let schema_version = entity
        .attrs
        .schema_version
        .as_ref()
        .and_then(|version| version.base10_parse::<u32>().ok())
        .unwrap_or(1);
    // Each argument as the key part the templates render, in the body's one expression.
    let key_arguments = key_fields
        .iter()
        .filter_map(|name| entity.field(name))
        .map(|field| {
            let ident = field.ident;
            let ty = field.ty;
            quote!(#st::KeyArg::<#ty>::key_part(&#ident))
        });
    let key_inputs = key_inputs(entity, &templates);
    let key_doc = format!(
        "The primary key of the `{ident}` with these key fields (pk = {:?}{}).",
        pk.literal.value(),
        entity
            .attrs
            .sk
            .as_ref()
            .map(|sk| format!(", sk = {:?}", sk.literal.value()))
            .unwrap_or_default()
    );

    quote! {
        #(#consts)*
        #ttl_check
        #unique_impls

        #[automatically_derived]
        impl #st::Entity for #ident {
            type Table = #table;
            type UpdateState = #update_state;
            type TransactionRule = #transaction_rule;
            const SCHEMA: &'static #st::EntitySchema = &#st::EntitySchema {
                name: #name,
                partition_key: __PK,
                sort_key: #sk_schema,
                indexes: &[#(#index_schemas),*],
                fields: &[#(#field_schemas),*],
                managed: #managed,
                unique: &[#(#unique_schemas),*],
                schema_version: #schema_version,
            };

            // Inline, as the generic code that renders keys from it is: compiled where
            // it is used, and not at all for entities a crate declares but never writes.
            #[inline]
            fn key_input(&self, field: usize) -> #st::Option<&dyn ::core::any::Any> {
                match field {
                    #(#key_inputs)*
                    _ => #st::None,
                }
            }
        }

        #marker_items
        #versioned

        #update_state_items

        #query_items

        #[automatically_derived]
        impl #ident {
            #(#field_paths)*

            #(#query_constructors)*

            #[doc = #key_doc]
            #[allow(clippy::too_many_arguments, clippy::self_named_constructors)]
            pub fn key(#(#key_params),*) -> #st::Result<#st::Key<Self>, #st::KeyError> {
                #st::key_from_arguments::<Self>(&[#(#key_arguments),*])
            }
        }

        #(#checks)*
    }
}

/// The arms of `Entity::key_input`: each field a key template or an index rule reads, by its
/// number in the schema's fields.
fn key_inputs(entity: &Entity, templates: &[&Template]) -> Vec<TokenStream> {
    let st = private();
    let rule_inputs: Vec<String> = (entity.attrs.indexes.iter())
        .filter_map(|index| index.when.as_ref())
        .flat_map(|rule| rule.arguments.iter().map(Ident::to_string))
        .collect();
    let read = |name: &str| {
        templates
            .iter()
            .any(|template| template.fields().any(|used| used == name))
            || rule_inputs.iter().any(|input| input == name)
    };
    entity
        .fields
        .iter()
        .enumerate()
        .filter(|(_, field)| read(&syn::ext::IdentExt::unraw(field.ident).to_string()))
        .map(|(position, field)| {
            let ident = field.ident;
            quote!(#position => #st::Some(&self.#ident),)
        })
        .collect()
}

/// The unique values' schemas, and the traits that say which operations they allow: a lookup
/// by each unique field, and batch writes only without any.
/// Each unique field's type is checked to have one canonical encoding, spanned at its
/// `unique` (or its name in `unique(a, b)`).
fn expand_unique(
    entity: &Entity,
    markers: &Markers,
    checks: &mut Vec<TokenStream>,
) -> (Vec<TokenStream>, TokenStream) {
    let st = private();
    let ident = entity.ident;
    let mut schemas = Vec::new();
    let mut impls = Vec::new();
    for (position, field) in entity.fields.iter().enumerate() {
        let Some(unique) = &field.unique else {
            continue;
        };
        let ty = field.ty;
        checks.push(respan(
            quote!(const _: () = <#ty as #st::UniqueValue>::CHECKED;),
            unique.span(),
        ));
        let name = field.ident.to_string();
        let name = name.strip_prefix("r#").unwrap_or(&name).to_owned();
        let attribute = &field.attribute;
        let index = schemas.len();
        schemas.push(quote!(#st::UniqueSchema { name: #name, attributes: &[#attribute] }));
        let marker = markers.at(position);
        impls.push(quote! {
            #[automatically_derived]
            impl #st::UniqueField<#ident> for #marker {
                const UNIQUE: usize = #index;
            }
        });
    }
    for fields in &entity.attrs.unique {
        for name in fields {
            if let Some(field) = entity.field(&name.to_string()) {
                let ty = field.ty;
                checks.push(respan(
                    quote!(const _: () = <#ty as #st::UniqueValue>::CHECKED;),
                    name.span(),
                ));
            }
        }
        let names: Vec<String> = fields.iter().map(ToString::to_string).collect();
        let name = names.join("+");
        let attributes = names
            .iter()
            .filter_map(|name| entity.field(name))
            .map(|field| &field.attribute);
        schemas.push(quote!(#st::UniqueSchema { name: #name, attributes: &[#(#attributes),*] }));
    }
    if !entity.has_unique_values() {
        impls.push(quote! {
            #[automatically_derived]
            impl #st::NoUniqueValues for #ident {}
        });
    }
    (schemas, quote!(#(#impls)*))
}

/// The managed fields' schema, with checks that their types fit their roles.
fn expand_managed(entity: &Entity, checks: &mut Vec<TokenStream>) -> TokenStream {
    let st = private();
    let mut version = quote!(#st::None);
    let mut version_max = quote!(0);
    let mut created_at = quote!(#st::None);
    let mut updated_at = quote!(#st::None);
    let mut ttl = quote!(#st::None);
    for field in &entity.fields {
        let Some((role, path)) = &field.role else {
            continue;
        };
        let attribute = &field.attribute;
        let ty = field.ty;
        let timestamp = quote!(#st::Some(#st::ManagedTimestamp { attribute: #attribute, at: #st::timestamp_value::<#ty> }));
        match role {
            FieldRole::Version => {
                version = quote!(#st::Some(#attribute));
                // Also the check that the type can be a version, spanned at `version`.
                version_max = respan(quote!(<#ty as #st::VersionNumber>::MAX), path.span());
            }
            FieldRole::CreatedAt => {
                created_at = timestamp;
                checks.push(respan(
                    quote!(const _: () = <#ty as #st::Timestamp>::CHECKED;),
                    path.span(),
                ));
            }
            FieldRole::UpdatedAt => {
                updated_at = timestamp;
                checks.push(respan(
                    quote!(const _: () = <#ty as #st::Timestamp>::CHECKED;),
                    path.span(),
                ));
            }
            FieldRole::Ttl => {
                // Also the check that the type can be a TTL, spanned at `ttl`.
                ttl = respan(
                    quote!(#st::Some(#st::ttl_field::<#ty>(#attribute))),
                    path.span(),
                );
            }
        }
    }
    quote!(#st::ManagedFields { version: #version, version_max: #version_max, created_at: #created_at, updated_at: #updated_at, ttl: #ttl })
}

/// Per field: its schema entry and its typed path constant, whose marker type says (through
/// `FieldOf`) whether it may be updated.
fn expand_fields(
    entity: &Entity,
    markers: &Markers,
    templates: &[&Template],
) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let st = private();
    let ident = entity.ident;
    let mut schemas = Vec::new();
    let mut paths = Vec::new();
    for (position, field) in entity.fields.iter().enumerate() {
        let name = field.ident.to_string();
        let name = name.strip_prefix("r#").unwrap_or(&name).to_owned();
        let attribute = &field.attribute;
        let ty = field.ty;
        let in_template = templates
            .iter()
            .any(|template| template.fields().any(|used| used == name));
        let key_part = if in_template {
            quote!(#st::Some(<#ty as #st::KeyField>::KEY_PART))
        } else {
            quote!(#st::None)
        };
        // A field stored as serde writes it can be read back from a key that renders it.
        let from_key = if in_template && matches!(field.stored_form(), StoredForm::Serde) {
            quote!(<#ty as #st::KeyField>::FROM_KEY)
        } else {
            quote!(#st::None)
        };
        schemas.push(quote!(#st::FieldSchema {
            name: #name, attribute: #attribute, key_part: #key_part, from_key: #from_key
        }));
        let constant = format_ident!("{}", name.to_uppercase());
        let doc = format!(
            "The typed path to `{name}` (attribute `{attribute}`), for conditions and updates."
        );
        // Stored in a form only its own function knows: no typed path could write or compare
        // it (puts and reads go through serde, and are right).
        if let StoredForm::Own(with) = field.stored_form() {
            paths.push(no_typed_path(&name, &format!(
                "`{name}` is stored by `{with}`, in a form only it knows, so no typed path writes or compares it; write it with `db.put`"
            )));
            continue;
        }
        let marker = markers.at(position);
        paths.push(quote! {
            #[doc = #doc]
            pub const #constant: #st::Field<#ident, #ty, #marker> = #st::Field::NEW;
        });
    }
    for (ident, path) in &entity.unstored {
        let name = syn::ext::IdentExt::unraw(*ident).to_string();
        let setting = path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        paths.push(no_typed_path(
            &name,
            &format!("`{name}` is `#[serde({setting})]`: it is never stored, so no typed path reads, writes or compares it"),
        ));
    }
    (schemas, paths)
}

/// The deprecated stand-in for the typed path of field `name`, whose note says why it has none.
fn no_typed_path(name: &str, why: &str) -> TokenStream {
    let st = private();
    let constant = format_ident!("{}", name.to_uppercase());
    quote! {
        #[doc(hidden)]
        #[deprecated(note = #why)]
        pub const #constant: #st::NoTypedPath = #st::NoTypedPath;
    }
}
