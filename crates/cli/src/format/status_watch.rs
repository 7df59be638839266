//! `status --watch`: the header above each report (how often, when it was read), which
//! clusters changed since the report before, judged on what `status --json` says of each, and
//! which readings failed in between.

use std::time::Duration;

use clusterform_model::ClusterName;
use time::OffsetDateTime;

use crate::format::names::ClusterNames;
use crate::format::status::StatusEntry;
use crate::format::status_json;
use crate::format::table::time_of_day;

/// The clusters whose report differs from `previous`'s: changed, new, or no longer reported,
/// in the order they are reported (the ones gone last).
pub fn changed_clusters(previous: &[StatusEntry], current: &[StatusEntry]) -> Vec<ClusterName> {
    let before = |address: &ClusterName| previous.iter().find(|entry| &entry.address == address);
    let mut changed: Vec<ClusterName> = current
        .iter()
        .filter(|entry| {
            before(&entry.address)
                .is_none_or(|old| status_json::entry(old) != status_json::entry(entry))
        })
        .map(|entry| entry.address.clone())
        .collect();
    changed.extend(
        previous
            .iter()
            .filter(|old| !current.iter().any(|entry| entry.address == old.address))
            .map(|old| old.address.clone()),
    );
    changed
}

/// The readings that failed since the report before (or since the watch began): a report
/// that follows them says so, since on a terminal it replaces the errors on the screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedReadings {
    since: OffsetDateTime,
    count: usize,
    last_error: String,
}

impl FailedReadings {
    /// The first reading that failed after the report read at `since`, with its error's text.
    pub fn first(since: OffsetDateTime, error: &str) -> Self {
        FailedReadings {
            since,
            count: 1,
            last_error: first_line(error),
        }
    }

    /// One more reading failed, with this error's text.
    #[must_use]
    pub fn again(self, error: &str) -> Self {
        FailedReadings {
            count: self.count + 1,
            last_error: first_line(error),
            ..self
        }
    }
}

/// An error's first line: its message without the lines that detail it.
fn first_line(error: &str) -> String {
    error
        .lines()
        .next()
        .unwrap_or_default()
        .trim_end()
        .to_owned()
}

/// `Every 30s, read at 12:00:05 UTC (Ctrl-C stops). Changed since 11:59:35: train01.` —
/// `changed` is `None` for the first report, which has nothing to compare with. After readings
/// that failed, a second line: `2 readings failed since 11:59:35: <the last one's error>`.
pub fn header(
    interval: Duration,
    read_at: OffsetDateTime,
    changed: Option<(OffsetDateTime, &[ClusterName])>,
    failed: Option<&FailedReadings>,
) -> String {
    let mut text = format!(
        "Every {}s, read at {} UTC (Ctrl-C stops).",
        interval.as_secs(),
        time_of_day(read_at)
    );
    if let Some((since, clusters)) = changed {
        let names = ClusterNames::for_clusters(clusters);
        let listed: Vec<String> = clusters.iter().map(|name| names.name(name)).collect();
        if listed.is_empty() {
            text.push_str(&format!(" Nothing changed since {}.", time_of_day(since)));
        } else {
            text.push_str(&format!(
                " Changed since {}: {}.",
                time_of_day(since),
                listed.join(", ")
            ));
        }
    }
    if let Some(failed) = failed {
        text.push('\n');
        text.push_str(&failed_readings_line(failed));
    }
    text
}

/// `1 reading failed since 12:00:05: <its error>`, or `3 readings failed since …: <the last
/// one's error>`.
fn failed_readings_line(failed: &FailedReadings) -> String {
    let readings = if failed.count == 1 {
        "reading"
    } else {
        "readings"
    };
    format!(
        "{} {readings} failed since {}: {}",
        failed.count,
        time_of_day(failed.since),
        failed.last_error
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::status::{Declaration, Found};

    fn entry(id: &str, declaration: Declaration) -> StatusEntry {
        StatusEntry {
            address: clusterform_testkit::address(id),
            declaration,
            found: Found::NotCreated,
        }
    }

    #[test]
    fn a_cluster_is_changed_when_its_report_differs_appears_or_goes() {
        let before = [
            entry("train01", Declaration::Declared),
            entry("train02", Declaration::Declared),
            entry("train04", Declaration::Declared),
        ];
        let after = [
            entry("train02", Declaration::Declared),
            entry("train03", Declaration::Declared),
            entry("train04", Declaration::Undeclared),
        ];
        let ids: Vec<String> = changed_clusters(&before, &after)
            .iter()
            .map(|name| name.id().to_string())
            .collect();
        assert_eq!(ids, ["train03", "train04", "train01"]);
        assert!(changed_clusters(&after, &after).is_empty());
    }

    #[test]
    fn the_header_says_how_often_when_and_what_changed() {
        let at = time::macros::datetime!(2026-12-06 12:00:35 UTC);
        let since = time::macros::datetime!(2026-12-06 12:00:05 UTC);
        let interval = Duration::from_secs(30);
        assert_eq!(
            header(interval, at, None, None),
            "Every 30s, read at 12:00:35 UTC (Ctrl-C stops)."
        );
        assert_eq!(
            header(interval, at, Some((since, &[])), None),
            "Every 30s, read at 12:00:35 UTC (Ctrl-C stops). Nothing changed since 12:00:05."
        );
        let changed = [clusterform_testkit::address("train01")];
        assert_eq!(
            header(interval, at, Some((since, &changed)), None),
            "Every 30s, read at 12:00:35 UTC (Ctrl-C stops). Changed since 12:00:05: train01."
        );
    }

    #[test]
    fn the_header_says_how_many_readings_failed_since_and_the_last_error() {
        let at = time::macros::datetime!(2026-12-06 12:01:05 UTC);
        let since = time::macros::datetime!(2026-12-06 12:00:05 UTC);
        let interval = Duration::from_secs(30);
        let once = FailedReadings::first(
            since,
            "refresh failed: PERMISSION_DENIED\n  caused by: the caller may not list",
        );
        assert_eq!(
            header(interval, at, Some((since, &[])), Some(&once)),
            "Every 30s, read at 12:01:05 UTC (Ctrl-C stops). Nothing changed since 12:00:05.\n\
             1 reading failed since 12:00:05: refresh failed: PERMISSION_DENIED"
        );
        let thrice = once
            .again("connection refused")
            .again("deadline exceeded after 30s");
        assert_eq!(
            header(interval, at, None, Some(&thrice)),
            "Every 30s, read at 12:01:05 UTC (Ctrl-C stops).\n\
             3 readings failed since 12:00:05: deadline exceeded after 30s"
        );
    }
}
