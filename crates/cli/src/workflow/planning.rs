//! Planning: warn about what earlier runs left in flight, refresh the live clusters and plan
//! them, each declared cluster as soon as the List page that holds it arrives; then look up the
//! Slurm jobs the plan's disruptive changes would hit.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clusterform_config::Config;
use clusterform_executor::{ExecError, LivePages, PagePosition};
use clusterform_model::{ClusterName, JobsByCluster, LiveCluster, Location};
use clusterform_planner::{Plan, PlanBuilder, PlanOptions};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::Run;
use crate::command_views::PlanView;
use crate::error::CliError;

/// A plan and the live clusters it was made from.
#[derive(Debug)]
pub struct Planned {
    /// The live clusters, as the List pages held them.
    pub live: LivePages,
    /// The plan.
    pub plan: Plan,
}

/// Terraform's warning for `-target`, in our words: a partial plan is for exceptional cases.
const TARGETING_IN_EFFECT: &str = "targeting is in effect: this plan considers only the --target \
clusters, so it may not show every change the configuration asks for (nor every deletion). Use \
--target to recover from mistakes or errors, not as part of a routine workflow.";

impl<V: PlanView + ?Sized> Run<'_, V> {
    /// Warns about the journal's entries, refreshes and plans.
    pub async fn plan(&self, options: &PlanOptions) -> Result<Planned, CliError> {
        for warning in self.journal_warnings() {
            self.view.printer().warn(&warning);
        }
        let targets = target_names(&self.config, &options.targets)?;
        let planner = PagePlanner::start(self.config.clone(), options.clone());
        let refreshed = clusterform_executor::refresh_paged(
            &self.connection.client,
            &refreshed_locations(&self.config),
            &targets,
            |position, page| planner.add(position, page),
        )
        .await;
        let (live, mut plan) = planner.finish(refreshed).await?;
        plan.directory = absolute_directory(&self.dir)?;
        plan.endpoint = Some(self.connection.endpoint.clone());
        if !options.targets.is_empty() {
            self.view.printer().warn(TARGETING_IN_EFFECT);
        }
        Ok(Planned { live, plan })
    }

    /// The Slurm jobs active right now on the cluster of every disruptive change: one look per
    /// cluster, all at once, none for harmless changes. A Slurm that cannot be asked gives
    /// "unknown", never an error: the jobs only inform the user. Each command asks once, for
    /// the plan it shows.
    pub async fn running_jobs(&self, plan: &Plan) -> JobsByCluster {
        let disruptive: Vec<ClusterName> = plan
            .changes
            .iter()
            .filter(|change| change.is_disruptive())
            .map(|change| change.address.clone())
            .collect();
        let found = clusterform_executor::running_jobs(&self.connection.client, &disruptive).await;
        disruptive.into_iter().zip(found).collect()
    }

    /// What to tell the user about operations an earlier run left in flight.
    fn journal_warnings(&self) -> Vec<String> {
        let journal = self.engine.journal();
        let mut warnings = Vec::new();
        for entry in journal.entries() {
            // A first create in flight is any create; later places of a chain say so.
            let later_in_chain = entry.attempt.is_some_and(|attempt| {
                attempt > 0 || entry.request == clusterform_model::rest::RequestKind::Delete
            });
            if let Some(attempt) = entry.attempt.filter(|_| later_in_chain) {
                warnings.push(format!(
                    "an earlier run left {}'s fallback chain at attempt {} (operation {}); `clusterform apply` waits for it and, if it found no machines, goes on with the next alternative",
                    entry.address.id(),
                    attempt + 1,
                    entry.operation,
                ));
                continue;
            }
            warnings.push(format!(
                "an earlier run left operation {} ({} {}) in flight; `clusterform apply` and `destroy` wait for it before changing anything",
                entry.operation,
                clusterform::views::actions::verb(entry.action),
                entry.address.id()
            ));
        }
        for unusable in journal.unusable() {
            let cluster = unusable.address.as_ref().map_or_else(
                || "an unknown cluster".to_owned(),
                |a| format!("cluster {}", a.id()),
            );
            warnings.push(format!(
                "entry {} of {} cannot be used ({}); apply refuses to act on {cluster} until it is fixed or removed",
                unusable.entry,
                journal.location(),
                unusable.reason
            ));
        }
        warnings
    }
}

/// The live clusters and their plan, or why there is none.
type LivePlan = Result<(LivePages, Plan), CliError>;

/// A [`PlanBuilder`] on a blocking thread (planning is CPU work, on every core), handed the List
/// pages as they arrive (it keeps them, and puts the whole live set together from them) and
/// finished once the refresh says whether every page came.
struct PagePlanner {
    pages: mpsc::UnboundedSender<(PagePosition, Vec<LiveCluster>)>,
    whole: oneshot::Sender<Result<(), ExecError>>,
    thread: JoinHandle<LivePlan>,
}

impl PagePlanner {
    fn start(config: Arc<Config>, options: PlanOptions) -> Self {
        let (pages, mut pages_in) = mpsc::unbounded_channel::<(PagePosition, Vec<LiveCluster>)>();
        let (whole, whole_in) = oneshot::channel::<Result<(), ExecError>>();
        let thread = tokio::task::spawn_blocking(move || {
            let mut builder = PlanBuilder::new(&config, &options);
            let mut live = LivePages::default();
            while let Some((position, page)) = pages_in.blocking_recv() {
                builder.add_live(&page);
                live.add(position, page);
            }
            match whole_in.blocking_recv() {
                Ok(Ok(())) => builder
                    .finish(live.iter())
                    .map(|plan| (live, plan))
                    .map_err(CliError::from),
                Ok(Err(error)) => Err(error.into()),
                // The command stopped waiting for the plan: nobody reads this.
                Err(_) => Err(CliError::Interrupted),
            }
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
    /// whole live set (or gives the refresh's error).
    async fn finish(self, refreshed: Result<(), ExecError>) -> LivePlan {
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
fn absolute_directory(dir: &Path) -> Result<PathBuf, CliError> {
    std::fs::canonicalize(dir).map_err(|source| CliError::Io {
        action: "could not resolve the configuration directory",
        path: dir.to_path_buf(),
        source,
    })
}

/// The locations whose clusters a run lists (without `--target`): every command that looks at
/// the stack's clusters (`plan`, `apply`, `destroy`, `status`) lists these, so that all of them
/// see the same clusters of the stack.
pub fn refreshed_locations(config: &Config) -> BTreeSet<Location> {
    config.locations()
}

/// The resource names of `--target` IDs: a declared cluster's own location, else the
/// provider's.
pub fn target_names(config: &Config, targets: &[String]) -> Result<Vec<ClusterName>, CliError> {
    targets
        .iter()
        .map(|id| {
            if let Some(cluster) = config.cluster(id) {
                return Ok(cluster.name.clone());
            }
            let provider = &config.provider;
            ClusterName::new(
                provider.project.as_deref().unwrap_or_default(),
                provider.region.as_deref().unwrap_or_default(),
                id,
            )
            .map_err(|err| CliError::Usage(format!("--target {id}: {err}")))
        })
        .collect()
}
