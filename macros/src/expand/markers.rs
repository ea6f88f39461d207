//! Each field's marker type, named as the entity and the field (`Order_id`): the type parameter
//! of its typed path, and what the update, query and unique-value traits are implemented for.
//! A compile error about a field then names it as the user wrote it, with its entity
//! (`` `Ticket_status` is not the next sort key part ``). The entity's name keeps the marker's
//! name unique in the crate: rustc prints a type whose name another type shares by its path,
//! which for a marker in the derive's anonymous block is `_::id`. (A middle dot, `Order·id`,
//! would read better, but a crate that denies `non_ascii_idents` could not derive.)

use super::tokens::private;
use crate::ast::{Entity, StoredForm};
use crate::attr::FieldRole;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

/// The marker of every field of an entity, by position.
pub(super) struct Markers {
    names: Vec<Ident>,
}

impl Markers {
    pub(super) fn new(entity: &Entity) -> Self {
        // With the entity's name, the marker shadows no type or module that the derive's block
        // names (a field `uuid: uuid::Uuid`).
        let entity_name = syn::ext::IdentExt::unraw(entity.ident).to_string();
        let names = entity
            .fields
            .iter()
            .map(|field| {
                let name = syn::ext::IdentExt::unraw(field.ident).to_string();
                format_ident!("{}_{}", entity_name, name, span = field.ident.span())
            })
            .collect();
        Markers { names }
    }

    /// The marker of the field at `position`.
    pub(super) fn at(&self, position: usize) -> &Ident {
        &self.names[position]
    }

    /// The marker of the field named `name` (as templates write it).
    pub(super) fn named(&self, entity: &Entity, name: &str) -> Option<&Ident> {
        entity
            .fields
            .iter()
            .position(|field| syn::ext::IdentExt::unraw(field.ident) == name)
            .map(|position| self.at(position))
    }

    /// The markers, and what each field is to the entity: its position, its role and its
    /// input.
    /// `inputs` are the fields an index reads, whose markers carry their updates' effect on the
    /// update state.
    pub(super) fn items(&self, entity: &Entity, inputs: &[String]) -> TokenStream {
        let st = private();
        let ident = entity.ident;
        let key_fields = entity.primary_key_fields();
        let items = entity.fields.iter().enumerate().map(|(position, field)| {
            let marker = self.at(position);
            let name = syn::ext::IdentExt::unraw(field.ident).to_string();
            let role = if key_fields.contains(&name.as_str()) {
                quote!(Key)
            } else {
                match field.role {
                    Some((FieldRole::Version | FieldRole::CreatedAt | FieldRole::UpdatedAt, _)) => {
                        quote!(Managed)
                    }
                    _ if entity.is_unique(&name) => quote!(Unique),
                    _ => quote!(Plain),
                }
            };
            let input = if inputs.contains(&name) {
                quote!(Self)
            } else {
                quote!(#st::state::NoInput)
            };
            let stored = match field.stored_form() {
                StoredForm::Ttl => Some(quote!(#st::ttl_form(<#ident as #st::Entity>::SCHEMA))),
                StoredForm::Set => Some(quote!(#st::Some(#st::stored_as_set))),
                StoredForm::Serde | StoredForm::Own(_) => None,
            }
            .map(|form| quote!(const STORED: #st::Option<#st::StoredForm> = #form;));
            // No doc: the marker is inside the derive's anonymous constant, where rustdoc
            // never shows it.
            quote! {
                #[allow(non_camel_case_types, dead_code)]
                pub enum #marker {}
                #[automatically_derived]
                impl #st::FieldOf<#ident> for #marker {
                    const INDEX: usize = #position;
                    type Role = #st::role::#role;
                    type Input = #input;
                    #stored
                }
            }
        });
        quote!(#(#items)*)
    }
}
