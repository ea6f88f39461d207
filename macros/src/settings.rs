//! Every list of settings the attributes accept, written once: the parser dispatches on these
//! names, and the "unknown setting" message and its did-you-mean suggestion are made from the
//! same list (a unit test checks that each listed name is one the parser accepts).

use crate::ctxt::did_you_mean;

/// The settings accepted in one position of `#[dynamo(..)]`.
pub struct Settings {
    /// What the settings are, for the message (`table setting`).
    pub what: &'static str,
    /// The names accepted as they are.
    pub names: &'static [&'static str],
    /// Settings named by a pattern, as the message shows them, with examples that suggestions
    /// can point to.
    pub patterns: Option<(&'static str, &'static [&'static str])>,
}

impl Settings {
    /// The message for a setting that is none of these.
    pub fn unknown(&self, key: &str) -> String {
        let mut expected: Vec<String> = self.names.iter().map(|name| format!("`{name}`")).collect();
        if let Some((pattern, _)) = self.patterns {
            expected.push(pattern.to_owned());
        }
        let listed = match expected.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{}, or {last}", rest.join(", ")),
            None => String::new(),
        };
        let examples = self.patterns.map_or(&[][..], |(_, examples)| examples);
        let candidates = self.names.iter().chain(examples).copied();
        format!(
            "unknown {} `{key}`; expected {listed}{}",
            self.what,
            did_you_mean(key, candidates)
        )
    }
}

/// `#[dynamo(..)]` on a `#[derive(Table)]` struct.
pub const TABLE: Settings = Settings {
    what: "table setting",
    names: &[
        "name",
        "pk",
        "sk",
        "entity_attribute",
        "schema_version_attribute",
        "ttl",
        "stream",
    ],
    patterns: Some(("an index `gsi1`..`gsi20`/`lsi1`..`lsi5`", &["gsi1", "lsi1"])),
};

/// The values of a table's `stream = "..."`: DynamoDB's four stream view types.
pub const STREAM_VIEWS: Settings = Settings {
    what: "stream view",
    names: &["new_and_old_images", "new_image", "old_image", "keys_only"],
    patterns: None,
};

/// Inside a table's `gsi1(..)`.
pub const TABLE_INDEX: Settings = Settings {
    what: "index setting",
    names: &["name", "pk", "sk", "pk_type", "sk_type", "projection"],
    patterns: None,
};

/// The named values of an index's `projection = "..."` (a list of attributes is the third).
pub const PROJECTIONS: Settings = Settings {
    what: "projection",
    names: &["all", "keys_only"],
    patterns: Some((
        "a list of attributes such as `[\"status\", \"title\"]`",
        &[],
    )),
};

/// `#[dynamo(..)]` on a `#[derive(Entity)]` struct.
pub const ENTITY: Settings = Settings {
    what: "entity setting",
    names: &["table", "name", "schema_version", "pk", "sk", "unique"],
    patterns: Some((
        "index templates such as `gsi1pk`, `gsi1sk`, `gsi1_when`, `lsi1sk`",
        &["gsi1pk", "gsi1sk", "gsi1_when", "lsi1sk"],
    )),
};

/// `#[dynamo(..)]` on a `#[derive(Projection)]` struct.
pub const PROJECTION: Settings = Settings {
    what: "projection setting",
    names: &["entity", "index"],
    patterns: None,
};

/// `#[dynamo(..)]` on a field.
pub const FIELD: Settings = Settings {
    what: "field setting",
    names: &["version", "created_at", "updated_at", "ttl", "unique"],
    patterns: None,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctxt::Ctxt;

    /// Parses `#[dynamo(<setting>)]` with a value where the setting takes one, and returns the
    /// errors, which must not say that the setting is unknown.
    fn errors_of(
        parse: impl Fn(&mut Ctxt, &[syn::Attribute]),
        attribute: syn::Attribute,
    ) -> String {
        let mut cx = Ctxt::default();
        parse(&mut cx, &[attribute]);
        cx.to_compile_errors().to_string()
    }

    #[test]
    fn every_listed_setting_is_accepted() {
        for name in TABLE.names.iter().chain(["gsi1", "lsi1"].iter()) {
            let attribute: syn::Attribute = match *name {
                "gsi1" | "lsi1" => {
                    syn::parse_quote!(#[dynamo(gsi1(name = "GSI1", pk = "A", sk = "B"))])
                }
                other => {
                    let key = syn::Ident::new(other, proc_macro2::Span::call_site());
                    syn::parse_quote!(#[dynamo(#key = "x")])
                }
            };
            let errors = errors_of(
                |cx, attrs| drop(crate::attr::table_attrs(cx, attrs)),
                attribute,
            );
            assert!(!errors.contains("unknown"), "{name}: {errors}");
        }
        for name in TABLE_INDEX.names {
            let key = syn::Ident::new(name, proc_macro2::Span::call_site());
            let attribute: syn::Attribute = syn::parse_quote!(#[dynamo(gsi1(#key = "x"))]);
            let errors = errors_of(
                |cx, attrs| drop(crate::attr::table_attrs(cx, attrs)),
                attribute,
            );
            assert!(!errors.contains("unknown"), "{name}: {errors}");
        }
        for name in ENTITY
            .names
            .iter()
            .chain(ENTITY.patterns.map_or(&[][..], |(_, e)| e))
        {
            let key = syn::Ident::new(name, proc_macro2::Span::call_site());
            let attribute: syn::Attribute = match *name {
                "table" => syn::parse_quote!(#[dynamo(table = App)]),
                "schema_version" => syn::parse_quote!(#[dynamo(schema_version = 2)]),
                "unique" => syn::parse_quote!(#[dynamo(unique(a, b))]),
                "gsi1_when" => syn::parse_quote!(#[dynamo(gsi1_when = rule(x))]),
                _ => syn::parse_quote!(#[dynamo(#key = "X#{x}")]),
            };
            let errors = errors_of(
                |cx, attrs| drop(crate::attr::entity_attrs(cx, attrs)),
                attribute,
            );
            assert!(!errors.contains("unknown"), "{name}: {errors}");
        }
        for name in FIELD.names {
            let key = syn::Ident::new(name, proc_macro2::Span::call_site());
            let attribute: syn::Attribute = syn::parse_quote!(#[dynamo(#key)]);
            let errors = errors_of(
                |cx, attrs| drop(crate::attr::field_attrs(cx, attrs)),
                attribute,
            );
            assert!(!errors.contains("unknown"), "{name}: {errors}");
        }
    }

    #[test]
    fn unknown_settings_list_the_accepted_ones_and_suggest_the_nearest() {
        let message = ENTITY.unknown("schema_verison");
        assert!(
            message.contains("`schema_version`, `pk`, `sk`, `unique`, or index templates"),
            "{message}"
        );
        assert!(
            message.ends_with("did you mean `schema_version`?"),
            "{message}"
        );
        assert_eq!(
            FIELD.unknown("versoin"),
            "unknown field setting `versoin`; expected `version`, `created_at`, `updated_at`, `ttl`, or `unique`; did you mean `version`?"
        );
    }
}
