//! `clusterform destroy`: deletes the declared clusters (or `--target` ones); with
//! `--idle-for`, first asks each cluster's Slurm for its jobs and nodes, prints the evidence
//! per cluster, and deletes only the provably idle ones.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use clusterform_config::Config;
use clusterform_executor::{IdleReport, IdleVerdict};
use clusterform_model::duration::Seconds;
use clusterform_model::{Action, ClusterName};
use clusterform_planner::Plan;
use time::OffsetDateTime;

use crate::arguments::Destroy;
use crate::commands::ExitStatus;
use crate::commands::apply::{
    Approval, FieldSources, confirm_and_execute, destroy_summary, finish, settle_earlier_runs,
    show_plan,
};
use crate::commands::plan::{Planned, add_running_jobs, prepare_loaded, replan};
use crate::context;
use crate::error::CliError;
use crate::events::{self, JsonEvents};
use crate::printer::Printer;
use crate::stack_lock::{self, LockRequest};

/// Plans the deletions, asks, executes.
pub async fn run(args: &Destroy, printer: &Printer) -> Result<ExitStatus, CliError> {
    events::reported(args.json, printer, async |printer, events| {
        destroy_dir(args, printer, events).await
    })
    .await
}

async fn destroy_dir(
    args: &Destroy,
    printer: &Printer,
    events: Option<&Arc<JsonEvents>>,
) -> Result<ExitStatus, CliError> {
    let dir = &args.dir;
    let endpoint = args.endpoint.as_deref();
    let config = context::load_config(dir, &args.planning.variables, printer)?;
    // The body takes the configuration; the lock only reads its provider.
    let provider = config.provider.clone();
    let request = LockRequest {
        dir,
        command: "destroy",
        timeout: args.lock_timeout,
        provider: Some(&provider),
        endpoint,
    };
    stack_lock::with_lock(request, printer, async {
        destroy_configuration(args, config, printer, events).await
    })
    .await
}

/// [`destroy_dir`] once it holds the lock.
async fn destroy_configuration(
    args: &Destroy,
    config: Config,
    printer: &Printer,
    events: Option<&Arc<JsonEvents>>,
) -> Result<ExitStatus, CliError> {
    let dir = &args.dir;
    let endpoint = args.endpoint.as_deref();
    let mut planned = prepare_loaded(config, endpoint, dir, &args.planning, true, printer).await?;
    if settle_earlier_runs(&planned, dir, args.parallelism, printer, events).await? {
        planned = replan(planned, dir, &args.planning, true, printer).await?;
    }
    match args.idle_for {
        Some(threshold) => {
            keep_only_idle(&mut planned, threshold, printer, events.is_some()).await?;
        }
        None => add_running_jobs(&mut planned).await,
    }
    destroy(&planned, dir, args, printer, events).await
}

async fn destroy(
    planned: &Planned,
    dir: &Path,
    args: &Destroy,
    printer: &Printer,
    events: Option<&Arc<JsonEvents>>,
) -> Result<ExitStatus, CliError> {
    if !planned.plan.has_changes() {
        if let Some(events) = events {
            events.planned(&planned.plan);
        }
        printer.result("No clusters to destroy.");
        return Ok(ExitStatus::Success);
    }
    show_plan(&planned.plan, printer, events);
    let approval = Approval {
        auto_approve: args.auto_approve,
        question: "Do you really want to destroy these clusters?",
        cancelled: "Destroy cancelled.",
        destroy: true,
    };
    let Some(report) =
        confirm_and_execute(planned, dir, &approval, args.parallelism, printer, events).await?
    else {
        return Ok(ExitStatus::Declined);
    };
    let written = FieldSources::of(&planned.config, &planned.plan, dir);
    finish(&report, &destroy_summary(&report), printer, Some(&written))
}

/// Asks every cluster the plan would delete for its jobs, prints the table (on stderr in a
/// `--json` run, whose stdout holds only events), drops from the plan every cluster that is
/// not idle, and records under each deletion left the active jobs of the same answer.
async fn keep_only_idle(
    planned: &mut Planned,
    threshold: Duration,
    printer: &Printer,
    json: bool,
) -> Result<(), CliError> {
    let deleted = deleted_addresses(&planned.plan);
    let candidates: Vec<_> = planned
        .live
        .iter()
        .filter(|live| deleted.contains(&live.address))
        .cloned()
        .collect();
    let now = OffsetDateTime::now_utc();
    let reports =
        clusterform_executor::inspect_idle(&planned.connection.client, &candidates, threshold, now)
            .await?;
    let table = idle_table(&reports, now);
    if json {
        printer.evidence(&table);
    } else {
        printer.result(&table);
    }
    // Matched by whole address: the same ID may live in two regions.
    let idle: BTreeMap<&ClusterName, &IdleReport> = reports
        .iter()
        .filter(|r| r.verdict == IdleVerdict::Idle)
        .map(|r| (&r.name, r))
        .collect();
    planned
        .plan
        .changes
        .retain(|change| idle.contains_key(&change.address));
    for change in &mut planned.plan.changes {
        change.running_jobs = idle.get(&change.address).map(|r| r.running_jobs.clone());
    }
    Ok(())
}

/// The clusters the plan deletes. (Gathered once: looking each live cluster up in the plan
/// would be quadratic in the size of the fleet.)
fn deleted_addresses(plan: &Plan) -> BTreeSet<&ClusterName> {
    plan.changes
        .iter()
        .filter(|c| c.action == Action::Delete)
        .map(|c| &c.address)
        .collect()
}

/// One row per cluster with the evidence: state, active jobs, busy nodes, when it last ran work,
/// the verdict and why. `?` marks what could not be read.
fn idle_table(reports: &[IdleReport], now: OffsetDateTime) -> String {
    let mut rows = vec![[
        "CLUSTER".to_owned(),
        "STATE".to_owned(),
        "ACTIVE JOBS".to_owned(),
        "BUSY NODES".to_owned(),
        "LAST BUSY".to_owned(),
        "VERDICT".to_owned(),
        "REASON".to_owned(),
    ]];
    let count = |n: Option<usize>| n.map_or_else(|| "?".to_owned(), |n| n.to_string());
    for report in reports {
        rows.push([
            report.name.cluster_id.clone(),
            report.state.clone().unwrap_or_else(|| "?".into()),
            count(report.active_jobs),
            count(report.busy_nodes),
            report
                .last_busy
                .map_or_else(|| "?".into(), |time| last_busy(time, now)),
            verdict(report.verdict).to_owned(),
            report.reason.clone(),
        ]);
    }
    clusterform::views::table::table(&rows)
}

/// `2026-11-30T10:05:00Z (5h2m ago)`.
fn last_busy(time: OffsetDateTime, now: OffsetDateTime) -> String {
    let seconds = u64::try_from((now - time).whole_seconds()).unwrap_or(0);
    format!(
        "{} ({} ago)",
        clusterform::views::table::format_time(time),
        Seconds(seconds).to_units(2)
    )
}

fn verdict(verdict: IdleVerdict) -> &'static str {
    match verdict {
        IdleVerdict::Idle => "idle: destroy",
        IdleVerdict::Busy => "busy: keep",
        IdleVerdict::Unknown => "unknown: keep",
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    #[test]
    fn last_busy_is_absolute_and_relative() {
        let now = datetime!(2026-11-30 15:00:30 UTC);
        assert_eq!(
            last_busy(datetime!(2026-11-30 09:58:00 UTC), now),
            "2026-11-30T09:58:00Z (5h2m ago)"
        );
        assert_eq!(
            last_busy(datetime!(2026-11-30 15:00:00 UTC), now),
            "2026-11-30T15:00:00Z (30s ago)"
        );
    }
}
