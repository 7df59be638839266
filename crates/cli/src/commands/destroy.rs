//! `clusterform destroy`: deletes the declared clusters (or `--target` ones); with
//! `--idle-for`, first asks each cluster's Slurm for its jobs and nodes, prints the evidence
//! per cluster (protected clusters among them, kept), and deletes only the provably idle ones.

use clusterform::format::notes::Note;
use clusterform_model::Location;

use crate::arguments::Destroy;
use crate::context;
use crate::error::CliError;
use crate::exit_status::ExitStatus;
use crate::hints;
use crate::printer::Printer;
use crate::stack_lock::LockRequest;
use crate::views::{RunView, run_view};
use crate::workflow::{self, Approval, Recheck, Run};

/// Plans the deletions, asks, executes.
pub async fn run(args: &Destroy, printer: &Printer) -> Result<ExitStatus, CliError> {
    let view = run_view(args.json, args.auto_approve, printer);
    let result = destroy(args, &*view).await;
    view.ended(&result);
    result
}

async fn destroy(args: &Destroy, view: &dyn RunView) -> Result<ExitStatus, CliError> {
    let dir = &args.dir;
    let endpoint = args.endpoint.as_ref();
    let inputs = context::variable_inputs(&args.planning.variables)?;
    let config = context::load_config(dir, inputs, view).await?;
    let prices = context::prices(args.prices.as_deref(), Some(&config.provider), view)?;
    let request = LockRequest {
        dir,
        command: "destroy",
        timeout: args.lock_timeout,
        endpoint,
    };
    workflow::locked(config, request, view, async |config| {
        let run = Run::connect(config, dir, endpoint, args.parallelism, view).await?;
        let options = &args.planning.options;
        let mut planned = run.plan(options).await?;
        let settled = run.settle_earlier_runs(&planned).await?;
        if settled.replan {
            planned = run.plan(options).await?;
        }
        let jobs = match args.idle_for {
            Some(threshold) => {
                run.keep_only_idle(&mut planned, options, threshold, prices.as_ref())
                    .await?
            }
            None => run.running_jobs(&planned).await,
        };
        view.plan(&planned.plan, &jobs, prices.as_ref());
        if !planned.plan.has_changes() {
            // An interrupted destroy's deletes, resumed, are what this one did.
            if settled.resumed.destroy > 0 {
                let (plan, unread) = (&planned.plan, &planned.unread);
                return run.finish(None, plan, &[], unread, settled.resumed).await;
            }
            return nothing_destroyed(&planned.unread);
        }
        // An idle destroy deletes only clusters whose Slurm showed no work: nothing to guard.
        let stopped = match args.idle_for {
            Some(_) => Vec::new(),
            None => clusterform_planner::stopped_work(&planned.plan, &jobs, planned.live.iter()),
        };
        let approval = Approval {
            unattended: args.auto_approve,
            allow_disruption: args.allow_disruption,
            go_ahead: hints::SAME_COMMAND_ALLOWING.to_owned(),
        };
        if !run.approve(&planned.plan, &approval, &stopped)? {
            return Ok(ExitStatus::Declined);
        }
        if args.idle_for.is_some() && !args.auto_approve {
            // The answer may have come hours after the evidence was read.
            let live = planned.live.iter();
            run.recheck_idle(&mut planned.plan, live, Recheck::AfterApproval)
                .await?;
            if !planned.plan.has_changes() {
                view.tell(&Note::NoneLeftIdle(Recheck::AfterApproval));
                return nothing_destroyed(&planned.unread);
            }
        }
        let report = run.execute(&planned.plan).await;
        run.finish(
            Some(report),
            &planned.plan,
            &[],
            &planned.unread,
            settled.resumed,
        )
        .await
    })
    .await
}

/// A destroy that deletes nothing succeeds only when it saw every location.
fn nothing_destroyed(unread: &[Location]) -> Result<ExitStatus, CliError> {
    if unread.is_empty() {
        return Ok(ExitStatus::Success);
    }
    Err(CliError::DestroyIncomplete {
        destroyed: 0,
        unread: unread.to_vec(),
    })
}
