//! The typestate of an entity's updates: which index inputs an update changes or knows.

use super::tokens::private;
use crate::ast::Entity;
use crate::template::Template;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

pub(super) fn expand_update_state(entity: &Entity) -> (TokenStream, TokenStream) {
    let st = private();
    let ident = entity.ident;
    let state = format_ident!("__{}UpdateState", ident);
    let key_fields: Vec<&str> = entity
        .attrs
        .pk
        .iter()
        .chain(&entity.attrs.sk)
        .flat_map(Template::fields)
        .collect();
    // Each index's inputs that an update must know, in order, without duplicates.
    let mut indexes = Vec::new();
    let mut inputs: Vec<String> = Vec::new();
    for index in &entity.attrs.indexes {
        let mut own: Vec<String> = Vec::new();
        let names = index
            .pk
            .iter()
            .chain(&index.sk)
            .flat_map(|template| template.fields().map(str::to_owned))
            .chain(
                index
                    .when
                    .iter()
                    .flat_map(|rule| rule.arguments.iter().map(Ident::to_string)),
            );
        for name in names {
            if !key_fields.contains(&name.as_str()) && !own.contains(&name) {
                own.push(name);
            }
        }
        for name in &own {
            if !inputs.contains(name) {
                inputs.push(name.clone());
            }
        }
        if !own.is_empty() {
            indexes.push((index, own));
        }
    }
    let params: Vec<Ident> = (0..inputs.len())
        .map(|position| format_ident!("__A{}", position))
        .collect();
    let untouched = params.iter().map(|_| quote!(#st::state::Untouched));
    let initial = quote!(#state<#(#untouched),*>);
    let mut touches = Vec::new();
    for (position, field) in entity.fields.iter().enumerate() {
        let name = syn::ext::IdentExt::unraw(field.ident).to_string();
        let out = match inputs.iter().position(|input| *input == name) {
            Some(slot) => {
                let states = params.iter().enumerate().map(|(index, param)| {
                    if index == slot {
                        quote!(<#param as #st::state::Join<__M>>::Out)
                    } else {
                        quote!(#param)
                    }
                });
                let joined = &params[slot];
                touches.push(quote! {
                    impl<#(#params,)* __M> #st::state::Touch<#position, __M> for #state<#(#params),*>
                    where #joined: #st::state::Join<__M>
                    {
                        type Out = #state<#(#states),*>;
                    }
                });
                continue;
            }
            None => quote!(Self),
        };
        touches.push(quote! {
            impl<#(#params,)* __M> #st::state::Touch<#position, __M> for #state<#(#params),*> {
                type Out = #out;
            }
        });
    }
    let mut checks = Vec::new();
    let mut bounds = Vec::new();
    for (index, own) in &indexes {
        let slot = index.slot.name();
        let fold = |bit: &str, op: &str, empty: TokenStream| {
            let bit = format_ident!("{}", bit);
            let op = format_ident!("{}", op);
            own.iter().rev().fold(empty, |rest, name| {
                let param = inputs
                    .iter()
                    .position(|input| input == name)
                    .map(|position| params[position].clone());
                quote!(<<#param as #st::state::InputState>::#bit as #st::state::Bit>::#op<#rest>)
            })
        };
        let changes = fold("Changes", "Or", quote!(#st::state::No));
        let templates = index
            .pk
            .iter()
            .map(|template| format!("{slot}pk = {:?}", template.literal.value()))
            .chain(
                index
                    .sk
                    .iter()
                    .map(|template| format!("{slot}sk = {:?}", template.literal.value())),
            )
            .chain(index.when.iter().map(|rule| {
                let expr = &rule.expr;
                format!(
                    "{slot}_when = {}",
                    quote!(#expr).to_string().replace(' ', "")
                )
            }))
            .collect::<Vec<_>>()
            .join(", ")
            .replace('{', "{{")
            .replace('}', "}}");
        let label = format!("this update would leave index `{slot}` stale");
        // One check per input, so that each input still unknown is its own error, named.
        for name in own {
            let check = format_ident!("__{}_{}_needs_{}", ident, slot, name);
            let param = inputs
                .iter()
                .position(|input| input == name)
                .map(|position| params[position].clone());
            let known = quote!(<#param as #st::state::InputState>::Known);
            let message = format!(
                "this update changes an input of index `{slot}` of `{ident}`, so it must also know `{name}`: without it the index key cannot be recomputed"
            );
            let note = format!(
                "`{slot}` is {templates}; set `{name}`, or supply its current value with `.given({ident}::{}, current)`, which the request also asserts; a value changed by `add`, `increment` or `append` is unknown and cannot feed an index",
                name.to_uppercase()
            );
            checks.push(quote! {
                #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
                #[allow(non_camel_case_types)]
                trait #check {}
                impl #check for #st::state::Complete {}
            });
            bounds.push(quote!((#changes, #known): #st::state::Verdict));
            bounds.push(quote!(<(#changes, #known) as #st::state::Verdict>::Out: #check));
        }
    }
    let phantom = quote!(::core::marker::PhantomData<fn() -> (#(#params,)*)>);
    let items = quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        pub struct #state<#(#params),*>(#phantom);

        #(#touches)*

        #(#checks)*

        impl<#(#params: #st::state::InputState),*> #st::state::UpdateComplete for #state<#(#params),*>
        where #(#bounds,)*
        {}
    };
    (initial, items)
}
