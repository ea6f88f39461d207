//! What a paced batch request reserves of its limiter's budget, and what it is charged.

use crate::cost;
use crate::rate::Unit;
use crate::schema::Table;
use aws_sdk_dynamodb::types::WriteRequest;

/// What `writes` are expected to cost: one each, counted in items; in write units, a put's
/// item and index entries by size, and a delete one unit (its item's size is not known).
pub(super) fn reservation<T: Table>(unit: Unit, writes: &[WriteRequest]) -> f64 {
    match unit {
        // ok: a batch holds at most 25 writes.
        Unit::Items => writes.len() as f64,
        Unit::WriteUnits => writes
            .iter()
            .map(|write| match &write.put_request {
                Some(put) => cost::put_write_units::<T>(&put.item),
                None => 1.0,
            })
            .sum(),
    }
}

/// What a request that did `done` of its `count` writes is charged: the writes done, or the
/// capacity DynamoDB reported, else the reserved estimate's share of the writes done.
pub(super) fn cost(
    unit: Unit,
    reserved: f64,
    count: usize,
    done: usize,
    consumed: Option<f64>,
) -> f64 {
    match unit {
        // ok: as above.
        Unit::Items => done as f64,
        Unit::WriteUnits => consumed.unwrap_or_else(|| {
            // ok: as above.
            reserved * done as f64 / count.max(1) as f64
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_charged_what_dynamodb_reported_or_its_share_of_the_estimate() {
        assert_eq!(cost(Unit::Items, 25.0, 25, 20, Some(40.0)), 20.0);
        assert_eq!(cost(Unit::WriteUnits, 50.0, 25, 20, Some(44.0)), 44.0);
        assert_eq!(cost(Unit::WriteUnits, 50.0, 25, 20, None), 40.0);
        assert_eq!(cost(Unit::WriteUnits, 0.0, 0, 0, None), 0.0);
    }
}
