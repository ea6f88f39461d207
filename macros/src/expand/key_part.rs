//! `#[derive(KeyPart)]`: unit enums as key parts, by their serde names.

use super::tokens::private;
use crate::ast::KeyPartEnum;
use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

pub fn derive_key_part(input: &DeriveInput) -> TokenStream {
    let mut cx = Ctxt::default();
    let parsed = KeyPartEnum::from_syn(&mut cx, input);
    if let Some(parsed) = &parsed {
        parsed.validate(&mut cx);
    }
    match parsed {
        Some(parsed) if !cx.has_errors() => expand(&parsed),
        // The errors, and impls with no behaviour, so that templates using the type report
        // nothing more.
        _ => {
            let mut tokens = cx.to_compile_errors();
            tokens.extend(stub(&input.ident));
            tokens
        }
    }
}

/// `KeyPart` and `KeyField` for a type whose derive failed.
fn stub(ident: &syn::Ident) -> TokenStream {
    let st = private();
    quote! {
        #[automatically_derived]
        impl #st::KeyPart for #ident {
            fn render_part(&self, _: #st::PartContext, _: &mut #st::String) -> #st::Result<(), #st::KeyError> {
                #st::Ok(())
            }
        }

        #[automatically_derived]
        impl #st::KeyField for #ident {
            type Borrowed = Self;

            fn parse_part(_: &str, _: #st::Option<u8>) -> #st::Result<Self, #st::PartError> {
                #st::Err(#st::PartError { expected: "" })
            }
        }
    }
}

fn expand(parsed: &KeyPartEnum) -> TokenStream {
    let st = private();
    let ident = parsed.ident;
    let variants: Vec<(&syn::Ident, &String)> = parsed
        .variants
        .iter()
        .map(|variant| (variant.ident, &variant.text))
        .collect();
    let texts = variants.iter().map(|(_, text)| text);
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
    // Ranges on the enum are exact in any position when no variant's name starts another's.
    let prefix_free = variants.iter().all(|(_, text)| {
        variants
            .iter()
            .all(|(_, other)| text == other || !other.starts_with(text.as_str()))
    });
    let prefix_free = prefix_free.then(|| {
        quote! {
            #[automatically_derived]
            impl #st::PrefixFree for #ident {}
        }
    });
    quote! {
        #prefix_free

        #[automatically_derived]
        impl #st::KeyPart for #ident {
            #[inline]
            fn render_part(&self, _: #st::PartContext, out: &mut #st::String) -> #st::Result<(), #st::KeyError> {
                out.push_str(match self { #(#render_arms),* });
                #st::Ok(())
            }
        }

        #[automatically_derived]
        impl #st::KeyField for #ident {
            type Borrowed = Self;
            const SHAPE: #st::PartShape = #st::PartShape::one_of(&[#(#texts),*]);
            // The key text is the variant's serde name.
            const FROM_KEY: #st::Option<#st::FromKey> = #st::Some(#st::text_attribute);

            #[inline]
            fn parse_part(text: &str, _: #st::Option<u8>) -> #st::Result<Self, #st::PartError> {
                match text {
                    #(#parse_arms,)*
                    _ => #st::Err(#st::PartError { expected: #expected }),
                }
            }
        }
    }
}
