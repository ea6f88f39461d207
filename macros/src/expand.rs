//! Code generation: static schema data plus thin calls into `singletable-runtime`.

use crate::ast::{Entity, Table};
use crate::attr::{self, FieldRole, Slot};
use crate::ctxt::Ctxt;
use crate::template::{Piece, Template};
use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Ident};

fn private() -> TokenStream {
    quote!(::singletable::__private)
}

/// The same tokens, all at `span`: a check on the table type then points at the template.
fn respan(tokens: impl ToTokens, span: Span) -> TokenStream {
    tokens
        .into_token_stream()
        .into_iter()
        .map(|mut token| {
            if let TokenTree::Group(group) = &token {
                let mut respanned = Group::new(group.delimiter(), respan(group.stream(), span));
                respanned.set_span(span);
                token = TokenTree::Group(respanned);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}

pub fn derive_entity(input: &DeriveInput) -> TokenStream {
    let mut cx = Ctxt::default();
    let Some(entity) = Entity::from_syn(&mut cx, input) else {
        return cx.to_compile_errors();
    };
    entity.validate(&mut cx);
    if cx.has_errors() {
        return [cx.to_compile_errors(), entity_stub(&entity)]
            .into_iter()
            .collect();
    }
    expand_entity(&entity)
}

/// After an error, an impl that keeps the rest of the user's code type-checking, so the error
/// they see is the one that matters.
fn entity_stub(entity: &Entity) -> TokenStream {
    let Some(table) = &entity.attrs.table else {
        return TokenStream::new();
    };
    let ident = entity.ident;
    let st = private();
    let name = ident.to_string();
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #st::Entity for #ident {
                type Table = #table;
                type UpdateState = ();
                const SCHEMA: &'static #st::EntitySchema = &#st::EntitySchema {
                    name: #name,
                    partition_key: #st::KeyTemplate { source: "", segments: &[] },
                    sort_key: #st::None,
                    indexes: &[],
                    fields: &[],
                    managed: #st::ManagedFields { version: #st::None, version_max: 0, created_at: #st::None, updated_at: #st::None },
                    schema_version: 1,
                };
                fn primary_key(&self) -> #st::Result<#st::Key<Self>, #st::KeyError> {
                    ::core::unimplemented!() // ok: only emitted next to a compile error, never runs.
                }
                fn write_index_keys(&self, _: &mut #st::Item) -> #st::Result<(), #st::KeyError> {
                    ::core::unimplemented!() // ok: only emitted next to a compile error, never runs.
                }
            }
        };
    }
}

fn template_const(template: &Template) -> TokenStream {
    let st = private();
    let source = &template.literal;
    let segments = template.pieces.iter().map(|piece| match piece {
        Piece::Literal(text) => quote!(#st::Segment::Literal(#text)),
        Piece::Field { name, width } => {
            let width = match width {
                Some(width) => quote!(#st::Some(#width)),
                None => quote!(#st::None),
            };
            quote!(#st::Segment::Field { name: #name, width: #width })
        }
    });
    quote!(#st::KeyTemplate { source: #source, segments: &[#(#segments),*] })
}

/// `TEMPLATE.render(&[&self.a, &self.b])?` (or with bare idents for key constructors).
///
/// Field values pass through `key_part`, spanned at the template, so a field type that cannot
/// be a key part is reported once, at the template that uses it.
fn render(
    template_const: &Ident,
    template: &Template,
    receiver: Option<&TokenStream>,
) -> TokenStream {
    render_as(template_const, template, receiver, "render")
}

/// [`render`] calling the template's `method`: `render_key` for primary keys, which borrows a
/// constant template's text.
fn render_as(
    template_const: &Ident,
    template: &Template,
    receiver: Option<&TokenStream>,
    method: &str,
) -> TokenStream {
    let st = private();
    let span = template.literal.span();
    let values = template.fields().map(|name| {
        let field = Ident::new(name, span);
        match receiver {
            Some(receiver) => respan(quote!(#st::key_part(&#receiver.#field)), span),
            None => respan(quote!(&#field), span),
        }
    });
    let method = Ident::new(method, Span::call_site());
    quote!(#template_const.#method(&[#(#values),*])?)
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
    let this = quote!(self);

    let pk_const = format_ident!("__PK");
    let sk_const = format_ident!("__SK");
    let pk_value = template_const(pk);
    let mut consts = vec![quote!(const __PK: #st::KeyTemplate = #pk_value;)];
    let mut checks = Vec::new();
    let sk_schema;
    let sk_render_self;
    let sk_render_args;
    match &entity.attrs.sk {
        Some(sk) => {
            let value = template_const(sk);
            consts.push(quote!(const __SK: #st::KeyTemplate = #value;));
            sk_schema = quote!(#st::Some(__SK));
            let render_self = render_as(&sk_const, sk, Some(&this), "render_key");
            let render_args = render_as(&sk_const, sk, None, "render_key");
            sk_render_self = quote!(#st::Some(#render_self));
            sk_render_args = quote!(#st::Some(#render_args));
            checks.push(
                quote_spanned!(sk.literal.span()=> #st::assert_table_has_sort_key::<#table>();),
            );
        }
        None => {
            sk_schema = quote!(#st::None);
            sk_render_self = quote!(#st::None);
            sk_render_args = quote!(#st::None);
            checks.push(
                quote_spanned!(pk.literal.span()=> #st::assert_table_has_no_sort_key::<#table>();),
            );
        }
    }

    let mut templates: Vec<&Template> = vec![pk];
    templates.extend(&entity.attrs.sk);
    for index in &entity.attrs.indexes {
        templates.extend(index.pk.iter().chain(&index.sk));
    }
    let mut index_schemas = Vec::new();
    let mut index_writes = Vec::new();
    for index in &entity.attrs.indexes {
        let slot_name = index.slot.name();
        let slot = format_ident!("{}", slot_name);
        let upper = slot_name.to_uppercase();
        let index_const = format_ident!("__{}", upper);
        let first = index.pk.as_ref().or(index.sk.as_ref());
        let span = first
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
        let mut writes = Vec::new();
        let pk_schema = match &index.pk {
            Some(template) => {
                let template_name = format_ident!("__{}_PK", upper);
                let value = template_const(template);
                consts.push(quote!(const #template_name: #st::KeyTemplate = #value;));
                let rendered = render(&template_name, template, Some(&this));
                writes.push(quote! {
                    item.insert(#index_const.partition_key.into(), #st::AttributeValue::S(#rendered));
                });
                quote!(#st::Some(#template_name))
            }
            None => quote!(#st::None),
        };
        let sk_schema = match &index.sk {
            Some(template) => {
                let template_name = format_ident!("__{}_SK", upper);
                let value = template_const(template);
                consts.push(quote!(const #template_name: #st::KeyTemplate = #value;));
                let rendered = render(&template_name, template, Some(&this));
                writes.push(quote! {
                    if let #st::Some(name) = #index_const.sort_key {
                        item.insert(name.into(), #st::AttributeValue::S(#rendered));
                    }
                });
                checks.push(quote_spanned!(template.literal.span()=>
                    #st::assert_index_has_sort_key::<#declared::SortKey>();));
                quote!(#st::Some(#template_name))
            }
            None if !index.sk_attributes.is_empty() => {
                checks.push(quote_spanned!(span=>
                    #st::assert_index_has_sort_key::<#declared::SortKey>();));
                quote!(#st::None)
            }
            None => {
                checks.push(quote_spanned!(span=>
                    #st::assert_index_has_no_sort_key::<#declared::SortKey>();));
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
                let arguments = rule
                    .arguments
                    .iter()
                    .enumerate()
                    .map(|(position, argument)| {
                        let ty = entity.field(&argument.to_string()).map(|field| field.ty);
                        quote!(argument(#position)?.downcast_ref::<#ty>()?)
                    });
                quote!(#st::Some(#st::IndexRule {
                    source: #source,
                    inputs: &[#(#inputs),*],
                    evaluate: |argument| #st::Some(#function(#(#arguments),*)),
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
        index_writes.push(match &index.when {
            Some(rule) => {
                let function = &rule.function;
                let arguments = &rule.arguments;
                quote! {
                    if #function(#(&self.#arguments),*) {
                        #(#writes)*
                    }
                }
            }
            None => quote!(#(#writes)*),
        });
    }

    // Key constructor arguments: the primary key's fields, in order of first appearance.
    let mut key_fields: Vec<&str> = Vec::new();
    for name in pk
        .fields()
        .chain(entity.attrs.sk.iter().flat_map(Template::fields))
    {
        if !key_fields.contains(&name) {
            key_fields.push(name);
        }
    }
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
        let ty = respan(quote!(<#ty as #st::KeyField>::Borrowed), span);
        Some(quote!(#ident: &#ty))
    });
    let (field_schemas, field_paths, updatable) = expand_fields(entity, &templates);
    let (update_state, update_state_items) = expand_update_state(entity);
    let (query_constructors, query_items) = expand_queries(entity);
    let managed = expand_managed(entity, &mut checks);
    let versioned = entity
        .fields
        .iter()
        .any(|field| matches!(field.role, Some((FieldRole::Version, _))))
        .then(|| quote!(#[automatically_derived] impl #st::Versioned for #ident {}));
    let schema_version = entity
        .attrs
        .schema_version
        .as_ref()
        .and_then(|version| version.base10_parse::<u32>().ok())
        .unwrap_or(1);
    let pk_render_self = render_as(&pk_const, pk, Some(&this), "render_key");
    let pk_render_args = render_as(&pk_const, pk, None, "render_key");
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
        const _: () = {
            #(#consts)*

            #[automatically_derived]
            impl #st::Entity for #ident {
                type Table = #table;
                type UpdateState = #update_state;
                const SCHEMA: &'static #st::EntitySchema = &#st::EntitySchema {
                    name: #name,
                    partition_key: __PK,
                    sort_key: #sk_schema,
                    indexes: &[#(#index_schemas),*],
                    fields: &[#(#field_schemas),*],
                    managed: #managed,
                    schema_version: #schema_version,
                };

                fn primary_key(&self) -> #st::Result<#st::Key<Self>, #st::KeyError> {
                    #st::Key::from_rendered(#pk_render_self, #sk_render_self)
                }

                fn write_index_keys(&self, item: &mut #st::Item) -> #st::Result<(), #st::KeyError> {
                    #(#index_writes)*
                    #st::Ok(())
                }
            }

            #(#updatable)*
            #versioned

            #update_state_items

            #query_items

            #[automatically_derived]
            impl #ident {
                #(#field_paths)*

                #(#query_constructors)*

                #[doc = #key_doc]
                #[allow(clippy::too_many_arguments)]
                pub fn key(#(#key_params),*) -> #st::Result<#st::Key<Self>, #st::KeyError> {
                    #st::Key::from_rendered(#pk_render_args, #sk_render_args)
                }
            }

            #[allow(dead_code, unused_variables)]
            fn __singletable_checks(__item: &#ident) {
                #(#checks)*
            }
        };
    }
}

/// Per queryable index (the table's key, each GSI and LSI): a partition constructor taking
/// the partition template's fields, and `SortKeyPart` impls that admit the sort key parts in
/// template order only.
fn expand_queries(entity: &Entity) -> (Vec<TokenStream>, TokenStream) {
    let st = private();
    let ident = entity.ident;
    let Some(pk) = &entity.attrs.pk else {
        return (Vec::new(), TokenStream::new());
    };
    let mut targets = vec![QueryTarget {
        name: format_ident!("partition"),
        marker: quote!(#st::primary),
        schema: None,
        partition: KeySource::Template(pk),
        sort: entity.attrs.sk.as_ref().map(KeySource::Template),
        label: "the table".to_owned(),
        sort_label: "sk".to_owned(),
    }];
    for index in &entity.attrs.indexes {
        let slot = index.slot.name();
        let marker = format_ident!("{}", slot);
        let schema = format_ident!("__{}", slot.to_uppercase());
        let partition = match &index.pk {
            Some(template) => KeySource::Template(template),
            None if !index.pk_attributes.is_empty() => KeySource::Attributes(&index.pk_attributes),
            None => KeySource::Template(pk),
        };
        let sort = match &index.sk {
            Some(template) => Some(KeySource::Template(template)),
            None if !index.sk_attributes.is_empty() => {
                Some(KeySource::Attributes(&index.sk_attributes))
            }
            None => None,
        };
        targets.push(QueryTarget {
            name: format_ident!("{}", slot),
            marker: quote!(#st::index::#marker),
            schema: Some(schema),
            partition,
            sort,
            label: format!("index `{slot}`"),
            sort_label: format!("{slot}sk"),
        });
    }
    let mut constructors = Vec::new();
    let mut items = Vec::new();
    for target in targets {
        let QueryTarget {
            name,
            marker,
            schema,
            partition,
            sort,
            label,
            sort_label,
        } = target;
        constructors.push(partition_constructor(
            entity, &name, &marker, &schema, &partition, &label,
        ));
        let Some(sort) = sort else { continue };
        let parts: Vec<String> = sort.fields();
        let list = parts
            .iter()
            .map(|part| format!("`{part}`"))
            .collect::<Vec<_>>()
            .join(", ");
        for (step, part) in parts.iter().enumerate() {
            if parts[..step].contains(part) {
                continue;
            }
            let Some(position) = entity.fields.iter().position(|field| field.ident == part) else {
                continue;
            };
            let ty = entity.fields[position].ty;
            let check = format_ident!("__{}_{}_sort_part_{}", ident, name, step);
            let message = format!(
                "`{part}` is sort key part {} of {label} of `{ident}` ({sort_label} = {}), so it cannot come here",
                step + 1,
                sort.describe()
            )
            .replace('{', "{{")
            .replace('}', "}}");
            let note = format!("give the parts in template order ({list}), each at most once; a range (`between`, `lt`, ...) on a part ends the sort key condition")
                .replace('{', "{{")
                .replace('}', "}}");
            let next = step + 1;
            items.push(quote! {
                #[diagnostic::on_unimplemented(message = #message, label = "a query cannot skip or repeat a sort key part", note = #note)]
                #[allow(non_camel_case_types)]
                trait #check {}
                impl #check for #st::Parts<#step> {}
                #[automatically_derived]
                impl<P: #check> #st::SortKeyPart<#ident, #marker, P> for #st::Field<#ident, #ty, #position> {
                    type Next = #st::Parts<#next>;
                }
            });
        }
    }
    (constructors, quote!(#(#items)*))
}

/// One index a query can target, and where its keys come from.
struct QueryTarget<'a> {
    name: Ident,
    marker: TokenStream,
    /// `None` for the table, the index schema constant otherwise.
    schema: Option<Ident>,
    partition: KeySource<'a>,
    sort: Option<KeySource<'a>>,
    label: String,
    sort_label: String,
}

/// A key made from a template, or attributes of the item read as they are.
enum KeySource<'a> {
    Template(&'a Template),
    Attributes(&'a [Ident]),
}

impl KeySource<'_> {
    fn fields(&self) -> Vec<String> {
        match self {
            KeySource::Template(template) => template.fields().map(str::to_owned).collect(),
            KeySource::Attributes(attributes) => attributes.iter().map(Ident::to_string).collect(),
        }
    }

    fn describe(&self) -> String {
        match self {
            KeySource::Template(template) => format!("{:?}", template.literal.value()),
            KeySource::Attributes(attributes) => attributes
                .iter()
                .map(Ident::to_string)
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

/// `Entity::partition(..)` / `Entity::gsi1(..)`: the partition key from its fields.
fn partition_constructor(
    entity: &Entity,
    name: &Ident,
    marker: &TokenStream,
    schema: &Option<Ident>,
    partition: &KeySource,
    label: &str,
) -> TokenStream {
    let st = private();
    let doc = format!(
        "The partition of {label} with these fields (partition key {}), to pass to `Db::query`.",
        partition.describe()
    );
    let partition = match (partition, schema) {
        (KeySource::Attributes(attributes), Some(schema)) => {
            let params = attributes.iter().map(|attribute| {
                let ty = entity.field(&attribute.to_string()).map(|field| field.ty);
                quote!(#attribute: &#ty)
            });
            return quote! {
                #[doc = #doc]
                pub fn #name(#(#params),*) -> #st::PartitionKey<Self, #marker> {
                    let values: #st::Result<::std::vec::Vec<_>, _> =
                        [#(#st::to_value(#attributes)),*].into_iter().collect();
                    #st::PartitionKey::attributes(values, #schema)
                }
            };
        }
        // The table's own key is always a template.
        (KeySource::Attributes(_), None) => return TokenStream::new(),
        (KeySource::Template(template), _) => template,
    };
    let mut params = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for field_name in partition.fields() {
        if seen.contains(&field_name) {
            continue;
        }
        seen.push(field_name);
        let Some(field) = entity.field(field_name) else {
            continue;
        };
        let arg = field.ident;
        let ty = field.ty;
        let ty = respan(
            quote!(<#ty as #st::KeyField>::Borrowed),
            partition.literal.span(),
        );
        params.push(quote!(#arg: &#ty));
    }
    let values = partition.fields().map(|field_name| {
        let arg = Ident::new(field_name, partition.literal.span());
        quote!(&#arg)
    });
    let template = template_const(partition);
    let index = match schema {
        Some(schema) => quote!(#st::Some(#schema)),
        None => quote!(#st::None),
    };
    quote! {
        #[doc = #doc]
        #[allow(clippy::too_many_arguments)]
        pub fn #name(#(#params),*) -> #st::PartitionKey<Self, #marker> {
            const TEMPLATE: #st::KeyTemplate = #template;
            #st::PartitionKey::new(TEMPLATE.render(&[#(#values),*]), #index)
        }
    }
}

/// The managed fields' schema, with checks that their types fit their roles.
fn expand_managed(entity: &Entity, checks: &mut Vec<TokenStream>) -> TokenStream {
    let st = private();
    let mut version = quote!(#st::None);
    let mut version_max = quote!(0);
    let mut created_at = quote!(#st::None);
    let mut updated_at = quote!(#st::None);
    for field in &entity.fields {
        let Some((role, path)) = &field.role else {
            continue;
        };
        let attribute = &field.attribute;
        let ty = field.ty;
        let name = respan(field.ident, path.span());
        let timestamp = quote!(#st::Some(#st::ManagedTimestamp { attribute: #attribute, now: #st::now_value::<#ty> }));
        match role {
            FieldRole::Version => {
                version = quote!(#st::Some(#attribute));
                // Also the check that the type can be a version, spanned at `version`.
                version_max = respan(quote!(<#ty as #st::VersionNumber>::MAX), path.span());
            }
            FieldRole::CreatedAt => {
                created_at = timestamp;
                checks.push(respan(
                    quote!(#st::assert_timestamp(&__item.#name);),
                    path.span(),
                ));
            }
            FieldRole::UpdatedAt => {
                updated_at = timestamp;
                checks.push(respan(
                    quote!(#st::assert_timestamp(&__item.#name);),
                    path.span(),
                ));
            }
        }
    }
    quote!(#st::ManagedFields { version: #version, version_max: #version_max, created_at: #created_at, updated_at: #updated_at })
}

/// The update state type: one parameter per field that feeds an index (primary key fields
/// excepted), `Touch` for every field, and `UpdateComplete` when, for every index, no input
/// changes or every input is known. Each index gets its own trait so the error names it.
fn expand_update_state(entity: &Entity) -> (TokenStream, TokenStream) {
    let st = private();
    let ident = entity.ident;
    let state = format_ident!("__{}UpdateState", ident);
    let key_fields: Vec<&str> = entity
        .attrs
        .pk
        .iter()
        .chain(&entity.attrs.sk)
        .flat_map(Template::fields)
        .collect();
    // Each index's inputs that an update must know, in order, without duplicates.
    let mut indexes = Vec::new();
    let mut inputs: Vec<String> = Vec::new();
    for index in &entity.attrs.indexes {
        let mut own: Vec<String> = Vec::new();
        let names = index
            .pk
            .iter()
            .chain(&index.sk)
            .flat_map(|template| template.fields().map(str::to_owned))
            .chain(
                index
                    .when
                    .iter()
                    .flat_map(|rule| rule.arguments.iter().map(Ident::to_string)),
            );
        for name in names {
            if !key_fields.contains(&name.as_str()) && !own.contains(&name) {
                own.push(name);
            }
        }
        for name in &own {
            if !inputs.contains(name) {
                inputs.push(name.clone());
            }
        }
        if !own.is_empty() {
            indexes.push((index, own));
        }
    }
    let params: Vec<Ident> = (0..inputs.len())
        .map(|position| format_ident!("A{}", position))
        .collect();
    let untouched = params.iter().map(|_| quote!(#st::state::Untouched));
    let initial = quote!(#state<#(#untouched),*>);
    let mut touches = Vec::new();
    for (position, field) in entity.fields.iter().enumerate() {
        let name = field.ident.to_string();
        let out = match inputs.iter().position(|input| *input == name) {
            Some(slot) => {
                let states = params.iter().enumerate().map(|(index, param)| {
                    if index == slot {
                        quote!(<#param as #st::state::Join<__M>>::Out)
                    } else {
                        quote!(#param)
                    }
                });
                let joined = &params[slot];
                touches.push(quote! {
                    impl<#(#params,)* __M> #st::state::Touch<#position, __M> for #state<#(#params),*>
                    where #joined: #st::state::Join<__M>
                    {
                        type Out = #state<#(#states),*>;
                    }
                });
                continue;
            }
            None => quote!(Self),
        };
        touches.push(quote! {
            impl<#(#params,)* __M> #st::state::Touch<#position, __M> for #state<#(#params),*> {
                type Out = #out;
            }
        });
    }
    let mut checks = Vec::new();
    let mut bounds = Vec::new();
    for (index, own) in &indexes {
        let slot = index.slot.name();
        let check = format_ident!("__{}_{}_inputs_known", ident, slot);
        let fold = |bit: &str, op: &str, empty: TokenStream| {
            let bit = format_ident!("{}", bit);
            let op = format_ident!("{}", op);
            own.iter().rev().fold(empty, |rest, name| {
                let param = inputs
                    .iter()
                    .position(|input| input == name)
                    .map(|position| params[position].clone());
                quote!(<<#param as #st::state::InputState>::#bit as #st::state::Bit>::#op<#rest>)
            })
        };
        let changes = fold("Changes", "Or", quote!(#st::state::No));
        let known = fold("Known", "And", quote!(#st::state::Yes));
        let templates = index
            .pk
            .iter()
            .map(|template| format!("{slot}pk = {:?}", template.literal.value()))
            .chain(
                index
                    .sk
                    .iter()
                    .map(|template| format!("{slot}sk = {:?}", template.literal.value())),
            )
            .chain(index.when.iter().map(|rule| {
                let expr = &rule.expr;
                format!(
                    "{slot}_when = {}",
                    quote!(#expr).to_string().replace(' ', "")
                )
            }))
            .collect::<Vec<_>>()
            .join(", ")
            .replace('{', "{{")
            .replace('}', "}}");
        let list = own
            .iter()
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let message = format!(
            "this update changes an input of index `{slot}` of `{ident}` but not all of {list}, so the index key cannot be recomputed"
        );
        let example = own
            .first()
            .map(|name| format!("`.given({ident}::{}, current)`", name.to_uppercase()))
            .unwrap_or_default();
        let note = format!(
            "`{slot}` is {templates}; set each of {list} (in that order in the update state below) or supply its current value with {example}, which the request also asserts; a value changed by `add`, `increment` or `append` is unknown and cannot feed an index"
        );
        let label = format!("this update would leave index `{slot}` stale");
        checks.push(quote! {
            #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
            #[allow(non_camel_case_types)]
            trait #check {}
            impl #check for #st::state::Complete {}
        });
        bounds.push(quote!((#changes, #known): #st::state::Verdict));
        bounds.push(quote!(<(#changes, #known) as #st::state::Verdict>::Out: #check));
    }
    let phantom = quote!(::core::marker::PhantomData<fn() -> (#(#params,)*)>);
    let items = quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        pub struct #state<#(#params),*>(#phantom);

        #(#touches)*

        #(#checks)*

        impl<#(#params: #st::state::InputState),*> #st::state::UpdateComplete for #state<#(#params),*>
        where #(#bounds,)*
        {}
    };
    (initial, items)
}

/// Per field: its schema entry, its typed path constant, and whether it may be updated.
fn expand_fields(
    entity: &Entity,
    templates: &[&Template],
) -> (Vec<TokenStream>, Vec<TokenStream>, Vec<TokenStream>) {
    let st = private();
    let ident = entity.ident;
    let key_templates: Vec<&Template> = entity.attrs.pk.iter().chain(&entity.attrs.sk).collect();
    let mut schemas = Vec::new();
    let mut paths = Vec::new();
    let mut updatable = Vec::new();
    for (position, field) in entity.fields.iter().enumerate() {
        let name = field.ident.to_string();
        let name = name.strip_prefix("r#").unwrap_or(&name).to_owned();
        let attribute = &field.attribute;
        let ty = field.ty;
        let in_template = templates
            .iter()
            .any(|template| template.fields().any(|used| used == name));
        let key_part = if in_template {
            quote!(#st::Some(#st::KeyPartFns {
                render: #st::render_any::<#ty>,
                parse: #st::parse_any::<#ty>,
            }))
        } else {
            quote!(#st::None)
        };
        schemas.push(
            quote!(#st::FieldSchema { name: #name, attribute: #attribute, key_part: #key_part }),
        );
        let constant = format_ident!("{}", name.to_uppercase());
        let doc = format!(
            "The typed path to `{name}` (attribute `{attribute}`), for conditions and updates."
        );
        paths.push(quote! {
            #[doc = #doc]
            pub const #constant: #st::Field<#ident, #ty, #position> = #st::Field::new(#name, #attribute);
        });
        let key_uses: Vec<String> = key_templates
            .iter()
            .zip(["pk", "sk"])
            .filter(|(template, _)| template.fields().any(|used| used == name))
            .map(|(template, role)| format!("{role} = {:?}", template.literal.value()))
            .collect();
        if let Some((role, _)) = &field.role {
            let explanation = format_ident!("__{}_{}_is_managed", ident, name);
            let message = format!(
                "`{name}` is `#[dynamo({})]`: singletable maintains it on every put and update, so it cannot be updated directly",
                role.name()
            );
            let note = match role {
                FieldRole::Version => "use `.expect_version(v)` to update only if the item is still at the version you read".to_owned(),
                FieldRole::CreatedAt | FieldRole::UpdatedAt => "the library writes the current time itself".to_owned(),
            };
            updatable.push(quote! {
                #[diagnostic::on_unimplemented(message = #message, label = "maintained by singletable", note = #note)]
                #[allow(non_camel_case_types)]
                trait #explanation {}
                #[automatically_derived]
                impl<T: #explanation> #st::Updatable<#position, T> for #ident {}
            });
            continue;
        }
        if key_uses.is_empty() {
            updatable.push(quote! {
                #[automatically_derived]
                impl<T> #st::Updatable<#position, T> for #ident {}
            });
            continue;
        }
        // A key field's update resolves to this trait, which nothing implements: its message
        // is the explanation the user sees.
        let explanation = format_ident!("__{}_{}_is_a_key_attribute", ident, name);
        let templates = key_uses
            .iter()
            .map(|template| template.replace('{', "{{").replace('}', "}}"))
            .collect::<Vec<_>>()
            .join(" and ");
        let message = format!(
            "`{name}` is part of the primary key of `{ident}` ({templates}); keys cannot change in place"
        );
        let lower = ident.to_string().to_lowercase();
        let note = format!(
            "to change `{name}`, move the item with `db.rekey(&{lower}, &new_{lower})`: it deletes the old `{ident}` and puts the new one in one transaction, so the item is never lost or duplicated; or keep the changing value on an index key, which an update can change"
        );
        updatable.push(quote! {
            #[diagnostic::on_unimplemented(message = #message, label = "cannot update a key attribute", note = #note)]
            #[allow(non_camel_case_types)]
            trait #explanation {}
            #[automatically_derived]
            impl<T: #explanation> #st::Updatable<#position, T> for #ident {}
        });
    }
    (schemas, paths, updatable)
}

pub fn derive_table(input: &DeriveInput) -> TokenStream {
    let mut cx = Ctxt::default();
    let table = Table::from_syn(&mut cx, input);
    table.validate(&mut cx);
    if cx.has_errors() {
        return cx.to_compile_errors();
    }
    expand_table(&table)
}

fn expand_table(table: &Table) -> TokenStream {
    let st = private();
    let ident = table.ident;
    let type_name = ident.to_string();
    let attrs = &table.attrs;
    let name = attrs
        .name
        .as_ref()
        .map(|name| name.value())
        .unwrap_or_else(|| type_name.clone());
    let Some(pk) = attrs.pk.as_ref().map(|pk| pk.value()) else {
        return TokenStream::new();
    };
    let option = |value: Option<String>| match value {
        Some(value) => quote!(#st::Some(#value)),
        None => quote!(#st::None),
    };
    let sk = option(attrs.sk.as_ref().map(|sk| sk.value()));
    let entity_attribute = attrs
        .entity_attribute
        .as_ref()
        .map(|name| name.value())
        .unwrap_or_else(|| "_type".to_owned());
    let schema_version_attribute = attrs
        .schema_version_attribute
        .as_ref()
        .map(|name| name.value())
        .unwrap_or_else(|| "_sv".to_owned());
    let sort_key_impl = if attrs.sk.is_some() {
        quote!(impl #st::HasSortKey for #ident {})
    } else {
        quote!(impl #st::HasNoSortKey for #ident {})
    };
    let mut index_consts = Vec::new();
    let mut index_names = Vec::new();
    let mut index_impls = Vec::new();
    for index in &attrs.indexes {
        let slot_name = index.slot.name();
        let slot = format_ident!("{}", slot_name);
        let index_const = format_ident!("__{}", slot_name.to_uppercase());
        let index_name = index
            .name
            .as_ref()
            .map(|name| name.value())
            .unwrap_or_else(|| slot_name.to_uppercase());
        // A local index's partition key is the table's, always a string.
        let table_partition = [syn::LitStr::new(&pk, Span::call_site())];
        let (kind, partition_names) = match index.slot {
            Slot::Global(_) => (quote!(Global), index.pk.as_slice()),
            Slot::Local(_) => (quote!(Local), &table_partition[..]),
        };
        let keys = |names: &[syn::LitStr], types: &[syn::LitStr]| {
            let attributes = names.iter().enumerate().map(|(position, name)| {
                let kind = match types.get(position).map(syn::LitStr::value).as_deref() {
                    Some("N") => quote!(Number),
                    Some("B") => quote!(Binary),
                    _ => quote!(String),
                };
                quote!(#st::KeyAttribute { name: #name, kind: #st::ScalarType::#kind })
            });
            quote!(&[#(#attributes),*])
        };
        let partition_keys = keys(partition_names, &index.pk_type);
        let sort_keys = keys(&index.sk, &index.sk_type);
        let partition_key = partition_names
            .first()
            .map(syn::LitStr::value)
            .unwrap_or_default();
        let sort_key = option(index.sk.first().map(syn::LitStr::value));
        let sort_key_marker = if index.sk.is_empty() {
            quote!(#st::WithoutSortKey)
        } else {
            quote!(#st::WithSortKey)
        };
        index_consts.push(quote! {
            const #index_const: #st::IndexSchema = #st::IndexSchema {
                slot: #slot_name,
                name: #index_name,
                kind: #st::IndexKind::#kind,
                partition_key: #partition_key,
                sort_key: #sort_key,
                partition_keys: #partition_keys,
                sort_keys: #sort_keys,
            };
        });
        index_names.push(index_const.clone());
        index_impls.push(quote! {
            #[automatically_derived]
            impl #st::DeclaresIndex<#st::index::#slot> for #ident {
                const INDEX: &'static #st::IndexSchema = &#index_const;
                type SortKey = #sort_key_marker;
            }
        });
    }
    quote! {
        const _: () = {
            #(#index_consts)*

            #[automatically_derived]
            impl #st::Table for #ident {
                const SCHEMA: &'static #st::TableSchema = &#st::TableSchema {
                    type_name: #type_name,
                    name: #name,
                    partition_key: #pk,
                    sort_key: #sk,
                    entity_attribute: #entity_attribute,
                    schema_version_attribute: #schema_version_attribute,
                    indexes: &[#(#index_names),*],
                };
            }

            #[automatically_derived]
            #sort_key_impl

            #(#index_impls)*
        };
    }
}

pub fn derive_key_part(input: &DeriveInput) -> TokenStream {
    let st = private();
    let ident = &input.ident;
    let Data::Enum(data) = &input.data else {
        return syn::Error::new_spanned(
            ident,
            "`KeyPart` can be derived for enums with unit variants only; for other types implement `singletable::KeyPart` and `singletable::KeyField`",
        )
        .to_compile_error();
    };
    let mut cx = Ctxt::default();
    let rename_all = attr::serde_rename_all(&input.attrs);
    let mut variants = Vec::new();
    for variant in &data.variants {
        if !matches!(variant.fields, Fields::Unit) {
            cx.error_spanned_by(
                variant,
                format!(
                    "variant `{}` has fields; only unit variants have a fixed key text",
                    variant.ident
                ),
            );
            continue;
        }
        let text = attr::serde_rename(&variant.attrs).unwrap_or_else(|| match &rename_all {
            Some(rule) => attr::apply_rename_all(rule, &variant.ident.to_string(), true),
            None => variant.ident.to_string(),
        });
        // The key-overlap check relies on parts writing no separator a template could use.
        if let Some(separator) = text
            .chars()
            .find(|c| !c.is_alphanumeric() && !"-:.+_".contains(*c))
        {
            // At the serde attribute that names it, else at the variant's name.
            let at: &dyn quote::ToTokens = match variant
                .attrs
                .iter()
                .find(|attribute| attribute.path().is_ident("serde"))
            {
                Some(attribute) => attribute,
                None => &variant.ident,
            };
            cx.error_spanned_by(
                at,
                format!(
                    "the key text {text:?} of `{}` contains {separator:?}, which key templates use to separate their parts; key parts write only letters, digits, `-`, `:`, `.`, `+` and `_`, so that no key can be read as another's: rename the variant for serde (`#[serde(rename = \"...\")]`)",
                    variant.ident
                ),
            );
            continue;
        }
        variants.push((&variant.ident, text));
    }
    if variants.is_empty() && !cx.has_errors() {
        cx.error_spanned_by(ident, "`KeyPart` needs at least one variant");
    }
    if cx.has_errors() {
        return cx.to_compile_errors();
    }
    let render_arms = variants
        .iter()
        .map(|(variant, text)| quote!(#ident::#variant => #text));
    let parse_arms = variants
        .iter()
        .map(|(variant, text)| quote!(#text => #st::Ok(#ident::#variant)));
    let expected = format!(
        "one of {}",
        variants
            .iter()
            .map(|(_, text)| format!("`{text}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    quote! {
        #[automatically_derived]
        impl #st::KeyPart for #ident {
            fn render_part(&self, _: #st::PartContext, out: &mut #st::String) -> #st::Result<(), #st::KeyError> {
                out.push_str(match self { #(#render_arms),* });
                #st::Ok(())
            }
        }

        #[automatically_derived]
        impl #st::KeyField for #ident {
            type Borrowed = Self;

            fn parse_part(text: &str, _: #st::Option<u8>) -> #st::Result<Self, #st::PartError> {
                match text {
                    #(#parse_arms,)*
                    _ => #st::Err(#st::PartError { expected: #expected }),
                }
            }
        }
    }
}

pub fn derive_collection(input: &DeriveInput) -> TokenStream {
    let st = private();
    let ident = &input.ident;
    let Data::Enum(data) = &input.data else {
        return syn::Error::new_spanned(
            ident,
            "`Collection` is derived for an enum with one variant per entity, e.g. `enum Workspace { Document(Document), Comment(Comment) }`",
        )
        .to_compile_error();
    };
    let mut cx = Ctxt::default();
    let mut variants = Vec::new();
    for variant in &data.variants {
        match &variant.fields {
            Fields::Unnamed(fields) if fields.unnamed.len() == 1 => {
                if let Some(field) = fields.unnamed.first() {
                    variants.push((&variant.ident, &field.ty));
                }
            }
            _ => cx.error_spanned_by(
                variant,
                format!(
                    "variant `{}` must hold exactly one entity, e.g. `{}(Entity)`",
                    variant.ident, variant.ident
                ),
            ),
        }
    }
    let Some((_, first)) = variants.first() else {
        if !cx.has_errors() {
            cx.error_spanned_by(ident, "a collection needs at least one entity variant");
        }
        return cx.to_compile_errors();
    };
    if cx.has_errors() {
        return cx.to_compile_errors();
    }
    let table = quote!(<#first as #st::Entity>::Table);
    let name = ident.to_string();
    let arms = variants.iter().map(|(variant, ty)| {
        quote! {
            if found == #st::Some(<#ty as #st::Entity>::SCHEMA.name) {
                return #st::decode::<#ty>(item).map(#ident::#variant);
            }
        }
    });
    let names = variants
        .iter()
        .map(|(_, ty)| quote!(<#ty as #st::Entity>::SCHEMA.name));
    let checks = variants.iter().map(|(_, ty)| {
        let span = syn::spanned::Spanned::span(ty);
        respan(quote!(#st::assert_in_table::<#table, #ty>();), span)
    });
    // Every pair of entities, checked by constant evaluation and reported at the later one.
    let (table_ref, st_ref, variants_ref) = (&table, &st, &variants);
    let disjoint = variants
        .iter()
        .enumerate()
        .flat_map(|(position, (_, later))| {
            let (table, st) = (table_ref, st_ref);
            variants_ref[..position].iter().map(move |(_, earlier)| {
                let span = syn::spanned::Spanned::span(later);
                respan(
                    quote! {
                        const _: () = #st::assert_disjoint(
                            <#table as #st::Table>::SCHEMA,
                            <#later as #st::Entity>::SCHEMA,
                            <#earlier as #st::Entity>::SCHEMA,
                        );
                    },
                    span,
                )
            })
        });
    quote! {
        const _: () = {
            #[automatically_derived]
            impl #st::Collection for #ident {
                type Table = #table;
                const ENTITIES: &'static [&'static str] = &[#(#names),*];

                fn decode_item(item: #st::Item) -> #st::Result<Self, #st::DecodeError> {
                    let found = #st::entity_name::<#table>(&item);
                    #(#arms)*
                    #st::Err(#st::unknown_entity::<#table>(&item, #name))
                }
            }

            #[automatically_derived]
            impl #st::Decode for #ident {
                const ONLY_ENTITY: #st::Option<&'static str> = #st::None;
                const ENTITIES: &'static [&'static str] = <Self as #st::Collection>::ENTITIES;
                const NAME: &'static str = #name;

                fn decode(item: #st::Item) -> #st::Result<Self, #st::DecodeError> {
                    <Self as #st::Collection>::decode_item(item)
                }
            }

            #[allow(dead_code)]
            fn __singletable_checks() {
                #(#checks)*
            }

            #(#disjoint)*
        };
    }
}

pub fn test(args: TokenStream, function: &syn::ItemFn) -> TokenStream {
    let st = private();
    if !args.is_empty() {
        return syn::Error::new_spanned(args, "`#[singletable::test]` takes no arguments")
            .to_compile_error();
    }
    let signature = &function.sig;
    if signature.asyncness.is_none() {
        return syn::Error::new_spanned(
            signature.fn_token,
            "`#[singletable::test]` needs an `async fn`",
        )
        .to_compile_error();
    }
    let mut inputs = signature.inputs.iter();
    let (Some(syn::FnArg::Typed(argument)), None) = (inputs.next(), inputs.next()) else {
        return syn::Error::new_spanned(
            &signature.inputs,
            "`#[singletable::test]` takes one argument, the test's table: `db: singletable::Db<App>`",
        )
        .to_compile_error();
    };
    let pattern = &argument.pat;
    let ty = &argument.ty;
    let name = &signature.ident;
    let attrs = &function.attrs;
    let body = &function.block;
    let output = match &signature.output {
        syn::ReturnType::Default => quote!(()),
        syn::ReturnType::Type(_, ty) => quote!(#ty),
    };
    quote! {
        #[::core::prelude::v1::test]
        #(#attrs)*
        fn #name() {
            #st::testing::run(|#pattern: #ty| async move {
                let outcome: #output = async move #body.await;
                outcome
            })
        }
    }
}
