//! The sweep's write budget, shared by every segment.

use super::error::MigrationError;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How fast a sweep may write, so it leaves the table's capacity to the application.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rate {
    /// At most this many backfill writes per second, across all segments.
    ItemsPerSecond(f64),
    /// At most this many write capacity units per second, as DynamoDB reports them
    /// (`ReturnConsumedCapacity`; estimated from the item's size and the indexes written when
    /// the engine reports none). Each write is let through at the pace of one unit and the
    /// rest of its cost delays the next, so large items slow the sweep down.
    WriteUnitsPerSecond(f64),
}

impl Rate {
    /// The figure per second.
    pub fn per_second(&self) -> f64 {
        match *self {
            Rate::ItemsPerSecond(rate) | Rate::WriteUnitsPerSecond(rate) => rate,
        }
    }

    pub(super) fn check(&self) -> Result<(), MigrationError> {
        let rate = self.per_second();
        if rate.is_finite() && rate > 0.0 {
            Ok(())
        } else {
            Err(MigrationError::InvalidOption {
                option: "rate",
                message: format!("must be a positive number per second, not {rate}"),
            })
        }
    }
}

/// Spaces writes out evenly at the rate (no bursts: idle time is not saved up).
pub(super) struct Limiter {
    rate: Rate,
    /// The earliest moment the next write may start.
    next: Mutex<Option<Instant>>,
}

impl Limiter {
    pub(super) fn new(rate: Rate) -> Limiter {
        Limiter {
            rate,
            next: Mutex::new(None),
        }
    }

    fn interval(&self, units: f64) -> Duration {
        Duration::try_from_secs_f64(units / self.rate.per_second()).unwrap_or(Duration::MAX)
    }

    /// Waits for this write's turn.
    pub(super) async fn before_write(&self) {
        let now = Instant::now();
        let start = {
            let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
            let start = next.map_or(now, |next| next.max(now));
            *next = start.checked_add(self.interval(1.0));
            start
        };
        if start > now {
            tokio::time::sleep(start - now).await;
        }
    }

    /// Charges what a write cost beyond the one unit [`Limiter::before_write`] assumed.
    pub(super) fn after_write(&self, write_units: f64) {
        let Rate::WriteUnitsPerSecond(_) = self.rate else {
            return;
        };
        let extra = write_units - 1.0;
        if extra <= 0.0 {
            return;
        }
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(at) = *next {
            *next = at.checked_add(self.interval(extra));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn writes_are_spaced_at_the_rate() {
        let limiter = Limiter::new(Rate::ItemsPerSecond(50.0));
        let started = Instant::now();
        for _ in 0..6 {
            limiter.before_write().await;
        }
        // Five intervals of 20 ms after the first write, which goes at once.
        let elapsed = started.elapsed();
        assert!(elapsed >= Duration::from_millis(95), "{elapsed:?}");
        assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
    }

    #[tokio::test]
    async fn expensive_writes_delay_the_next_one() {
        let limiter = Limiter::new(Rate::WriteUnitsPerSecond(100.0));
        // Timed from before the first write, which the delay counts from: timed from after
        // it, a slow machine's pause in between shortened what the test saw.
        let started = Instant::now();
        limiter.before_write().await;
        limiter.after_write(11.0);
        limiter.before_write().await;
        // 11 units at 100 per second.
        assert!(started.elapsed() >= Duration::from_millis(110));
    }

    #[test]
    fn rates_must_be_positive() {
        assert!(Rate::ItemsPerSecond(0.0).check().is_err());
        assert!(Rate::WriteUnitsPerSecond(f64::NAN).check().is_err());
        assert!(Rate::ItemsPerSecond(0.5).check().is_ok());
    }
}
