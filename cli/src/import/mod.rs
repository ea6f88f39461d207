//! `import-workbench`: a NoSQL Workbench data model (format 3.0) as a Cargo package that
//! declares its tables and entities and tests them against the model's own sample items.
//!
//! Entities come from the model's facets, one per shape of keys in each (so a facet whose
//! items have two shapes gives two), or, for a model with only the table's items, from the
//! shapes of their keys: constant prefixes and separators (`docs/workbench.md` has the
//! rules). Templates are read from the samples and the facets' key aliases (`SUB#123#SKU#999`
//! with the alias `SubId#SKU` is `"SUB#{sub_id}#SKU#{sku}"`). What the model cannot settle is
//! written as it could be, with a `NEEDS A DECISION` comment naming it, and a sample that
//! depends on it is left out of the test with its reason: nothing is guessed silently.

mod draft;
mod emit;
mod names;
mod shape;
mod values;

use singletable_runtime::workbench::format::Model;
use std::path::{Path, PathBuf};

/// Which singletable the package depends on.
#[derive(Debug, Clone)]
pub enum Dependency {
    /// A released version (`"0.1"`).
    Version(String),
    /// A checkout, by path.
    Path(PathBuf),
}

/// Why a model cannot be imported.
#[derive(Debug)]
#[non_exhaustive]
pub enum ImportError {
    /// The text is not a NoSQL Workbench model.
    NotAModel {
        /// What is wrong, and where.
        reason: String,
    },
    /// A table key that is not a string: the library writes its keys as strings.
    KeyType {
        /// The table.
        table: String,
        /// The key attribute.
        attribute: String,
        /// Its type in the model.
        found: String,
    },
}

impl std::fmt::Display for ImportError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImportError::NotAModel { reason } => {
                write!(formatter, "not a NoSQL Workbench model (format 3.0): {reason}")
            }
            ImportError::KeyType { table, attribute, found } => write!(
                formatter,
                "table `{table}` keys on `{attribute}` of type {found}; singletable writes table keys \
                 as strings (S)"
            ),
        }
    }
}

impl std::error::Error for ImportError {}

/// The package an import writes: its files, by path within it.
#[derive(Debug, Clone)]
pub struct Package {
    /// The package's name.
    pub name: String,
    /// Each file's path within the package, and its text.
    pub files: Vec<(PathBuf, String)>,
    /// Every `NEEDS A DECISION` the import left, for the command to print.
    pub decisions: Vec<String>,
}

impl Package {
    /// Writes the files under `directory`, creating what is missing.
    ///
    /// # Errors
    ///
    /// The file system's.
    pub fn write(&self, directory: &Path) -> std::io::Result<()> {
        for (path, text) in &self.files {
            let path = directory.join(path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, text)?;
        }
        Ok(())
    }
}

/// The package that declares the tables and entities of `model` (a model's JSON), depending
/// on singletable as `dependency` says.
///
/// # Errors
///
/// [`ImportError`] for text that is not a model, and for a table the library cannot declare.
pub fn workbench(model: &str, dependency: &Dependency) -> Result<Package, ImportError> {
    let model: Model = serde_json::from_str(model).map_err(|error| ImportError::NotAModel {
        reason: format!("{error}"),
    })?;
    let tables = (model.data_model.iter())
        .map(draft::table)
        .collect::<Result<Vec<_>, _>>()?;
    let name = format!(
        "{}-model",
        names::field(&model.model_name)
            .replace('_', "-")
            .trim_matches('-')
    );
    let crate_name = name.replace('-', "_");
    let mut decisions: Vec<String> = Vec::new();
    for table in &tables {
        decisions.extend(
            table
                .notes
                .iter()
                .map(|note| format!("{}: {note}", table.name)),
        );
        for entity in &table.entities {
            let entity_notes = entity
                .notes
                .iter()
                .map(|note| format!("{}: {note}", entity.type_name));
            decisions.extend(entity_notes);
        }
    }
    Ok(Package {
        files: vec![
            (
                PathBuf::from("Cargo.toml"),
                emit::cargo_toml(&name, dependency, &tables),
            ),
            (
                PathBuf::from("src/lib.rs"),
                emit::lib_rs(&model.model_name, &tables),
            ),
            (
                PathBuf::from("tests/sample_items.rs"),
                emit::sample_items_rs(&crate_name, &tables),
            ),
        ],
        name,
        decisions,
    })
}
