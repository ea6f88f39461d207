//! The typestate of an entity's updates: which index inputs an update changes or knows.

use super::markers::Markers;
use super::tokens::private;
use crate::ast::Entity;
use crate::attr::{EntityIndexAttr, FieldRole};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

/// The entity's update state, a tuple with one element per field that feeds an index (primary
/// key fields excepted); `Touch` for every field; and `UpdateComplete` when, for every index,
/// no input changes or every input is known, with one `Knows` bound per input so that the
/// error names the index and the input.
/// `index_inputs` is what [`index_inputs`] found, which the markers use too.
pub(super) fn expand_update_state(
    entity: &Entity,
    markers: &Markers,
    (indexes, inputs, sentinel_inputs): &IndexInputs,
) -> (TokenStream, TokenStream) {
    let st = private();
    let ident = entity.ident;
    // Named after their fields, as errors show them (`UpdateComplete<(StatusState, ..)>`).
    let mut params: Vec<Ident> = Vec::new();
    for (position, name) in inputs.iter().enumerate() {
        let mut param = format_ident!("{}State", camel_case(name));
        // `a_b` and `a__b` are both `AB`.
        if params.contains(&param) {
            param = format_ident!("{}State{}", camel_case(name), position);
        }
        params.push(param);
    }
    let untouched = params.iter().map(|_| quote!(#st::state::Untouched));
    let initial = quote!((#(#untouched,)*));
    let state = quote!((#(#params,)*));
    // Only the fields an index reads change the state; the runtime's `NoInput` leaves it as
    // it is for the others, without an impl per field.
    let mut touches = Vec::new();
    for (slot, name) in inputs.iter().enumerate() {
        let Some(marker) = markers.named(entity, name) else {
            continue;
        };
        let states = params.iter().enumerate().map(|(index, param)| {
            if index == slot {
                quote!(<#param as #st::state::Join<__M>>::Out)
            } else {
                quote!(#param)
            }
        });
        let joined = &params[slot];
        touches.push(quote! {
            #[automatically_derived]
            impl<#(#params,)* __M> #st::state::TouchInput<#state, __M> for #marker
            where #joined: #st::state::Join<__M>
            {
                type Out = (#(#states,)*);
            }
        });
    }
    let mut bounds = Vec::new();
    for (index, own) in indexes {
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
        // The first input the update changes, for the message (any type when none does).
        let changed = own.iter().rev().fold(quote!(#st::state::Untouched), |rest, name| {
            let param = inputs
                .iter()
                .position(|input| input == name)
                .map(|position| params[position].clone());
            let marker = markers.named(entity, name);
            quote!(<<#param as #st::state::InputState>::Changes as #st::state::Bit>::Pick<#marker, #rest>)
        });
        let slot = format_ident!("{}", index.slot.name());
        for name in own {
            let param = inputs
                .iter()
                .position(|input| input == name)
                .map(|position| params[position].clone());
            let known = quote!(<#param as #st::state::InputState>::Known);
            let marker = markers.named(entity, name);
            bounds.push(quote!((#changes, #known): #st::state::Verdict));
            bounds.push(quote!(<(#changes, #known) as #st::state::Verdict>::Out: #st::state::Knows<#ident, #st::index::#slot, #changed, #marker>));
        }
    }
    // With unique values, a hand-built transaction takes only updates that leave the
    // sentinels' fields unchanged (the entity is its own rule); without, every update
    // (`AnyUpdate`, the rule the `Entity` impl names).
    let in_transaction = sentinel_inputs.as_ref().map(|sentinels| {
        let keeps = sentinels.iter().filter_map(|name| {
            let param = &params[inputs.iter().position(|input| input == name)?];
            let marker = markers.named(entity, name)?;
            Some(quote!(#param: #st::KeepsSentinels<#ident, #marker>))
        });
        // Spanned at the entity's name, as `UpdateComplete` below.
        super::tokens::respan(
            quote! {
                #[automatically_derived]
                impl<#(#params),*> #st::InTransaction<#ident, #state> for #ident
                where #(#keeps,)*
                {}
            },
            ident.span(),
        )
    });
    // Spanned at the entity's name, not at the derive: rustc advises "manually implementing"
    // a trait whose derived impl has an unmet bound, and this one is the library's to write.
    let complete = super::tokens::respan(
        quote! {
            #[automatically_derived]
            impl<#(#params: #st::state::InputState),*> #st::state::UpdateComplete<#state> for #ident
            where #(#bounds,)*
            {}
        },
        ident.span(),
    );
    let items = quote! {
        #(#touches)*

        #complete

        #in_transaction
    };
    (initial, items)
}

/// Each index with the inputs an update must know of it; every field whose update changes the
/// state; and, for an entity with unique values, the fields whose change rewrites its
/// sentinels.
pub(super) type IndexInputs<'e> = (
    Vec<(&'e EntityIndexAttr, Vec<String>)>,
    Vec<String>,
    Option<Vec<String>>,
);

/// Each index's inputs that an update must know (fields of the primary key excepted), in
/// order and without duplicates, and all of them: the fields whose updates change the state,
/// with (for an entity with unique values) the unique values and the expiry, whose change
/// rewrites the item's sentinels.
pub(super) fn index_inputs<'e>(entity: &'e Entity) -> IndexInputs<'e> {
    let key_fields = entity.primary_key_fields();
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
    let sentinel_inputs = entity.has_unique_values().then(|| {
        let names = entity.fields.iter().filter_map(|field| {
            let name = syn::ext::IdentExt::unraw(field.ident).to_string();
            let expiry = matches!(field.role, Some((FieldRole::Ttl, _)));
            let changes = expiry || entity.is_unique(&name);
            (changes && !key_fields.contains(&name.as_str())).then_some(name)
        });
        let names: Vec<String> = names.collect();
        for name in &names {
            if !inputs.contains(name) {
                inputs.push(name.clone());
            }
        }
        names
    });
    (indexes, inputs, sentinel_inputs)
}

/// `team_id` as `TeamId`.
fn camel_case(name: &str) -> String {
    name.trim_start_matches("r#")
        .split('_')
        .map(|word| {
            let mut chars = word.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect(),
                None => String::new(),
            }
        })
        .collect()
}
