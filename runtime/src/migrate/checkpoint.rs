//! Where a sweep is: per segment, the key to continue after and what it has done, saved to a
//! file atomically (write to a temporary file, then rename) after every page.

use super::sweep::report::SweepCounts;
use super::time::unix_now;
use crate::error::migration::MigrationError;
use crate::error::Error;
use crate::item::Item;
use crate::wire;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The file format version; a file of another version is refused rather than misread.
const FORMAT: u64 = 2;

/// A sweep's progress: enough to continue it after a crash or Ctrl-C, and to tell
/// verification that it covered the whole table.
///
/// Serialized, it is the file's contents without the format version, and deserializing it
/// checks nothing more than the types: [`Checkpoint::load`] also refuses another format
/// version and segments that do not add up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentCheckpoint {
    /// The segment number.
    pub segment: u32,
    /// `ExclusiveStartKey` of the next page: every page before it is done (`None`: start at
    /// the beginning, unless `done`).
    #[serde(default, with = "wire::as_item::option")]
    pub start_key: Option<Item>,
    /// Whether the segment read its last page.
    pub done: bool,
    /// What the segment did so far, over every run (missing counts read as zero: they
    /// report, and the sweep does not depend on them).
    #[serde(default)]
    pub counts: SweepCounts,
}

/// A checkpoint file: the format version beside the checkpoint's fields.
#[derive(Serialize, Deserialize)]
struct File<C> {
    format: Format,
    #[serde(flatten)]
    checkpoint: C,
}

/// [`FORMAT`], refused as soon as it is read otherwise: a file of another version may not
/// even have the fields this one expects.
#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(try_from = "u64", into = "u64")]
struct Format;

impl TryFrom<u64> for Format {
    type Error = String;

    fn try_from(format: u64) -> Result<Format, String> {
        if format == FORMAT {
            Ok(Format)
        } else {
            Err(format!(
                "format {format}, but this version of singletable reads format {FORMAT}"
            ))
        }
    }
}

impl From<Format> for u64 {
    fn from(Format: Format) -> u64 {
        FORMAT
    }
}

/// A checkpoint read from a file and checked: its segments are the ones a sweep of
/// `total_segments` makes.
#[derive(Deserialize)]
#[serde(try_from = "File<Checkpoint>")]
struct Checked(Checkpoint);

impl TryFrom<File<Checkpoint>> for Checked {
    type Error = String;

    fn try_from(file: File<Checkpoint>) -> Result<Checked, String> {
        let checkpoint = file.checkpoint;
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
        Ok(Checked(checkpoint))
    }
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

    /// Reads the checkpoint at `path`; `None` when there is no such file.
    pub fn load(path: &Path) -> Result<Option<Checkpoint>, Error> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(checkpoint_error(path, error.to_string())),
        };
        match serde_json::from_str(&text) {
            Ok(Checked(checkpoint)) => Ok(Some(checkpoint)),
            Err(error) if error.is_data() => Err(checkpoint_error(path, error.to_string())),
            Err(error) => Err(checkpoint_error(path, format!("not JSON: {error}"))),
        }
    }

    /// Writes the checkpoint to `path` atomically: a crash leaves the old file or the new one,
    /// never a torn one.
    pub fn save(&mut self, path: &Path) -> Result<(), Error> {
        self.updated_at = unix_now();
        let file = File {
            format: Format,
            checkpoint: &*self,
        };
        let text = serde_json::to_string_pretty(&file)
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
        empty.save(&path)?;
        assert!(Checkpoint::load(&path).is_err());
        let _ = std::fs::remove_dir_all(&directory);
        Ok(())
    }

    /// A checkpoint file as `Checkpoint::save` wrote it before the checkpoint was
    /// serde-derived; a sweep stopped then resumes from it now.
    const FILE_OF_THE_OLD_CODE: &str = r#"{
  "entity": "Comment",
  "format": 2,
  "schema_version": 2,
  "segments": [
    {
      "counts": {
        "after_change": 2,
        "already_current": 1,
        "backfilled": 37,
        "changed_concurrently": 1,
        "examined": 120,
        "failed": 1,
        "old": 40,
        "write_units": 74.5
      },
      "done": true,
      "segment": 0,
      "start_key": null
    },
    {
      "counts": {
        "after_change": 0,
        "already_current": 0,
        "backfilled": 10,
        "changed_concurrently": 0,
        "examined": 50,
        "failed": 0,
        "old": 10,
        "write_units": 20.0
      },
      "done": false,
      "segment": 1,
      "start_key": {
        "PK": {
          "S": "WS#1"
        },
        "SK": {
          "S": "DOC#x"
        },
        "n": {
          "N": "7"
        }
      }
    },
    {
      "counts": {
        "after_change": 0,
        "already_current": 0,
        "backfilled": 0,
        "changed_concurrently": 0,
        "examined": 0,
        "failed": 0,
        "old": 0,
        "write_units": 0.0
      },
      "done": false,
      "segment": 2,
      "start_key": null
    }
  ],
  "started_at": 1718000000,
  "table": "comments",
  "table_identity": "arn:aws:dynamodb:eu-west-1:123456789012:table/comments@1718000000.5",
  "total_segments": 3,
  "updated_at": 1796359014
}
"#;

    fn fixture() -> Checkpoint {
        let mut checkpoint = Checkpoint::new("comments", "Comment", 2, 3);
        checkpoint.table_identity =
            Some("arn:aws:dynamodb:eu-west-1:123456789012:table/comments@1718000000.5".to_owned());
        checkpoint.started_at = 1_718_000_000;
        checkpoint.updated_at = 1_796_359_014;
        checkpoint.segments[0].done = true;
        checkpoint.segments[0].counts = SweepCounts {
            examined: 120,
            old: 40,
            backfilled: 37,
            after_change: 2,
            changed_concurrently: 1,
            already_current: 1,
            failed: 1,
            write_units: 74.5,
        };
        checkpoint.segments[1].start_key = Some(Item::from([
            ("PK".to_owned(), AttributeValue::S("WS#1".into())),
            ("SK".to_owned(), AttributeValue::S("DOC#x".into())),
            ("n".to_owned(), AttributeValue::N("7".into())),
        ]));
        checkpoint.segments[1].counts.examined = 50;
        checkpoint.segments[1].counts.old = 10;
        checkpoint.segments[1].counts.backfilled = 10;
        checkpoint.segments[1].counts.write_units = 20.0;
        checkpoint
    }

    #[test]
    fn a_file_of_the_old_code_loads_to_the_same_checkpoint() -> TestResult {
        let directory =
            std::env::temp_dir().join(format!("st-old-checkpoint-{}", std::process::id()));
        std::fs::create_dir_all(&directory)?;
        let path = directory.join("sweep.json");
        std::fs::write(&path, FILE_OF_THE_OLD_CODE)?;
        let loaded = Checkpoint::load(&path)?.ok_or("the fixture")?;
        assert_eq!(loaded, fixture());
        // Missing counts (the whole object, or one of them) read as zero.
        let mut value: serde_json::Value = serde_json::from_str(FILE_OF_THE_OLD_CODE)?;
        let segments = value["segments"].as_array_mut().ok_or("segments")?;
        segments[2]
            .as_object_mut()
            .ok_or("segment 2")?
            .remove("counts");
        segments[2]
            .as_object_mut()
            .ok_or("segment 2")?
            .remove("start_key");
        segments[1]["counts"]
            .as_object_mut()
            .ok_or("counts")?
            .remove("examined");
        std::fs::write(&path, value.to_string())?;
        let mut expected = fixture();
        expected.segments[1].counts.examined = 0;
        assert_eq!(
            Checkpoint::load(&path)?.ok_or("the edited fixture")?,
            expected
        );
        // A malformed count is an error, not a zero.
        value["segments"][0]["counts"]["backfilled"] = serde_json::json!("37");
        std::fs::write(&path, value.to_string())?;
        let error = Checkpoint::load(&path)
            .err()
            .ok_or("a malformed count loaded")?;
        assert!(
            matches!(&error, Error::Migration(MigrationError::Checkpoint { message, .. })
                if message.contains("expected u64")),
            "{error}"
        );
        // Another format is refused as such, before its fields are read.
        std::fs::write(&path, r#"{"format": 3, "segments": "elsewhere"}"#)?;
        let error = Checkpoint::load(&path).err().ok_or("format 3 loaded")?;
        assert!(error.to_string().contains("reads format 2"), "{error}");
        let _ = std::fs::remove_dir_all(&directory);
        Ok(())
    }
}
