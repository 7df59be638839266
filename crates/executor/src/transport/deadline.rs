//! Deadlines from timeouts that come from outside (a journal entry, `--lock-timeout`, a
//! `timeouts` block): a timeout too long for the clock saturates at a far future instead of
//! overflowing, which would panic every run that reads it.

use std::time::Duration;

use tokio::time::Instant;

/// A century: longer than any wait is ever meant to be, short enough for every clock.
const FAR_FUTURE: Duration = Duration::from_secs(100 * 365 * 86_400);

/// The instant `timeout` from now, or a century from now when that is later.
pub(crate) fn after(timeout: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(timeout.min(FAR_FUTURE)).unwrap_or(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_timeout_saturates() {
        let deadline = after(Duration::MAX);
        assert!(deadline > Instant::now() + Duration::from_secs(365 * 86_400));
        let soon = after(Duration::from_secs(1));
        assert!(soon <= Instant::now() + Duration::from_secs(1));
    }
}
