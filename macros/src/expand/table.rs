//! `#[derive(Table)]`: the table's schema and its index markers.

use super::tokens::private;
use crate::ast::Table;
use crate::attr::{ProjectionAttr, Slot};
use crate::ctxt::Ctxt;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::DeriveInput;

pub fn derive_table(input: &DeriveInput) -> TokenStream {
    let mut cx = Ctxt::default();
    let table = Table::from_syn(&mut cx, input);
    table.validate(&mut cx);
    // After errors the table is still expanded (what is wrong falls back to a default), so
    // entities naming it report their own mistakes rather than a missing `Table`.
    [cx.to_compile_errors(), expand_table(&table)]
        .into_iter()
        .collect()
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
    let entity_attribute = attrs.entity_attribute_name();
    let schema_version_attribute = attrs.schema_version_attribute_name();
    let ttl_attribute = option(attrs.ttl.as_ref().map(syn::LitStr::value));
    // Validated: one of the four views.
    let view = attrs
        .stream
        .as_ref()
        .map(|view| match view.value().as_str() {
            "new_image" => quote!(NewImage),
            "old_image" => quote!(OldImage),
            "keys_only" => quote!(KeysOnly),
            _ => quote!(NewAndOldImages),
        });
    let (stream, stream_type) = match &view {
        Some(view) => (
            quote!(#st::Some(#st::StreamViewType::#view)),
            quote!(#st::#view),
        ),
        None => (quote!(#st::None), quote!(#st::NoStream)),
    };
    let expiring_impl = attrs
        .ttl
        .is_some()
        .then(|| quote!(#[automatically_derived] impl #st::ExpiringTable for #ident {}));
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
        let index_name = index.dynamo_name();
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
        let (projection, projection_type) = match &index.projection {
            Some(ProjectionAttr::Include(_, attributes)) => {
                // The entity attribute and TTL attribute go along, so that reads of the index
                // still tell entities apart and hide expired items.
                let mut listed: Vec<String> = attributes.iter().map(syn::LitStr::value).collect();
                for added in std::iter::once(&entity_attribute)
                    .chain(attrs.ttl.as_ref().map(|ttl| ttl.value()).as_ref())
                {
                    if !listed.contains(added) {
                        listed.push(added.clone());
                    }
                }
                (
                    quote!(#st::IndexProjection::Include(&[#(#listed),*])),
                    quote!(#st::ProjectsSome),
                )
            }
            // With a TTL, the entries must hold the expiry for reads to hide expired items, so
            // the index projects it and the entity attribute (an INCLUDE index); queries of it
            // still read keys.
            Some(ProjectionAttr::Named(name)) if name.value() == "keys_only" => match &attrs.ttl {
                Some(ttl) => {
                    let ttl = ttl.value();
                    (
                        quote!(#st::IndexProjection::Include(&[#entity_attribute, #ttl])),
                        quote!(#st::ProjectsKeys),
                    )
                }
                None => (
                    quote!(#st::IndexProjection::KeysOnly),
                    quote!(#st::ProjectsKeys),
                ),
            },
            _ => (quote!(#st::IndexProjection::All), quote!(#st::ProjectsAll)),
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
                projection: #projection,
            };
        });
        index_names.push(index_const.clone());
        index_impls.push(quote! {
            #[automatically_derived]
            impl #st::DeclaresIndex<#st::index::#slot> for #ident {
                const INDEX: &'static #st::IndexSchema = &#index_const;
                type SortKey = #sort_key_marker;
                type Projection = #projection_type;
            }
        });
    }
    quote! {
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
                ttl_attribute: #ttl_attribute,
                stream: #stream,
            };
            type Stream = #stream_type;
        }

        #[automatically_derived]
        impl #st::DeclaredTable for #ident {}

        #[automatically_derived]
        #sort_key_impl

        #expiring_impl

        #(#index_impls)*
    }
}
