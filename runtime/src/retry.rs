//! How often and how patiently a [`Db`](crate::Db)'s requests are sent again: one
//! [`RetryPolicy`], set with [`Db::with_retry_policy`](crate::Db::with_retry_policy), for every
//! request, with bounded attempts and exponential backoff with full jitter.
//!
//! A request that is safe to send again as it is (a read, a put, a delete, a plain or
//! versioned update) is resent by the SDK's retry loop, set to the policy's attempts and
//! delays; everything else by the library, with the SDK's retries off, so that the SDK's
//! attempts never multiply the policy's: a guarded update (which must know a failed condition
//! came after a resend), an update that must not be resent after a lost answer (resent when
//! throttled only), transactions (under one client request token), what a batch leaves
//! unprocessed (`UnprocessedKeys`, `UnprocessedItems`), and the library's own reads and
//! changes of the table. Long jobs (sweeps) ride through throttling with more attempts.
//!
//! The library sends again through one loop, `RetryPolicy::drive`: each kind of request
//! brings a judge of its attempts' outcomes (done, or worth another attempt), and the policy
//! alone decides whether there is one.

use std::time::Duration;

/// How often and how patiently a request is sent again: the attempts in all, and the delays
/// between them.
///
/// Attempt `0` is the first request and is sent at once. Before attempt `n ≥ 1` the
/// operation sleeps a random time between zero and `min(max_delay, base_delay × 2ⁿ⁻¹)`
/// ("full jitter", as AWS recommends, so that many clients backing off at once spread out
/// instead of retrying in lockstep).
///
/// ```
/// use singletable_runtime::RetryPolicy;
/// use std::time::Duration;
///
/// let policy = RetryPolicy::default();
/// assert_eq!(policy.max_attempts, 8);
/// assert_eq!(policy.delay(0), Duration::ZERO);
/// assert_eq!(policy.ceiling(1), Duration::from_millis(25));
/// assert_eq!(policy.ceiling(3), Duration::from_millis(100));
/// assert!(policy.delay(3) <= Duration::from_millis(100));
/// assert_eq!(policy.ceiling(30), Duration::from_secs(2));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Requests in all for one piece of work, the first included; `0` counts as `1` (the
    /// work is always sent once).
    pub max_attempts: u32,
    /// The ceiling of the first retry's delay; each later retry doubles it.
    pub base_delay: Duration,
    /// The largest ceiling a delay can have.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// 8 attempts, 25 ms base delay, 2 s maximum delay: at most 3.2 s of waiting in all
    /// (1.6 s on average).
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 8,
            base_delay: Duration::from_millis(25),
            max_delay: Duration::from_secs(2),
        }
    }
}

impl RetryPolicy {
    /// This policy with `attempts` requests in all, the first included.
    pub fn with_max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts;
        self
    }

    /// This policy with `delay` as the ceiling of the first retry's delay.
    pub fn with_base_delay(mut self, delay: Duration) -> Self {
        self.base_delay = delay;
        self
    }

    /// This policy with `delay` as the largest ceiling a delay can have.
    pub fn with_max_delay(mut self, delay: Duration) -> Self {
        self.max_delay = delay;
        self
    }

    /// A policy that sends once and never retries: a refusal or a lost answer is the
    /// caller's at once, and so is what a batch leaves unprocessed.
    pub fn never() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The SDK's retry configuration with this policy's attempts and delays (its `standard`
    /// mode, whose backoff also has full jitter), for a request the SDK may resend as it is.
    pub(crate) fn sdk_config(&self) -> aws_sdk_dynamodb::config::retry::RetryConfig {
        aws_sdk_dynamodb::config::retry::RetryConfig::standard()
            .with_max_attempts(self.attempts())
            .with_initial_backoff(self.base_delay)
            .with_max_backoff(self.max_delay)
    }

    /// The number of requests the policy allows (`max_attempts`, at least 1).
    pub fn attempts(&self) -> u32 {
        self.max_attempts.max(1)
    }

    /// The largest delay before attempt `attempt`: zero for the first attempt, then
    /// `min(max_delay, base_delay × 2^(attempt − 1))`. Never decreases as `attempt` grows.
    pub fn ceiling(&self, attempt: u32) -> Duration {
        if attempt == 0 {
            return Duration::ZERO;
        }
        // 2^31 × any useful base is far above any useful maximum; capping the exponent
        // keeps the shift in range, and saturation keeps the product from overflowing.
        let factor = 1u32 << (attempt - 1).min(31);
        self.base_delay.saturating_mul(factor).min(self.max_delay)
    }

    /// A random delay before attempt `attempt`, uniform between zero and
    /// [`ceiling(attempt)`](Self::ceiling).
    pub fn delay(&self, attempt: u32) -> Duration {
        self.delay_with(attempt, &mut fastrand::Rng::new())
    }

    fn delay_with(&self, attempt: u32, rng: &mut fastrand::Rng) -> Duration {
        let ceiling = self.ceiling(attempt);
        // Durations above u64::MAX nanoseconds (584 years) are clamped; no one waits that long.
        let nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(rng.u64(0..=nanos))
    }

    /// Sleeps [`delay(attempt)`](Self::delay) on the tokio timer; returns at once for the
    /// first attempt or a zero delay. Needs a tokio runtime with time enabled, as the AWS SDK
    /// does.
    pub async fn sleep_before(&self, attempt: u32) {
        let delay = self.delay(attempt);
        // No timer for a zero delay, so a policy without delays works on any executor.
        if !delay.is_zero() {
            crate::trace::backoff(attempt, format_args!("{delay:?}"));
            tokio::time::sleep(delay).await;
        }
    }

    /// The library's one resend loop, asked after each attempt as tower's `retry::Policy` is:
    /// `send` makes an attempt's request from `state`, and `judge` reads its outcome (and
    /// the attempt's number, from 1) into [`Next`]: the result, or a resend if the policy
    /// allows one more attempt (after its backoff), with the result to return if it does not.
    /// `state` is what the attempts share: what is left to send, whether an earlier attempt
    /// may have been applied.
    pub(crate) async fn drive<S, F: std::future::Future, T>(
        &self,
        state: &mut S,
        mut send: impl FnMut(&mut S) -> F,
        mut judge: impl FnMut(&mut S, F::Output, u32) -> Next<T>,
    ) -> T {
        let first = send(state).await;
        let first = judge(state, first, 1);
        self.drive_after(first, state, send, judge).await
    }

    /// [`drive`](Self::drive) after a first attempt the caller sent and judged itself: a
    /// request on a hot path sends its first attempt in place, where its future is made once,
    /// and comes here only for what `first` says (bench `operations`, group `status_update`).
    pub(crate) async fn drive_after<S, F: std::future::Future, T>(
        &self,
        first: Next<T>,
        state: &mut S,
        mut send: impl FnMut(&mut S) -> F,
        mut judge: impl FnMut(&mut S, F::Output, u32) -> Next<T>,
    ) -> T {
        let mut attempt = 1;
        let mut next = first;
        loop {
            match next {
                Next::Again(_) if attempt < self.attempts() => {
                    self.sleep_before(attempt).await;
                    attempt += 1;
                    let outcome = send(state).await;
                    next = judge(state, outcome, attempt);
                }
                Next::Done(result) | Next::Again(result) => return result,
            }
        }
    }

    /// Sends the request `send` makes, again while `resend` says its error is worth resending
    /// (throttling, which applied nothing; a lost response, for a request safe to send
    /// twice), up to this policy's attempts with its backoff; `before_resend` hears of each
    /// such error. The last error is returned when the attempts run out.
    pub(crate) async fn resending<T, E, F: std::future::Future<Output = Result<T, E>>>(
        &self,
        mut send: impl FnMut() -> F,
        resend: impl Fn(&E) -> bool,
        mut before_resend: impl FnMut(&E),
    ) -> Result<T, E> {
        let judge = |_: &mut (), result: Result<T, E>, _| match result {
            Err(error) if resend(&error) => {
                before_resend(&error);
                Next::Again(Err(error))
            }
            done => Next::Done(done),
        };
        self.drive(&mut (), |_| send(), judge).await
    }

    /// How the library's long jobs (sweeps) resend what DynamoDB throttles (a request refused,
    /// or part of a batch left unprocessed), so that they ride through throttling rather than
    /// end at it: the default's backoff, with [`THROTTLED_ATTEMPTS`].
    pub(crate) fn riding_through() -> Self {
        Self::default().with_max_attempts(THROTTLED_ATTEMPTS)
    }

    /// Sends the read `send` makes, again while it is throttled or its response is lost
    /// ([`read_again`]), under this policy: how the library's long jobs and its own records
    /// read.
    pub(crate) async fn reading<T, E, F>(&self, send: impl FnMut() -> F) -> Result<T, ReadError<E>>
    where
        E: aws_sdk_dynamodb::error::ProvideErrorMetadata,
        F: std::future::Future<Output = Result<T, ReadError<E>>>,
    {
        self.reading_paced(send, None).await
    }

    /// Sends the read `send` makes as [`reading`](Self::reading) does, each refusal for
    /// throughput also lowering `limiter`'s rate: how a sweep's scan pages read, since the
    /// sweep's rate paces its reads too, and a refused read says the table is short of
    /// capacity as a refused write does.
    pub(crate) async fn reading_paced<T, E, F>(
        &self,
        send: impl FnMut() -> F,
        limiter: Option<&crate::rate::Limiter>,
    ) -> Result<T, ReadError<E>>
    where
        E: aws_sdk_dynamodb::error::ProvideErrorMetadata,
        F: std::future::Future<Output = Result<T, ReadError<E>>>,
    {
        let throttled = |error: &ReadError<E>| match limiter {
            Some(limiter) if is_throttling(error) => limiter.throttled(),
            _ => {}
        };
        self.resending(send, read_again, throttled).await
    }

    /// Sends the change of the table `send` makes (`UpdateTable`, `UpdateTimeToLive`), again
    /// while it is throttled or its response is lost, until it is answered or `made` finds it
    /// made. DynamoDB refuses such a change when it is sent again after it applied it (the
    /// index exists, the table is being updated, time to live is on), so after a failure the
    /// table, not the answer, says whether it was made.
    pub(crate) async fn changing<T, E, F, M, X>(
        &self,
        send: impl Fn() -> F,
        made: impl Fn() -> M,
    ) -> Result<(), X>
    where
        E: aws_sdk_dynamodb::error::ProvideErrorMetadata,
        F: std::future::Future<Output = Result<T, ReadError<E>>>,
        M: std::future::Future<Output = Result<bool, X>>,
        X: From<ReadError<E>>,
    {
        let (send, made) = (&send, &made);
        // `Ok(None)`: made; `Ok(Some(error))`: refused or lost, and not made.
        let attempt = |_: &mut ()| async move {
            match send().await {
                Ok(_) => Ok(None),
                Err(error) => Ok((!made().await?).then_some(error)),
            }
        };
        let judge = |_: &mut (), outcome: Result<Option<ReadError<E>>, X>, _| match outcome {
            Ok(None) => Next::Done(Ok(())),
            Ok(Some(error)) if read_again(&error) => Next::Again(Err(error.into())),
            Ok(Some(error)) => Next::Done(Err(error.into())),
            Err(error) => Next::Done(Err(error)),
        };
        self.drive(&mut (), attempt, judge).await
    }
}

/// What [`RetryPolicy::drive`] does after an attempt.
pub(crate) enum Next<T> {
    /// Return this.
    Done(T),
    /// Send again if the policy allows one more attempt; else return this.
    Again(T),
}

/// How often a long job's request is sent before its throttling ends the job: the 8 attempts
/// of [`RetryPolicy::default`] times the SDK's 3, which each made before.
const THROTTLED_ATTEMPTS: u32 = 24;

/// A failed request of an operation whose errors are `E`, as the SDK reports it (of the
/// DynamoDB and the DynamoDB Streams APIs alike).
pub(crate) type ReadError<E> =
    aws_sdk_dynamodb::error::SdkError<E, aws_sdk_dynamodb::config::http::HttpResponse>;

/// Whether a read (or a change of the table, which the table's description then confirms) is
/// worth sending again: it was throttled, refused for a limit on requests in flight, or its
/// response was lost (a read changes nothing, so sending it twice is safe).
pub(crate) fn read_again<E: aws_sdk_dynamodb::error::ProvideErrorMetadata>(
    error: &ReadError<E>,
) -> bool {
    let code = aws_sdk_dynamodb::error::ProvideErrorMetadata::code(error);
    is_throttling(error) || is_limit_exceeded(code) || lost_in_transit(error)
}

/// Whether `code` is `LimitExceededException`: too many table changes in flight in the
/// account, or more reads of a stream's shard than the Streams API allows. Nothing was done,
/// and the request may go through later.
pub(crate) fn is_limit_exceeded(code: Option<&str>) -> bool {
    code == Some("LimitExceededException")
}

/// Whether a request failed in a way that leaves its outcome unknown: it timed out, the
/// connection failed, or the service answered 5xx. Safe to resend only when the request is
/// idempotent (a transaction with a client request token, a put of the same item).
pub(crate) fn lost_in_transit<E>(
    error: &aws_sdk_dynamodb::error::SdkError<E, aws_sdk_dynamodb::config::http::HttpResponse>,
) -> bool {
    use aws_sdk_dynamodb::error::SdkError;
    match error {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            true
        }
        SdkError::ServiceError(service) => service.raw().status().is_server_error(),
        _ => false,
    }
}

/// Whether DynamoDB refused a request for throughput: the table's or an index's capacity, the
/// account's request rate, or on-demand throttling. The request was not applied.
pub(crate) fn is_throttling(error: &impl aws_sdk_dynamodb::error::ProvideErrorMetadata) -> bool {
    is_throttling_code(error.code())
}

/// Whether `code` is `ReplicatedWriteConflictException`: a global table with multi-Region
/// strong consistency refused a write to an item that a request in another Region is writing.
/// Nothing was applied, and DynamoDB documents a retry as safe.
pub(crate) fn is_replicated_write_conflict(code: Option<&str>) -> bool {
    code == Some("ReplicatedWriteConflictException")
}

/// Whether an error `code` is one of [`is_throttling`]'s.
pub(crate) fn is_throttling_code(code: Option<&str>) -> bool {
    matches!(
        code,
        Some(
            "ProvisionedThroughputExceededException"
                | "ThrottlingException"
                | "RequestLimitExceeded"
        )
    )
}

#[cfg(test)]
mod tests {
    use super::RetryPolicy;
    use std::time::{Duration, Instant};

    #[test]
    fn delay_is_bounded_by_the_ceiling_and_the_maximum() {
        let policy = RetryPolicy::default();
        let mut rng = fastrand::Rng::with_seed(7);
        for attempt in 0..200 {
            let ceiling = policy.ceiling(attempt);
            assert!(
                ceiling <= policy.max_delay,
                "attempt {attempt}: {ceiling:?}"
            );
            for _ in 0..50 {
                let delay = policy.delay_with(attempt, &mut rng);
                assert!(
                    delay <= ceiling,
                    "attempt {attempt}: {delay:?} > {ceiling:?}"
                );
            }
        }
        assert_eq!(policy.delay(0), Duration::ZERO);
    }

    #[test]
    fn ceiling_doubles_until_the_maximum() {
        let policy = RetryPolicy::default();
        let ceilings: Vec<u128> = (1..=9)
            .map(|attempt| policy.ceiling(attempt).as_millis())
            .collect();
        assert_eq!(ceilings, [25, 50, 100, 200, 400, 800, 1600, 2000, 2000]);
        assert_eq!(policy.ceiling(u32::MAX), policy.max_delay);
        let huge = RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::MAX,
            max_delay: Duration::MAX,
        };
        assert_eq!(huge.ceiling(40), Duration::MAX);
        let mut rng = fastrand::Rng::with_seed(1);
        assert!(huge.delay_with(40, &mut rng) <= Duration::MAX);
    }

    #[test]
    fn delays_grow_with_the_attempt() {
        let policy = RetryPolicy::default();
        let mut rng = fastrand::Rng::with_seed(42);
        let mean = |attempt: u32, rng: &mut fastrand::Rng| {
            let total: Duration = (0..2000).map(|_| policy.delay_with(attempt, rng)).sum();
            total / 2000
        };
        let means: Vec<Duration> = (1..=7).map(|attempt| mean(attempt, &mut rng)).collect();
        for pair in means.windows(2) {
            assert!(pair[0] < pair[1], "{means:?}");
        }
        // Full jitter averages half the ceiling.
        let fourth = means[3].as_secs_f64();
        assert!((0.08..0.12).contains(&fourth), "{means:?}");
    }

    #[test]
    fn zero_attempts_still_send_once() {
        let policy = RetryPolicy {
            max_attempts: 0,
            ..RetryPolicy::default()
        };
        assert_eq!(policy.attempts(), 1);
        assert_eq!(RetryPolicy::never().attempts(), 1);
    }

    #[tokio::test]
    async fn sleep_before_waits_at_most_the_ceiling() {
        let policy = RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(20),
            max_delay: Duration::from_millis(20),
        };
        let started = Instant::now();
        policy.sleep_before(0).await;
        policy.sleep_before(5).await;
        // Generous slack: the timer's granularity and a loaded machine.
        assert!(started.elapsed() < Duration::from_millis(500));
        let zero = RetryPolicy {
            base_delay: Duration::ZERO,
            ..policy
        };
        // Outside any runtime: a zero delay must not touch the timer.
        futures::executor::block_on(zero.sleep_before(4));
    }
}
