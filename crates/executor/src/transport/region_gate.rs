//! Per-region backoff: a region that answers `429` or `RESOURCE_EXHAUSTED` is held back as a
//! whole, not request by request.
//!
//! The service's quotas are per region, so once one request to a region is refused for quota,
//! the other requests to that region would only be refused too (and use up more of the
//! quota). Every request waits for its region's gate to open before it is sent; a quota error
//! closes the gate until the server's `Retry-After`, or else for an exponential backoff with
//! full jitter that grows with the quota errors the region answered in a row and starts over
//! after a success. Other regions' gates stay open, so their requests go out at full speed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use crate::transport::retry::RetryPolicy;

/// One gate per region; clones share them.
#[derive(Debug, Clone, Default)]
pub(crate) struct RegionGates {
    gates: Arc<Mutex<HashMap<String, Gate>>>,
}

/// A region's gate.
#[derive(Debug, Default)]
struct Gate {
    /// No request to the region is sent before this.
    closed_until: Option<Instant>,
    /// Quota errors the region answered since its last success.
    quota_errors_in_a_row: u32,
}

impl RegionGates {
    /// Waits until `region`'s gate is open (at once when it is).
    pub(crate) async fn wait_open(&self, region: &str) {
        // A quota error answered meanwhile may close the gate again for longer.
        while let Some(closed_until) = self.closed_until(region) {
            let now = Instant::now();
            if closed_until <= now {
                return;
            }
            tracing::debug!(
                region,
                wait = ?(closed_until - now),
                "holding a request back: the region answered a quota error"
            );
            tokio::time::sleep_until(closed_until).await;
        }
    }

    /// Closes `region`'s gate after a quota error: for `retry_after` when the server gave
    /// one, else for the policy's backoff after that many quota errors in a row, and never for
    /// longer than the policy's `max_elapsed` (a server's `Retry-After` is not trusted
    /// blindly). A longer closing already in place is kept. Returns how long the gate stays
    /// closed from now.
    pub(crate) fn close(
        &self,
        region: &str,
        retry_after: Option<Duration>,
        policy: &RetryPolicy,
    ) -> Duration {
        let mut gates = self.lock();
        let gate = gates.entry(region.to_owned()).or_default();
        gate.quota_errors_in_a_row = gate.quota_errors_in_a_row.saturating_add(1);
        let hold = retry_after
            .unwrap_or_else(|| policy.backoff(gate.quota_errors_in_a_row))
            .min(policy.max_elapsed);
        let now = Instant::now();
        let closed_until = gate.closed_until.map_or(now + hold, |t| t.max(now + hold));
        gate.closed_until = Some(closed_until);
        tracing::debug!(
            region,
            ?hold,
            quota_errors_in_a_row = gate.quota_errors_in_a_row,
            "holding back requests to the region after a quota error"
        );
        closed_until - now
    }

    /// Records that `region` answered a request: its next quota error backs off from the
    /// start again.
    pub(crate) fn answered(&self, region: &str) {
        if let Some(gate) = self.lock().get_mut(region) {
            gate.quota_errors_in_a_row = 0;
        }
    }

    fn closed_until(&self, region: &str) -> Option<Instant> {
        self.lock().get(region).and_then(|gate| gate.closed_until)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Gate>> {
        // A gate is two plain values: a panic elsewhere cannot leave it half written.
        self.gates.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use futures::FutureExt;

    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 6,
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(4),
            max_elapsed: Duration::from_secs(30),
        }
    }

    fn in_a_row(gates: &RegionGates, region: &str) -> u32 {
        gates
            .lock()
            .get(region)
            .map_or(0, |g| g.quota_errors_in_a_row)
    }

    #[tokio::test]
    async fn a_closed_region_waits_and_the_others_do_not() {
        let gates = RegionGates::default();
        let hold = gates.close("us-east1", Some(Duration::from_millis(300)), &policy());
        assert!(hold <= Duration::from_millis(300), "{hold:?}");
        assert!(gates.wait_open("europe-west4").now_or_never().is_some());
        let started = Instant::now();
        gates.clone().wait_open("us-east1").await;
        assert!(started.elapsed() >= hold, "{:?}", started.elapsed());
        assert!(gates.wait_open("us-east1").now_or_never().is_some());
    }

    #[test]
    fn a_shorter_closing_keeps_the_longer_one_and_retry_after_is_capped() {
        let gates = RegionGates::default();
        gates.close("us-east1", Some(Duration::from_secs(8)), &policy());
        let hold = gates.close("us-east1", Some(Duration::from_secs(1)), &policy());
        assert!(hold > Duration::from_secs(7), "{hold:?}");
        let capped = gates.close("asia-east1", Some(Duration::from_secs(3600)), &policy());
        assert!(capped <= Duration::from_secs(30), "{capped:?}");
        assert!(capped > Duration::from_secs(29), "{capped:?}");
    }

    #[test]
    fn backoff_grows_with_quota_errors_in_a_row_and_restarts_after_an_answer() {
        let mut longest_third = Duration::ZERO;
        for _ in 0..200 {
            let gates = RegionGates::default();
            let first = gates.close("r", None, &policy());
            assert!(first <= Duration::from_secs(1), "{first:?}");
            gates.close("r", None, &policy());
            // The earlier closings last at most 2 s: more comes from the third backoff.
            longest_third = longest_third.max(gates.close("r", None, &policy()));
        }
        assert!(longest_third > Duration::from_secs(2), "{longest_third:?}");
        let gates = RegionGates::default();
        gates.close("r", None, &policy());
        gates.close("r", None, &policy());
        gates.close("other", None, &policy());
        assert_eq!(in_a_row(&gates, "r"), 2);
        gates.answered("r");
        assert_eq!(in_a_row(&gates, "r"), 0);
        assert_eq!(in_a_row(&gates, "other"), 1);
    }
}
