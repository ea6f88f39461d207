//! The parts of an update's capacity estimate.

use crate::cost::{write_units, ASSUMED_ITEM_BYTES};

/// The table write of an update's estimate. The estimate's text costs more than the request
/// itself and only `explain()` asks for it, so it is written out of the request's way.
#[cold]
#[inline(never)]
pub(super) fn estimate_table_write(estimate: &mut crate::cost::Estimate) {
    estimate.write(
        write_units(ASSUMED_ITEM_BYTES),
        format!("table write (assuming at most {ASSUMED_ITEM_BYTES} bytes)"),
    );
}

/// An index's writes in an update's estimate (see [`estimate_table_write`]).
#[cold]
#[inline(never)]
pub(super) fn estimate_index_write(
    estimate: &mut crate::cost::Estimate,
    index: &str,
    removes: bool,
) {
    let units = write_units(ASSUMED_ITEM_BYTES);
    if removes {
        estimate.write(units, format!("{index} entry deleted"));
    } else {
        estimate.write(
            2.0 * units,
            format!("{index} entry moved (old deleted, new written)"),
        );
    }
}
