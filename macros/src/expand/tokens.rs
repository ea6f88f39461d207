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
