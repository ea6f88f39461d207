//! `workbench`: the table as a NoSQL Workbench data model, with sample values from a file; and
//! `import-workbench`: a model as a package (`crate::import`).

use crate::{Entities, Output, EXIT_OK, EXIT_USAGE};
use serde_json::Value;
use singletable_runtime::schema::{Entity, Table};
use singletable_runtime::workbench::{WorkbenchError, WorkbenchModel};
use singletable_runtime::Db;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(crate) struct WorkbenchArgs {
    /// Sample values: a JSON object of entity names, each with a list of values as serde
    /// writes the entity to JSON (`{"Ticket": [{"id": "8842", "team_id": 7, ..}]}`). Each is
    /// encoded as a put writes it, into its entity's facet.
    #[arg(long, value_name = "FILE")]
    samples: Option<PathBuf>,
    #[command(flatten)]
    capacity: crate::CapacityArgs,
}

/// Adds one sample, given as JSON, to `model` as entity `E`.
pub(crate) type SampleFn<T> =
    for<'db> fn(WorkbenchModel<'db, T>, Value) -> Result<WorkbenchModel<'db, T>, String>;

/// Gives `E` its facet.
pub(crate) type FacetFn<T> = for<'db> fn(WorkbenchModel<'db, T>) -> WorkbenchModel<'db, T>;

pub(crate) fn sample_of<T: Table, E: Entity<Table = T>>(
    model: WorkbenchModel<'_, T>,
    value: Value,
) -> Result<WorkbenchModel<'_, T>, String> {
    let value: E = serde_json::from_value(value).map_err(|error| {
        // serde_json's message may quote the value; the line and column say where.
        format!(
            "a `{}` sample does not read as one: {}",
            E::SCHEMA.name,
            mistake(&error)
        )
    })?;
    model
        .sample(&value)
        .map_err(|error: WorkbenchError| error.to_string())
}

pub(crate) fn facet_of<T: Table, E: Entity<Table = T>>(
    model: WorkbenchModel<'_, T>,
) -> WorkbenchModel<'_, T> {
    model.entity::<E>()
}

/// What kind of mistake serde_json found, and where, without the value it quotes.
fn mistake(error: &serde_json::Error) -> String {
    let kind = match error.classify() {
        serde_json::error::Category::Data => "a field is missing or of another type",
        serde_json::error::Category::Syntax => "not JSON",
        serde_json::error::Category::Eof => "the JSON ends early",
        serde_json::error::Category::Io => "it could not be read",
    };
    format!("{kind} (line {}, column {})", error.line(), error.column())
}

pub(crate) fn workbench<T: Table>(
    db: &Db<T>,
    entities: &Entities<T>,
    args: WorkbenchArgs,
    output: &mut Output,
) -> u8 {
    let mut model = db.admin().workbench_model();
    for entry in &entities.entries {
        model = (entry.facet)(model);
    }
    if let Some(path) = &args.samples {
        let samples = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) => {
                output.error(&format_args!("--samples {}: {error}", path.display()));
                return EXIT_USAGE;
            }
        };
        let samples: serde_json::Map<String, Value> = match serde_json::from_str(&samples) {
            Ok(samples) => samples,
            Err(error) => {
                output.error(&format_args!(
                    "--samples {}: write an object of entity names, each with a list of values: {}",
                    path.display(),
                    mistake(&error)
                ));
                return EXIT_USAGE;
            }
        };
        for (name, values) in samples {
            let Some(entry) = entities.find(&name) else {
                let known = entities
                    .schemas()
                    .iter()
                    .map(|schema| schema.name)
                    .collect::<Vec<_>>();
                output.error(&format_args!(
                    "--samples: no entity `{name}` is registered (the entities: {})",
                    known.join(", ")
                ));
                return EXIT_USAGE;
            };
            let Value::Array(values) = values else {
                output.error(&format_args!("--samples: `{name}` holds a list of values"));
                return EXIT_USAGE;
            };
            for value in values {
                model = match (entry.sample)(model, value) {
                    Ok(model) => model,
                    Err(error) => {
                        output.error(&error);
                        return EXIT_USAGE;
                    }
                };
            }
        }
    }
    let definition = match args.capacity.apply(db.admin().create_table()) {
        Ok(definition) => definition,
        Err(error) => {
            output.error(&error);
            return EXIT_USAGE;
        }
    };
    match model.infrastructure(&definition).to_json() {
        Ok(json) => {
            let value: Value = serde_json::from_str(&json).unwrap_or(Value::Null);
            output.result(&format_args!("{json}\n"), value);
            EXIT_OK
        }
        Err(error) => {
            output.error(&error);
            EXIT_USAGE
        }
    }
}

pub(crate) fn import(
    model: &std::path::Path,
    out: &std::path::Path,
    singletable_path: Option<PathBuf>,
    output: &mut Output,
) -> u8 {
    let text = match std::fs::read_to_string(model) {
        Ok(text) => text,
        Err(error) => {
            output.error(&format_args!("{}: {error}", model.display()));
            return EXIT_USAGE;
        }
    };
    let dependency = match singletable_path {
        Some(path) => crate::import::Dependency::Path(path),
        None => crate::import::Dependency::Version(env!("CARGO_PKG_VERSION").to_owned()),
    };
    let package = match crate::import::workbench(&text, &dependency) {
        Ok(package) => package,
        Err(error) => {
            output.error(&error);
            return EXIT_USAGE;
        }
    };
    if let Err(error) = package.write(out) {
        output.error(&format_args!("{}: {error}", out.display()));
        return crate::EXIT_FAILURE;
    }
    let mut text = format!(
        "wrote package {} to {} ({} files); `cargo test` there writes and reads back every sample\n",
        package.name,
        out.display(),
        package.files.len()
    );
    for decision in &package.decisions {
        text.push_str(&format!("NEEDS A DECISION: {decision}\n"));
    }
    let json = serde_json::json!({
        "package": package.name,
        "directory": out.display().to_string(),
        "decisions": package.decisions,
    });
    output.result(&text, json);
    EXIT_OK
}
