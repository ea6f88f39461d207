//! Code generation: static schema data plus thin calls into `singletable-runtime`.

mod collection;
mod entity;
mod key_part;
mod queries;
mod table;
mod test;
mod update_state;

pub use collection::derive_collection;
pub use entity::derive_entity;
pub use key_part::derive_key_part;
pub use table::derive_table;
pub use test::test;

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
