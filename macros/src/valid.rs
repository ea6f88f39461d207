//! Cross-attribute rules, checked before expansion; every violation is reported.

use crate::ast::{CollectionEnum, Entity, KeyPartEnum, ProjectionStruct, Table};
use crate::attr::{ProjectionAttr, Slot, TableIndexAttr};
use crate::ctxt::{closest, did_you_mean, Ctxt};
use crate::template::{Piece, Template};
use syn::LitStr;

impl Entity<'_> {
    /// Reports each template field that names no field but is close to one, and reads the
    /// template as if it named that one (as the fix will): the entity then expands whole, so
    /// the code written against it compiles and the misspelling is the one error.
    pub fn recover_misspelt_template_fields(&mut self, cx: &mut Ctxt) {
        let names: Vec<String> = self
            .fields
            .iter()
            .map(|field| syn::ext::IdentExt::unraw(field.ident).to_string())
            .collect();
        let ident = self.ident;
        let attrs = &mut self.attrs;
        let templates = [&mut attrs.pk, &mut attrs.sk].into_iter().flatten().chain(
            (attrs.indexes.iter_mut()).flat_map(|index| index.pk.iter_mut().chain(&mut index.sk)),
        );
        for template in templates {
            for piece in &mut template.pieces {
                let (Piece::Field { name, .. } | Piece::Shard { name, .. }) = piece else {
                    continue;
                };
                if names.contains(name) {
                    continue;
                }
                let Some(meant) = closest(name, names.iter().map(String::as_str)) else {
                    continue;
                };
                cx.rule_error_spanned_by(
                    &template.literal,
                    format!(
                        "`{{{name}}}` in key template {:?} is not a field of `{ident}`; did you mean `{meant}`?",
                        template.literal.value(),
                    ),
                );
                *name = meant.to_owned();
            }
        }
    }

    pub fn validate(&self, cx: &mut Ctxt) {
        if self.attrs.table.is_none() {
            cx.error_spanned_by(
                self.ident,
                "missing `#[dynamo(table = ...)]`: name the `#[derive(singletable::Table)]` type this entity is stored in",
            );
        }
        match &self.attrs.pk {
            Some(template) => self.check_template(cx, template),
            None if self.attrs.given.iter().any(|key| key == "pk") => {}
            None => cx.error_spanned_by(
                self.ident,
                "missing `#[dynamo(pk = \"...\")]`: every entity needs a partition key template, e.g. `pk = \"TICKET#{id}\"`",
            ),
        }
        if let Some(template) = &self.attrs.sk {
            self.check_template(cx, template);
            check_no_shard(cx, template, "sk");
        }
        self.check_name(cx);
        self.check_managed_fields(cx);
        self.check_unique(cx);
        self.check_serde(cx);
        for index in &self.attrs.indexes {
            let slot = index.slot.name();
            let has_pk = index.pk.is_some() || !index.pk_attributes.is_empty();
            let has_sk = index.sk.is_some() || !index.sk_attributes.is_empty();
            // A key given but unreadable has its own error.
            let pk_given = self.attrs.given.contains(&format!("{slot}pk"));
            match index.slot {
                Slot::Global(_) if !has_pk && !pk_given => cx.error_spanned_by(
                    &index.first_path,
                    format!(
                        "index `{slot}` needs a partition key: add `{slot}pk = \"...\"` (a template) or `{slot}pk = field`; where the table keys the index on its own partition or sort key attribute, give the entity's template for that key ({}), and the item's key serves the index",
                        self.own_key_templates(&slot)
                    ),
                ),
                Slot::Local(_) if has_pk => cx.error_spanned_by(
                    &index.first_path,
                    format!("`{slot}` is a local index: it shares the table's partition key, so it takes only `{slot}sk`"),
                ),
                Slot::Local(_) if !has_sk => cx.error_spanned_by(
                    &index.first_path,
                    format!("local index `{slot}` needs a sort key: add `{slot}sk = \"...\"` or `{slot}sk = field`"),
                ),
                _ => {}
            }
            for attribute in index.pk_attributes.iter().chain(&index.sk_attributes) {
                if self.field(&attribute.to_string()).is_none() {
                    cx.error_spanned_by(
                        attribute,
                        format!(
                            "`{attribute}` is not a field of `{}`{}",
                            self.ident,
                            self.did_you_mean(&attribute.to_string())
                        ),
                    );
                }
            }
            if let (Some(rule), true) = (
                &index.when,
                !index.pk_attributes.is_empty() || !index.sk_attributes.is_empty(),
            ) {
                cx.error_spanned_by(
                    &rule.expr,
                    format!("`{slot}` reads item attributes as is, so a rule cannot leave its keys out; sparse indexes need key templates"),
                );
            }
            for template in index.pk.iter().chain(&index.sk) {
                self.check_template(cx, template);
            }
            if let Some(template) = &index.sk {
                check_no_shard(cx, template, &format!("{slot}sk"));
            }
            if let Some(rule) = &index.when {
                for argument in &rule.arguments {
                    if self.field(&argument.to_string()).is_none() {
                        cx.error_spanned_by(
                            argument,
                            format!(
                                "`{argument}` is not a field of `{}`{}",
                                self.ident,
                                self.did_you_mean(&argument.to_string())
                            ),
                        );
                    }
                }
            }
        }
    }

    /// The entity's table key templates as an index key would repeat them:
    /// `gsi1pk = "EMPLOYEE#{id}"` for its sort key, say.
    fn own_key_templates(&self, slot: &str) -> String {
        let mut own: Vec<String> = self
            .attrs
            .sk
            .iter()
            .chain(&self.attrs.pk)
            .map(|template| format!("`{slot}pk = {:?}`", template.literal.value()))
            .collect();
        own.dedup();
        own.join(" or ")
    }

    fn check_managed_fields(&self, cx: &mut Ctxt) {
        let mut seen: Vec<crate::attr::FieldRole> = Vec::new();
        for field in &self.fields {
            let Some((role, path)) = &field.role else {
                continue;
            };
            if seen.contains(role) {
                cx.error_spanned_by(
                    path,
                    format!("only one field can be `#[dynamo({})]`", role.name()),
                );
            }
            seen.push(*role);
            let name = syn::ext::IdentExt::unraw(field.ident).to_string();
            let templates = self.attrs.pk.iter().chain(&self.attrs.sk).chain(
                self.attrs
                    .indexes
                    .iter()
                    .flat_map(|index| index.pk.iter().chain(&index.sk)),
            );
            for template in templates {
                if template.fields().any(|used| used == name) {
                    cx.rule_error_spanned_by(
                        &template.literal,
                        format!(
                            "`{name}` is `#[dynamo({})]`, so it cannot be part of a key: {}; key on a field you set yourself",
                            role.name(),
                            role.not_in_keys()
                        ),
                    );
                }
            }
        }
    }

    fn check_unique(&self, cx: &mut Ctxt) {
        for field in &self.fields {
            if let (Some(unique), Some((role, _))) = (&field.unique, &field.role) {
                cx.rule_error_spanned_by(
                    unique,
                    format!("`{}` is `#[dynamo({})]`, which the library writes itself; it cannot also be unique", field.ident, role.name()),
                );
            }
        }
        for fields in &self.attrs.unique {
            for name in fields {
                if self.field(&name.to_string()).is_none() {
                    cx.error_spanned_by(
                        name,
                        format!(
                            "`{name}` is not a field of `{}`{}",
                            self.ident,
                            self.did_you_mean(&name.to_string())
                        ),
                    );
                }
            }
        }
    }

    /// The entity's name (given, or the struct's) is the value of the entity attribute, which
    /// tells its items from other entities' and from the library's own (whose names start with
    /// `_`), and a part of the library's keys for it, which `#` separates
    /// (`_UNIQUE#<entity>#<field>#<value>`, `<entity>#LATEST`).
    fn check_name(&self, cx: &mut Ctxt) {
        let name = match &self.attrs.name {
            Some(given) => given.value(),
            None => self.ident.to_string(),
        };
        let problem = if name.is_empty() {
            "cannot be empty: it is the value of the entity attribute that tells this entity's items apart".to_owned()
        } else if name.starts_with('_') {
            format!("`{name}` starts with `_`, as the entity attribute of the library's own items does (`_unique`, `_migration`): reads would take one for the other")
        } else if name.contains('#') {
            format!("`{name}` contains `#`, which separates the parts of the library's keys that hold an entity's name (`_UNIQUE#<entity>#<field>#<value>`, `<entity>#LATEST`)")
        } else {
            return;
        };
        let message = format!(
            "the entity's name {problem}; name it otherwise with `#[dynamo(name = \"..\")]`"
        );
        match &self.attrs.name {
            Some(given) => cx.error_spanned_by(given, message),
            None => cx.error_spanned_by(self.ident, message),
        }
    }

    fn did_you_mean(&self, name: &str) -> String {
        let names: Vec<String> = self
            .fields
            .iter()
            .map(|field| syn::ext::IdentExt::unraw(field.ident).to_string())
            .collect();
        did_you_mean(name, names.iter().map(String::as_str))
    }

    /// The serde settings an entity cannot have, and those its key fields cannot.
    fn check_serde(&self, cx: &mut Ctxt) {
        for (path, why) in &self.serde_refusals {
            let setting = path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            cx.error_spanned_by(
                path,
                format!("`#[serde({setting})]` cannot be used on an entity: {why}"),
            );
        }
        let templates: Vec<&Template> = [&self.attrs.pk, &self.attrs.sk]
            .into_iter()
            .flatten()
            .chain(
                self.attrs
                    .indexes
                    .iter()
                    .flat_map(|index| index.pk.iter().chain(&index.sk)),
            )
            .collect();
        for field in &self.fields {
            let name = syn::ext::IdentExt::unraw(field.ident).to_string();
            let serde = &field.serde;
            if let Some(path) = &serde.flatten {
                cx.error_spanned_by(path, format!("`#[serde(flatten)]` cannot be used on a field of an entity: the flattened struct's fields are stored as top-level attributes, which the typed path `{}::{}` and its updates would not reach; declare those fields on `{}` itself", self.ident, name.to_uppercase(), self.ident));
            }
            if let Some(path) = &serde.borrow {
                cx.error_spanned_by(path, "an entity is read as an owned value (`DeserializeOwned`), so `#[serde(borrow)]` cannot apply; use an owned type such as `String`");
            }
            if let Some(path) = &serde.split_rename {
                cx.error_spanned_by(path, format!("`{name}` would be written under one name and read under another, so an item would not read back what it wrote; give it one name (`#[serde(rename = \"..\")]`)"));
            }
            let Some(template) = templates
                .iter()
                .find(|template| template.fields().any(|used| used == name))
            else {
                continue;
            };
            let shown = template.literal.value();
            if let Some(path) = &serde.skip_serializing_if {
                cx.error_spanned_by(path, format!("`{name}` is part of the key template {shown:?}, but `skip_serializing_if` can leave its attribute out of the item, which would then not read back; key parts are always written, so remove it"));
            }
            if let Some(path) = &serde.unread {
                cx.error_spanned_by(path, format!("`{name}` is part of the key template {shown:?}, but `skip_deserializing` reads it back as its default, so a read item would not render its own key; remove it"));
            }
        }
    }

    fn check_template(&self, cx: &mut Ctxt, template: &Template) {
        for name in template.fields() {
            if let Some((_, path)) = self
                .unstored
                .iter()
                .find(|(ident, _)| syn::ext::IdentExt::unraw(*ident) == name)
            {
                cx.error_spanned_by(
                    path,
                    format!(
                        "`{name}` is part of the key template {:?}, but `#[serde({})]` never stores it, so no read item could render its key; store it, or take it out of the template",
                        template.literal.value(),
                        path.get_ident().map(ToString::to_string).unwrap_or_default()
                    ),
                );
                continue;
            }
            if let Some(field) = self.field(name).filter(|field| is_option(field.ty)) {
                cx.error_spanned_by(
                    field.ty,
                    format!(
                        "`{name}` is an `Option`, but it is part of the key template {:?}, and a key is always written whole; make it a plain value, or key a plain-attribute index with it (`gsi1pk = {name}`), which a `None` leaves sparse",
                        template.literal.value()
                    ),
                );
                continue;
            }
            if self.field(name).is_none() {
                cx.error_spanned_by(
                    &template.literal,
                    format!(
                        "`{{{name}}}` in key template {:?} is not a field of `{}`{}",
                        template.literal.value(),
                        self.ident,
                        self.did_you_mean(name)
                    ),
                );
            }
        }
    }
}

/// A shard part spreads a partition over several keys; in a sort key it would only scatter
/// one partition's order.
fn check_no_shard(cx: &mut Ctxt, template: &Template, setting: &str) {
    if let Some((field, count)) = template.shard() {
        cx.rule_error_spanned_by(
            &template.literal,
            format!(
                "`{{shard({field}, {count})}}` is in the sort key template `{setting}`; a shard part spreads a partition over {count} partition keys, so it belongs in a partition key template (`pk`, `gsi1pk`, ...)"
            ),
        );
    }
}

impl Table<'_> {
    pub fn validate(&self, cx: &mut Ctxt) {
        if self.attrs.pk.is_none() {
            cx.error_spanned_by(
                self.ident,
                "missing `#[dynamo(pk = \"...\")]`: name the table's partition key attribute, e.g. `pk = \"PK\"`",
            );
        }
        for attribute in [
            &self.attrs.name,
            &self.attrs.pk,
            &self.attrs.sk,
            &self.attrs.entity_attribute,
            &self.attrs.schema_version_attribute,
        ]
        .into_iter()
        .flatten()
        {
            if attribute.value().is_empty() {
                cx.error_spanned_by(attribute, "this name cannot be empty");
            }
        }
        if let Some(view) = &self.attrs.stream {
            if !crate::settings::STREAM_VIEWS
                .names
                .contains(&view.value().as_str())
            {
                cx.error_spanned_by(view, crate::settings::STREAM_VIEWS.unknown(&view.value()));
            }
        }
        if let (Some(pk), Some(sk)) = (&self.attrs.pk, &self.attrs.sk) {
            if pk.value() == sk.value() {
                cx.error_spanned_by(sk, format!("`{}` is already the table's partition key attribute: a key names each attribute once (DynamoDB refuses one attribute in both roles)", sk.value()));
            }
        }
        if let Some(ttl) = self.attrs.ttl.as_ref().filter(|ttl| ttl.value().is_empty()) {
            cx.error_spanned_by(ttl, "this name cannot be empty");
        }
        if let Some(name) = &self.attrs.name {
            check_dynamo_name(cx, name, "a table");
        }
        for name in self
            .attrs
            .indexes
            .iter()
            .filter_map(|index| index.name.as_ref())
        {
            check_dynamo_name(cx, name, "an index");
        }
        self.check_library_attributes(cx);
        for (position, index) in self.attrs.indexes.iter().enumerate() {
            let slot = index.slot.name();
            let name = index.dynamo_name();
            if let Some(earlier) = (self.attrs.indexes[..position].iter())
                .find(|earlier| earlier.dynamo_name() == name)
            {
                let given = match &index.name {
                    Some(_) => "",
                    None => " (its slot in capitals, as no `name` is given)",
                };
                let message = format!(
                    "index `{slot}` is named `{name}`{given}, as index `{}` is: DynamoDB names each index of a table once; give it another `name = \"..\"`",
                    earlier.slot.name()
                );
                match &index.name {
                    Some(literal) => cx.error_spanned_by(literal, message),
                    None => cx.error_spanned_by(&index.slot_ident, message),
                }
            }
            for (names, types) in [(&index.pk, &index.pk_type), (&index.sk, &index.sk_type)] {
                if !types.is_empty() && types.len() != names.len() {
                    if let Some(first) = types.first() {
                        cx.error_spanned_by(
                            first,
                            format!("give one type per key attribute ({} here)", names.len()),
                        );
                    }
                }
            }
            if matches!(index.slot, Slot::Local(_)) && (index.sk.len() > 1) {
                cx.error_spanned_by(
                    &index.slot_ident,
                    "multi-attribute keys are for global indexes",
                );
            }
            for kind in index.pk_type.iter().chain(&index.sk_type) {
                if !matches!(kind.value().as_str(), "S" | "N" | "B") {
                    cx.error_spanned_by(
                        kind,
                        "a key type is \"S\" (string), \"N\" (number) or \"B\" (binary)",
                    );
                }
            }
            match index.slot {
                Slot::Global(_) if index.pk.is_empty() => cx.error_spanned_by(
                    &index.slot_ident,
                    format!("global index `{slot}` needs its partition key attribute: `{slot}(pk = \"{}PK\", ...)`", slot.to_uppercase()),
                ),
                Slot::Local(_) => {
                    if let Some(pk) = index.pk.first() {
                        cx.error_spanned_by(pk, format!("local index `{slot}` shares the table's partition key; remove `pk`"));
                    }
                    if index.sk.is_empty() {
                        cx.error_spanned_by(&index.slot_ident, format!("local index `{slot}` needs a sort key attribute: `{slot}(sk = \"...\")`"));
                    }
                    if self.attrs.sk.is_none() {
                        cx.error_spanned_by(&index.slot_ident, "DynamoDB allows local indexes only on tables with a sort key");
                    }
                }
                _ => {}
            }
            self.check_key_names(cx, index);
            self.check_projection(cx, index);
        }
        // DynamoDB's limit, counting an attribute once per index that lists it.
        let listed: usize = self
            .attrs
            .indexes
            .iter()
            .map(|index| match &index.projection {
                Some(ProjectionAttr::Include(_, attributes)) => attributes.len(),
                _ => 0,
            })
            .sum();
        if listed > 100 {
            if let Some(first) =
                self.attrs
                    .indexes
                    .iter()
                    .find_map(|index| match &index.projection {
                        Some(ProjectionAttr::Include(path, _)) => Some(path),
                        _ => None,
                    })
            {
                cx.error_spanned_by(first, format!("the indexes list {listed} projected attributes; DynamoDB allows 100 in all (an attribute counts once per index)"));
            }
        }
    }

    /// The entity and schema version attributes, which the library writes into every item,
    /// and the TTL attribute are attributes of their own: none is a table key attribute or
    /// another of them. An index may key on one (listing items by entity, say), where no
    /// entity writes that index key.
    fn check_library_attributes(&self, cx: &mut Ctxt) {
        let attrs = &self.attrs;
        // Each: its name, what it is, the setting that named it (`None`: the default), and
        // whether it is a key.
        let keys = [
            (&attrs.pk, "the table's partition key attribute"),
            (&attrs.sk, "the table's sort key attribute"),
        ];
        let mut earlier: Vec<(String, &str, Option<&LitStr>, bool)> = (keys.into_iter())
            .filter_map(|(key, role)| key.as_ref().map(|key| (key.value(), role, Some(key), true)))
            .collect();
        let written = "which the library writes into every item";
        let library = [
            (
                attrs.entity_attribute_name(),
                "the entity attribute",
                attrs.entity_attribute.as_ref(),
                "entity_attribute",
                written,
            ),
            (
                attrs.schema_version_attribute_name(),
                "the schema version attribute",
                attrs.schema_version_attribute.as_ref(),
                "schema_version_attribute",
                written,
            ),
        ];
        let ttl = (attrs.ttl.iter()).map(|ttl| {
            let read = "which DynamoDB's time to live reads as each item's expiry";
            (ttl.value(), "the TTL attribute", Some(ttl), "ttl", read)
        });
        for (name, role, given, setting, why) in library.into_iter().chain(ttl) {
            // An empty name has its own message, above.
            let clash = earlier.iter().find(|(other, ..)| *other == name);
            if let Some((_, other_role, other_given, key)) = clash.filter(|_| !name.is_empty()) {
                let message = match given {
                    Some(_) if setting == "ttl" && *key => "the TTL attribute cannot be a key attribute: DynamoDB's time to live reads a number that items may leave out".to_owned(),
                    Some(_) => format!("`{name}` is already {other_role}: {role}, {why}, needs an attribute of its own"),
                    None => format!("`{name}` is {role} (its default), {why}: set `{setting} = \"..\"` to another attribute, or name this one otherwise"),
                };
                if let Some(token) = given.or(*other_given) {
                    cx.error_spanned_by(token, message);
                }
            }
            earlier.push((name, role, given, false));
        }
    }

    /// Each attribute once in an index's key. A local index's partition key is the table's
    /// (giving it one is its own error), so its sort key is another attribute.
    fn check_key_names(&self, cx: &mut Ctxt, index: &TableIndexAttr) {
        let slot = index.slot.name();
        let (mut named, given) = match index.slot {
            Slot::Local(_) => (self.attrs.pk.iter().map(LitStr::value).collect(), &[][..]),
            Slot::Global(_) => (Vec::new(), &index.pk[..]),
        };
        for attribute in given.iter().chain(&index.sk) {
            let name = attribute.value();
            if matches!(index.slot, Slot::Local(_)) && named.first() == Some(&name) {
                cx.error_spanned_by(attribute, format!("`{name}` is the table's partition key, which local index `{slot}` shares: its sort key is another attribute"));
            } else if named.contains(&name) {
                cx.error_spanned_by(attribute, format!("`{name}` is already a key attribute of index `{slot}`: a key names each attribute once (DynamoDB refuses one attribute in two roles)"));
            }
            named.push(name);
        }
    }

    fn check_projection(&self, cx: &mut Ctxt, index: &TableIndexAttr) {
        match &index.projection {
            Some(ProjectionAttr::Named(name))
                if !crate::settings::PROJECTIONS
                    .names
                    .contains(&name.value().as_str()) =>
            {
                cx.error_spanned_by(name, crate::settings::PROJECTIONS.unknown(&name.value()));
            }
            None | Some(ProjectionAttr::Named(_)) => {}
            Some(ProjectionAttr::Include(path, attributes)) => {
                if attributes.is_empty() {
                    cx.error_spanned_by(path, "list the attributes to project, or write `projection = \"keys_only\"` for none");
                }
                let keys: Vec<String> = [&self.attrs.pk, &self.attrs.sk]
                    .into_iter()
                    .flatten()
                    .chain(&index.pk)
                    .chain(&index.sk)
                    .map(LitStr::value)
                    .collect();
                for (position, attribute) in attributes.iter().enumerate() {
                    let name = attribute.value();
                    if name.is_empty() {
                        cx.error_spanned_by(attribute, "this name cannot be empty");
                    } else if keys.contains(&name) {
                        cx.error_spanned_by(attribute, format!("`{name}` is a key attribute, which every index holds; list only other attributes"));
                    } else if attributes[..position]
                        .iter()
                        .any(|earlier| earlier.value() == name)
                    {
                        cx.error_spanned_by(attribute, format!("`{name}` is listed twice"));
                    }
                }
            }
        }
    }
}

impl ProjectionStruct<'_> {
    pub fn validate(&self, cx: &mut Ctxt) {
        if self.attrs.entity.is_none() {
            cx.error_spanned_by(
                self.ident,
                "name the entity this projection reads, and the index unless it reads the table: `#[dynamo(entity = Ticket)]` or `#[dynamo(entity = Ticket, index = gsi1)]`",
            );
        }
        if let Some((slot, None)) = &self.attrs.index {
            cx.error_spanned_by(
                slot,
                format!("`{slot}` is not an index slot; indexes are `gsi1`..`gsi20` and `lsi1`..`lsi5`, as the table declares them"),
            );
        }
        for field in &self.flattened {
            cx.error_spanned_by(
                field,
                "a projection cannot `#[serde(flatten)]` a field: the attributes it reads could not be checked against the index; list them as fields",
            );
        }
        if self.fields.is_empty() && self.flattened.is_empty() {
            cx.error_spanned_by(
                self.ident,
                "a projection reads at least one attribute; for keys alone, use the query's `IndexEntry` values as they are",
            );
        }
    }
}

impl KeyPartEnum<'_> {
    pub fn validate(&self, cx: &mut Ctxt) {
        for variant in &self.variants {
            // The key-overlap check relies on parts writing no separator a template could use.
            if let Some(separator) = variant
                .text
                .chars()
                .find(|c| !c.is_alphanumeric() && !"-:.+_".contains(*c))
            {
                let message = format!(
                    "the key text {:?} of `{}` contains {separator:?}, which key templates use to separate their parts; key parts write only letters, digits, `-`, `:`, `.`, `+` and `_`, so that no key can be read as another's: rename the variant for serde (`#[serde(rename = \"...\")]`)",
                    variant.text, variant.ident
                );
                // At the serde attribute that names it, else at the variant's name.
                match variant.serde {
                    Some(attribute) => cx.error_spanned_by(attribute, message),
                    None => cx.error_spanned_by(variant.ident, message),
                }
            }
        }
        if self.variants.is_empty() && !cx.has_errors() {
            cx.error_spanned_by(self.ident, "`KeyPart` needs at least one variant");
        }
    }
}

impl CollectionEnum<'_> {
    pub fn validate(&self, cx: &mut Ctxt) {
        if self.variants.is_empty() && !cx.has_errors() {
            cx.error_spanned_by(self.ident, "a collection needs at least one entity variant");
        }
        // Items are told apart by entity name, so a second variant of one entity could never
        // be read (and its key templates would overlap its own).
        let written = |ty: &syn::Type| quote::quote!(#ty).to_string();
        for (position, (variant, ty)) in self.variants.iter().enumerate() {
            let entity = written(ty);
            if let Some((earlier, _)) = self.variants[..position]
                .iter()
                .find(|(_, earlier)| written(earlier) == entity)
            {
                cx.error_spanned_by(
                    ty,
                    format!(
                        "`{}` is already variant `{earlier}` of `{}`: a collection holds each entity once, since its items are told apart by entity; remove variant `{variant}`",
                        entity.replace(' ', ""),
                        self.ident
                    ),
                );
            }
        }
    }
}

/// Whether a field's type is written `Option<..>` (however qualified).
/// DynamoDB's rule for table and index names: 3 to 255 characters, each a letter, a digit,
/// `_`, `-` or `.`. An empty name has its own error.
fn check_dynamo_name(cx: &mut Ctxt, name: &LitStr, what: &str) {
    let value = name.value();
    if value.is_empty() {
        return;
    }
    let allowed = |c: &char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    let wrong = match value.chars().find(|c| !allowed(c)) {
        Some(c) => format!("`{}` is not allowed", c.escape_default()),
        None if value.len() < 3 => format!("it has {} characters", value.len()),
        None if value.len() > 255 => format!("it has {} characters", value.len()),
        None => return,
    };
    cx.error_spanned_by(
        name,
        format!("DynamoDB names {what} with 3 to 255 characters, each a letter, a digit, `_`, `-` or `.`: {wrong}"),
    );
}

fn is_option(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(path) if path.path.segments.last().is_some_and(|last| last.ident == "Option"))
}
