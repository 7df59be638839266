//! `status --watch`: the line above each report (how often, when it was read) and which
//! clusters changed since the report before, judged on what `status --json` says of each.

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

/// `Every 30s, read at 12:00:05 UTC (Ctrl-C stops). Changed since 11:59:35: train01.` —
/// `changed` is `None` for the first report, which has nothing to compare with.
pub fn header(
    interval: Duration,
    read_at: OffsetDateTime,
    changed: Option<(OffsetDateTime, &[ClusterName])>,
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
    text
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
            header(interval, at, None),
            "Every 30s, read at 12:00:35 UTC (Ctrl-C stops)."
        );
        assert_eq!(
            header(interval, at, Some((since, &[]))),
            "Every 30s, read at 12:00:35 UTC (Ctrl-C stops). Nothing changed since 12:00:05."
        );
        let changed = [clusterform_testkit::address("train01")];
        assert_eq!(
            header(interval, at, Some((since, &changed))),
            "Every 30s, read at 12:00:35 UTC (Ctrl-C stops). Changed since 12:00:05: train01."
        );
    }
}
