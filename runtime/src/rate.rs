//! Write budgets, and the limiter that holds one: writes are spaced out at the budget, charged
//! what DynamoDB reports they consumed, and slowed down when DynamoDB throttles (additive
//! increase, multiplicative decrease, as TCP shares a link).

use std::sync::Mutex;
use std::time::Duration;
// Tokio's clock, which the waits sleep on: the same as the system's, except in tests that
// pause it, where it makes the limiter's timing exact.
use tokio::time::Instant;

/// How fast a sweep or a bulk write may go, so it leaves the table's capacity to the
/// application.
///
/// Every rate is a ceiling. The limiter starts at it, halves what it holds when DynamoDB
/// throttles (a throttling error, or writes a batch left unprocessed), and climbs back by a
/// tenth of the ceiling per second while DynamoDB accepts the writes. Several workers on
/// one table, each with its own limiter, so settle at a share each that the table can take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rate {
    /// At most this many writes (items) per second.
    ItemsPerSecond(f64),
    /// At most this many write capacity units per second, as DynamoDB reports them
    /// (`ReturnConsumedCapacity`; estimated from the items' sizes and the index entries written
    /// when the engine reports none). Each write waits for the units it is estimated to cost,
    /// and what it really cost corrects the wait of the next, so large items slow the writer.
    /// The budget to give on an on-demand table.
    WriteUnitsPerSecond(f64),
    /// This share (above 0, at most 1) of the table's provisioned write capacity, read from
    /// `DescribeTable` when the work starts: `ShareOfCapacity(0.25)` on a table of 400 WCU is
    /// 100 write units per second. The limiter is charged the units of the table and its
    /// indexes together (each index has capacity of its own), so with indexes written the
    /// table itself gets less than the share: the budget errs on the application's side. An
    /// on-demand table has no capacity to share: give it [`Rate::WriteUnitsPerSecond`].
    ShareOfCapacity(f64),
}

/// Why a [`Rate`] cannot be held.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RateError {
    /// A rate that is zero, negative or not a number.
    #[error("a write rate must be a positive number per second, not {0}")]
    NotPositive(f64),
    /// A share of capacity outside (0, 1].
    #[error("a share of the table's capacity must be above 0 and at most 1, not {0}")]
    ShareOutOfRange(f64),
    /// [`Rate::ShareOfCapacity`] on a table without provisioned write capacity.
    #[error("table {table:?} has no provisioned write capacity (it is on-demand), so a share of it means nothing; give a budget with `Rate::WriteUnitsPerSecond`")]
    NoProvisionedCapacity {
        /// The table.
        table: String,
    },
}

impl Rate {
    /// Whether the rate is a share of the table's capacity, which `DescribeTable` tells.
    pub(crate) fn needs_capacity(&self) -> bool {
        matches!(self, Rate::ShareOfCapacity(_))
    }

    /// Checks the figure, before any work starts.
    pub(crate) fn check(&self) -> Result<(), RateError> {
        match *self {
            Rate::ItemsPerSecond(rate) | Rate::WriteUnitsPerSecond(rate) => {
                if rate.is_finite() && rate > 0.0 {
                    Ok(())
                } else {
                    Err(RateError::NotPositive(rate))
                }
            }
            Rate::ShareOfCapacity(share) => {
                if share > 0.0 && share <= 1.0 {
                    Ok(())
                } else {
                    Err(RateError::ShareOutOfRange(share))
                }
            }
        }
    }
}

/// What a limiter counts: writes, or write units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Items,
    WriteUnits,
}

/// The ceiling's share by which the rate climbs per second without throttling: from half the
/// ceiling back to all of it in five seconds.
const INCREASE_PER_SECOND: f64 = 0.1;
/// What a throttle leaves of the rate.
const DECREASE_FACTOR: f64 = 0.5;
/// The lowest rate, as a share of the ceiling: the writer keeps probing, however throttled.
const FLOOR: f64 = 0.01;
/// Throttles closer together than this are one event: requests in flight when the table
/// throttled each report it, and the rate halves once for all of them.
const DECREASE_SPACING: Duration = Duration::from_millis(500);
/// The longest a waiting write sleeps before it looks again: the rate may have risen since.
const RECHECK: Duration = Duration::from_millis(100);
/// How much idle time is saved up, in seconds at the rate held: enough to make up for a timer
/// that wakes a writer late, too little for a burst.
const SLACK: f64 = 0.01;

/// Holds a [`Rate`] for one writer (a sweep, a worker, a bulk write), shared by its tasks.
#[derive(Debug)]
pub(crate) struct Limiter {
    unit: Unit,
    ceiling: f64,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// The rate held now, per second.
    rate: f64,
    /// When `rate` and `backlog` were last brought up to date.
    updated: Instant,
    /// What the writes let through have cost and the rate has not yet paid off (items or
    /// write units): the next write goes when it is paid. Below zero by at most [`SLACK`].
    backlog: f64,
    /// The last decrease.
    lowered: Option<Instant>,
}

impl Limiter {
    /// A limiter for `rate` on `table`, whose provisioned write capacity is
    /// `provisioned_write_units` (`None` or `0` for an on-demand table).
    pub(crate) fn new(
        rate: Rate,
        table: &str,
        provisioned_write_units: Option<i64>,
    ) -> Result<Limiter, RateError> {
        rate.check()?;
        let (unit, ceiling) = match rate {
            Rate::ItemsPerSecond(rate) => (Unit::Items, rate),
            Rate::WriteUnitsPerSecond(rate) => (Unit::WriteUnits, rate),
            Rate::ShareOfCapacity(share) => {
                let units = provisioned_write_units
                    .filter(|units| *units > 0)
                    .ok_or_else(|| RateError::NoProvisionedCapacity {
                        table: table.to_owned(),
                    })?;
                // ok: capacity units are far below 2^52, so the conversion is exact.
                (Unit::WriteUnits, share * units as f64)
            }
        };
        Ok(Limiter {
            unit,
            ceiling,
            state: Mutex::new(State {
                rate: ceiling,
                updated: Instant::now(),
                backlog: 0.0,
                lowered: None,
            }),
        })
    }

    /// What the limiter counts.
    pub(crate) fn unit(&self) -> Unit {
        self.unit
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Brings the state up to date: the backlog paid off at the rate held, then the additive
    /// increase since the last update.
    fn refresh(&self, state: &mut State, now: Instant) {
        let elapsed = now.saturating_duration_since(state.updated).as_secs_f64();
        state.backlog = (state.backlog - state.rate * elapsed).max(-state.rate * SLACK);
        state.rate = (state.rate + self.ceiling * INCREASE_PER_SECOND * elapsed).min(self.ceiling);
        state.updated = now;
    }

    /// Waits for the turn of a write of `amount` (items or write units, as the limiter
    /// counts): until what earlier writes cost is paid off at the rate held, which a waiting
    /// write looks at again every [`RECHECK`], so a rate that climbs lets it go sooner. Idle
    /// time is not saved up: no bursts.
    pub(crate) async fn acquire(&self, amount: f64) {
        loop {
            let wait = {
                let mut state = self.lock();
                self.refresh(&mut state, Instant::now());
                // A microsecond's worth counts as paid: rounding never keeps a write waiting.
                if state.backlog <= state.rate * 1e-6 {
                    state.backlog += amount;
                    return;
                }
                Duration::try_from_secs_f64(state.backlog / state.rate).unwrap_or(RECHECK)
            };
            tokio::time::sleep(wait.min(RECHECK)).await;
        }
    }

    /// Corrects a write's reservation of `reserved` by what it turned out to cost: more
    /// delays the writes after it, less lets them go sooner.
    pub(crate) fn settle(&self, reserved: f64, cost: f64) {
        let mut state = self.lock();
        self.refresh(&mut state, Instant::now());
        state.backlog = (state.backlog + cost - reserved).max(-state.rate * SLACK);
    }

    /// DynamoDB throttled a write: halves the rate, once per burst of throttles.
    pub(crate) fn throttled(&self) {
        let now = Instant::now();
        let mut state = self.lock();
        if state
            .lowered
            .is_some_and(|lowered| now.saturating_duration_since(lowered) < DECREASE_SPACING)
        {
            return;
        }
        self.refresh(&mut state, now);
        state.rate = (state.rate * DECREASE_FACTOR).max(self.ceiling * FLOOR);
        state.lowered = Some(now);
        tracing::info!(target: "singletable", rate = state.rate, ceiling = self.ceiling, "throttled: write rate lowered");
    }

    /// The rate held now, per second, in the limiter's unit.
    pub(crate) fn held(&self) -> f64 {
        let mut state = self.lock();
        self.refresh(&mut state, Instant::now());
        state.rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(rate: Rate) -> Limiter {
        Limiter::new(rate, "t", None).unwrap() // ok: test rates are valid constants
    }

    /// Time here is tokio's, paused: it moves only when every task waits on a timer, and then
    /// straight to the next deadline, so what the limiter waits is exact, however loaded the
    /// machine (tokio's timers have a millisecond's resolution, rounded up).
    fn assert_waited(started: Instant, expected_ms: u64) {
        let elapsed = started.elapsed();
        let expected = Duration::from_millis(expected_ms);
        assert!(
            elapsed >= expected && elapsed <= expected + Duration::from_millis(2),
            "waited {elapsed:?}, expected {expected:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn writes_are_spaced_at_the_rate() {
        let limiter = limiter(Rate::ItemsPerSecond(50.0));
        let started = Instant::now();
        for _ in 0..6 {
            limiter.acquire(1.0).await;
        }
        // Five intervals of 20 ms after the first write, which goes at once.
        assert_waited(started, 100);
    }

    #[tokio::test(start_paused = true)]
    async fn expensive_writes_delay_the_next_one() {
        let limiter = limiter(Rate::WriteUnitsPerSecond(100.0));
        let started = Instant::now();
        limiter.acquire(1.0).await;
        limiter.settle(1.0, 11.0);
        limiter.acquire(1.0).await;
        // 11 units at 100 per second.
        assert_waited(started, 110);
    }

    #[tokio::test(start_paused = true)]
    async fn a_cheaper_write_than_reserved_brings_the_next_forward() {
        let limiter = limiter(Rate::WriteUnitsPerSecond(10.0));
        let started = Instant::now();
        limiter.acquire(25.0).await;
        // Reserved 2.5 s, cost 0.1 s: the next write waits that 0.1 s.
        limiter.settle(25.0, 1.0);
        limiter.acquire(1.0).await;
        assert_waited(started, 100);
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiting_write_goes_sooner_when_the_rate_climbs() {
        let limiter = limiter(Rate::ItemsPerSecond(1000.0));
        {
            // Lowered to 10 a second, with 10 writes unpaid: a second's wait at that rate.
            let mut state = limiter.lock();
            state.rate = 10.0;
            state.backlog = 10.0;
        }
        let started = Instant::now();
        let raise = async {
            tokio::time::sleep(Duration::from_millis(150)).await;
            limiter.lock().rate = 1000.0;
        };
        tokio::join!(limiter.acquire(1.0), raise);
        // It looks again every 100 ms: at 200 ms, the first look after the rise, the backlog
        // is paid at 1000 a second, instead of the turn it had at 10 a second (1 s).
        assert_waited(started, 200);
    }

    #[test]
    fn a_throttle_halves_the_rate_once_per_burst_and_it_climbs_back() {
        let limiter = limiter(Rate::WriteUnitsPerSecond(500.0));
        assert_eq!(limiter.held(), 500.0);
        limiter.throttled();
        limiter.throttled();
        let lowered = limiter.held();
        assert!((250.0..260.0).contains(&lowered), "{lowered}");
        // Climbs at 50 units/s (a tenth of 500): simulate a second passing.
        {
            let mut state = limiter.lock();
            state.updated -= Duration::from_secs(1);
        }
        let raised = limiter.held();
        assert!(
            (raised - lowered - 50.0).abs() < 1.0,
            "{lowered} -> {raised}"
        );
        // Never above the ceiling.
        limiter.lock().updated -= Duration::from_secs(60);
        assert_eq!(limiter.held(), 500.0);
    }

    #[test]
    fn the_rate_never_falls_below_the_floor() {
        let limiter = limiter(Rate::ItemsPerSecond(100.0));
        for _ in 0..20 {
            limiter.lock().lowered = None;
            limiter.throttled();
        }
        assert!(limiter.held() >= 1.0);
        assert!(limiter.held() < 1.1);
    }

    #[test]
    fn a_share_of_capacity_needs_provisioned_capacity() {
        let held = Limiter::new(Rate::ShareOfCapacity(0.25), "t", Some(400)).unwrap(); // ok: constant input
        assert_eq!(held.held(), 100.0);
        assert_eq!(held.unit(), Unit::WriteUnits);
        for on_demand in [None, Some(0)] {
            let error = Limiter::new(Rate::ShareOfCapacity(0.25), "t", on_demand).unwrap_err();
            assert!(
                matches!(error, RateError::NoProvisionedCapacity { .. }),
                "{error}"
            );
        }
    }

    #[test]
    fn rates_must_be_positive_and_shares_at_most_one() {
        assert!(Rate::ItemsPerSecond(0.0).check().is_err());
        assert!(Rate::WriteUnitsPerSecond(f64::NAN).check().is_err());
        assert!(Rate::ItemsPerSecond(0.5).check().is_ok());
        assert!(Rate::ShareOfCapacity(1.5).check().is_err());
        assert!(Rate::ShareOfCapacity(f64::NAN).check().is_err());
        assert!(Rate::ShareOfCapacity(1.0).check().is_ok());
    }
}
