//! `#[derive(KeyPart)]`: unit enums as key parts, by their serde names.

use super::tokens::private;
use crate::attr::{self};
use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Fields};

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
