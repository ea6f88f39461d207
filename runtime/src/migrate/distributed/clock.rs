//! A worker's deadline (a Lambda invocation's, say) and how long its pages take.

use std::time::{Duration, SystemTime};

/// A worker's deadline, if it has one, and the slowest page it swept, which says how much
/// time a page needs.
pub(super) struct Clock {
    pub(super) deadline: Option<SystemTime>,
    pub(super) slowest_page: Duration,
}

impl Clock {
    /// The least time kept for a page and the lease's release.
    const MARGIN: Duration = Duration::from_millis(100);

    /// Whether, after `wait`, a page (twice the slowest so far) would end past the deadline.
    pub(super) fn out_of_time(&self, wait: Duration) -> bool {
        let Some(deadline) = self.deadline else {
            return false;
        };
        let needed = wait + (self.slowest_page * 2).max(Self::MARGIN);
        SystemTime::now() + needed >= deadline
    }

    /// Sleeps until the deadline less the margin (at once if that has passed).
    pub(super) async fn sleep_to_deadline(&self) {
        let left = (self.deadline)
            .and_then(|deadline| deadline.duration_since(SystemTime::now()).ok())
            .unwrap_or_default();
        tokio::time::sleep(left.saturating_sub(Self::MARGIN)).await;
    }
}
