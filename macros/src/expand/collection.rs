//! `#[derive(Collection)]`: an enum of entities read from one partition, checked for key
//! overlaps at compile time.

use super::tokens::{private, respan};
use crate::ast::CollectionEnum;
use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

pub fn derive_collection(input: &DeriveInput) -> TokenStream {
    let mut cx = Ctxt::default();
    let parsed = CollectionEnum::from_syn(&mut cx, input);
    if let Some(parsed) = &parsed {
        parsed.validate(&mut cx);
    }
    match parsed {
        Some(parsed) if !cx.has_errors() => expand(&parsed),
        // The errors, and the impls with no behaviour, so that uses of the collection report
        // nothing more.
        Some(parsed) => {
            let mut tokens = cx.to_compile_errors();
            tokens.extend(stub(&parsed));
            tokens
        }
        None => cx.to_compile_errors(),
    }
}

/// `Collection` and `Decode` for an enum whose derive failed, when it names an entity whose
/// table it can take.
fn stub(parsed: &CollectionEnum) -> TokenStream {
    let st = private();
    let ident = parsed.ident;
    let Some(table) = shared_table(parsed) else {
        return TokenStream::new();
    };
    let name = ident.to_string();
    quote! {
        #[automatically_derived]
        impl #st::Collection for #ident {
            type Table = #table;
            const ENTITIES: &'static [&'static str] = &[];

            fn decode_item(item: #st::Item) -> #st::Result<Self, #st::DecodeError> {
                #st::Err(#st::unknown_entity::<#table>(&item, #name))
            }
        }

        #[automatically_derived]
        impl #st::BatchTarget for #ident {
            type Table = #table;
            type Key = #st::CollectionKey;

            fn attributes(key: &#st::CollectionKey) -> #st::Item {
                #st::key_attributes(&key.key)
            }
        }

        #[automatically_derived]
        impl #st::Decode for #ident {
            const ONLY_ENTITY: #st::Option<&'static str> = #st::None;
            const ENTITIES: &'static [&'static str] = &[];
            const SCHEMAS: &'static [&'static #st::EntitySchema] = &[];
            const NAME: &'static str = #name;

            fn decode(item: #st::Item) -> #st::Result<Self, #st::DecodeError> {
                <Self as #st::Collection>::decode_item(item)
            }
        }
    }
}

fn expand(parsed: &CollectionEnum) -> TokenStream {
    let st = private();
    let ident = parsed.ident;
    let variants = &parsed.variants;
    let Some(shared) = shared_table(parsed) else {
        return TokenStream::new();
    };
    let table = quote!(<#ident as #st::Collection>::Table);
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
    let schemas: Vec<_> = variants.iter().map(|(_, ty)| ty).collect();
    // What a mixed batch read takes keys of.
    let members = variants.iter().map(|(_, ty)| {
        quote! {
            #[automatically_derived]
            impl #st::MemberOf<#ident> for #ty {}
        }
    });
    // The first entity's table is the collection's (or the first entity's is unknown, which
    // passes): its check could only repeat another error, such as a variant that is no entity.
    let checks = variants.iter().skip(1).map(|(_, ty)| {
        let span = syn::spanned::Spanned::span(ty);
        respan(
            quote!(const _: () = <#ty as #st::InTable<#table>>::CHECKED;),
            span,
        )
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
                        const _: () = if let #st::Some(message) = #st::collection_overlap(
                            <#table as #st::Table>::SCHEMA,
                            <#later as #st::Entity>::SCHEMA,
                            <#earlier as #st::Entity>::SCHEMA,
                        ) {
                            // Evaluated by the compiler in this constant, from the user's
                            // declarations: the compile error naming the overlapping entities.
                            ::core::panic!("{}", message.as_str()) // ok: a const; it never runs in the program.
                        };
                    },
                    span,
                )
            })
        });
    quote! {
        #[automatically_derived]
        impl #st::Collection for #ident {
            type Table = #shared;
            const ENTITIES: &'static [&'static str] = &[#(#names),*];

            #[inline]
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
            const SCHEMAS: &'static [&'static #st::EntitySchema] = &[#(<#schemas as #st::Entity>::SCHEMA),*];
            const NAME: &'static str = #name;

            #[inline]
            fn decode(item: #st::Item) -> #st::Result<Self, #st::DecodeError> {
                <Self as #st::Collection>::decode_item(item)
            }
        }

        #[automatically_derived]
        impl #st::BatchTarget for #ident {
            type Table = #table;
            type Key = #st::CollectionKey;

            #[inline]
            fn attributes(key: &#st::CollectionKey) -> #st::Item {
                #st::key_attributes(&key.key)
            }
        }

        #(#members)*

        #[automatically_derived]
        impl #st::StreamTarget for #ident {
            type Table = #table;
            type Key = #st::CollectionKey;

            #[inline]
            fn decode_image(item: #st::Item) -> #st::Result<Self, #st::DecodeError> {
                <Self as #st::Collection>::decode_item(item)
            }

            #[inline]
            fn decode_key(keys: &#st::Item) -> #st::Result<#st::CollectionKey, #st::DecodeError> {
                #st::collection_key::<Self>(keys, &[#(<#schemas as #st::Entity>::SCHEMA),*])
            }
        }

        #(#checks)*
        #(#disjoint)*
    }
}

/// The table the variants' entities share: the first declared one among their tables, so that
/// an entity whose derive failed before it knew its table adds no error here.
fn shared_table(parsed: &CollectionEnum) -> Option<TokenStream> {
    let st = private();
    let mut tables = parsed
        .variants
        .iter()
        .map(|(_, ty)| quote!(<#ty as #st::Entity>::Table));
    let first = tables.next()?;
    Some(tables.fold(
        first,
        |shared, table| quote!(<#shared as #st::CollectionTable<#table>>::Out),
    ))
}
