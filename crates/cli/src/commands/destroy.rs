//! `clusterform destroy`: deletes the declared clusters (or `--target` ones); with
//! `--idle-for`, first asks each cluster's Slurm for its jobs and nodes, prints the evidence
//! per cluster, and deletes only the provably idle ones.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use clusterform_executor::{IdleReport, IdleVerdict};
use clusterform_model::duration::Seconds;
use clusterform_model::{Action, ClusterName, JobsByCluster};
use clusterform_planner::Plan;
use time::OffsetDateTime;

use crate::arguments::Destroy;
use crate::command_views::{RunView, run_view};
use crate::commands::ExitStatus;
use crate::context;
use crate::error::CliError;
use crate::printer::Printer;
use crate::stack_lock::LockRequest;
use crate::workflow::{self, Planned, Run};

/// Plans the deletions, asks, executes.
pub async fn run(args: &Destroy, printer: &Printer) -> Result<ExitStatus, CliError> {
    let view = run_view(args.json, printer);
    let result = destroy(args, &*view).await;
    view.ended(&result);
    result
}

async fn destroy(args: &Destroy, view: &dyn RunView) -> Result<ExitStatus, CliError> {
    let dir = &args.dir;
    let endpoint = args.endpoint.as_deref();
    let inputs = context::variable_inputs(&args.planning.variables)?;
    let config = context::load_config(dir, inputs, view.printer()).await?;
    let request = LockRequest {
        dir,
        command: "destroy",
        timeout: args.lock_timeout,
        endpoint,
    };
    workflow::locked(config, request, view.printer(), async |config| {
        let run = Run::connect(config, dir, endpoint, args.parallelism, view).await?;
        let options = &args.planning.options;
        let mut planned = run.plan(options).await?;
        if run.settle_earlier_runs(&planned).await? {
            planned = run.plan(options).await?;
        }
        let jobs = match args.idle_for {
            Some(threshold) => keep_only_idle(&run, &mut planned, threshold).await?,
            None => run.running_jobs(&planned.plan).await,
        };
        view.plan(&planned.plan, &jobs);
        if !planned.plan.has_changes() {
            return Ok(ExitStatus::Success);
        }
        let approval = run.confirm_and_execute(&planned.plan, args.auto_approve);
        let Some(report) = approval.await? else {
            return Ok(ExitStatus::Declined);
        };
        run.finish(Some(report), &planned.plan, &[]).await
    })
    .await
}

/// Asks every cluster the plan would delete for its jobs, shows the evidence, drops from the
/// plan every cluster that is not idle, and gives, for each deletion left, the active jobs of
/// the same answer.
async fn keep_only_idle<V: RunView + ?Sized>(
    run: &Run<'_, V>,
    planned: &mut Planned,
    threshold: Duration,
) -> Result<JobsByCluster, CliError> {
    let deleted = deleted_addresses(&planned.plan);
    let candidates: Vec<_> = planned
        .live
        .iter()
        .filter(|live| deleted.contains(&live.address))
        .cloned()
        .collect();
    let now = OffsetDateTime::now_utc();
    let reports =
        clusterform_executor::inspect_idle(run.client(), &candidates, threshold, now).await?;
    run.view().evidence(&idle_table(&reports, now));
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
    Ok(idle
        .into_iter()
        .map(|(name, report)| (name.clone(), report.running_jobs.clone()))
        .collect())
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
            report.name.id().to_string(),
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
