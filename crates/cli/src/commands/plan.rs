//! `clusterform plan`: validate, refresh the live clusters, plan (with `--destroy`, the deletions
//! `destroy` would make; with `--idle-for` too, only those of idle clusters, after the idle
//! evidence), look up the Slurm jobs that disruptive changes would hit and, beside them, check
//! what its creates need (preflight: an error found fails the plan), show;
//! optionally save, with the absolute configuration directory so that `apply FILE` works from
//! anywhere. With `--refresh-only`, show only what changed outside clusterform (no Slurm is
//! asked, nothing is saved).

use crate::arguments::{Parallelism, Plan};
use crate::context;
use crate::error::CliError;
use clusterform::format::preflight::PreflightReport;

use crate::exit_status::ExitStatus;
use crate::printer::{Printer, Tell};
use crate::views::{PlanFormat, PlanView, plan_view, show_drift};
use crate::workflow::{self, Planned, Run};

/// Plans and shows the plan (text or JSON), saving it with `--out`.
pub async fn run(args: &Plan, printer: &Printer) -> Result<ExitStatus, CliError> {
    let format = match (args.json, args.summary) {
        (true, _) => PlanFormat::Json,
        (false, true) => PlanFormat::Summary,
        (false, false) => PlanFormat::Text,
    };
    let view = plan_view(format, printer);
    let inputs = context::variable_inputs(&args.planning.variables)?;
    let config = context::load_config(&args.dir, inputs, printer).await?;
    let prices = context::prices(args.prices.as_deref(), Some(&config.provider), printer)?;
    let endpoint = args.endpoint.as_ref();
    let parallelism = Parallelism::default();
    let run = Run::connect(config, &args.dir, endpoint, parallelism, &*view).await?;
    let options = &args.planning.options;
    let mut planned = run.plan(options).await?;
    if args.refresh_only {
        return refresh_only(run, planned, args, printer);
    }
    let reads = planned.preflight.take();
    let skip = args.planning.skip_preflight;
    let (jobs, preflight) = match (args.idle_for, reads) {
        // An idle destroy creates nothing: preflight has nothing to read.
        (Some(threshold), _) => (
            run.keep_only_idle(&mut planned, options, threshold, prices.as_ref())
                .await?,
            PreflightReport::default(),
        ),
        (None, Some(reads)) => tokio::join!(
            run.running_jobs(&planned),
            run.preflight(&planned.plan, reads, skip)
        ),
        (None, None) => (run.running_jobs(&planned).await, PreflightReport::default()),
    };
    view.preflight(&preflight);
    view.plan(&planned.plan, &jobs, prices.as_ref());
    // An error found is told after the plan it concerns, and such a plan is not saved.
    run.tell_preflight(&preflight)?;
    if let Some(out) = &args.out {
        clusterform_planner::save_plan(&planned.plan, out)?;
        view.saved(out);
    }
    let status = if args.detailed_exitcode && planned.plan.has_changes() {
        ExitStatus::Changes
    } else {
        ExitStatus::Success
    };
    // The plan is shown (and saved) whole but for what could not be read; that is the error.
    let read = workflow::fully_read(&planned.plan.unreadable_locations);
    run.leave_to_exit(planned);
    read.map(|()| status)
}

/// `--refresh-only`: shows only what changed outside clusterform and proposes nothing; exit 2
/// with `--detailed-exitcode` when something did. Where the record cannot tell, a note says so
/// and nothing is known to have changed there.
fn refresh_only(
    run: Run<'_, dyn PlanView>,
    planned: Planned,
    args: &Plan,
    printer: &Printer,
) -> Result<ExitStatus, CliError> {
    if let Some(unknown) = run.drift_unknown(&planned.plan) {
        printer.tell(&unknown);
    }
    show_drift(&planned.plan, args.json, printer);
    let drifted = clusterform::format::refresh_only::has_drift(&planned.plan);
    // What could not be read is not known to be unchanged: as for a plan, that is the error.
    let read = workflow::fully_read(&planned.plan.unreadable_locations);
    run.leave_to_exit(planned);
    read.map(|()| {
        if args.detailed_exitcode && drifted {
            ExitStatus::Changes
        } else {
            ExitStatus::Success
        }
    })
}
