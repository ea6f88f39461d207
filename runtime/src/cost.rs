//! Capacity estimates: what an operation will cost before it runs.
//!
//! The rules are DynamoDB's documented ones:
//! - a write consumes one write unit per started KB of the item (the larger of the old and
//!   the new item; the estimate uses the size it knows, or the caller's hint);
//! - each secondary index entry written or deleted is another write of the projected item
//!   (the whole item, or on a lean index its keys and listed attributes); an update that moves an item within an
//!   index deletes the old entry and writes the new one: two index writes;
//! - a read consumes one read unit per started 4 KB when strongly consistent, half when
//!   eventually consistent;
//! - every operation inside a transaction costs twice (prepare and commit).
//!
//! The seed's comparison comes out as documented: changing a status kept on a GSI sort key is
//! 1 (table) + 2 (index entry moved) = 3 write units; moving the item instead (delete + put
//! in a transaction) is (1 + 1) × 2 = 4 without indexes.

use crate::wire::Request;
use std::fmt;

/// Bytes per write unit.
pub const WRITE_UNIT_BYTES: usize = 1024;
/// Bytes per read unit.
pub const READ_UNIT_BYTES: usize = 4096;

/// Write units for an item of `size` bytes.
pub fn write_units(size: usize) -> f64 {
    // ok: item sizes are far below 2^52, so the conversion is exact.
    size.div_ceil(WRITE_UNIT_BYTES).max(1) as f64
}

/// Read units for an item of `size` bytes.
pub fn read_units(size: usize, consistent: bool) -> f64 {
    // ok: as above.
    let units = size.div_ceil(READ_UNIT_BYTES).max(1) as f64;
    if consistent {
        units
    } else {
        units / 2.0
    }
}

/// The size assumed for an item whose size the operation does not know (updates, deletes,
/// reads): one write unit's worth.
pub const ASSUMED_ITEM_BYTES: usize = WRITE_UNIT_BYTES;

/// The estimate of writing `item` whole: the table write plus one write per index entry.
pub fn put_estimate<T: crate::Table>(item: &crate::Item) -> Estimate {
    let mut estimate = Estimate::default();
    for_each_put_write::<T>(item, |units, write| {
        let reason = match write {
            PutWrite::Table { size } => format!("table write of a {size}-byte item"),
            PutWrite::IndexEntry { index, size } => format!("{index} entry written ({size} bytes)"),
            PutWrite::Expiry { attribute } => format!(
                "its expiry ({attribute}): DynamoDB's time to live deletes it free of charge"
            ),
        };
        estimate.write(units, reason);
    });
    estimate
}

/// The write units of [`put_estimate`] alone: what a paced batch reserves per put, without
/// writing out the reasons.
pub fn put_write_units<T: crate::Table>(item: &crate::Item) -> f64 {
    let mut units = 0.0;
    for_each_put_write::<T>(item, |each, _| units += each);
    units
}

/// One part of writing an item whole, as [`for_each_put_write`] reports it.
enum PutWrite {
    Table { size: usize },
    IndexEntry { index: &'static str, size: usize },
    Expiry { attribute: &'static str },
}

/// Calls `write` with the units and the nature of each part of writing `item` whole.
fn for_each_put_write<T: crate::Table>(item: &crate::Item, mut write: impl FnMut(f64, PutWrite)) {
    let size = crate::item::item_size(item);
    write(write_units(size), PutWrite::Table { size });
    for index in T::SCHEMA.indexes {
        let key = match index.kind {
            crate::schema::IndexKind::Global => Some(index.partition_key),
            crate::schema::IndexKind::Local => index.sort_key,
        };
        if key.is_some_and(|key| item.contains_key(key)) {
            // What the index holds of the item: all of it, or its keys and listed attributes.
            let size = crate::item::held_size(item, |name| index.holds(T::SCHEMA, name));
            write(
                write_units(size),
                PutWrite::IndexEntry {
                    index: index.name,
                    size,
                },
            );
        }
    }
    if let Some(attribute) = T::SCHEMA
        .ttl_attribute
        .filter(|ttl| item.contains_key(*ttl))
    {
        // The delete of an expired item is DynamoDB's own (Time to Live, developer guide).
        write(0.0, PutWrite::Expiry { attribute });
    }
}

/// An estimate of the capacity an operation consumes, with how it was reached.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Estimate {
    /// Read capacity units.
    pub read_units: f64,
    /// Write capacity units.
    pub write_units: f64,
    /// One line per contribution, e.g. `"table write of a 1 KB item: 1 WCU"`.
    pub lines: Vec<String>,
}

impl Estimate {
    /// Adds write units with a reason.
    pub fn write(&mut self, units: f64, reason: impl Into<String>) {
        self.write_units += units;
        self.lines.push(format!("{}: {units} WCU", reason.into()));
    }

    /// Adds read units with a reason.
    pub fn read(&mut self, units: f64, reason: impl Into<String>) {
        self.read_units += units;
        self.lines.push(format!("{}: {units} RCU", reason.into()));
    }

    /// Adds another estimate.
    pub fn add(&mut self, other: Estimate) {
        self.read_units += other.read_units;
        self.write_units += other.write_units;
        self.lines.extend(other.lines);
    }

    /// The same estimate inside a transaction: every unit counts twice.
    pub fn transactional(mut self) -> Estimate {
        self.read_units *= 2.0;
        self.write_units *= 2.0;
        self.lines.push("transaction: x2".to_owned());
        self
    }
}

/// A request and what it is estimated to cost; see the operations' `explain` methods.
#[derive(Debug, Clone, PartialEq)]
pub struct Explain {
    /// The request, exactly as it will be sent.
    pub request: Request,
    /// The estimated capacity.
    pub estimate: Estimate,
}

impl fmt::Display for Explain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.request)?;
        writeln!(
            f,
            "estimated: {} WCU, {} RCU",
            self.estimate.write_units, self.estimate.read_units
        )?;
        for line in &self.estimate.lines {
            writeln!(f, "  {line}")?;
        }
        Ok(())
    }
}
