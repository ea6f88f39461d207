//! Derive macros of [singletable](https://docs.rs/singletable): `Table`, `Entity` and
//! `KeyPart`. Attributes are parsed into an AST that borrows the input (`ast`, `attr`),
//! checked with every error collected (`valid`), then expanded into static schema data and thin
//! calls into the runtime (`expand`).

mod ast;
mod attr;
mod ctxt;
mod expand;
mod settings;
mod template;
mod valid;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Declares a DynamoDB table: its key attributes and secondary indexes.
///
/// See the `singletable` crate documentation for the grammar.
#[proc_macro_derive(Table, attributes(dynamo))]
pub fn derive_table(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::private_scope(expand::derive_table(&input)).into()
}

/// Declares an entity stored in a table, with key templates checked at compile time.
///
/// See the `singletable` crate documentation for the grammar.
#[proc_macro_derive(Entity, attributes(dynamo))]
pub fn derive_entity(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::private_scope(expand::derive_entity(&input)).into()
}

/// Declares an item collection: an enum with one single-field variant per entity stored in
/// the same partitions, decoded by the entity attribute
/// (`db.query(Document::partition(..)).collection::<Workspace>()`).
#[proc_macro_derive(Collection)]
pub fn derive_collection(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::private_scope(expand::derive_collection(&input)).into()
}

/// Declares the attributes of an entity read from a lean index (`projection = [..]` on the
/// table's index): `#[derive(Projection, Deserialize)] #[dynamo(entity = Ticket, index = gsi1)]
/// struct TicketCard { status: Status, title: String }`, read with
/// `db.query(Ticket::gsi1(..)).select::<TicketCard>()`. A field the index does not hold does
/// not compile.
#[proc_macro_derive(Projection, attributes(dynamo))]
pub fn derive_projection(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::private_scope(expand::derive_projection(&input)).into()
}

/// A test with its own freshly created table on the local engine (in the spirit of
/// `#[sqlx::test]`): `#[singletable::test] async fn works(db: Db<App>) { .. }`. The body may
/// return `()` or a `Result<(), E>`. Needs the `local` feature of `singletable`.
#[proc_macro_attribute]
pub fn test(args: TokenStream, input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as syn::ItemFn);
    expand::test(args.into(), &input).into()
}

/// Lets a unit-variant enum be part of a key; the key text is the variant name after serde's
/// `rename`/`rename_all`, so keys and stored attributes agree.
#[proc_macro_derive(KeyPart)]
pub fn derive_key_part(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::private_scope(expand::derive_key_part(&input)).into()
}
