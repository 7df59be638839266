//! `clusterform apply`: plan (or read a saved plan), confirm, execute with live progress, and
//! summarise. Operations an earlier run left in flight are waited for first. A saved plan is
//! applied to the directory it records, with the variable values it records, from any working
//! directory.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use clusterform_config::{Config, VariableInputs, field_location};
use clusterform_executor::{
    ApplyEngine, ApplyReport, ExecError, Journal, ProgressSink, StorageClient, WaitOptions,
};
use clusterform_model::{Action, ClusterName, ClusterState, LiveCluster, paths};
use clusterform_planner::{ClusterChange, Plan};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::arguments::{Apply, ApplySource, Parallelism};
use crate::commands::ExitStatus;
use crate::commands::plan::{Planned, add_running_jobs, prepare_loaded, replan};
use crate::context::{self, Connection};
use crate::error::CliError;
use crate::events::{self, JsonEvents};
use crate::printer::Printer;
use crate::progress::ApplyProgress;
use crate::prompt;
use crate::stack_lock::{self, LockRequest};
use clusterform::views::actions;
use clusterform::views::names::ClusterNames;

/// Applies a configuration directory or a saved plan file.
pub async fn run(args: &Apply, printer: &Printer) -> Result<ExitStatus, CliError> {
    events::reported(args.json, printer, async |printer, events| {
        match &args.source {
            ApplySource::SavedPlan { file, dir } => {
                apply_saved_plan(args, file, dir.as_deref(), printer, events).await
            }
            ApplySource::Directory(dir) => apply_directory(args, dir, printer, events).await,
        }
    })
    .await
}

/// The plan as text, or as the `planned` event of a `--json` run.
pub fn show_plan(plan: &Plan, printer: &Printer, events: Option<&Arc<JsonEvents>>) {
    match events {
        Some(events) => events.planned(plan),
        None => printer.result(&clusterform::views::plan_text::render_text(
            plan,
            printer.color(),
        )),
    }
}

async fn apply_directory(
    args: &Apply,
    dir: &Path,
    printer: &Printer,
    events: Option<&Arc<JsonEvents>>,
) -> Result<ExitStatus, CliError> {
    let endpoint = args.endpoint.as_deref();
    let config = context::load_config(dir, &args.planning.variables, printer)?;
    // The body takes the configuration; the lock only reads its provider.
    let provider = config.provider.clone();
    let request = LockRequest {
        dir,
        command: "apply",
        timeout: args.lock_timeout,
        provider: Some(&provider),
        endpoint,
    };
    stack_lock::with_lock(request, printer, async {
        apply_configuration(args, dir, config, printer, events).await
    })
    .await
}

/// [`apply_directory`] once it holds the lock.
async fn apply_configuration(
    args: &Apply,
    dir: &Path,
    config: Config,
    printer: &Printer,
    events: Option<&Arc<JsonEvents>>,
) -> Result<ExitStatus, CliError> {
    let endpoint = args.endpoint.as_deref();
    let mut planned = prepare_loaded(config, endpoint, dir, &args.planning, false, printer).await?;
    if settle_earlier_runs(&planned, dir, args.parallelism, printer, events).await? {
        planned = replan(planned, dir, &args.planning, false, printer).await?;
    }
    add_running_jobs(&mut planned).await;
    show_plan(&planned.plan, printer, events);
    let working = still_working(&planned.plan, planned.live.iter());
    if !planned.plan.has_changes() {
        let report = ApplyReport::default();
        let run = EngineParts {
            connection: &planned.connection,
            dir,
            parallelism: args.parallelism,
            written: FieldSources::of(&planned.config, &planned.plan, dir),
        };
        return finish_after_settling(report, &working, run, apply_summary, printer, events).await;
    }
    let approval = Approval {
        auto_approve: args.auto_approve,
        question: "Do you want to perform these actions?",
        cancelled: "Apply cancelled.",
        destroy: false,
    };
    match confirm_and_execute(&planned, dir, &approval, args.parallelism, printer, events).await? {
        Some(report) => {
            let run = EngineParts {
                connection: &planned.connection,
                dir,
                parallelism: args.parallelism,
                written: FieldSources::of(&planned.config, &planned.plan, dir),
            };
            finish_after_settling(report, &working, run, apply_summary, printer, events).await
        }
        None => Ok(ExitStatus::Declined),
    }
}

/// Unchanged clusters that are `PROVISIONING` or `UPDATING`: an operation no journal knows
/// (started, perhaps, by a run killed before it could journal it) is still running on them,
/// and "No changes" is only true once it has ended well.
fn still_working<'l>(
    plan: &Plan,
    live: impl IntoIterator<Item = &'l LiveCluster>,
) -> Vec<ClusterChange> {
    busy_with(plan, live, |action| action == Action::NoOp)
}

/// Clusters the plan would change (update, replace, delete, release) while an operation no
/// journal knows is still changing them: planned before that operation ends, they might get
/// the same change a second time.
fn changing_under_us<'l>(
    plan: &Plan,
    live: impl IntoIterator<Item = &'l LiveCluster>,
) -> Vec<ClusterChange> {
    busy_with(plan, live, |action| {
        !matches!(action, Action::NoOp | Action::Create)
    })
}

/// The changes whose action `selected` picks and whose live cluster is `PROVISIONING` or
/// `UPDATING`. (The busy addresses are gathered first: looking each change up in the whole
/// live set would be quadratic, 100 million comparisons for 10,000 unchanged clusters.)
fn busy_with<'l>(
    plan: &Plan,
    live: impl IntoIterator<Item = &'l LiveCluster>,
    selected: impl Fn(Action) -> bool,
) -> Vec<ClusterChange> {
    let busy: BTreeSet<&ClusterName> = live
        .into_iter()
        .filter(|cluster| {
            cluster
                .cluster
                .cluster_state()
                .is_some_and(ClusterState::is_working)
        })
        .map(|cluster| &cluster.address)
        .collect();
    plan.changes
        .iter()
        .filter(|change| selected(change.action) && busy.contains(&change.address))
        .cloned()
        .collect()
}

/// Waits for the `working` clusters to settle (unless the run was interrupted), then reports
/// them with the plan's own outcomes, summarised by `summary`.
async fn finish_after_settling(
    mut report: ApplyReport,
    working: &[ClusterChange],
    run: EngineParts<'_>,
    summary: fn(&ApplyReport) -> String,
    printer: &Printer,
    events: Option<&Arc<JsonEvents>>,
) -> Result<ExitStatus, CliError> {
    let changed = !report.outcomes.is_empty();
    if !working.is_empty() && !report.interrupted {
        printer.info("Waiting for unchanged clusters whose earlier operation is still running…");
        let engine = engine(run.connection, run.dir, run.parallelism).await?;
        let progress = progress_sink(printer, names_of(working), events);
        let settled = engine
            .await_settled(
                working,
                progress,
                interrupt_token(*printer, rerun(run.written.plan)),
            )
            .await;
        report.outcomes.extend(settled.outcomes);
        report.interrupted = settled.interrupted;
    }
    warn_of_silent_controllers(&report, run.written.plan, run.connection, printer).await;
    let written = Some(&run.written);
    match (changed, working.is_empty()) {
        (true, _) => finish(&report, &summary(&report), printer, written),
        (false, false) => finish(
            &report,
            "Apply complete! The clusters' earlier operations finished.",
            printer,
            written,
        ),
        (false, true) => Ok(ExitStatus::Success),
    }
}

/// The Slurm settings that the service validates one parameter at a time: a combination it
/// accepts may still stop slurmctld while the operation reports success (*Create cluster*,
/// "Slurm configuration maps").
const SLURM_SETTINGS: &[&str] = &[
    "orchestrator_spec.slurm_spec.config",
    "orchestrator_spec.slurm_spec.node_sets",
    "orchestrator_spec.slurm_spec.scheduling",
    "orchestrator_spec.slurm_spec.accounting",
];

/// The first Slurm setting a change sets or changes (a partition's `config` included).
fn changed_slurm_setting(change: &ClusterChange) -> Option<&str> {
    change
        .fields
        .iter()
        .map(|field| field.path.as_str())
        .find(|path| {
            SLURM_SETTINGS
                .iter()
                .any(|setting| paths::is_within(path, setting))
                || (path.starts_with("orchestrator_spec.slurm_spec.partitions[")
                    && path.contains("].config"))
        })
}

/// After creates and updates that set Slurm settings, asks each cluster's Slurm once whether
/// its controller still answers, and warns, naming the change, when it does not. The check
/// runs as soon as the operation ends; a controller that stops later (after the service's
/// 15-second Slurm sync) is not seen here (docs/commands.md).
async fn warn_of_silent_controllers(
    report: &ApplyReport,
    plan: &Plan,
    connection: &Connection,
    printer: &Printer,
) {
    let glance = connection.client.for_a_glance();
    let checks = report
        .outcomes
        .iter()
        .filter(|outcome| {
            outcome.result.is_ok() && matches!(outcome.action, Action::Create | Action::Update)
        })
        .filter_map(|outcome| {
            let change = plan.changes.iter().find(|c| c.address == outcome.address)?;
            Some((&outcome.address, changed_slurm_setting(change)?))
        });
    let silent = futures::stream::iter(checks)
        .map(|(address, setting)| {
            let glance = &glance;
            async move {
                let answer = clusterform_executor::ping(glance, address).await;
                answer.err().map(|error| (address, setting, error))
            }
        })
        .buffered(SLURM_CHECKS_AT_ONCE)
        .filter_map(std::future::ready)
        .collect::<Vec<_>>()
        .await;
    for (address, setting, error) in silent {
        printer.warn(&format!(
            "cluster {}: its Slurm controller does not answer after `{setting}` changed ({error}). \
             The service checks each Slurm parameter on its own: some accepted combinations stop \
             slurmctld (e.g. PreemptType=preempt/none with PreemptMode=SUSPEND,GANG) while the \
             operation reports success; check `sinfo` on the login node, and revert the change if \
             it fails",
            address.cluster_id
        ));
    }
}

/// Clusters whose controllers are asked at once after an apply.
const SLURM_CHECKS_AT_ONCE: usize = 10;

/// How a plan's execution is approved.
#[derive(Debug)]
pub struct Approval {
    /// `--auto-approve`: do not ask.
    pub auto_approve: bool,
    /// The question asked on the terminal.
    pub question: &'static str,
    /// What to say when the answer is not `yes`.
    pub cancelled: &'static str,
    /// A destroy: without a terminal, the hint names the saved destroy plan.
    pub destroy: bool,
}

/// Asks for approval (unless auto-approved), then executes the plan; `None` when the user
/// declined and nothing was sent.
pub async fn confirm_and_execute(
    planned: &Planned,
    dir: &Path,
    approval: &Approval,
    parallelism: Parallelism,
    printer: &Printer,
    events: Option<&Arc<JsonEvents>>,
) -> Result<Option<ApplyReport>, CliError> {
    let approved = || {
        prompt::confirm(approval.question).map_err(|err| match err {
            CliError::NoTerminalToConfirm if approval.destroy => {
                CliError::NoTerminalToConfirmDestroy
            }
            other => other,
        })
    };
    if !approval.auto_approve && !approved()? {
        printer.info(approval.cancelled);
        return Ok(None);
    }
    let report = execute(
        &planned.plan,
        &planned.connection,
        dir,
        parallelism,
        printer,
        events,
    )
    .await?;
    Ok(Some(report))
}

/// Applies a saved plan to the directory it records, loading the configuration with exactly
/// the recorded variable values (whatever the environment says now), so that the digest
/// compares like with like.
async fn apply_saved_plan(
    args: &Apply,
    path: &Path,
    chdir: Option<&Path>,
    printer: &Printer,
    events: Option<&Arc<JsonEvents>>,
) -> Result<ExitStatus, CliError> {
    let plan = clusterform_planner::load_plan(path)?;
    let dir = plan.directory.as_path();
    check_chdir(chdir, dir)?;
    let inputs = VariableInputs {
        saved: plan.variables.clone(),
        ..VariableInputs::default()
    };
    let config = context::load_config_with(dir, inputs, printer)?;
    if config.digest != plan.config_digest {
        return Err(CliError::ConfigChanged {
            planned: short(&plan.config_digest),
            current: short(&config.digest),
        });
    }
    let endpoint = args.endpoint.as_deref();
    check_endpoint(&plan, endpoint, &config)?;
    let request = LockRequest {
        dir,
        command: "apply",
        timeout: args.lock_timeout,
        provider: Some(&config.provider),
        endpoint,
    };
    stack_lock::with_lock(request, printer, async {
        apply_plan(args, &plan, dir, &config, printer, events).await
    })
    .await
}

/// A saved plan applies only against the endpoint its live clusters were read from (plans that
/// did not record it are not checked).
fn check_endpoint(plan: &Plan, endpoint: Option<&str>, config: &Config) -> Result<(), CliError> {
    let current = context::endpoint_label(endpoint, Some(&config.provider));
    match &plan.endpoint {
        Some(planned) if *planned != current => Err(CliError::PlanEndpointChanged {
            planned: planned.clone(),
            current,
        }),
        _ => Ok(()),
    }
}

/// [`apply_saved_plan`] once it holds the lock.
async fn apply_plan(
    args: &Apply,
    plan: &Plan,
    dir: &Path,
    config: &Config,
    printer: &Printer,
    events: Option<&Arc<JsonEvents>>,
) -> Result<ExitStatus, CliError> {
    let endpoint = args.endpoint.as_deref();
    let connection = context::connect(endpoint, Some(&config.provider), dir, printer).await?;
    let live = clusterform_executor::refresh(&connection.client, &config.locations(), &[]).await?;
    let stale = clusterform_planner::stale_clusters(plan, &live);
    if !stale.is_empty() {
        return Err(CliError::StalePlan(
            stale.iter().map(ToString::to_string).collect(),
        ));
    }
    let mismatches = clusterform_planner::saved_plan_mismatches(plan, config, &live);
    if !mismatches.is_empty() {
        return Err(CliError::SavedPlanMismatch(
            mismatches.iter().map(ToString::to_string).collect(),
        ));
    }
    let working = still_working(plan, &live);
    if let Some(events) = events {
        events.planned(plan);
    }
    let report = if plan.has_changes() {
        execute(plan, &connection, dir, args.parallelism, printer, events).await?
    } else {
        printer.info("The saved plan has no changes.");
        ApplyReport::default()
    };
    let summary = if plan.destroy {
        destroy_summary
    } else {
        apply_summary
    };
    let run = EngineParts {
        connection: &connection,
        dir,
        parallelism: args.parallelism,
        written: FieldSources::of(config, plan, dir),
    };
    finish_after_settling(report, &working, run, summary, printer, events).await
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

/// Runs a plan with progress (or JSON events, failures included); Ctrl-C stops waiting (the
/// journal keeps the operations), a second Ctrl-C exits at once.
pub async fn execute(
    plan: &Plan,
    connection: &Connection,
    dir: &Path,
    parallelism: Parallelism,
    printer: &Printer,
    events: Option<&Arc<JsonEvents>>,
) -> Result<ApplyReport, CliError> {
    let engine = engine(connection, dir, parallelism).await?;
    let cancel = interrupt_token(*printer, rerun(plan));
    let names = ClusterNames::for_clusters(plan.changes.iter().map(|c| &c.address));
    let progress = progress_sink(printer, names, events);
    Ok(engine.apply(plan, progress, cancel).await)
}

/// Waits for the operations an earlier run left in the journal, and for clusters the plan would
/// change while an operation no journal knows is still changing them, before anything new is
/// sent; `true` when there were some (the live clusters may have changed since `planned` was
/// made, so the caller plans again).
pub async fn settle_earlier_runs(
    planned: &Planned,
    dir: &Path,
    parallelism: Parallelism,
    printer: &Printer,
    events: Option<&Arc<JsonEvents>>,
) -> Result<bool, CliError> {
    let journaled = !open_journal(dir, planned.connection.remote_journal())
        .await?
        .entries()
        .is_empty();
    if journaled {
        let resumed = resume(
            &planned.connection,
            dir,
            rerun(&planned.plan),
            parallelism,
            printer,
            events,
        )
        .await?;
        finish(&resumed, "Earlier operations finished.", printer, None)?;
    }
    let changing = changing_under_us(&planned.plan, planned.live.iter());
    if !changing.is_empty() {
        printer.info("Waiting for clusters an earlier operation is still changing, to plan them again once it ends…");
        let engine = engine(&planned.connection, dir, parallelism).await?;
        let progress = progress_sink(printer, names_of(&changing), events);
        let settled = engine
            .await_settled(
                &changing,
                progress,
                interrupt_token(*printer, rerun(&planned.plan)),
            )
            .await;
        // A cluster that ended badly shows in the new plan (a broken one is replaced); only an
        // interrupt stops here.
        if settled.interrupted {
            return Err(CliError::Interrupted);
        }
    }
    Ok(journaled || !changing.is_empty())
}

async fn resume(
    connection: &Connection,
    dir: &Path,
    command: &'static str,
    parallelism: Parallelism,
    printer: &Printer,
    events: Option<&Arc<JsonEvents>>,
) -> Result<ApplyReport, CliError> {
    printer.info("Waiting for operations started by an earlier run…");
    let engine = engine(connection, dir, parallelism).await?;
    let cancel = interrupt_token(*printer, command);
    let journaled: Vec<ClusterName> = engine
        .journal()
        .entries()
        .into_iter()
        .map(|entry| entry.address)
        .collect();
    let progress = progress_sink(printer, ClusterNames::for_clusters(&journaled), events);
    Ok(engine.resume(progress, cancel).await)
}

/// Where progress goes: the `--json` events, or the display that names clusters by `names`.
fn progress_sink(
    printer: &Printer,
    names: ClusterNames,
    events: Option<&Arc<JsonEvents>>,
) -> Arc<dyn ProgressSink> {
    match events {
        Some(events) => events.clone(),
        None => Arc::new(ApplyProgress::new(*printer, names)),
    }
}

/// How progress names the clusters of these changes.
fn names_of(changes: &[ClusterChange]) -> ClusterNames {
    ClusterNames::for_clusters(changes.iter().map(|c| &c.address))
}

/// How long one `:wait` call blocks: short enough that every cluster's line shows its state
/// and progress message every few seconds, long enough to cost one call per cluster per interval.
const PROGRESS_INTERVAL: Duration = Duration::from_secs(5);

/// The journal of a run: the Cloud Storage object `remote` names (a client on its bucket and
/// the object, `{prefix}/{stack}.journal.json`) when the configuration keeps the journal there,
/// else `.clusterform/journal.json` in `dir`.
pub async fn open_journal(
    dir: &Path,
    remote: Option<(StorageClient, String)>,
) -> Result<Journal, CliError> {
    Ok(match remote {
        Some((client, object)) => Journal::open_in_storage(client, object).await?,
        None => Journal::open(dir)?,
    })
}

/// What an apply engine is built from.
#[derive(Clone, Copy)]
struct EngineParts<'a> {
    connection: &'a Connection,
    dir: &'a Path,
    parallelism: Parallelism,
    /// Where the failures' API errors are pointed back to.
    written: FieldSources<'a>,
}

async fn engine(
    connection: &Connection,
    dir: &Path,
    parallelism: Parallelism,
) -> Result<ApplyEngine, CliError> {
    let journal = open_journal(dir, connection.remote_journal()).await?;
    let wait = WaitOptions {
        long_poll: PROGRESS_INTERVAL,
        ..WaitOptions::default()
    };
    Ok(ApplyEngine::new(
        connection.client.clone(),
        journal,
        usize::from(parallelism.global),
    )
    .with_parallelism_per_location(parallelism.per_location.map(usize::from))
    .with_wait_options(wait))
}

/// The command that, run again, waits for what an interrupted run of `plan` left running: a
/// destroy's is `destroy` (an `apply` would create its clusters again).
fn rerun(plan: &Plan) -> &'static str {
    if plan.destroy { "destroy" } else { "apply" }
}

/// A token cancelled by the first Ctrl-C (saying that `command` resumes); the second exits the
/// process immediately.
fn interrupt_token(printer: Printer, command: &'static str) -> CancellationToken {
    let cancel = CancellationToken::new();
    let token = cancel.clone();
    stack_lock::interrupts_handled_by_command();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_err() {
            return;
        }
        printer.interrupted(command);
        token.cancel();
        if tokio::signal::ctrl_c().await.is_ok() {
            std::process::exit(130);
        }
    });
    cancel
}

/// What a failure's field violations are pointed back to: the configuration the plan was made
/// from, its directory, and the plan whose requests the violations' indexes count in.
#[derive(Clone, Copy)]
pub struct FieldSources<'a> {
    config: &'a Config,
    plan: &'a Plan,
    dir: &'a Path,
}

impl<'a> FieldSources<'a> {
    pub fn of(config: &'a Config, plan: &'a Plan, dir: &'a Path) -> Self {
        Self { config, plan, dir }
    }

    /// One line per field violation of `error` (a `BadRequest` detail of Google's answer): the
    /// field as the configuration names it, where it is written, and why the service refused
    /// it (`node_pools[gpu].boot_disk.boot_disk_type at main.hcl:23:7: Machine type …`).
    fn violations(&self, address: &ClusterName, error: &ExecError) -> Vec<String> {
        let Some(status) = error.api_status() else {
            return Vec::new();
        };
        let body = self
            .plan
            .changes
            .iter()
            .find(|change| change.address == *address)
            .and_then(|change| change.requests.iter().rev().find_map(|r| r.body()));
        let declared = self.config.clusters.iter().find(|cluster| {
            cluster.id == address.cluster_id
                && cluster.project == address.project
                && cluster.region == address.location
        });
        status
            .field_violations()
            .into_iter()
            .map(|violation| {
                let path = body.and_then(|body| paths::of_request_field(&violation.field, body));
                let written = path
                    .as_deref()
                    .zip(declared)
                    .and_then(|(path, cluster)| field_location(self.dir, cluster, path));
                let place = match written {
                    Some(at) => format!(" at {}:{}:{}", at.file.display(), at.line, at.column),
                    None => String::new(),
                };
                let field = path.unwrap_or(violation.field);
                format!("{field}{place}: {}", violation.description)
            })
            .collect()
    }
}

/// Prints failures and the summary; maps the report to an exit status. With `written`, each
/// field an API error names is shown where the configuration writes it.
pub fn finish(
    report: &ApplyReport,
    summary: &str,
    printer: &Printer,
    written: Option<&FieldSources<'_>>,
) -> Result<ExitStatus, CliError> {
    let failed: Vec<_> = report.failed().collect();
    for outcome in &failed {
        if let Err(err) = &outcome.result
            && !matches!(err, ExecError::Cancelled)
        {
            let violations = written
                .map(|w| w.violations(&outcome.address, err))
                .unwrap_or_default();
            let reason = std::iter::once(err.to_string())
                .chain(violations)
                .collect::<Vec<_>>()
                .join("\n  ");
            printer.error(&CliError::ActionFailed {
                action: actions::noun(outcome.action),
                cluster: outcome.address.cluster_id.clone(),
                reason,
                hint: crate::hints::exec_hint(err),
            });
        }
    }
    if report.interrupted {
        return Err(CliError::Interrupted);
    }
    if !failed.is_empty() {
        return Err(CliError::ActionsFailed {
            failed: failed.len(),
            total: report.outcomes.len(),
        });
    }
    printer.success(summary);
    Ok(ExitStatus::Success)
}

/// `Apply complete! Resources: 1 added, 2 changed, 0 replaced, 0 destroyed.` (and `, 1 released`
/// when a `removed` block released a cluster).
fn apply_summary(report: &ApplyReport) -> String {
    let count = |action| {
        report
            .outcomes
            .iter()
            .filter(|o| o.action == action && o.result.is_ok())
            .count()
    };
    let released = match count(Action::Release) {
        0 => String::new(),
        n => format!(", {n} released"),
    };
    format!(
        "Apply complete! Resources: {} added, {} changed, {} replaced, {} destroyed{released}.",
        count(Action::Create),
        count(Action::Update),
        count(Action::Replace),
        count(Action::Delete)
    )
}

/// `Destroy complete! Resources: 2 destroyed.`
pub fn destroy_summary(report: &ApplyReport) -> String {
    let destroyed = report
        .outcomes
        .iter()
        .filter(|o| o.action == Action::Delete && o.result.is_ok())
        .count();
    format!("Destroy complete! Resources: {destroyed} destroyed.")
}

fn short(digest: &str) -> String {
    digest.chars().take(12).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clusterform_emulator::{Emulator, EmulatorOptions};
    use clusterform_executor::{
        ClientOptions, JournalEntry, JournalLocation, StaticToken, TransportError,
    };
    use clusterform_model::rest::RequestKind;

    const OBJECT: &str = "clusterform/prod/research.journal.json";

    /// A 400's field violation (request-order index) is shown with the pool's id and the
    /// `file:line:col` where the configuration writes the field.
    #[test]
    fn a_field_violation_points_at_the_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let text = clusterform_testkit::hcl::seed_file("train01");
        std::fs::write(dir.path().join("main.hcl"), &text).unwrap();
        let config = clusterform_config::load(dir.path(), &VariableInputs::default())
            .unwrap()
            .config;
        let plan = clusterform_planner::plan(&config, &[], &Default::default()).unwrap();
        let address = plan.changes[0].address.clone();
        let body = plan.changes[0].requests[0].body().unwrap();
        let index = body["nodePools"]
            .as_array()
            .unwrap()
            .iter()
            .position(|pool| pool["id"] == "login")
            .unwrap();
        let field =
            format!("model_development_cluster.node_pools[{index}].boot_disk.boot_disk_type");
        let error = ExecError::Transport(TransportError::Api {
            status: Box::new(clusterform_model::Status {
                code: 400,
                message: format!("List of found errors:\t1.Field: {field}; Message: no\t"),
                status: Some("INVALID_ARGUMENT".into()),
                details: vec![serde_json::json!({
                    "@type": "type.googleapis.com/google.rpc.BadRequest",
                    "fieldViolations": [{"field": field, "description": "not on this machine"}]
                })],
            }),
            method: "POST".into(),
            url: "https://x".into(),
        });
        let lines = FieldSources::of(&config, &plan, dir.path()).violations(&address, &error);
        let line = text
            .lines()
            .position(|l| l.contains("boot_disk_type"))
            .unwrap()
            + 1;
        assert_eq!(lines.len(), 1, "{lines:?}");
        let expected = format!("node_pools[login].boot_disk.boot_disk_type at main.hcl:{line}:");
        assert!(lines[0].starts_with(&expected), "{lines:?}");
        assert!(lines[0].ends_with(": not on this machine"), "{lines:?}");
    }

    #[tokio::test]
    async fn the_journal_is_the_object_when_one_is_given_else_the_local_file() {
        let emulator = Emulator::new(EmulatorOptions {
            buckets: vec!["team-infra".to_owned()],
            ..EmulatorOptions::default()
        })
        .unwrap();
        let handle = emulator
            .clone()
            .serve("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let client = StorageClient::new(
            "team-infra",
            ClientOptions {
                endpoint: Some(handle.base_url()),
                ..ClientOptions::default()
            },
            Arc::new(StaticToken::new("token")),
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();

        let remote = open_journal(dir.path(), Some((client.clone(), OBJECT.to_owned())))
            .await
            .unwrap();
        remote
            .record(JournalEntry {
                address: ClusterName {
                    project: "proj-one".into(),
                    location: "us-central1".into(),
                    cluster_id: "train01".into(),
                },
                action: Action::Create,
                request: RequestKind::Create,
                operation: "projects/1/locations/us-central1/operations/7".into(),
                started_at: "2026-11-10T12:00:00Z".into(),
                timeout_seconds: 60,
            })
            .await
            .unwrap();
        assert!(emulator.object("team-infra", OBJECT).is_some());
        let reopened = open_journal(dir.path(), Some((client, OBJECT.to_owned())))
            .await
            .unwrap();
        assert_eq!(reopened.entries().len(), 1);

        let local = open_journal(dir.path(), None).await.unwrap();
        assert!(local.is_empty());
        assert_eq!(
            local.location(),
            &JournalLocation::File(Journal::path_in(dir.path()))
        );
    }
}
