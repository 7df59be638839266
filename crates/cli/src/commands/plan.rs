//! `clusterform plan`: validate, refresh the live clusters, plan (with `--destroy`, the deletions
//! `destroy` would make), look up the Slurm jobs that disruptive changes would hit, render;
//! optionally save, with the absolute configuration directory so that `apply FILE` works from
//! anywhere.
//!
//! The configuration loads on a blocking thread, and only a configuration known valid is
//! connected for: an invalid one sends no request and looks up no credential. Planning then
//! starts with the first List page: each declared cluster is planned, on a blocking thread, as
//! soon as the page that holds it arrives, and only the rest is left for after the last page.

use std::path::{Path, PathBuf};

use clusterform_config::Config;
use clusterform_executor::{ExecError, ListPrefetch, LivePages, PagePosition};
use clusterform_model::{ClusterName, LiveCluster, RunningJobs};
use clusterform_planner::{ClusterChange, Plan, PlanBuilder, PlanOptions};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::arguments::{Plan as PlanCommand, Planning};
use crate::commands::ExitStatus;
use crate::commands::apply::open_journal;
use crate::context::{self, Connection};
use crate::error::CliError;
use crate::printer::Printer;

/// Everything a command needs after planning.
#[derive(Debug)]
pub struct Planned {
    /// The configuration the plan was made from.
    pub config: Config,
    /// The connection used to refresh (and to apply).
    pub connection: Connection,
    /// The live clusters the plan was made from, as the List pages held them.
    pub live: LivePages,
    /// The plan.
    pub plan: Plan,
}

/// Plans and prints the plan (text or JSON), saving it with `--out`.
pub async fn run(args: &PlanCommand, printer: &Printer) -> Result<ExitStatus, CliError> {
    let endpoint = args.endpoint.as_deref();
    let mut planned = prepare(endpoint, &args.dir, &args.planning, args.destroy, printer).await?;
    add_running_jobs(&mut planned).await;
    if args.json {
        let json = clusterform_planner::plan_document(&planned.plan);
        printer.result(&serde_json::to_string_pretty(&json).unwrap_or_default());
    } else {
        printer.result(&clusterform::views::plan_text::render_text(
            &planned.plan,
            printer.color(),
        ));
    }
    if let Some(out) = &args.out {
        clusterform_planner::save_plan(&without_running_jobs(&planned.plan), out)?;
        printer.info(&format!(
            "\nSaved the plan to {}. To perform exactly these actions, run:\n  clusterform apply {}",
            out.display(),
            out.display()
        ));
    }
    let status = if args.detailed_exitcode && planned.plan.has_changes() {
        ExitStatus::Changes
    } else {
        ExitStatus::Success
    };
    leave_to_exit(planned);
    Ok(status)
}

/// Drops the connection as usual (its `Drop` releases the built-in emulator's state-file lock)
/// but not the configuration, the live clusters and the plan: the process exits next, and
/// freeing tens of thousands of small allocations only gives memory back to a process about
/// to end (about 40 ms at 10,000 clusters).
fn leave_to_exit(planned: Planned) {
    let Planned {
        config,
        connection,
        live,
        plan,
    } = planned;
    drop(connection);
    std::mem::forget((config, live, plan));
}

/// Terraform's warning for `-target`, in our words: a partial plan is for exceptional cases.
const TARGETING_IN_EFFECT: &str = "targeting is in effect: this plan considers only the --target \
clusters, so it may not show every change the configuration asks for (nor every deletion). Use \
--target to recover from mistakes or errors, not as part of a routine workflow.";

/// Loads the configuration, then connects, reports journal entries, refreshes and plans.
/// Nothing leaves the machine, no credential is looked up, before the whole configuration is
/// known valid: an invalid configuration sends no request.
pub async fn prepare(
    endpoint: Option<&str>,
    dir: &Path,
    planning: &Planning,
    destroy: bool,
    printer: &Printer,
) -> Result<Planned, CliError> {
    let inputs = context::variable_inputs(&planning.variables)?;
    let load_dir = dir.to_path_buf();
    // The decode takes every core for a large configuration: off the runtime's threads.
    let loaded = tokio::task::spawn_blocking(move || context::load_located(&load_dir, inputs))
        .await
        .unwrap_or_else(|ended| std::panic::resume_unwind(ended.into_panic()))?;
    let config = loaded.print_warnings(printer);
    prepare_loaded(config, endpoint, dir, planning, destroy, printer).await
}

/// [`prepare`] with the configuration already loaded (to take the stack lock it names first).
pub async fn prepare_loaded(
    config: Config,
    endpoint: Option<&str>,
    dir: &Path,
    planning: &Planning,
    destroy: bool,
    printer: &Printer,
) -> Result<Planned, CliError> {
    let connection = context::connect(endpoint, Some(&config.provider), dir, printer).await?;
    plan_live(config, connection, dir, planning, destroy, printer).await
}

/// Plans again, after the live clusters changed, with the same configuration and connection
/// (a second connection to the local emulator would find its state file locked by the first).
pub async fn replan(
    planned: Planned,
    dir: &Path,
    planning: &Planning,
    destroy: bool,
    printer: &Printer,
) -> Result<Planned, CliError> {
    let Planned {
        config, connection, ..
    } = planned;
    plan_live(config, connection, dir, planning, destroy, printer).await
}

/// Reports journal entries, refreshes and plans.
async fn plan_live(
    config: Config,
    connection: Connection,
    dir: &Path,
    planning: &Planning,
    destroy: bool,
    printer: &Printer,
) -> Result<Planned, CliError> {
    for warning in journal_warnings(dir, &connection).await? {
        printer.warn(&warning);
    }
    plan_refreshed(config, connection, dir, planning, destroy, printer).await
}

/// Refreshes and plans, planning each declared cluster as soon as the List page that holds it
/// arrives.
async fn plan_refreshed(
    config: Config,
    connection: Connection,
    dir: &Path,
    planning: &Planning,
    destroy: bool,
    printer: &Printer,
) -> Result<Planned, CliError> {
    let targets = target_names(&config, &planning.targets)?;
    let locations = config.locations();
    let options = PlanOptions {
        targets: planning.targets.clone(),
        replace: planning.replace.clone(),
        update_mode: planning.update_mode,
        destroy,
    };
    let targeted = !options.targets.is_empty();
    let planner = PagePlanner::start(config, options);
    let refreshed = clusterform_executor::refresh_paged(
        &connection.client,
        &locations,
        &targets,
        ListPrefetch::default(),
        |position, page| planner.add(position, page),
    )
    .await;
    let (config, planned) = planner.finish(refreshed).await;
    let (live, mut plan) = planned?;
    plan.directory = absolute_directory(dir)?;
    plan.endpoint = Some(connection.endpoint.clone());
    if targeted {
        printer.warn(TARGETING_IN_EFFECT);
    }
    Ok(Planned {
        config,
        connection,
        live,
        plan,
    })
}

/// The live clusters and their plan, or why there is none.
type LivePlan = Result<(LivePages, Plan), CliError>;

/// A [`PlanBuilder`] on a blocking thread (planning is CPU work, on every core), handed the List
/// pages as they arrive (it keeps them, and puts the whole live set together from them) and
/// finished once the refresh says whether every page came.
struct PagePlanner {
    pages: mpsc::UnboundedSender<(PagePosition, Vec<LiveCluster>)>,
    whole: oneshot::Sender<Result<(), ExecError>>,
    thread: JoinHandle<(Config, LivePlan)>,
}

impl PagePlanner {
    fn start(config: Config, options: PlanOptions) -> Self {
        let (pages, mut pages_in) = mpsc::unbounded_channel::<(PagePosition, Vec<LiveCluster>)>();
        let (whole, whole_in) = oneshot::channel::<Result<(), ExecError>>();
        let thread = tokio::task::spawn_blocking(move || {
            let mut builder = PlanBuilder::new(&config, &options);
            let mut live = LivePages::default();
            while let Some((position, page)) = pages_in.blocking_recv() {
                builder.add_live(&page);
                live.add(position, page);
            }
            let planned = match whole_in.blocking_recv() {
                Ok(Ok(())) => builder
                    .finish(live.iter())
                    .map(|plan| (live, plan))
                    .map_err(CliError::from),
                Ok(Err(error)) => Err(error.into()),
                // The command stopped waiting for the plan: nobody reads this.
                Err(_) => Err(CliError::Interrupted),
            };
            (config, planned)
        });
        Self {
            pages,
            whole,
            thread,
        }
    }

    /// Hands one page's live clusters, found at `position`, to the planner.
    fn add(&self, position: PagePosition, page: Vec<LiveCluster>) {
        // The planner takes pages until the refresh's end is given.
        let _ = self.pages.send((position, page));
    }

    /// Waits for the plan of the pages handed over, once `refreshed` says that they are the
    /// whole live set (or gives the refresh's error), with the configuration back.
    async fn finish(self, refreshed: Result<(), ExecError>) -> (Config, LivePlan) {
        drop(self.pages);
        // The planner waits for this message before it ends: it is always received.
        let _ = self.whole.send(refreshed);
        // A blocking task cannot be cancelled, so it ended by panicking: the panic goes on.
        self.thread
            .await
            .unwrap_or_else(|ended| std::panic::resume_unwind(ended.into_panic()))
    }
}

/// The configuration directory as a saved plan records it: absolute, symbolic links resolved,
/// so that `apply FILE` finds it from any working directory and can compare `--chdir` with it.
pub fn absolute_directory(dir: &Path) -> Result<PathBuf, CliError> {
    std::fs::canonicalize(dir).map_err(|source| CliError::Io {
        action: "could not resolve the configuration directory",
        path: dir.to_path_buf(),
        source,
    })
}

/// Records, under every disruptive change, the Slurm jobs active on its cluster right now: one
/// look per cluster, all at once, none for harmless changes. A Slurm that cannot be asked gives
/// "unknown", never an error: the jobs only inform the user. Each command asks once, for the
/// plan it shows (not for one it replaces after settling earlier runs; `destroy --idle-for`
/// takes them from its own look at Slurm instead).
pub async fn add_running_jobs(planned: &mut Planned) {
    let (plan, client) = (&mut planned.plan, &planned.connection.client);
    let disruptive: Vec<&mut ClusterChange> = plan
        .changes
        .iter_mut()
        .filter(|change| change.is_disruptive())
        .collect();
    let names: Vec<Result<ClusterName, String>> = disruptive
        .iter()
        .map(|change| {
            let address = &change.address;
            ClusterName::new(&address.project, &address.location, &address.cluster_id)
                .map_err(|err| err.to_string())
        })
        .collect();
    let valid: Vec<ClusterName> = names.iter().filter_map(|n| n.clone().ok()).collect();
    let mut found = clusterform_executor::running_jobs(client, &valid)
        .await
        .into_iter();
    for (change, name) in disruptive.into_iter().zip(names) {
        change.running_jobs = match name {
            Ok(_) => found.next(),
            Err(reason) => Some(RunningJobs::Unknown { reason }),
        };
    }
}

/// A plan file records what will be done; the jobs seen while planning would be stale in it.
fn without_running_jobs(plan: &Plan) -> Plan {
    let mut saved = plan.clone();
    for change in &mut saved.changes {
        change.running_jobs = None;
    }
    saved
}

/// What to tell the user about operations an earlier run left in flight.
async fn journal_warnings(dir: &Path, connection: &Connection) -> Result<Vec<String>, CliError> {
    let journal = open_journal(dir, connection.remote_journal()).await?;
    let mut warnings = Vec::new();
    for entry in journal.entries() {
        warnings.push(format!(
            "an earlier run left operation {} ({} {}) in flight; `clusterform apply` waits for it before changing anything",
            entry.operation,
            clusterform::views::actions::verb(entry.action),
            entry.address.cluster_id
        ));
    }
    for unusable in journal.unusable() {
        let cluster = unusable.address.as_ref().map_or_else(
            || "an unknown cluster".to_owned(),
            |a| format!("cluster {}", a.cluster_id),
        );
        warnings.push(format!(
            "entry {} of {} cannot be used ({}); apply refuses to act on {cluster} until it is fixed or removed",
            unusable.entry,
            journal.location(),
            unusable.reason
        ));
    }
    Ok(warnings)
}

/// The resource names of `--target` IDs: a declared cluster's own location, else the
/// provider's.
fn target_names(config: &Config, targets: &[String]) -> Result<Vec<ClusterName>, CliError> {
    targets
        .iter()
        .map(|id| {
            let (project, region) = match config.cluster(id) {
                Some(cluster) => (cluster.project.clone(), cluster.region.clone()),
                None => (
                    config.provider.project.clone().unwrap_or_default(),
                    config.provider.region.clone().unwrap_or_default(),
                ),
            };
            ClusterName::new(&project, &region, id)
                .map_err(|err| CliError::Usage(format!("--target {id}: {err}")))
        })
        .collect()
}
