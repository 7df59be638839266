//! `clusterform destroy`: deletes the declared clusters (or `--target` ones); with
//! `--idle-for`, first asks each cluster's Slurm for its jobs, prints what it found, and
//! deletes only the idle ones.

use std::path::Path;
use std::time::Duration;

use clusterform_executor::{IdleReport, IdleVerdict, RunLock};
use clusterform_planner::{Action, ClusterAddress, Plan};

use crate::cli::{DestroyArgs, GlobalArgs, PlanningArgs};
use crate::commands::ExitStatus;
use crate::commands::apply::{Approval, confirm_and_execute, finish, settle_earlier_runs};
use crate::commands::plan::{Planned, prepare};
use crate::context::config_dir;
use crate::error::CliError;
use crate::printer::Printer;

/// Plans the deletions, asks, executes.
pub async fn run(
    global: &GlobalArgs,
    args: &DestroyArgs,
    printer: &Printer,
) -> Result<ExitStatus, CliError> {
    let dir = config_dir(global, args.dir.dir.as_deref());
    let _lock = RunLock::acquire(&dir)?;
    let planning = PlanningArgs {
        vars: args.vars.clone(),
        targets: args.targets.clone(),
        ..PlanningArgs::default()
    };
    let mut planned = prepare(global, &dir, &planning, true, printer).await?;
    if settle_earlier_runs(&planned, &dir, args.parallelism, printer).await? {
        planned = prepare(global, &dir, &planning, true, printer).await?;
    }
    if let Some(threshold) = args.idle_for {
        keep_only_idle(&mut planned, threshold, printer).await?;
    }
    destroy(&planned, &dir, args, printer).await
}

async fn destroy(
    planned: &Planned,
    dir: &Path,
    args: &DestroyArgs,
    printer: &Printer,
) -> Result<ExitStatus, CliError> {
    if !planned.plan.has_changes() {
        printer.info("No clusters to destroy.");
        return Ok(ExitStatus::Success);
    }
    printer.result(&clusterform_planner::render_text(
        &planned.plan,
        printer.color(),
    ));
    let approval = Approval {
        auto_approve: args.auto_approve,
        question: "Do you really want to destroy these clusters?",
        cancelled: "Destroy cancelled.",
    };
    let Some(report) =
        confirm_and_execute(planned, dir, &approval, args.parallelism, printer).await?
    else {
        return Ok(ExitStatus::Success);
    };
    let destroyed = report
        .outcomes
        .iter()
        .filter(|o| o.action == Action::Delete && o.result.is_ok())
        .count();
    finish(
        &report,
        dir,
        &format!("Destroy complete! Resources: {destroyed} destroyed."),
        printer,
    )
}

/// Asks every cluster the plan would delete for its jobs, prints the table, and drops from the
/// plan every cluster that is not idle.
async fn keep_only_idle(
    planned: &mut Planned,
    threshold: Duration,
    printer: &Printer,
) -> Result<(), CliError> {
    let candidates: Vec<_> = planned
        .live
        .iter()
        .filter(|live| is_deleted_by(&planned.plan, &live.address))
        .cloned()
        .collect();
    let now = time::OffsetDateTime::now_utc();
    let reports =
        clusterform_executor::inspect_idle(&planned.connection.client, &candidates, threshold, now)
            .await?;
    printer.result(&idle_table(&reports));
    let idle: Vec<String> = reports
        .iter()
        .filter(|r| matches!(r.verdict, IdleVerdict::Idle))
        .map(|r| r.name.cluster_id.clone())
        .collect();
    planned
        .plan
        .changes
        .retain(|change| idle.contains(&change.address.id));
    Ok(())
}

fn is_deleted_by(plan: &Plan, address: &ClusterAddress) -> bool {
    plan.changes
        .iter()
        .any(|c| c.action == Action::Delete && c.address == *address)
}

/// One row per cluster: state, running and pending jobs, last job end, idle time, verdict.
fn idle_table(reports: &[IdleReport]) -> String {
    let mut rows = vec![[
        "CLUSTER".to_owned(),
        "STATE".to_owned(),
        "RUNNING".to_owned(),
        "PENDING".to_owned(),
        "LAST JOB END".to_owned(),
        "IDLE FOR".to_owned(),
        "VERDICT".to_owned(),
    ]];
    for report in reports {
        rows.push([
            report.name.cluster_id.clone(),
            report.state.clone().unwrap_or_else(|| "-".into()),
            report.running.to_string(),
            report.pending.to_string(),
            report
                .last_job_end
                .map_or_else(|| "-".into(), crate::commands::list::format_time),
            report.idle_for.map_or_else(
                || "-".into(),
                |d| clusterform_model::duration::Seconds(d.as_secs()).to_string(),
            ),
            verdict(&report.verdict),
        ]);
    }
    crate::commands::list::table(&rows)
}

fn verdict(verdict: &IdleVerdict) -> String {
    match verdict {
        IdleVerdict::Idle => "idle: destroy".to_owned(),
        IdleVerdict::Busy(reason) => format!("busy: keep ({reason})"),
        IdleVerdict::Unknown(reason) => format!("unknown: keep ({reason})"),
    }
}
