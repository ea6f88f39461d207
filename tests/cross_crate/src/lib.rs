//! A table and one entity of it, declared here so that an entity of another crate (this
//! package's `tests/collision.rs`) shares the table: AWS's device state log, whose equipment
//! item sits at the sort key `Metadata` beside the device's time-keyed states.

use serde::{Deserialize, Serialize};
use singletable::{Entity, Table};

/// The device log's table.
#[derive(Table)]
#[dynamo(name = "device_log", pk = "PK", sk = "SK")]
pub struct DeviceLog;

/// A device's equipment record: one per device, at the constant sort key `Metadata`.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = DeviceLog, pk = "DEVICE#{device_id}", sk = "Metadata")]
pub struct Equipment {
    /// The device.
    pub device_id: String,
    /// What the device is.
    pub name: String,
}

/// The key of a device's equipment, rendered by this crate's code (as a service crate renders
/// the keys of the entities it declares), not inlined into the caller's crate: so the table's
/// schema is read here, where its constant has an address of its own.
#[inline(never)]
pub fn equipment_key(
    device_id: &str,
) -> Result<singletable::Key<Equipment>, singletable::key::KeyError> {
    Equipment::key(device_id)
}
