//! `#[derive(Projection)]`: attributes of an entity read from the table, or from one index,
//! each checked at compile time against what the table declares the index holds.

use super::tokens::{private, respan};
use crate::ast::ProjectionStruct;
use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::DeriveInput;

pub fn derive_projection(input: &DeriveInput) -> TokenStream {
    let mut cx = Ctxt::default();
    let parsed = ProjectionStruct::from_syn(&mut cx, input);
    if let Some(parsed) = &parsed {
        parsed.validate(&mut cx);
    }
    match parsed {
        Some(parsed) if !cx.has_errors() => expand(&parsed),
        // The errors, and the impls with nothing checked, so that the projection's uses
        // report nothing more.
        Some(parsed) => {
            let mut tokens = cx.to_compile_errors();
            tokens.extend(impls(&parsed, &[]));
            tokens
        }
        None => cx.to_compile_errors(),
    }
}

fn expand(parsed: &ProjectionStruct) -> TokenStream {
    let st = private();
    let Some(entity) = &parsed.attrs.entity else {
        return TokenStream::new();
    };
    let entity_name = quote!(#entity).to_string().replace(' ', "");
    // One check per field, at the field, so the error points at the attribute that is not
    // there: not one of the entity's, or, for an index, not one the index holds. What names
    // the entity is at the entity's path: when it is no entity, every field's check then
    // fails there alike, and rustc reports it once.
    let entity_span = syn::spanned::Spanned::span(entity);
    let table = respan(quote!(<#entity as #st::Entity>::Table), entity_span);
    let schemas = respan(
        quote!(<#entity as #st::Entity>::SCHEMA, <#table as #st::Table>::SCHEMA),
        entity_span,
    );
    let checks: Vec<TokenStream> = parsed
        .fields
        .iter()
        .map(|(field, attribute)| {
            // At the field: the tokens written here; the entity's paths keep the entity's span.
            let span = field.span();
            let held = parsed.attrs.index.as_ref().map(|(slot, _)| {
                let message = format!(
                    "`{attribute}` is not projected into index `{slot}` of `{entity_name}`'s table: add it to the index's `projection = [..]`, or read whole items with `.hydrate()`"
                );
                quote_spanned! {span=>
                    else if !#st::index_holds::<#table, #st::index::#slot>(#attribute) {
                        ::core::panic!(#message) // ok: a const; it never runs in the program.
                    }
                }
            });
            quote_spanned! {span=>
                const _: () = if let #st::Some(message) = #st::unknown_attribute(#schemas, #attribute) {
                    // Evaluated by the compiler in this constant: the compile error at the field.
                    ::core::panic!("{}", message.as_str()) // ok: a const; it never runs in the program.
                } #held;
            }
        })
        .collect();
    impls(parsed, &checks)
}

/// `Projection` and `ProjectionOf` for the struct, with `checks` beside them.
fn impls(parsed: &ProjectionStruct, checks: &[TokenStream]) -> TokenStream {
    let st = private();
    let ident = parsed.ident;
    let Some(entity) = &parsed.attrs.entity else {
        return TokenStream::new();
    };
    let index = match &parsed.attrs.index {
        None => quote!(#st::primary),
        Some((slot, Some(_))) => {
            let slot = format_ident!("{}", slot.to_string(), span = slot.span());
            quote!(#st::index::#slot)
        }
        Some((_, None)) => return TokenStream::new(),
    };
    let attributes = parsed.fields.iter().map(|(_, attribute)| attribute);
    quote! {
        #[automatically_derived]
        impl #st::Projection<#entity> for #ident {
            const ATTRIBUTES: &'static [&'static str] = &[#(#attributes),*];

            fn from_item(item: #st::Item) -> #st::Result<Self, #st::DecodeError> {
                #st::decode_fields::<#entity, Self>(item)
            }
        }

        #[automatically_derived]
        impl #st::ProjectionOf<#entity, #index> for #ident {}

        #(#checks)*
    }
}
