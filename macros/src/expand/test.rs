//! `#[singletable::test]`: an async test with its own table on the local engine.

use super::tokens::private;
use proc_macro2::TokenStream;
use quote::quote;

pub fn test(args: TokenStream, function: &syn::ItemFn) -> TokenStream {
    let st = private();
    if !args.is_empty() {
        return syn::Error::new_spanned(args, "`#[singletable::test]` takes no arguments")
            .to_compile_error();
    }
    let signature = &function.sig;
    if signature.asyncness.is_none() {
        return syn::Error::new_spanned(
            signature.fn_token,
            "`#[singletable::test]` needs an `async fn`",
        )
        .to_compile_error();
    }
    let mut inputs = signature.inputs.iter();
    let (Some(syn::FnArg::Typed(argument)), None) = (inputs.next(), inputs.next()) else {
        return syn::Error::new_spanned(
            &signature.inputs,
            "`#[singletable::test]` takes one argument, the test's table: `db: singletable::Db<App>`",
        )
        .to_compile_error();
    };
    let pattern = &argument.pat;
    let ty = &argument.ty;
    let name = &signature.ident;
    let attrs = &function.attrs;
    let body = &function.block;
    let output = match &signature.output {
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
