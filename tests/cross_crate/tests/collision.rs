//! An entity declared in this crate beside one declared in the library crate of this package:
//! the two can render the same primary key (a state at the time `Metadata` is the equipment
//! item), so whichever renders a key second is refused, whatever the crate, build profile or
//! codegen unit each was compiled in. `.ci/run` runs this file in a debug and a release build.

use serde::{Deserialize, Serialize};
use singletable::key::{KeyError, OverlappingKey};
use singletable::Entity;
use singletable_cross_crate::{equipment_key, DeviceLog, Equipment};

/// A device's state at a time: the time is a string part, so it can render `Metadata`.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = DeviceLog, pk = "DEVICE#{device_id}", sk = "{at}")]
struct State {
    device_id: String,
    at: String,
    state: String,
}

#[test]
fn an_entity_of_another_crate_is_checked_against_this_crates() {
    let equipment = equipment_key("d1");
    assert!(
        equipment.is_ok(),
        "the first to render a key passes: {equipment:?}"
    );
    let state = State::key("d1", "Metadata");
    let Err(KeyError::Overlap(overlap)) = state else {
        panic!("a state can be the equipment item, yet its key was {state:?}");
    };
    assert_eq!(overlap.key, OverlappingKey::Primary);
    assert_eq!(overlap.table, "DeviceLog");
    assert_eq!(
        (overlap.entity.entity, overlap.other.entity),
        ("State", "Equipment")
    );
    // Refused on every key, not only on the first: an entity refused once stays refused.
    assert!(matches!(
        State::key("d1", "2020-04-27T00:00:00Z"),
        Err(KeyError::Overlap(_))
    ));
    assert!(
        equipment_key("d2").is_ok(),
        "the first entity goes on working"
    );
    assert!(Equipment::key("d3").is_ok());
}
