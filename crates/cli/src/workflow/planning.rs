//! Planning: warn about what earlier runs left in flight, refresh the live clusters and plan
//! them, each declared cluster as soon as the List page that holds it arrives; then look up the
//! Slurm jobs the plan's disruptive changes would hit.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clusterform_config::Config;
use clusterform_executor::{ApiClient, ExecError, LivePages, Mark, PagePosition};
use clusterform_model::{Action, ClusterName};
use clusterform_model::{JobsByCluster, LiveCluster, Location, RunningJobs};
use clusterform_planner::{
    AppliedDigests, IdleDeletion, Plan, PlanBuilder, PlanOptions, Unmatched, UnmatchedRemoved,
    unmatched_removed,
};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::Run;
use super::unread::{KnownClusters, fully_read, report_unread};
use crate::command_views::PlanView;
use crate::error::CliError;
use crate::printer::Printer;

/// A plan and the live clusters it was made from.
#[derive(Debug)]
pub struct Planned {
    /// The live clusters, as the List pages held them.
    pub live: LivePages,
    /// The plan.
    pub plan: Plan,
    /// The locations whose List was refused, which the configuration does not name: clusters
    /// of the stack there, if any, are not in the plan.
    pub unread: Vec<Location>,
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
        // A target whose location is unknown (neither declared nor released) is looked for
        // everywhere, as without targets; the planner keeps only the targets.
        let targets = target_names(&self.config, &options.targets)?.unwrap_or_default();
        let planner = PagePlanner::start(self.config.clone(), options.clone(), self.applied());
        let journaled = || {
            self.engine
                .journal()
                .entries()
                .into_iter()
                .map(|entry| entry.address)
        };
        let record = self.engine.applied_record();
        let refreshed = clusterform_executor::refresh_paged(
            &self.connection.client,
            &super::scanned_locations(&self.config, record, journaled()),
            &targets,
            |position, page| planner.add(position, page),
        )
        .await;
        let known = KnownClusters::of(&self.config, record, journaled());
        let unreadable = refreshed
            .as_ref()
            .map_or_else(|_| Vec::new(), |refused| known.unread(refused));
        let unread: Vec<Location> = unreadable.iter().map(|u| u.location.clone()).collect();
        let (live, mut plan) = planner.finish(refreshed.map(|_| unread.clone())).await?;
        report_unread(self.view.printer(), &unreadable);
        let removed_unmatched = unmatched_removed(&self.config, live.iter(), options)
            .into_iter()
            .filter(|unmatched| !unread.contains(unmatched.block.name.location()));
        for unmatched in removed_unmatched {
            self.view
                .printer()
                .warn(&unmatched_removed_warning(&unmatched, &self.config, &plan));
        }
        plan.unreadable_locations = unreadable;
        plan.directory = absolute_directory(&self.dir)?;
        plan.endpoint = Some(self.connection.endpoint.clone());
        if !options.targets.is_empty() {
            self.view.printer().warn(TARGETING_IN_EFFECT);
        }
        Ok(Planned { live, plan, unread })
    }

    /// The Slurm jobs active right now on the cluster of every disruptive change, each with
    /// the node pools its partitions use in the live cluster: one look per cluster, all at
    /// once, none for harmless changes. A Slurm that cannot be asked gives "unknown", never an
    /// error: the disruption guard counts it as possibly running jobs. Each command asks once,
    /// for the plan it shows (and `apply FILE` once, when it applies).
    pub async fn running_jobs(&self, planned: &Planned) -> JobsByCluster {
        self.running_jobs_of(&planned.plan, planned.live.iter())
            .await
    }

    /// [`Run::running_jobs`] of `plan`, made from the live clusters `live`.
    pub async fn running_jobs_of<'l>(
        &self,
        plan: &Plan,
        live: impl IntoIterator<Item = &'l LiveCluster>,
    ) -> JobsByCluster {
        let disruptive: Vec<ClusterName> = plan
            .changes
            .iter()
            .filter(|change| change.is_disruptive())
            .map(|change| change.address.clone())
            .collect();
        let found = clusterform_executor::running_jobs(&self.connection.client, &disruptive).await;
        let mut jobs: JobsByCluster = disruptive.into_iter().zip(found).collect();
        for live in live {
            if let Some(RunningJobs::Known { jobs }) = jobs.get_mut(&live.address) {
                for job in jobs {
                    job.pools = job
                        .partition
                        .as_deref()
                        .map(|partition| live.cluster.pools_of_partitions(partition))
                        .unwrap_or_default();
                }
            }
        }
        jobs
    }

    /// What the applied record and the journal say of earlier runs: the digests that word the
    /// plan's drift (the declared cluster's, and each field's), the clusters a create of ours left failed (marked so in the record, or
    /// whose create the journal still holds), which a plan replaces while they are in ERROR,
    /// and the clusters `destroy --idle-for` deleted. A record that could not be read words
    /// nothing and taints nothing; `-v` says why.
    fn applied(&self) -> AppliedDigests {
        let journal_creates = self
            .engine
            .journal()
            .entries()
            .into_iter()
            .filter(|entry| entry.request == clusterform_model::rest::RequestKind::Create)
            .map(|entry| entry.address);
        let Some(record) = self.engine.applied_record() else {
            return AppliedDigests::default().with_tainted(journal_creates);
        };
        if let Some(reason) = record.unreadable() {
            tracing::debug!(
                record = %record.location(),
                reason,
                "the record of applied changes cannot be read; the plan does not say what changed outside clusterform"
            );
        }
        let entries = record.entries();
        let kept: Vec<_> = entries
            .iter()
            .map(|entry| {
                let fields = entry.field_digests.clone();
                (entry.address.clone(), entry.labels.clone(), fields)
            })
            .collect();
        let mut digests: AppliedDigests = entries
            .into_iter()
            .map(|entry| (entry.address, entry.digest))
            .collect();
        for (address, labels, fields) in kept {
            digests = digests
                .with_managed_labels(address.clone(), labels)
                .with_field_digests(address, fields);
        }
        let marks = record.marks();
        let tainted = marks
            .iter()
            .filter(|marked| matches!(marked.mark, Mark::CreateFailed { .. }))
            .map(|marked| marked.address.clone());
        let mut applied = digests.with_tainted(tainted.chain(journal_creates));
        for marked in marks {
            if let Mark::DeletedIdle {
                at,
                idle_for,
                evidence,
            } = marked.mark
            {
                let deletion = IdleDeletion {
                    deleted_at: at,
                    idle_for,
                    evidence,
                };
                applied = applied.with_idle_deletion(marked.address, deletion);
            }
        }
        applied
    }

    /// Why `plan` cannot say what changed outside clusterform on some live declared clusters
    /// of `plan`: the applied record cannot be read, or holds nothing for them (made before
    /// clusterform kept it, or by another tool). `None` when it can tell for every one.
    pub fn drift_unknown(&self, plan: &Plan) -> Option<String> {
        let Some(record) = self.engine.applied_record() else {
            return Some(
                "there is no record of applied changes: clusterform cannot tell what changed outside it".to_owned(),
            );
        };
        if let Some(reason) = record.unreadable() {
            return Some(format!(
                "the record of applied changes {} cannot be read: {reason}; clusterform cannot tell what changed outside it",
                record.location()
            ));
        }
        let unrecorded: Vec<&str> = plan
            .changes
            .iter()
            .filter(|change| {
                let live_and_declared = matches!(
                    change.action,
                    Action::Update | Action::Replace | Action::NoOp
                );
                live_and_declared && record.get(&change.address).is_none()
            })
            .map(|change| change.address.id().as_str())
            .collect();
        (!unrecorded.is_empty()).then(|| {
            format!(
                "the record of applied changes {} holds nothing for {}: clusterform cannot tell what changed outside it there (the next apply of each records it)",
                record.location(),
                unrecorded.join(", ")
            )
        })
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

/// Why a `removed` block releases nothing, and what to do about it.
fn unmatched_removed_warning(
    unmatched: &UnmatchedRemoved<'_>,
    config: &Config,
    plan: &Plan,
) -> String {
    let block = unmatched.block;
    let name = &block.name;
    let whence = format!(
        "the removed block for {} ({}:{})",
        name.id(),
        block.location.file.display(),
        block.location.line
    );
    let stack = &config.provider.stack;
    match &unmatched.why {
        Unmatched::NoCluster => format!(
            "{whence} matches no cluster in {}/{}: nothing to release. Check its ID, project and region; once a release is done the block can go",
            name.project(),
            name.region()
        ),
        Unmatched::Elsewhere { at } => format!(
            "{whence} names {}/{}, where no cluster {} lives, so it releases nothing; this stack's {} lives in {}. To release it instead, give the block that project and region",
            name.project(),
            name.region(),
            name.id(),
            name.id(),
            at.iter()
                .map(|address| fate_there(address, plan))
                .collect::<Vec<_>>()
                .join(" and ")
        ),
        Unmatched::NotOwned { stack: Some(other) } => format!(
            "{whence} names a cluster of stack \"{other}\", not of \"{stack}\": nothing to release (only the stack that owns a cluster can release it)"
        ),
        Unmatched::NotOwned { stack: None } => format!(
            "{whence} names a cluster that no stack owns (it has no clusterform-stack label): nothing to release; the block can go"
        ),
    }
}

/// `my-proj/europe-west4 (this plan destroys it there)`: where a cluster lives and what the
/// plan does to it.
fn fate_there(address: &ClusterName, plan: &Plan) -> String {
    let change = plan
        .changes
        .iter()
        .find(|change| &change.address == address);
    let fate = match change.map(|change| change.action) {
        Some(Action::Delete) => "this plan destroys it there",
        Some(Action::Replace) => "this plan replaces it there",
        Some(Action::Update) => "this plan updates it there",
        Some(Action::Create | Action::Release | Action::NoOp) | None => "this plan leaves it there",
    };
    format!("{}/{} ({fate})", address.project(), address.region())
}

/// The live clusters and their plan, or why there is none.
type LivePlan = Result<(LivePages, Plan), CliError>;

/// A [`PlanBuilder`] on a blocking thread (planning is CPU work, on every core), handed the List
/// pages as they arrive (it keeps them, and puts the whole live set together from them) and
/// finished once the refresh says whether every page came.
struct PagePlanner {
    pages: mpsc::UnboundedSender<(PagePosition, Vec<LiveCluster>)>,
    whole: oneshot::Sender<Result<Vec<Location>, ExecError>>,
    thread: JoinHandle<LivePlan>,
}

impl PagePlanner {
    fn start(config: Arc<Config>, options: PlanOptions, applied: AppliedDigests) -> Self {
        let (pages, mut pages_in) = mpsc::unbounded_channel::<(PagePosition, Vec<LiveCluster>)>();
        let (whole, whole_in) = oneshot::channel::<Result<Vec<Location>, ExecError>>();
        let thread = tokio::task::spawn_blocking(move || {
            let mut builder = PlanBuilder::new(&config, &options).with_applied(&applied);
            let mut live = LivePages::default();
            while let Some((position, page)) = pages_in.blocking_recv() {
                builder.add_live(&page);
                live.add(position, page);
            }
            match whole_in.blocking_recv() {
                Ok(Ok(unread)) => builder
                    .finish_without(live.iter(), &unread)
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
    /// whole live set but for the locations it names, whose Lists gave nothing (or gives the
    /// refresh's error).
    async fn finish(self, refreshed: Result<Vec<Location>, ExecError>) -> LivePlan {
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

/// The resource names of `--target` IDs, each at its declared cluster's location, else at its
/// `removed` block's; `None` when a target is neither (an undeclared cluster of this stack may
/// be in any location, so the refresh lists them all and the planner keeps the targets).
pub fn target_names(
    config: &Config,
    targets: &[String],
) -> Result<Option<Vec<ClusterName>>, CliError> {
    let mut names = Vec::with_capacity(targets.len());
    for id in targets {
        let declared = config.cluster(id).map(|cluster| &cluster.name);
        let removed = || {
            config
                .removed
                .iter()
                .map(|removed| &removed.name)
                .find(|name| name.id().as_str() == id.as_str())
        };
        match declared.or_else(removed) {
            Some(name) => names.push(name.clone()),
            None => {
                // Still refuse an ID no cluster could have, before anything is sent.
                clusterform_model::ClusterId::parse(id, false)
                    .map_err(|err| CliError::Usage(format!("--target {id}: {err}")))?;
                return Ok(None);
            }
        }
    }
    Ok(Some(names))
}

/// The live clusters of `config`'s stack and around it, as a plan reads them (every service
/// region and every region the configuration names, in every project it names; see
/// `Config::refresh_locations`), what could not be listed reported on `printer`: for commands
/// that read the live set without planning it. A location the configuration names must answer.
pub async fn refresh_live(
    client: &ApiClient,
    config: &Config,
    printer: &Printer,
) -> Result<Vec<LiveCluster>, CliError> {
    let refreshed = clusterform_executor::refresh(client, &config.refresh_locations(), &[]).await?;
    let unread = KnownClusters::of(config, None, []).unread(&refreshed.refused);
    report_unread(printer, &unread);
    fully_read(&unread)?;
    Ok(refreshed.live)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        let hcl = format!(
            "{}\ncluster \"train01\" {{{}}}\n\nremoved {{\n  cluster = \"old01\"\n  region  = \"europe-west4\"\n}}\n",
            clusterform_testkit::hcl::PROVIDER_HCL,
            clusterform_testkit::hcl::SEED_BODY_HCL,
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("main.hcl"), hcl).unwrap();
        clusterform_config::load(dir.path(), &clusterform_config::VariableInputs::default())
            .unwrap()
            .config
    }

    #[test]
    fn targets_are_read_where_they_are_declared_or_released_else_everywhere() {
        let config = config();
        let names = target_names(&config, &["train01".to_owned(), "old01".to_owned()])
            .unwrap()
            .unwrap();
        let regions: Vec<_> = names.iter().map(ClusterName::region).collect();
        assert_eq!(regions, ["us-central1", "europe-west4"]);
        assert_eq!(
            target_names(&config, &["train01".to_owned(), "other".to_owned()]).unwrap(),
            None
        );
        assert!(target_names(&config, &["Not_An_Id".to_owned()]).is_err());
    }
}
