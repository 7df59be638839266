//! `clusterform apply`: plan (or read a saved plan), confirm, execute with live progress, and
//! summarise. Operations an earlier run left in flight are waited for first. A saved plan is
//! applied to the directory it records, with the variable values it records, from any working
//! directory.

use std::path::Path;

use clusterform::format::notes::Note;
use clusterform_config::{Config, VariableInputs};
use clusterform_model::Endpoint;
use clusterform_planner::Plan;

use crate::arguments::{Apply, ApplySource};
use crate::context;
use crate::error::CliError;
use clusterform::format::preflight::PreflightReport;

use crate::exit_status::ExitStatus;
use crate::hints;
use crate::printer::Printer;
use crate::stack_lock::LockRequest;
use crate::views::{Counts, RunView, run_view};
use crate::workflow::{self, Approval, Recheck, Run};

/// Applies a configuration directory or a saved plan file.
pub async fn run(args: &Apply, printer: &Printer) -> Result<ExitStatus, CliError> {
    let unasked = args.auto_approve || matches!(args.source, ApplySource::SavedPlan { .. });
    let view = run_view(args.json, unasked, printer);
    let result = match &args.source {
        ApplySource::SavedPlan { file, dir } => {
            apply_saved_plan(args, file, dir.as_deref(), &*view).await
        }
        ApplySource::Directory(dir) => apply_directory(args, dir, &*view).await,
    };
    view.ended(&result);
    result
}

/// The lock of an apply in `dir`.
fn lock_request<'a>(args: &'a Apply, dir: &'a Path) -> LockRequest<'a> {
    LockRequest {
        dir,
        command: "apply",
        timeout: args.lock_timeout,
        endpoint: args.endpoint.as_ref(),
    }
}

async fn apply_directory(
    args: &Apply,
    dir: &Path,
    view: &dyn RunView,
) -> Result<ExitStatus, CliError> {
    let inputs = context::variable_inputs(&args.planning.variables)?;
    let config = context::load_config(dir, inputs, view).await?;
    // `apply` has no `--prices`: the provider's `pricing` block prices its plan.
    let prices = config.provider.pricing.clone();
    let request = lock_request(args, dir);
    workflow::locked(config, request, view, async |config| {
        let endpoint = args.endpoint.as_ref();
        let run = Run::connect(config, dir, endpoint, args.parallelism, view).await?;
        let options = &args.planning.options;
        let mut planned = run.plan(options).await?;
        let settled = run.settle_earlier_runs(&planned).await?;
        if settled.replan {
            planned = run.plan(options).await?;
        }
        let skip = args.planning.skip_preflight;
        let (jobs, preflight) = match planned.preflight.take() {
            Some(reads) => tokio::join!(
                run.running_jobs(&planned),
                run.preflight(&planned.plan, reads, skip)
            ),
            None => (run.running_jobs(&planned).await, PreflightReport::default()),
        };
        view.plan(&planned.plan, &jobs, prices.as_ref());
        // Before anything is asked or sent: a create preflight knows would fail stops here.
        run.tell_preflight(&preflight)?;
        let working = workflow::still_working(&planned.plan, planned.live.iter());
        let report = if planned.plan.has_changes() {
            let stopped =
                clusterform_planner::stopped_work(&planned.plan, &jobs, planned.live.iter());
            let approval = Approval {
                unattended: args.auto_approve,
                allow_disruption: args.allow_disruption,
                go_ahead: hints::SAME_COMMAND_ALLOWING.to_owned(),
            };
            let approval = run.confirm_and_execute(&planned.plan, &approval, &stopped);
            let Some(report) = approval.await? else {
                return Ok(ExitStatus::Declined);
            };
            Some(report)
        } else {
            None
        };
        let status = run
            .finish(
                report,
                &planned.plan,
                &working,
                &planned.unread,
                settled.resumed,
            )
            .await?;
        workflow::fully_read(&planned.plan.unreadable_locations)?;
        Ok(status)
    })
    .await
}

/// Applies a saved plan to the directory it records, loading the configuration with exactly
/// the recorded variable values (whatever the environment says now), so that the digest
/// compares like with like.
async fn apply_saved_plan(
    args: &Apply,
    path: &Path,
    chdir: Option<&Path>,
    view: &dyn RunView,
) -> Result<ExitStatus, CliError> {
    let mut plan = clusterform_planner::load_plan(path)?;
    // Owned: the plan itself changes when an idle destroy's evidence is read again.
    let directory = plan.directory.clone();
    let dir = directory.as_path();
    check_chdir(chdir, dir)?;
    if !dir.is_dir() {
        return Err(CliError::PlanDirectoryGone(directory.clone()));
    }
    let inputs = VariableInputs {
        saved: plan.variables.clone(),
        ..VariableInputs::default()
    };
    let config = context::load_config(dir, inputs, view).await?;
    if config.digest != plan.config_digest {
        return Err(CliError::ConfigChanged {
            directory: directory.clone(),
            files: plan.changed_files(&config.file_digests),
            planned: short(&plan.config_digest),
            current: short(&config.digest),
        });
    }
    let endpoint = args.endpoint.as_ref();
    check_endpoint(&plan, endpoint, &config)?;
    let request = lock_request(args, dir);
    workflow::locked(config, request, view, async |config| {
        let run = Run::connect(config, dir, endpoint, args.parallelism, view).await?;
        let live = workflow::refresh_live(run.client(), run.config(), &*view).await?;
        let stale = clusterform_planner::stale_clusters(&plan, &live);
        if !stale.is_empty() {
            return Err(CliError::StalePlan(
                stale.iter().map(ToString::to_string).collect(),
            ));
        }
        let mismatches = clusterform_planner::saved_plan_mismatches(&plan, run.config(), &live);
        if !mismatches.is_empty() {
            return Err(CliError::SavedPlanMismatch(
                mismatches.iter().map(ToString::to_string).collect(),
            ));
        }
        let working = workflow::still_working(&plan, &live);
        view.saved_plan(&plan);
        let preflight = run
            .preflight(
                &plan,
                run.preflight_reads(false),
                args.planning.skip_preflight,
            )
            .await;
        run.tell_preflight(&preflight)?;
        // The idle evidence is read again; the clusters no longer idle drop out of the plan.
        if plan.flags.idle_for.is_some() {
            run.recheck_idle(&mut plan, &live, Recheck::SavedPlan)
                .await?;
            if !plan.has_changes() {
                view.tell(&Note::NoneLeftIdle(Recheck::SavedPlan));
            }
        }
        let report = if plan.has_changes() {
            // The plan file keeps no jobs: what runs now is what counts. (An idle destroy's
            // clusters were just found idle again.)
            let stopped = if plan.flags.idle_for.is_some() {
                Vec::new()
            } else {
                let jobs = run.running_jobs_of(&plan, &live).await;
                clusterform_planner::stopped_work(&plan, &jobs, &live)
            };
            let approval = Approval {
                unattended: true,
                allow_disruption: args.allow_disruption,
                go_ahead: format!(
                    "run `clusterform apply --allow-disruption {}`",
                    path.display()
                ),
            };
            run.guard_unattended(&approval, &stopped)?;
            Some(run.execute(&plan).await)
        } else {
            None
        };
        // A saved plan settles no earlier run (its staleness check stands for that): nothing
        // was resumed.
        let status = run
            .finish(report, &plan, &working, &[], Counts::default())
            .await?;
        // What the plan could not read was left alone when it was made, and still is.
        workflow::fully_read(&plan.unreadable_locations)?;
        Ok(status)
    })
    .await
}

/// A saved plan applies only against the endpoint its live clusters were read from (plans that
/// did not record it are not checked).
fn check_endpoint(
    plan: &Plan,
    endpoint: Option<&Endpoint>,
    config: &Config,
) -> Result<(), CliError> {
    let current = context::plan_endpoint(endpoint, Some(&config.provider));
    match &plan.endpoint {
        Some(planned) if *planned != current => Err(CliError::PlanEndpointChanged {
            planned: clusterform_executor::redact_endpoint(&planned.to_string()),
            current: clusterform_executor::redact_endpoint(&current.to_string()),
        }),
        _ => Ok(()),
    }
}

/// `--chdir` with a saved plan may only name the directory the plan records.
fn check_chdir(chdir: Option<&Path>, recorded: &Path) -> Result<(), CliError> {
    let Some(chdir) = chdir else {
        return Ok(());
    };
    if std::fs::canonicalize(chdir).is_ok_and(|given| given == recorded) {
        return Ok(());
    }
    Err(CliError::Usage(format!(
        "the saved plan was made in {}, not in {}: a saved plan applies to the directory it was made in; drop --chdir",
        recorded.display(),
        chdir.display()
    )))
}

fn short(digest: &str) -> String {
    digest.chars().take(12).collect()
}
