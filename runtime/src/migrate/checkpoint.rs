//! Where a sweep is: per segment, the key to continue after and what it has done, saved to a
//! file atomically (write to a temporary file, then rename) after every page.

use super::error::MigrationError;
use super::sweep::report::SweepCounts;
use super::time::unix_now;
use crate::error::Error;
use crate::item::Item;
use crate::wire;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The file format version; a file of another version is refused rather than misread.
const FORMAT: u64 = 2;

/// A sweep's progress: enough to continue it after a crash or Ctrl-C, and to tell
/// verification that it covered the whole table.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// The table swept.
    pub table: String,
    /// Which table of that name: [`LiveTable::identity`](super::plan::LiveTable::identity)
    /// when the sweep started. A checkpoint without it belongs to no table.
    pub table_identity: Option<String>,
    /// The entity backfilled.
    pub entity: String,
    /// The schema version items are brought to.
    pub schema_version: u32,
    /// `TotalSegments` of the scan (a resumed sweep must use the same).
    pub total_segments: u32,
    /// When the sweep started (Unix seconds).
    pub started_at: u64,
    /// When this was last saved (Unix seconds).
    pub updated_at: u64,
    /// One entry per segment, in segment order.
    pub segments: Vec<SegmentCheckpoint>,
}

/// One scan segment's progress.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentCheckpoint {
    /// The segment number.
    pub segment: u32,
    /// `ExclusiveStartKey` of the next page: every page before it is done (`None`: start at
    /// the beginning, unless `done`).
    pub start_key: Option<Item>,
    /// Whether the segment read its last page.
    pub done: bool,
    /// What the segment did so far, over every run.
    pub counts: SweepCounts,
}

impl Checkpoint {
    /// A sweep that has not started.
    pub fn new(table: &str, entity: &str, schema_version: u32, total_segments: u32) -> Self {
        let now = unix_now();
        Checkpoint {
            table: table.to_owned(),
            table_identity: None,
            entity: entity.to_owned(),
            schema_version,
            total_segments,
            started_at: now,
            updated_at: now,
            segments: (0..total_segments)
                .map(|segment| SegmentCheckpoint {
                    segment,
                    start_key: None,
                    done: false,
                    counts: SweepCounts::default(),
                })
                .collect(),
        }
    }

    /// Why this checkpoint does not belong to the live table `live` (by identity, not name),
    /// or `None` when it does.
    pub fn foreign_to(&self, live: Option<&str>) -> Option<String> {
        match (self.table_identity.as_deref(), live) {
            (Some(mine), Some(live)) if mine == live => None,
            (Some(mine), live) => Some(format!(
                "it was written for another table named {:?} ({mine}), not this one ({}): another environment's, or one deleted and created again; delete the file to sweep this table from the start",
                self.table,
                live.unwrap_or("whose identity DynamoDB did not report"),
            )),
            (None, _) => Some(
                "it does not say which table it was written for; delete the file to sweep this table from the start"
                    .to_owned(),
            ),
        }
    }

    /// Whether every segment read its last page.
    pub fn is_complete(&self) -> bool {
        self.segments.iter().all(|segment| segment.done)
    }

    /// Segments finished.
    pub fn segments_done(&self) -> u32 {
        let done = self.segments.iter().filter(|segment| segment.done).count();
        u32::try_from(done).unwrap_or(u32::MAX)
    }

    /// What every segment did, added up.
    pub fn totals(&self) -> SweepCounts {
        let mut totals = SweepCounts::default();
        for segment in &self.segments {
            totals.add(&segment.counts);
        }
        totals
    }

    /// The checkpoint as the JSON its file holds.
    pub fn to_json(&self) -> Value {
        json!({
            "format": FORMAT,
            "table": self.table,
            "table_identity": self.table_identity,
            "entity": self.entity,
            "schema_version": self.schema_version,
            "total_segments": self.total_segments,
            "started_at": self.started_at,
            "updated_at": self.updated_at,
            "segments": self.segments.iter().map(|segment| json!({
                "segment": segment.segment,
                "start_key": segment.start_key.as_ref().map(wire::item),
                "done": segment.done,
                "counts": segment.counts.to_json(),
            })).collect::<Vec<_>>(),
        })
    }

    /// Reads a checkpoint from its JSON.
    pub fn from_json(value: &Value) -> Result<Checkpoint, String> {
        let field = |name: &str| value.get(name).ok_or(format!("`{name}` is missing"));
        let number = |name: &str| {
            field(name)?
                .as_u64()
                .ok_or(format!("`{name}` is not a number"))
        };
        let text = |name: &str| {
            field(name)?
                .as_str()
                .map(str::to_owned)
                .ok_or(format!("`{name}` is not text"))
        };
        let small = |name: &str| {
            u32::try_from(number(name)?).map_err(|_| format!("`{name}` is out of range"))
        };
        let format = number("format")?;
        if format != FORMAT {
            return Err(format!(
                "format {format}, but this version of singletable reads format {FORMAT}"
            ));
        }
        let segments = field("segments")?
            .as_array()
            .ok_or("`segments` is not a list")?
            .iter()
            .map(|segment| {
                let segment_number = segment
                    .get("segment")
                    .and_then(Value::as_u64)
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or("a segment has no `segment` number")?;
                let start_key = match segment.get("start_key") {
                    None | Some(Value::Null) => None,
                    Some(key) => Some(wire::parse_item(key).map_err(|error| error.to_string())?),
                };
                Ok(SegmentCheckpoint {
                    segment: segment_number,
                    start_key,
                    done: segment
                        .get("done")
                        .and_then(Value::as_bool)
                        .ok_or("a segment has no `done` flag")?,
                    counts: SweepCounts::from_json(segment.get("counts").unwrap_or(&Value::Null)),
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let table_identity = match value.get("table_identity") {
            None | Some(Value::Null) => None,
            Some(Value::String(identity)) => Some(identity.clone()),
            Some(_) => return Err("`table_identity` is not text".to_owned()),
        };
        let checkpoint = Checkpoint {
            table: text("table")?,
            table_identity,
            entity: text("entity")?,
            schema_version: small("schema_version")?,
            total_segments: small("total_segments")?,
            started_at: number("started_at")?,
            updated_at: number("updated_at")?,
            segments,
        };
        // No segment at all would read as "every segment finished".
        if !(1..=1_000_000).contains(&checkpoint.total_segments) {
            return Err(format!(
                "`total_segments` must be between 1 and 1000000, not {}",
                checkpoint.total_segments
            ));
        }
        let in_order = checkpoint
            .segments
            .iter()
            .zip(0..)
            .all(|(segment, expected)| segment.segment == expected);
        if !in_order || checkpoint.segments.len() != checkpoint.total_segments as usize {
            return Err(format!(
                "it should list segments 0 to {} in order",
                checkpoint.total_segments.saturating_sub(1)
            ));
        }
        Ok(checkpoint)
    }

    /// Reads the checkpoint at `path`; `None` when there is no such file.
    pub fn load(path: &Path) -> Result<Option<Checkpoint>, Error> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(checkpoint_error(path, error.to_string())),
        };
        let value: Value = serde_json::from_str(&text)
            .map_err(|error| checkpoint_error(path, format!("not JSON: {error}")))?;
        Checkpoint::from_json(&value)
            .map(Some)
            .map_err(|message| checkpoint_error(path, message))
    }

    /// Writes the checkpoint to `path` atomically: a crash leaves the old file or the new one,
    /// never a torn one.
    pub fn save(&mut self, path: &Path) -> Result<(), Error> {
        self.updated_at = unix_now();
        let text = serde_json::to_string_pretty(&self.to_json())
            .map_err(|error| checkpoint_error(path, error.to_string()))?;
        let directory = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&directory)
            .map_err(|error| checkpoint_error(path, error.to_string()))?;
        let file_name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| "checkpoint".to_owned());
        let temporary = directory.join(format!(".{file_name}.{}.tmp", std::process::id()));
        let written = std::fs::File::create(&temporary).and_then(|mut file| {
            file.write_all(text.as_bytes())?;
            file.write_all(b"\n")?;
            // On disk before the rename makes it the checkpoint.
            file.sync_all()
        });
        let renamed = written.and_then(|()| std::fs::rename(&temporary, path));
        if let Err(error) = renamed {
            let _ = std::fs::remove_file(&temporary);
            return Err(checkpoint_error(path, error.to_string()));
        }
        Ok(())
    }
}

fn checkpoint_error(path: &Path, message: String) -> Error {
    MigrationError::Checkpoint {
        path: path.to_path_buf(),
        message,
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestResult = Result<(), Box<dyn std::error::Error>>;
    use aws_sdk_dynamodb::types::AttributeValue;

    #[test]
    fn a_saved_checkpoint_loads_back() -> TestResult {
        let mut checkpoint = Checkpoint::new("t", "Comment", 2, 2);
        checkpoint.segments[0].done = true;
        checkpoint.segments[0].counts.backfilled = 3;
        checkpoint.segments[0].counts.write_units = 4.5;
        checkpoint.segments[1].start_key = Some(Item::from([
            ("PK".to_owned(), AttributeValue::S("WS#1".into())),
            ("SK".to_owned(), AttributeValue::S("DOC#x".into())),
        ]));
        let directory = std::env::temp_dir().join(format!("st-checkpoint-{}", std::process::id()));
        let path = directory.join("sweep.json");
        checkpoint.save(&path)?;
        let loaded = Checkpoint::load(&path)?.ok_or("the saved checkpoint")?;
        assert_eq!(loaded, checkpoint);
        assert!(!loaded.is_complete());
        assert_eq!(loaded.totals().backfilled, 3);
        assert_eq!(Checkpoint::load(&directory.join("missing.json"))?, None);
        std::fs::write(&path, "{\"format\": 9}")?;
        assert!(Checkpoint::load(&path).is_err());
        let mut empty = Checkpoint::new("t", "Comment", 2, 1);
        empty.segments.clear();
        empty.total_segments = 0;
        assert!(Checkpoint::from_json(&empty.to_json()).is_err());
        let _ = std::fs::remove_dir_all(&directory);
        Ok(())
    }
}
