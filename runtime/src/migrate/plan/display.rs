//! Plans as text, for people and for the command line.

use super::*;

impl fmt::Display for PlanAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanAction::CreateTable {
                global_indexes,
                local_indexes,
            } => {
                write!(f, "create the table")?;
                let all: Vec<&str> = global_indexes
                    .iter()
                    .chain(local_indexes)
                    .copied()
                    .collect();
                if !all.is_empty() {
                    write!(f, " with indexes {}", all.join(", "))?;
                }
                Ok(())
            }
            PlanAction::CreateIndex(change) => {
                write!(
                    f,
                    "create global index {} {}",
                    change.index.name,
                    keys_text(Some(change.index.partition_key), change.index.sort_key)
                )?;
                if !change.new_attribute_definitions.is_empty() {
                    let defined: Vec<String> = change
                        .new_attribute_definitions
                        .iter()
                        .map(|(name, kind)| format!("{name}:{}", kind.code()))
                        .collect();
                    write!(f, ", defining {}", defined.join(", "))?;
                }
                Ok(())
            }
            PlanAction::AwaitIndex { index, status } => {
                write!(f, "wait for index {index} ({status}) to become ACTIVE")
            }
            PlanAction::DeleteIndex { index } => write!(f, "delete global index {index}"),
            PlanAction::EnableTtl { attribute } => {
                write!(f, "turn on time to live for attribute {attribute}")
            }
            PlanAction::EnableStream { view } => write!(f, "turn on the stream ({view})"),
            PlanAction::RecordKeys {
                entity,
                schema_version,
            } => write!(
                f,
                "record {entity}'s keys at schema version {schema_version} (later plans compare \
                 the declaration with them)"
            ),
        }
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.live {
            None => writeln!(f, "table {}: does not exist", self.table)?,
            Some(live) => {
                write!(f, "table {}: {}", self.table, live.status)?;
                if let Some(count) = live.item_count {
                    write!(f, ", about {count} items")?;
                }
                writeln!(f)?;
            }
        }
        for index in &self.up_to_date {
            writeln!(f, "  = index {index}: up to date")?;
        }
        for action in &self.actions {
            writeln!(f, "  + {action}")?;
            if let PlanAction::CreateIndex(change) = action {
                for (entity, version) in &change.written_by {
                    writeln!(f, "      written by {entity} (schema version {version})")?;
                }
            }
        }
        for note in &self.notes {
            match note {
                Note::UnusedIndex {
                    index,
                    deleted: false,
                } => writeln!(
                    f,
                    "  ! index {index} is on the table but not declared: kept (deleting needs \
                     delete_unused / --delete-unused)"
                )?,
                Note::UnusedIndex {
                    index,
                    deleted: true,
                } => writeln!(f, "  ! index {index} is not declared: it will be deleted")?,
                Note::UnusedLocalIndex { index } => writeln!(
                    f,
                    "  ! local index {index} is not declared (local indexes cannot be deleted)"
                )?,
                Note::IndexNotWritten { index } => writeln!(
                    f,
                    "  ! index {index} is declared but no entity writes keys for it"
                )?,
                Note::UndeclaredTtl { attribute } => writeln!(
                    f,
                    "  ! time to live is on for {attribute}, which the table does not declare"
                )?,
                Note::UndeclaredStream { view } => writeln!(
                    f,
                    "  ! the table has a stream ({view}) it does not declare; left on"
                )?,
                Note::KeysChanged {
                    entity,
                    recorded_version,
                    schema_version,
                    changes,
                } => writeln!(
                    f,
                    "  ! {entity}'s keys changed since schema version {recorded_version}: {}. \
                     Its items are behind until a sweep to version {schema_version} rewrites \
                     them (coverage counts them; mark the migration complete when done)",
                    changes.join("; ")
                )?,
                Note::Setting {
                    setting,
                    expected,
                    found,
                } => writeln!(
                    f,
                    "  ! {setting}: {found} on the table, {expected} in its infrastructure code \
                     (set it there: apply changes indexes, time to live and streams only)"
                )?,
            }
        }
        for blocker in &self.blockers {
            writeln!(f, "  x {blocker}")?;
        }
        for hint in &self.backfills {
            writeln!(
                f,
                "  > then backfill {} (items below schema version {} lack {}'s keys)",
                hint.entity,
                hint.schema_version,
                hint.indexes.join(", ")
            )?;
        }
        if self.is_up_to_date() {
            writeln!(f, "  nothing to do")?;
        }
        Ok(())
    }
}
