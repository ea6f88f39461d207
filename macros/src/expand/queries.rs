//! The query constructors of an entity: one per index partition template.

use super::markers::Markers;
use super::tokens::{private, respan};
use crate::ast::Entity;
use crate::template::Template;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

/// Per queryable index (the table's key, each GSI and LSI): a partition constructor taking
/// the partition template's fields, and `SortKeyPart` impls that admit the sort key parts in
/// template order only.
pub(super) fn expand_queries(
    entity: &Entity,
    markers: &Markers,
) -> (Vec<TokenStream>, TokenStream) {
    let st = private();
    let ident = entity.ident;
    let Some(pk) = &entity.attrs.pk else {
        return (Vec::new(), TokenStream::new());
    };
    let mut targets = vec![QueryTarget {
        name: format_ident!("partition"),
        marker: quote!(#st::primary),
        schema: None,
        partition: KeySource::Template(pk),
        partition_const: format_ident!("__PK"),
        sort: entity.attrs.sk.as_ref().map(KeySource::Template),
        label: "the table".to_owned(),
    }];
    for index in &entity.attrs.indexes {
        let slot = index.slot.name();
        let marker = format_ident!("{}", slot);
        let schema = format_ident!("__{}", slot.to_uppercase());
        let partition_const = match &index.pk {
            Some(_) => format_ident!("__{}_PK", slot.to_uppercase()),
            None => format_ident!("__PK"),
        };
        let partition = match &index.pk {
            Some(template) => KeySource::Template(template),
            None if !index.pk_attributes.is_empty() => KeySource::Attributes(&index.pk_attributes),
            None => KeySource::Template(pk),
        };
        let sort = match &index.sk {
            Some(template) => Some(KeySource::Template(template)),
            None if !index.sk_attributes.is_empty() => {
                Some(KeySource::Attributes(&index.sk_attributes))
            }
            None => None,
        };
        targets.push(QueryTarget {
            name: format_ident!("{}", slot),
            marker: quote!(#st::index::#marker),
            schema: Some(schema),
            partition,
            partition_const,
            sort,
            label: format!("index `{slot}`"),
        });
    }
    let mut constructors = Vec::new();
    let mut items = Vec::new();
    for target in targets {
        let QueryTarget {
            name,
            marker,
            schema,
            partition,
            partition_const,
            sort,
            label,
        } = target;
        constructors.push(partition_constructor(
            entity,
            &name,
            &marker,
            &schema,
            (&partition, &partition_const),
            &label,
        ));
        let Some(sort) = sort else { continue };
        let parts: Vec<String> = sort.fields();
        let mut state = quote!(#st::Start);
        for (step, part) in parts.iter().enumerate() {
            if parts[..step].contains(part) {
                continue;
            }
            let Some(part_marker) = markers.named(entity, part) else {
                continue;
            };
            // A range on a part that other key text follows is exact only for prefix-free
            // types; the runtime's `RangeOn` says so where a query asks for one.
            let place = if sort.ends_with_field(step) {
                quote!(#st::LastPart)
            } else {
                quote!(#st::InnerPart)
            };
            items.push(quote! {
                #[automatically_derived]
                impl #st::SortKeyPart<#ident, #marker, #state> for #part_marker {
                    type Next = #st::After<#part_marker>;
                    type Position = #place;
                }
            });
            state = quote!(#st::After<#part_marker>);
        }
    }
    (constructors, quote!(#(#items)*))
}

/// One index a query can target, and where its keys come from.
struct QueryTarget<'a> {
    name: Ident,
    marker: TokenStream,
    /// `None` for the table, the index schema constant otherwise.
    schema: Option<Ident>,
    partition: KeySource<'a>,
    /// The entity's constant holding the partition template (when it is one).
    partition_const: Ident,
    sort: Option<KeySource<'a>>,
    label: String,
}

/// A key made from a template, or attributes of the item read as they are.
enum KeySource<'a> {
    Template(&'a Template),
    Attributes(&'a [Ident]),
}

impl KeySource<'_> {
    /// Whether field number `step` ends the sort key: nothing follows it (each attribute of
    /// a key made of attributes is compared by its own value, so each ends its own key).
    fn ends_with_field(&self, step: usize) -> bool {
        match self {
            KeySource::Template(template) => template.ends_with_field(step),
            KeySource::Attributes(_) => true,
        }
    }

    fn fields(&self) -> Vec<String> {
        match self {
            KeySource::Template(template) => template.fields().map(str::to_owned).collect(),
            KeySource::Attributes(attributes) => attributes.iter().map(Ident::to_string).collect(),
        }
    }

    fn describe(&self) -> String {
        match self {
            KeySource::Template(template) => format!("{:?}", template.literal.value()),
            KeySource::Attributes(attributes) => attributes
                .iter()
                .map(Ident::to_string)
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

/// `Entity::partition(..)` / `Entity::gsi1(..)`: the partition key from its fields.
fn partition_constructor(
    entity: &Entity,
    name: &Ident,
    marker: &TokenStream,
    schema: &Option<Ident>,
    (partition, template_const): (&KeySource, &Ident),
    label: &str,
) -> TokenStream {
    let st = private();
    let doc = format!(
        "The partition of {label} with these fields (partition key {}), to pass to `Db::query`.",
        partition.describe()
    );
    let partition = match (partition, schema) {
        (KeySource::Attributes(attributes), Some(schema)) => {
            let params = attributes.iter().map(|attribute| {
                let ty = entity.field(&attribute.to_string()).map(|field| field.ty);
                quote!(#attribute: &#ty)
            });
            return quote! {
                #[doc = #doc]
                pub fn #name(#(#params),*) -> #st::PartitionKey<Self, #marker> {
                    let values: #st::Result<::std::vec::Vec<_>, _> =
                        [#(#st::to_value(#attributes)),*].into_iter().collect();
                    #st::PartitionKey::attributes(values, #schema)
                }
            };
        }
        // The table's own key is always a template.
        (KeySource::Attributes(_), None) => return TokenStream::new(),
        (KeySource::Template(template), _) => template,
    };
    let mut params = Vec::new();
    // One parameter per field, however often the template names it. A sharded partition is
    // every shard of it: the field that decides an item's shard is not asked for.
    let sharded = partition.shard().is_some();
    let fields: Vec<&str> = if sharded {
        partition.written_fields().collect()
    } else {
        partition.fields().collect()
    };
    let mut parts: Vec<(&str, TokenStream)> = Vec::new();
    for &field_name in &fields {
        if parts.iter().any(|(name, _)| *name == field_name) {
            continue;
        }
        let Some(field) = entity.field(field_name) else {
            continue;
        };
        // At the template, as the function is: a call's notes point at one place.
        let mut arg = field.ident.clone();
        arg.set_span(partition.literal.span());
        let ty = field.ty;
        let bound = respan(quote!(#st::KeyArg<#ty>), partition.literal.span());
        params.push(quote!(#arg: impl #bound));
        parts.push((field_name, quote!(#st::KeyArg::<#ty>::key_part(&#arg))));
    }
    // Each template field as the key part its argument hands over, in the body's one
    // expression: a constructor is one body per index and entity, and its statements are what
    // the compiler checks for each.
    let values = fields.iter().filter_map(|&field_name| {
        parts
            .iter()
            .find(|(name, _)| *name == field_name)
            .map(|(_, part)| part)
    });
    let index = match schema {
        Some(schema) => quote!(#st::Some(#schema)),
        None => quote!(#st::None),
    };
    // Spanned at the template, so that a call with the wrong arguments points there.
    let name = Ident::new(&name.to_string(), partition.literal.span());
    if let Some((field, count)) = partition.shard() {
        let doc = format!(
            "{doc} Its items are spread over {count} partition keys by `{field}`; a query reads all {count} and merges them."
        );
        return quote! {
            #[doc = #doc]
            #[allow(clippy::too_many_arguments)]
            pub fn #name(#(#params),*) -> #st::PartitionKey<Self, #marker> {
                #st::PartitionKey::sharded(#template_const.render_shards(&[#(#values),*]), #index)
            }
        };
    }
    quote! {
        #[doc = #doc]
        #[allow(clippy::too_many_arguments)]
        pub fn #name(#(#params),*) -> #st::PartitionKey<Self, #marker> {
            #st::PartitionKey::new(#template_const.render(&[#(#values),*]), #index)
        }
    }
}
