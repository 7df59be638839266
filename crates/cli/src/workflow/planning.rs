//! Planning: warn about what earlier runs left in flight, refresh the live clusters and plan
//! them, each declared cluster as soon as the List page that holds it arrives; then look up the
//! Slurm jobs the plan's disruptive changes would hit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clusterform_config::Config;
use clusterform_executor::{ApiClient, ExecError, LivePages, Mark, PagePosition, RefreshWatcher};
use clusterform_model::{Action, Attempt, ClusterId, ClusterName, ClusterState};
use clusterform_model::{JobsByCluster, LiveCluster, Location, RunningJobs};
use clusterform_planner::{
    AppliedDigests, IdleDeletion, Plan, PlanBuilder, PlanOptions, Unmatched, UnmatchedRemoved,
    unmatched_removed,
};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::Run;
use super::preflight::PreflightReads;
use super::unread::{KnownClusters, fully_read, unread_notes};
use clusterform::format::notes::{DriftUnknown, Note, UnmatchedRemovedBlock, UnmatchedWhy};

use crate::error::CliError;
use crate::views::PlanView;
use crate::views::run::progress::ListingProgress;

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
    /// Preflight's reads started while the Lists ran (taken by [`Run::preflight`]).
    pub preflight: Option<PreflightReads>,
}

impl<V: PlanView + ?Sized> Run<'_, V> {
    /// Warns about the journal's entries, refreshes and plans.
    pub async fn plan(&self, options: &PlanOptions) -> Result<Planned, CliError> {
        for note in self.journal_notes() {
            self.view.tell(&note);
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
        let locations = super::scanned_locations(&self.config, record, journaled());
        let listing = targets
            .is_empty()
            .then(|| self.view.reading(locations.iter().count()));
        // A plan that only deletes creates nothing: nothing to read early.
        let preflight = self.preflight_reads(!options.destroy);
        let refreshed = clusterform_executor::refresh_paged(
            &self.connection.client,
            &locations,
            &targets,
            Watcher {
                planner: &planner,
                listing: listing.as_ref(),
                preflight: &preflight,
            },
        )
        .await;
        drop(listing);
        let known = KnownClusters::of(&self.config, record, journaled());
        let unreadable = refreshed
            .as_ref()
            .map_or_else(|_| Vec::new(), |refused| known.unread(refused));
        let unread: Vec<Location> = unreadable.iter().map(|u| u.location.clone()).collect();
        let (live, mut plan) = planner.finish(refreshed.map(|_| unread.clone())).await?;
        for note in unread_notes(&unreadable) {
            self.view.tell(&note);
        }
        let removed_unmatched = unmatched_removed(&self.config, live.iter(), options)
            .into_iter()
            .filter(|unmatched| !unread.contains(unmatched.block.name.location()));
        for unmatched in removed_unmatched {
            self.view
                .tell(&unmatched_removed_note(&unmatched, &self.config, &plan));
        }
        plan.unreadable_locations = unreadable;
        plan.directory = absolute_directory(&self.dir)?;
        plan.endpoint = Some(self.connection.endpoint.clone());
        if !options.targets.is_empty() {
            self.view.tell(&Note::TargetingInEffect);
        }
        Ok(Planned {
            live,
            plan,
            unread,
            preflight: Some(preflight),
        })
    }

    /// The Slurm jobs active right now on the cluster of every disruptive change, each with
    /// the node pools its partitions use in the live cluster: one look per cluster, all at
    /// once, none for harmless changes, and none for a cluster that is not `RUNNING` (the
    /// relay refuses it; the jobs say so instead). A Slurm that cannot be asked gives
    /// "unknown", never an error: the disruption guard counts it as possibly running jobs. Each
    /// command asks once, for the plan it shows (and `apply FILE` once, when it applies).
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
        let live: BTreeMap<&ClusterName, &LiveCluster> =
            live.into_iter().map(|live| (&live.address, live)).collect();
        let mut jobs = JobsByCluster::new();
        let mut to_ask = Vec::new();
        for change in plan.changes.iter().filter(|change| change.is_disruptive()) {
            match live.get(&change.address).copied().and_then(not_running) {
                Some(state) => {
                    jobs.insert(change.address.clone(), RunningJobs::NotAsked { state });
                }
                None => to_ask.push(change.address.clone()),
            }
        }
        let found = clusterform_executor::running_jobs(&self.connection.client, &to_ask).await;
        jobs.extend(to_ask.into_iter().zip(found));
        for (address, live) in live {
            if let Some(RunningJobs::Known { jobs }) = jobs.get_mut(address) {
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
    pub fn drift_unknown(&self, plan: &Plan) -> Option<Note> {
        let Some(record) = self.engine.applied_record() else {
            return Some(Note::DriftUnknown(DriftUnknown::NoRecord));
        };
        if let Some(reason) = record.unreadable() {
            return Some(Note::DriftUnknown(DriftUnknown::Unreadable {
                record: record.location().to_string(),
                reason: reason.to_string(),
            }));
        }
        let clusters: Vec<ClusterId> = plan
            .changes
            .iter()
            .filter(|change| {
                let live_and_declared = matches!(
                    change.action,
                    Action::Update | Action::Replace | Action::NoOp
                );
                live_and_declared && record.get(&change.address).is_none()
            })
            .map(|change| change.address.id().clone())
            .collect();
        (!clusters.is_empty()).then(|| {
            Note::DriftUnknown(DriftUnknown::Unrecorded {
                record: record.location().to_string(),
                clusters,
            })
        })
    }

    /// What to tell the user about operations an earlier run left in flight.
    fn journal_notes(&self) -> Vec<Note> {
        let journal = self.engine.journal();
        let mut notes = Vec::new();
        for entry in journal.entries() {
            // A first create in flight is any create; later places of a chain say so.
            let later_in_chain = entry.attempt.is_some_and(|attempt| {
                attempt > 0 || entry.request == clusterform_model::rest::RequestKind::Delete
            });
            let cluster = entry.address.id().clone();
            notes.push(match entry.attempt.filter(|_| later_in_chain) {
                Some(position) => Note::ChainInFlight {
                    cluster,
                    attempt: Attempt::at(position),
                    operation: entry.operation,
                },
                None => Note::OperationInFlight {
                    operation: entry.operation,
                    action: entry.action,
                    cluster,
                },
            });
        }
        for unusable in journal.unusable() {
            notes.push(Note::UnusableJournalEntry {
                entry: unusable.entry,
                journal: journal.location().to_string(),
                reason: unusable.reason,
                cluster: unusable.address.map(|address| address.id().clone()),
            });
        }
        notes
    }
}

/// Why a `removed` block releases nothing: what the views word.
fn unmatched_removed_note(unmatched: &UnmatchedRemoved<'_>, config: &Config, plan: &Plan) -> Note {
    let block = unmatched.block;
    let why = match &unmatched.why {
        Unmatched::NoCluster => UnmatchedWhy::NoCluster,
        Unmatched::Elsewhere { at } => UnmatchedWhy::Elsewhere(
            at.iter()
                .map(|address| {
                    let action = plan
                        .changes
                        .iter()
                        .find(|change| &change.address == address)
                        .map(|change| change.action);
                    (address.location().clone(), action)
                })
                .collect(),
        ),
        Unmatched::NotOwned { stack } => UnmatchedWhy::NotOwned {
            owner: stack.clone(),
            stack: config.provider.stack.clone(),
        },
    };
    Note::RemovedMatchesNothing(UnmatchedRemovedBlock {
        name: block.name.clone(),
        file: block.location.file.clone(),
        line: block.location.line,
        why,
    })
}

/// Hands each page to the planner and counts the locations listed on the terminal's line.
struct Watcher<'a> {
    planner: &'a PagePlanner,
    listing: Option<&'a ListingProgress>,
    preflight: &'a PreflightReads,
}

impl RefreshWatcher for Watcher<'_> {
    fn page(&self, position: PagePosition, clusters: Vec<LiveCluster>) {
        self.preflight.page(&clusters);
        self.planner.add(position, clusters);
    }

    fn listed(&self, location: &Location) {
        self.preflight.listed(location);
        if let Some(listing) = self.listing {
            listing.listed();
        }
    }
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
                ClusterId::parse(id, false)
                    .map_err(|err| CliError::Usage(format!("--target {id}: {err}")))?;
                return Ok(None);
            }
        }
    }
    Ok(Some(names))
}

/// The live clusters of `config`'s stack and around it, as a plan reads them (every service
/// region and every region the configuration names, in every project it names; see
/// `Config::refresh_locations`), what could not be listed told through `view`: for commands
/// that read the live set without planning it. A location the configuration names must answer.
pub async fn refresh_live(
    client: &ApiClient,
    config: &Config,
    view: &(impl PlanView + ?Sized),
) -> Result<Vec<LiveCluster>, CliError> {
    let refreshed = clusterform_executor::refresh(client, &config.refresh_locations(), &[]).await?;
    let unread = KnownClusters::of(config, None, []).unread(&refreshed.refused);
    for note in unread_notes(&unread) {
        view.tell(&note);
    }
    fully_read(&unread)?;
    Ok(refreshed.live)
}

/// The state of a live cluster whose Slurm cannot be asked: any reported state but `RUNNING`.
/// A cluster that reports none is asked, and its Slurm's answer says the rest.
fn not_running(live: &LiveCluster) -> Option<String> {
    live.cluster
        .state()
        .filter(|state| ClusterState::of(state) != ClusterState::Running)
        .map(str::to_owned)
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
