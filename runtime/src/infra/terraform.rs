//! The table as a Terraform `aws_dynamodb_table` resource block, in HCL.

use super::auto_scaling::ScalingTarget;
use super::InfraError;
use crate::op::table::CreateTable;
use crate::schema::{IndexKind, IndexSchema};
use std::fmt::Write;

/// A block of HCL: `kind "label" … { body }`.
struct Block {
    kind: &'static str,
    labels: Vec<String>,
    body: Vec<Entry>,
}

enum Entry {
    Attribute(&'static str, Value),
    Block(Block),
}

enum Value {
    Text(String),
    Bool(bool),
    Number(u64),
    List(Vec<String>),
    /// `{ key = "value", ... }`, keys quoted.
    Map(Vec<(String, String)>),
    /// An expression, written as it is (`aws_dynamodb_table.app.arn`, `jsonencode(..)`).
    Expression(String),
}

impl Block {
    fn new(kind: &'static str) -> Self {
        Block {
            kind,
            labels: Vec::new(),
            body: Vec::new(),
        }
    }

    fn text(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.body
            .push(Entry::Attribute(name, Value::Text(value.into())));
        self
    }

    fn flag(mut self, name: &'static str, value: bool) -> Self {
        self.body.push(Entry::Attribute(name, Value::Bool(value)));
        self
    }

    fn number(mut self, name: &'static str, value: u64) -> Self {
        self.body.push(Entry::Attribute(name, Value::Number(value)));
        self
    }

    fn value(mut self, name: &'static str, value: Value) -> Self {
        self.body.push(Entry::Attribute(name, value));
        self
    }

    fn list(mut self, name: &'static str, items: &[&str]) -> Self {
        let items = items.iter().map(|item| (*item).to_owned()).collect();
        self.body.push(Entry::Attribute(name, Value::List(items)));
        self
    }

    fn block(mut self, block: Block) -> Self {
        self.body.push(Entry::Block(block));
        self
    }

    /// As `terraform fmt` writes it: two spaces per level, the `=` of consecutive
    /// attributes aligned.
    fn render(&self, out: &mut String, depth: usize) {
        let indent = "  ".repeat(depth);
        let _ = write!(out, "{indent}{}", self.kind);
        for label in &self.labels {
            let _ = write!(out, " {}", quoted(label));
        }
        out.push_str(" {\n");
        let mut entries = self.body.iter().peekable();
        while let Some(entry) = entries.next() {
            match entry {
                Entry::Block(block) => block.render(out, depth + 1),
                Entry::Attribute(..) => {
                    let mut run = vec![entry];
                    while let Some(next @ Entry::Attribute(..)) = entries.peek() {
                        run.push(next);
                        entries.next();
                    }
                    let width = run
                        .iter()
                        .map(|entry| match entry {
                            Entry::Attribute(name, _) => name.len(),
                            Entry::Block(_) => 0,
                        })
                        .max()
                        .unwrap_or(0);
                    for entry in run {
                        if let Entry::Attribute(name, value) = entry {
                            let _ = writeln!(out, "{indent}  {name:width$} = {}", value.render());
                        }
                    }
                }
            }
        }
        let _ = writeln!(out, "{indent}}}");
    }
}

impl Value {
    fn render(&self) -> String {
        match self {
            Value::Text(text) => quoted(text),
            Value::Bool(flag) => flag.to_string(),
            Value::Number(number) => number.to_string(),
            Value::List(items) => {
                let items: Vec<String> = items.iter().map(|item| quoted(item)).collect();
                format!("[{}]", items.join(", "))
            }
            Value::Map(entries) => {
                let entries: Vec<String> = (entries.iter())
                    .map(|(key, value)| format!("{} = {}", quoted(key), quoted(value)))
                    .collect();
                format!("{{ {} }}", entries.join(", "))
            }
            Value::Expression(expression) => expression.clone(),
        }
    }
}

/// An HCL string literal: escapes, and `${` and `%{` doubled so that no name is read as a
/// template interpolation or directive.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '$' | '%' if chars.peek() == Some(&'{') => {
                out.push(c);
                out.push(c);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
}

fn index_block(index: &IndexSchema) -> Result<Block, InfraError> {
    if index.partition_keys.len() > 1 || index.sort_keys.len() > 1 {
        return Err(InfraError::MultiAttributeKey { index: index.name });
    }
    let mut block = match index.kind {
        IndexKind::Global => Block::new("global_secondary_index")
            .text("name", index.name)
            .text("hash_key", index.partition_key),
        IndexKind::Local => Block::new("local_secondary_index").text("name", index.name),
    };
    if let Some(sort_key) = index.sort_key {
        block = block.text("range_key", sort_key);
    }
    block = block.text("projection_type", index.projection.projection_type());
    let attributes = index.projection.non_key_attributes();
    if !attributes.is_empty() {
        block = block.list("non_key_attributes", attributes);
    }
    Ok(block)
}

/// An `aws_appautoscaling_target` and its `aws_appautoscaling_policy`, for the table
/// resource `table`, named `{table}_{target}` (`app_read`, `app_gsi1write`).
fn scaling_blocks(target: &ScalingTarget, table: &str) -> [Block; 2] {
    let name = format!("{table}_{}", target.name().to_ascii_lowercase());
    let resource_id = format!(
        "\"table/${{aws_dynamodb_table.{table}.name}}{}\"",
        target.index_path()
    );
    let mut scalable = Block::new("resource")
        .number("max_capacity", target.maximum)
        .number("min_capacity", target.minimum)
        .value("resource_id", Value::Expression(resource_id))
        .text("scalable_dimension", target.dimension())
        .text("service_namespace", "dynamodb");
    scalable.labels = vec!["aws_appautoscaling_target".to_owned(), name.clone()];
    let of_target =
        |field: &str| Value::Expression(format!("aws_appautoscaling_target.{name}.{field}"));
    let mut policy = Block::new("resource")
        .value(
            "name",
            Value::Expression(format!(
                "\"${{aws_dynamodb_table.{table}.name}}-{}\"",
                target.name()
            )),
        )
        .text("policy_type", "TargetTrackingScaling")
        .value("resource_id", of_target("resource_id"))
        .value("scalable_dimension", of_target("scalable_dimension"))
        .value("service_namespace", of_target("service_namespace"))
        .block(
            Block::new("target_tracking_scaling_policy_configuration")
                .number("target_value", u64::from(target.target))
                .block(
                    Block::new("predefined_metric_specification")
                        .text("predefined_metric_type", target.metric()),
                ),
        );
    policy.labels = vec!["aws_appautoscaling_policy".to_owned(), name];
    [scalable, policy]
}

impl CreateTable {
    /// This request as a Terraform `resource "aws_dynamodb_table" "<resource_name>"` block,
    /// formatted as `terraform fmt` leaves it, followed by an `aws_dynamodb_resource_policy`
    /// block when the table has a [resource policy](Self::resource_policy). By default it
    /// protects its data: `deletion_protection_enabled`, `point_in_time_recovery`,
    /// `server_side_encryption` and `lifecycle { prevent_destroy = true }` (see
    /// [`unprotected`](Self::unprotected)).
    ///
    /// # Errors
    ///
    /// [`InfraError::ResourceName`] when `resource_name` is not a Terraform identifier;
    /// [`InfraError::MultiAttributeKey`] when an index's key has several attributes.
    pub fn terraform(&self, resource_name: &str) -> Result<String, InfraError> {
        if !is_identifier(resource_name) {
            return Err(InfraError::ResourceName {
                name: resource_name.to_owned(),
            });
        }
        let mut table = Block::new("resource")
            .text("name", self.table_name.clone())
            .text(
                "billing_mode",
                match self.protection.provisioned {
                    Some(_) => "PROVISIONED",
                    None => "PAY_PER_REQUEST",
                },
            )
            .text("hash_key", self.partition_key);
        table.labels = vec!["aws_dynamodb_table".to_owned(), resource_name.to_owned()];
        if let Some(sort_key) = self.sort_key {
            table = table.text("range_key", sort_key);
        }
        if let Some(provisioned) = self.protection.provisioned {
            table = table
                .number("read_capacity", provisioned.units.read)
                .number("write_capacity", provisioned.units.write);
        }
        if let Some(view) = self.stream {
            table = table
                .flag("stream_enabled", true)
                .text("stream_view_type", view.as_str());
        }
        for (name, kind) in &self.attributes {
            table = table.block(
                Block::new("attribute")
                    .text("name", *name)
                    .text("type", kind.code()),
            );
        }
        for index in &self.indexes {
            let mut block = index_block(index)?;
            if let (Some(provisioned), IndexKind::Global) =
                (self.protection.provisioned, index.kind)
            {
                block = block
                    .number("read_capacity", provisioned.units.read)
                    .number("write_capacity", provisioned.units.write);
            }
            table = table.block(block);
        }
        if let Some(attribute) = self.ttl_attribute {
            table = table.block(
                Block::new("ttl")
                    .text("attribute_name", attribute)
                    .flag("enabled", true),
            );
        }
        let protection = &self.protection;
        table = table.flag(
            "deletion_protection_enabled",
            protection.deletion_protection,
        );
        if protection.point_in_time_recovery {
            table = table.block(Block::new("point_in_time_recovery").flag("enabled", true));
        }
        let mut encryption = Block::new("server_side_encryption").flag("enabled", true);
        if let Some(key) = &protection.kms_key {
            encryption = encryption.text("kms_key_arn", key.clone());
        }
        table = table.block(encryption);
        if let Some(units) = protection
            .on_demand_maximum
            .filter(|_| protection.provisioned.is_none())
        {
            table = table.block(
                Block::new("on_demand_throughput")
                    .number("max_read_request_units", units.read)
                    .number("max_write_request_units", units.write),
            );
        }
        if let Some(units) = protection.warm_throughput {
            table = table.block(
                Block::new("warm_throughput")
                    .number("read_units_per_second", units.read)
                    .number("write_units_per_second", units.write),
            );
        }
        for region in &protection.replicas {
            let mut replica = Block::new("replica")
                .text("region_name", region.clone())
                .flag("point_in_time_recovery", protection.point_in_time_recovery)
                .flag(
                    "deletion_protection_enabled",
                    protection.deletion_protection,
                )
                .flag("propagate_tags", true);
            if let Some(key) = &protection.kms_key {
                replica = replica.text("kms_key_arn", key.clone());
            }
            table = table.block(replica);
        }
        if !protection.tags.is_empty() {
            table = table.value("tags", Value::Map(protection.tags.clone()));
        }
        let scaled = protection.provisioned.is_some_and(|p| p.scaling.is_some());
        if protection.retain || scaled {
            let mut lifecycle = Block::new("lifecycle");
            if protection.retain {
                lifecycle = lifecycle.flag("prevent_destroy", true);
            }
            if scaled {
                // Auto scaling moves the capacity; a plan must not move it back.
                lifecycle = lifecycle.value(
                    "ignore_changes",
                    Value::Expression("[read_capacity, write_capacity]".to_owned()),
                );
            }
            table = table.block(lifecycle);
        }
        let mut out = String::new();
        table.render(&mut out, 0);
        for target in self.scaling_targets() {
            for block in scaling_blocks(&target, resource_name) {
                out.push('\n');
                block.render(&mut out, 0);
            }
        }
        if let Some(policy) = &protection.resource_policy {
            let mut block = Block::new("resource")
                .value(
                    "resource_arn",
                    Value::Expression(format!("aws_dynamodb_table.{resource_name}.arn")),
                )
                .value("policy", Value::Text(policy.to_string()));
            block.labels = vec![
                "aws_dynamodb_resource_policy".to_owned(),
                resource_name.to_owned(),
            ];
            out.push('\n');
            block.render(&mut out, 0);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped_and_never_interpolated() {
        assert_eq!(quoted(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(quoted("${var.x} %{ if }"), r#""$${var.x} %%{ if }""#);
        assert_eq!(quoted("$x %"), r#""$x %""#);
        assert_eq!(quoted("line\nnext\u{1}"), r#""line\nnext\u0001""#);
    }

    #[test]
    fn resource_names_are_identifiers() {
        assert!(is_identifier("app_table"));
        assert!(is_identifier("_app-1"));
        assert!(!is_identifier("1app"));
        assert!(!is_identifier("app table"));
        assert!(!is_identifier(""));
    }
}
