//! The derive inputs, borrowed from the syntax tree.

use crate::attr::{self, EntityAttrs, TableAttrs};
use crate::ctxt::Ctxt;
use syn::ext::IdentExt;
use syn::{Data, DataStruct, DeriveInput, Fields, Ident, Type};

/// A struct deriving `Entity`.
pub struct Entity<'a> {
    pub ident: &'a Ident,
    pub attrs: EntityAttrs,
    /// The fields serde writes.
    pub fields: Vec<Field<'a>>,
    /// Fields serde never writes (`skip`, `skip_serializing`), with the setting that says so.
    pub unstored: Vec<(&'a Ident, syn::Path)>,
    /// Container `#[serde(..)]` settings an entity cannot have, and why.
    pub serde_refusals: Vec<(syn::Path, &'static str)>,
    /// Whether it is a struct with named fields. If not, that error is recorded and nothing
    /// else is checked, but its stub is still emitted, so that uses of it report nothing more.
    pub named: bool,
}

/// One named field.
pub struct Field<'a> {
    pub ident: &'a Ident,
    pub ty: &'a Type,
    /// The attribute name serde writes the field under.
    pub attribute: String,
    /// Whether the library maintains it, and the attribute path that says so.
    pub role: Option<(attr::FieldRole, syn::Path)>,
    /// `#[dynamo(unique)]`, where it says so.
    pub unique: Option<syn::Path>,
    /// Its `#[serde(..)]` settings that matter to the derive.
    pub serde: attr::SerdeField,
}

/// How DynamoDB stores a field, when that is not as serde writes it.
pub enum StoredForm<'a> {
    /// As serde writes it.
    Serde,
    /// `#[dynamo(ttl)]`: in DynamoDB's time-to-live form.
    Ttl,
    /// `serde_dynamo`'s `string_set`, `number_set` or `binary_set`: as a set.
    Set,
    /// By a `with` function, in a form only it knows.
    Own(&'a str),
}

impl Field<'_> {
    pub fn stored_form(&self) -> StoredForm<'_> {
        if let Some((attr::FieldRole::Ttl, _)) = self.role {
            return StoredForm::Ttl;
        }
        match self
            .serde
            .written_with
            .as_ref()
            .map(|(_, with)| with.as_str())
        {
            None => StoredForm::Serde,
            Some(with) if is_set_module(with) => StoredForm::Set,
            Some(with) => StoredForm::Own(with),
        }
    }
}

/// Whether `with = ".."` names one of `serde_dynamo`'s set modules, whose stored form (a
/// DynamoDB set) the runtime writes from serde's list.
fn is_set_module(with: &str) -> bool {
    let module = with.trim_start_matches("::");
    [
        "serde_dynamo::string_set",
        "serde_dynamo::number_set",
        "serde_dynamo::binary_set",
    ]
    .contains(&module)
}

impl<'a> Entity<'a> {
    pub fn from_syn(cx: &mut Ctxt, input: &'a DeriveInput) -> Option<Self> {
        let fields = match &input.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(named) => Some(&named.named),
                _ => {
                    cx.error_spanned_by(&input.ident, "`Entity` needs a struct with named fields: its fields become the item's attributes");
                    None
                }
            },
            _ => {
                cx.error_spanned_by(
                    &input.ident,
                    "`Entity` can only be derived for a struct with named fields",
                );
                None
            }
        };
        let named = fields.is_some();
        if !input.generics.params.is_empty() {
            cx.error_spanned_by(
                &input.generics,
                "`Entity` cannot be generic: each entity is one concrete item shape in the table",
            );
            // No stub either: it would name the type without its parameters.
            return None;
        }
        let rename_all = attr::serde_rename_all(&input.attrs);
        let mut unstored = Vec::new();
        let fields: Vec<Field> = fields
            .into_iter()
            .flatten()
            .filter_map(|field| {
                let ident = field.ident.as_ref()?;
                let serde = attr::serde_field(&field.attrs);
                if let Some(path) = serde.unstored.clone() {
                    let dynamo = attr::field_attrs(cx, &field.attrs);
                    if let Some(path) = dynamo.role.map(|(_, path)| path).or(dynamo.unique) {
                        cx.error_spanned_by(
                            path,
                            format!("`{}` is `#[serde(skip)]`: it is never stored, so the library cannot keep it", ident.unraw()),
                        );
                    }
                    unstored.push((ident, path));
                    return None;
                }
                let attribute = attr::serde_attribute_name(field, ident, rename_all.as_deref());
                let attr::FieldAttrs { role, unique } = attr::field_attrs(cx, &field.attrs);
                Some(Field {
                    ident,
                    ty: &field.ty,
                    attribute,
                    role,
                    unique,
                    serde,
                })
            })
            .collect();
        Some(Entity {
            ident: &input.ident,
            attrs: attr::entity_attrs(cx, &input.attrs),
            unstored,
            serde_refusals: attr::serde_container_refusals(&input.attrs),
            fields,
            named,
        })
    }

    pub fn field(&self, name: &str) -> Option<&Field<'a>> {
        self.fields.iter().find(|field| field.ident.unraw() == name)
    }

    /// Whether the entity has unique values: a `#[dynamo(unique)]` field, or `unique(..)`.
    pub fn has_unique_values(&self) -> bool {
        !self.attrs.unique.is_empty() || self.fields.iter().any(|field| field.unique.is_some())
    }

    /// Whether field `name` is a unique value (`#[dynamo(unique)]`) or part of one
    /// (`unique(..)` on the entity).
    pub fn is_unique(&self, name: &str) -> bool {
        self.field(name).is_some_and(|field| field.unique.is_some())
            || (self.attrs.unique.iter().flatten()).any(|field| field.unraw() == name)
    }

    /// The names of the fields the primary key is built from, in order of first appearance.
    pub fn primary_key_fields(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for name in self
            .attrs
            .pk
            .iter()
            .chain(&self.attrs.sk)
            .flat_map(crate::template::Template::fields)
        {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }
}

/// A struct deriving `Table`.
pub struct Table<'a> {
    pub ident: &'a Ident,
    pub attrs: TableAttrs,
}

impl<'a> Table<'a> {
    pub fn from_syn(cx: &mut Ctxt, input: &'a DeriveInput) -> Self {
        if !input.generics.params.is_empty() {
            cx.error_spanned_by(&input.generics, "`Table` cannot be generic");
        }
        Table {
            ident: &input.ident,
            attrs: attr::table_attrs(cx, &input.attrs),
        }
    }
}

/// An enum deriving `KeyPart`: its unit variants, each with the text serde names it by.
pub struct KeyPartEnum<'a> {
    pub ident: &'a Ident,
    pub variants: Vec<KeyVariant<'a>>,
}

/// One unit variant of a `KeyPart` enum.
pub struct KeyVariant<'a> {
    pub ident: &'a Ident,
    /// Its key text: serde's name for it.
    pub text: String,
    /// The `#[serde(..)]` attribute that names it, where errors about its text point.
    pub serde: Option<&'a syn::Attribute>,
}

impl<'a> KeyPartEnum<'a> {
    pub fn from_syn(cx: &mut Ctxt, input: &'a DeriveInput) -> Option<Self> {
        let Data::Enum(data) = &input.data else {
            cx.error_spanned_by(
                &input.ident,
                "`KeyPart` can be derived for enums with unit variants only; for other types implement `singletable::KeyPart` and `singletable::KeyField`",
            );
            return None;
        };
        let rename_all = attr::serde_rename_all(&input.attrs);
        let mut variants = Vec::new();
        for variant in &data.variants {
            if !matches!(variant.fields, Fields::Unit) {
                cx.error_spanned_by(
                    variant,
                    format!(
                        "variant `{}` has fields; only unit variants have a fixed key text",
                        variant.ident
                    ),
                );
                continue;
            }
            let text = attr::serde_rename(&variant.attrs).unwrap_or_else(|| match &rename_all {
                Some(rule) => attr::apply_rename_all(rule, &variant.ident.to_string(), true),
                None => variant.ident.to_string(),
            });
            variants.push(KeyVariant {
                ident: &variant.ident,
                text,
                serde: variant
                    .attrs
                    .iter()
                    .find(|attribute| attribute.path().is_ident("serde")),
            });
        }
        Some(KeyPartEnum {
            ident: &input.ident,
            variants,
        })
    }
}

/// A struct deriving `Projection`: attributes of an entity that an index holds.
pub struct ProjectionStruct<'a> {
    pub ident: &'a Ident,
    pub attrs: attr::ProjectionAttrs,
    /// Each field serde reads, with the attribute it reads (serde's name for it).
    pub fields: Vec<(&'a syn::Field, String)>,
    /// A `#[serde(flatten)]` field, which reads attributes no one can list.
    pub flattened: Vec<&'a syn::Field>,
}

impl<'a> ProjectionStruct<'a> {
    pub fn from_syn(cx: &mut Ctxt, input: &'a DeriveInput) -> Option<Self> {
        let Data::Struct(DataStruct {
            fields: Fields::Named(fields),
            ..
        }) = &input.data
        else {
            cx.error_spanned_by(
                &input.ident,
                "`Projection` is derived for a struct with named fields, one per attribute it reads, e.g. `struct TicketCard { status: Status, title: String }`",
            );
            return None;
        };
        if !input.generics.params.is_empty() {
            cx.error_spanned_by(
                &input.generics,
                "`Projection` cannot be generic: it reads one entity's attributes from one index",
            );
        }
        let rename_all = attr::serde_rename_all(&input.attrs);
        let flattened = fields
            .named
            .iter()
            .filter(|field| attr::serde_field(&field.attrs).flatten.is_some())
            .collect();
        let fields = fields
            .named
            .iter()
            .filter(|field| {
                let serde = attr::serde_field(&field.attrs);
                serde.flatten.is_none() && serde.unread.is_none()
            })
            .filter_map(|field| {
                let ident = field.ident.as_ref()?;
                let attribute = attr::serde_attribute_name(field, ident, rename_all.as_deref());
                Some((field, attribute))
            })
            .collect();
        Some(ProjectionStruct {
            ident: &input.ident,
            attrs: attr::projection_attrs(cx, &input.attrs),
            fields,
            flattened,
        })
    }
}

/// An enum deriving `Collection`: one variant per entity.
pub struct CollectionEnum<'a> {
    pub ident: &'a Ident,
    /// Each variant and the entity it holds.
    pub variants: Vec<(&'a Ident, &'a Type)>,
}

impl<'a> CollectionEnum<'a> {
    pub fn from_syn(cx: &mut Ctxt, input: &'a DeriveInput) -> Option<Self> {
        let Data::Enum(data) = &input.data else {
            cx.error_spanned_by(
                &input.ident,
                "`Collection` is derived for an enum with one variant per entity, e.g. `enum Workspace { Document(Document), Comment(Comment) }`",
            );
            return None;
        };
        let mut variants = Vec::new();
        for variant in &data.variants {
            match &variant.fields {
                Fields::Unnamed(fields) if fields.unnamed.len() == 1 => {
                    if let Some(field) = fields.unnamed.first() {
                        variants.push((&variant.ident, &field.ty));
                    }
                }
                _ => cx.error_spanned_by(
                    variant,
                    format!(
                        "variant `{}` must hold exactly one entity, e.g. `{}(Entity)`",
                        variant.ident, variant.ident
                    ),
                ),
            }
        }
        Some(CollectionEnum {
            ident: &input.ident,
            variants,
        })
    }
}

/// An async function under `#[singletable::test]`, taking its table.
pub struct TestFn<'a> {
    pub function: &'a syn::ItemFn,
    /// The table argument's pattern and type (`db: Db<App>`).
    pub argument: &'a syn::PatType,
}

impl<'a> TestFn<'a> {
    /// Every mistake in the attribute and the signature, each reported.
    pub fn from_syn(
        cx: &mut Ctxt,
        args: &proc_macro2::TokenStream,
        function: &'a syn::ItemFn,
    ) -> Option<Self> {
        if !args.is_empty() {
            cx.error_spanned_by(args, "`#[singletable::test]` takes no arguments");
        }
        let signature = &function.sig;
        if signature.asyncness.is_none() {
            cx.error_spanned_by(
                signature.fn_token,
                "`#[singletable::test]` needs an `async fn`",
            );
        }
        let mut inputs = signature.inputs.iter();
        let argument = match (inputs.next(), inputs.next()) {
            (Some(syn::FnArg::Typed(argument)), None) => Some(argument),
            _ => {
                let message = "`#[singletable::test]` takes one argument, the test's table: `db: singletable::Db<App>`";
                if signature.inputs.is_empty() {
                    // At the empty parentheses.
                    cx.syn_error(syn::Error::new(signature.paren_token.span.join(), message));
                } else {
                    cx.error_spanned_by(&signature.inputs, message);
                }
                None
            }
        };
        Some(TestFn {
            function,
            argument: argument?,
        })
    }
}
