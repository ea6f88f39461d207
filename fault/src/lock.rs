//! The proxy's locks: its shared state is counters and caches, which a panicking holder
//! never leaves half-updated.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// A lock that survives a panicking holder: the data are counters, never left half-updated.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
