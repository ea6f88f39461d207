//! The backfill writes DynamoDB throttled, counted by the partition key written, for a sweep's
//! report to say which keys are hot: DynamoDB's error names the table or index, never the key,
//! and only the writer knows it.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

/// Throttled writes by partition key, shared by a sweep's (or a worker's) segments.
#[derive(Debug, Default)]
pub(crate) struct ThrottledKeys(Mutex<BTreeMap<String, u64>>);

impl ThrottledKeys {
    /// DynamoDB throttled a write to `partition_key`.
    pub(crate) fn record(&self, partition_key: &str) {
        let mut keys = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *keys.entry(partition_key.to_owned()).or_default() += 1;
    }

    /// The throttled writes so far, by partition key.
    pub(crate) fn counts(&self) -> BTreeMap<String, u64> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::ThrottledKeys;

    #[test]
    fn counts_each_key_s_throttles() {
        let keys = ThrottledKeys::default();
        keys.record("WS#a");
        keys.record("WS#b");
        keys.record("WS#a");
        let counts = keys.counts();
        assert_eq!(counts.get("WS#a"), Some(&2));
        assert_eq!(counts.get("WS#b"), Some(&1));
        assert_eq!(counts.len(), 2);
    }
}
