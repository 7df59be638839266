//! The evidence `destroy --idle-for` (and `plan --destroy --idle-for`) decides on: one row per
//! cluster (its project, region and ID first, as in every table of clusters) with its state, active jobs, busy nodes, when it last ran work, its GPUs and the
//! GPU-hours they have sat idle, with prices what those idle hours cost (the cluster's burn
//! rate times the hours), the verdict and why. `?` marks what could not be read.

use std::collections::BTreeSet;

use clusterform_executor::{IdleReport, IdleVerdict};
use clusterform_model::ClusterName;
use clusterform_model::pricing::FleetBurnRate;
use time::OffsetDateTime;

use crate::format::costs;
use crate::format::table::{cluster_headers, cluster_row, table, time_and_age};

/// What the evidence of no cluster reads: one line, not a table's bare header.
const NO_CLUSTERS: &str = "No clusters to check for idleness.";

/// The table of `reports` at `now`; the clusters in `protected` are kept whatever they show.
/// With `burn_rates`, an `IDLE COST` column follows the idle GPU-hours.
pub fn idle_table(
    reports: &[IdleReport],
    protected: &BTreeSet<ClusterName>,
    burn_rates: Option<&FleetBurnRate>,
    now: OffsetDateTime,
) -> String {
    if reports.is_empty() {
        return NO_CLUSTERS.to_owned();
    }
    let mut headers = vec![
        "STATE",
        "ACTIVE JOBS",
        "BUSY NODES",
        "LAST BUSY",
        "GPUS",
        "IDLE GPU-HOURS",
    ];
    if burn_rates.is_some() {
        headers.push("IDLE COST");
    }
    headers.extend(["VERDICT", "REASON"]);
    let mut rows = vec![cluster_headers(&headers)];
    let count = |n: Option<usize>| n.map_or_else(|| "?".to_owned(), |n| n.to_string());
    for report in reports {
        let verdict = if protected.contains(&report.name) {
            "protected: keep"
        } else if report.only_pending_jobs() {
            "jobs pending: keep"
        } else {
            verdict(report.verdict)
        };
        let mut cells = vec![
            report.state.clone().unwrap_or_else(|| "?".into()),
            count(report.active_jobs),
            count(report.busy_nodes),
            last_busy(report, now),
            report
                .gpus
                .map_or_else(|| "?".into(), |gpus| gpus.to_string()),
            report
                .idle_gpu_hours()
                .map_or_else(|| "?".into(), |hours| format!("{hours:.1}")),
        ];
        if let Some(fleet) = burn_rates {
            cells.push(idle_cost(report, fleet));
        }
        cells.extend([verdict.to_owned(), report.reason.clone()]);
        rows.push(cluster_row(&report.name, cells));
    }
    table(&rows)
}

/// What `report`'s cluster has cost while idle: its burn rate times its idle hours.
fn idle_cost(report: &IdleReport, fleet: &FleetBurnRate) -> String {
    let burn_rate = fleet
        .by_cluster
        .iter()
        .find(|(address, _)| *address == report.name)
        .and_then(|(_, cost)| cost.as_ref());
    costs::idle_cost(burn_rate, report.idle_hours(), &fleet.currency)
}

/// `2026-11-30T10:05:00Z (5h2m ago)`; `never (up since …)` for a cluster that has run no job
/// since it started, whose nodes' `last_busy` is only when they came up.
fn last_busy(report: &IdleReport, now: OffsetDateTime) -> String {
    let Some(time) = report.last_busy else {
        return "?".to_owned();
    };
    let when = time_and_age(time, now);
    if report.never_busy {
        format!("never (up since {when})")
    } else {
        when
    }
}

fn verdict(verdict: IdleVerdict) -> &'static str {
    match verdict {
        IdleVerdict::Idle => "idle: destroy",
        IdleVerdict::NotLongEnough => "idle, not long enough: keep",
        IdleVerdict::Busy => "busy: keep",
        IdleVerdict::Unknown => "unknown: keep",
    }
}

#[cfg(test)]
mod tests {
    use clusterform_testkit::slurm_job;

    use super::*;

    fn waiting_on(state: &str) -> IdleReport {
        IdleReport {
            name: ClusterName::new("my-proj", "us-central1", "train01").unwrap(),
            state: Some("RUNNING".to_owned()),
            active_jobs: Some(1),
            busy_nodes: Some(0),
            last_busy: None,
            never_busy: false,
            idle_for: None,
            gpus: Some(0),
            slurm_version: Some("v0.0.42".to_owned()),
            verdict: IdleVerdict::Busy,
            reason: String::new(),
            running_jobs: clusterform_model::RunningJobs::Known {
                jobs: vec![slurm_job(1, state)],
            },
        }
    }

    #[test]
    fn a_cluster_whose_only_job_waits_for_nodes_is_kept_as_pending_not_busy() {
        let now = OffsetDateTime::UNIX_EPOCH;
        let pending = idle_table(&[waiting_on("PENDING")], &BTreeSet::new(), None, now);
        assert!(pending.contains("jobs pending: keep"), "{pending}");
        let running = idle_table(&[waiting_on("RUNNING")], &BTreeSet::new(), None, now);
        assert!(running.contains("busy: keep"), "{running}");
    }

    #[test]
    fn no_report_is_one_line_not_a_bare_header() {
        let text = idle_table(&[], &BTreeSet::new(), None, OffsetDateTime::UNIX_EPOCH);
        assert_eq!(text, NO_CLUSTERS);
    }
}
