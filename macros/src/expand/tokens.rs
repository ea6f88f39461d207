//! Token helpers every derive's expansion uses.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{quote, ToTokens};

pub(crate) fn private() -> TokenStream {
    quote!(::singletable::__private)
}

/// The same tokens, all at `span`: a check on the table type then points at the template.
pub(crate) fn respan(tokens: impl ToTokens, span: Span) -> TokenStream {
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

/// The identifier of field `name` (as templates write it), raw where it is a keyword: the
/// field `r#type` is `{type}` in a template.
pub(crate) fn field_ident(name: &str, span: Span) -> proc_macro2::Ident {
    if syn::parse_str::<proc_macro2::Ident>(name).is_ok() {
        proc_macro2::Ident::new(name, span)
    } else {
        proc_macro2::Ident::new_raw(name, span)
    }
}
