//! Wall-clock time as the emulator stores it (milliseconds since the Unix
//! epoch, so that persisted operations finish at the right moment after a
//! restart) and renders it (RFC 3339, UTC).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Milliseconds since the Unix epoch.
pub(crate) type Millis = i64;

pub(crate) fn now_millis() -> Millis {
    let since_epoch = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO);
    duration_millis(since_epoch)
}

/// A duration in whole milliseconds, saturating at `i64::MAX`.
pub(crate) fn duration_millis(duration: Duration) -> Millis {
    Millis::try_from(duration.as_millis()).unwrap_or(Millis::MAX)
}

/// `2026-01-02T03:04:05.678Z`.
pub(crate) fn rfc3339(millis: Millis) -> String {
    let nanos = i128::from(millis) * 1_000_000;
    OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .ok()
        .and_then(|instant| instant.format(&Rfc3339).ok())
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_in_utc() {
        assert_eq!(rfc3339(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    }
}
