//! Token helpers every derive's expansion uses.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{quote, ToTokens};

/// The runtime's derive support, as derive output names it: the alias `private_scope`
/// declares. Every token of the output crosses the compiler's proc-macro bridge and is parsed
/// and resolved again; the alias is 3 tokens where the full path is 8, and paths into it are
/// a third of the tokens an entity's expansion has (bench-compile/parts.py).
pub(crate) fn private() -> TokenStream {
    quote!(__singletable)
}

/// The full path, for output that is not inside a `private_scope` (the test attribute's).
pub(crate) fn private_path() -> TokenStream {
    quote!(::singletable::__private)
}

/// A derive's whole output, in an anonymous constant that declares the alias `private` names.
/// Its items are impls and the field markers, none of which needs a name outside.
pub fn private_scope(output: TokenStream) -> TokenStream {
    quote! {
        const _: () = {
            #[allow(unused_imports)]
            use ::singletable::__private as __singletable;
            #output
        };
    }
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
