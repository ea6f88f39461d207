//! `#[singletable::test]`: an async test with its own table on the local engine.

use super::tokens::private_path;
use crate::ast::TestFn;
use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::quote;

pub fn test(args: TokenStream, function: &syn::ItemFn) -> TokenStream {
    let mut cx = Ctxt::default();
    match TestFn::from_syn(&mut cx, &args, function) {
        Some(test) if !cx.has_errors() => expand(&test),
        // The errors, and the function as written, so that its body is still checked.
        _ => {
            let mut tokens = cx.to_compile_errors();
            tokens.extend(quote! {
                #[allow(dead_code)]
                #function
            });
            tokens
        }
    }
}

fn expand(test: &TestFn) -> TokenStream {
    let st = private_path();
    let function = test.function;
    let pattern = &test.argument.pat;
    let ty = &test.argument.ty;
    let name = &function.sig.ident;
    let attrs = &function.attrs;
    let body = &function.block;
    let output = match &function.sig.output {
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
