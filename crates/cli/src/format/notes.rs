//! The words of what the libraries and the workflow report as typed values: a plan's
//! warnings ([`PlanWarning`]), which the plan text shows under each change and `plan --json`
//! gives as `message` beside their data; and a run's notes ([`Note`]), which the command's
//! view prints on stderr whether it speaks text or JSON.

use std::path::PathBuf;
use std::time::Duration;

use clusterform_executor::{DocumentLocation, LockInfo, TokenNote};
use clusterform_model::duration::Seconds;
use clusterform_model::{Action, Attempt, ClusterId, ClusterName, Location, UnreadLocation};
use clusterform_planner::{CarriedValue, PlanWarning};

use crate::format::actions;

/// How a note is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Where the run is (`Waiting for …`): silenced by `--quiet` and by `--json`.
    Progress,
    /// `Note: …`, something to know that changes nothing: silenced by `--quiet` only.
    Note,
    /// `Warning: …`: silenced by `--quiet` only.
    Warning,
    /// `Warning: …` about running work a run keeps or stops: never silenced.
    AboutWork,
}

/// Something a run tells the user beside its results, with its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// An earlier run left an operation in flight; apply and destroy wait for it.
    OperationInFlight {
        /// The operation's name.
        operation: String,
        /// What it does.
        action: Action,
        /// To which cluster.
        cluster: ClusterId,
    },
    /// An earlier run left a fallback chain in flight at an attempt after the first.
    ChainInFlight {
        /// The cluster.
        cluster: ClusterId,
        /// The attempt in flight.
        attempt: Attempt,
        /// Its operation.
        operation: String,
    },
    /// A journal entry that cannot be used: apply refuses to act on its cluster.
    UnusableJournalEntry {
        /// Its place in the journal, from 0.
        entry: usize,
        /// Where the journal is kept.
        journal: String,
        /// Why it cannot be used.
        reason: String,
        /// Its cluster, when it can be read.
        cluster: Option<ClusterId>,
    },
    /// Locations that refused the List for good, where nothing of the stack is known.
    LocationsRefused(Vec<UnreadLocation>),
    /// Locations whose List kept failing, where nothing of the stack is known.
    LocationsFailing(Vec<UnreadLocation>),
    /// A location of the stack that could not be listed: its clusters are left alone.
    LocationHeld(UnreadLocation),
    /// A `removed` block that releases nothing.
    RemovedMatchesNothing(UnmatchedRemovedBlock),
    /// `--target` is in effect.
    TargetingInEffect,
    /// The run's record of applied changes could not be written: only the next plan's
    /// account of changes made outside clusterform depends on it.
    AppliedRecordNotWritten {
        /// Where it is kept.
        record: DocumentLocation,
        /// Why it could not be written.
        reason: String,
    },
    /// A replacement deleted the cluster and no attempt could create it again.
    MissingAfterReplacement {
        /// The cluster.
        cluster: ClusterId,
    },
    /// A cluster's Slurm controller stopped answering after a Slurm setting changed.
    SilentController {
        /// The cluster.
        cluster: ClusterId,
        /// The setting that changed.
        setting: String,
        /// Why the controller is taken for silent.
        error: String,
    },
    /// `--idle-for` shorter than a pause between two jobs.
    ShortIdleThreshold {
        /// The threshold given.
        threshold: Duration,
        /// The shortest one that is not warned about.
        momentary: Duration,
    },
    /// A cluster an idle destroy was to delete is kept: the second look found it busy.
    NoLongerIdle {
        /// The cluster.
        cluster: ClusterId,
        /// When the second look was.
        recheck: Recheck,
        /// What the evidence says now.
        why: String,
    },
    /// `plan --refresh-only` cannot tell what changed outside clusterform on some clusters.
    DriftUnknown(DriftUnknown),
    /// The second look at an idle destroy's clusters found none still idle.
    NoneLeftIdle(Recheck),
    /// Where the run is.
    Waiting(Waiting),
    /// Another run holds the stack lock: this one waits for it.
    WaitingForLock {
        /// How long it waits at most.
        timeout: Duration,
        /// Who holds it, when the lock says.
        holder: Option<LockInfo>,
    },
    /// The stack's lock on Cloud Storage could not be released.
    LockNotReleased {
        /// The lock's object.
        lock: String,
        /// Why.
        error: String,
        /// The lock's ID, which `force-unlock` takes.
        id: String,
    },
    /// The token source chosen is not the obvious one.
    Token(TokenNote),
}

/// Why the record of applied changes cannot say what changed outside clusterform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriftUnknown {
    /// There is no record.
    NoRecord,
    /// The record at `record` cannot be read.
    Unreadable {
        /// Where it is kept.
        record: String,
        /// Why it cannot be read.
        reason: String,
    },
    /// The record at `record` holds nothing for `clusters`.
    Unrecorded {
        /// Where it is kept.
        record: String,
        /// The clusters it does not know.
        clusters: Vec<ClusterId>,
    },
}

/// When an idle destroy looks at the evidence again, right before its deletes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recheck {
    /// After the user said yes.
    AfterApproval,
    /// When a saved idle plan is applied.
    SavedPlan,
}

/// What a run waits for before it changes anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    /// Clusters an earlier operation is still changing, to plan them again once it ends.
    ChangingClusters,
    /// Unchanged clusters whose earlier operation is still running.
    UnchangedClusters,
}

/// A `removed` block that releases nothing, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnmatchedRemovedBlock {
    /// The cluster the block names.
    pub name: ClusterName,
    /// The block's file.
    pub file: PathBuf,
    /// The block's line.
    pub line: usize,
    /// Why it releases nothing.
    pub why: UnmatchedWhy,
}

/// Why a `removed` block releases nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnmatchedWhy {
    /// No cluster with its ID is where it says.
    NoCluster,
    /// The stack's cluster with that ID lives elsewhere: each place, with what the plan does
    /// to it there (`None`: nothing).
    Elsewhere(Vec<(Location, Option<Action>)>),
    /// The cluster belongs to another stack (`Some`) or to none.
    NotOwned {
        /// The stack that owns it.
        owner: Option<String>,
        /// This configuration's stack.
        stack: String,
    },
}

impl Note {
    /// How it is told.
    pub fn level(&self) -> Level {
        match self {
            Self::Waiting(_) | Self::NoneLeftIdle(_) | Self::WaitingForLock { .. } => {
                Level::Progress
            }
            Self::LocationsRefused(_) | Self::DriftUnknown(_) => Level::Note,
            Self::ShortIdleThreshold { .. } | Self::NoLongerIdle { .. } => Level::AboutWork,
            _ => Level::Warning,
        }
    }

    /// The sentence, without its `Warning:` or `Note:` label.
    pub fn text(&self) -> String {
        match self {
            Self::OperationInFlight {
                operation,
                action,
                cluster,
            } => format!(
                "an earlier run left operation {operation} ({} {cluster}) in flight; `clusterform apply` and `destroy` wait for it before changing anything",
                actions::verb(*action)
            ),
            Self::ChainInFlight {
                cluster,
                attempt,
                operation,
            } => format!(
                "an earlier run left {cluster}'s fallback chain at {attempt} (operation {operation}); `clusterform apply` waits for it and, if it found no machines, goes on with the next alternative"
            ),
            Self::UnusableJournalEntry {
                entry,
                journal,
                reason,
                cluster,
            } => format!(
                "entry {entry} of {journal} cannot be used ({reason}); apply refuses to act on {} until it is fixed or removed",
                cluster.as_ref().map_or_else(
                    || "an unknown cluster".to_owned(),
                    |id| format!("cluster {id}")
                )
            ),
            Self::LocationsRefused(refused) => refused_text(refused),
            Self::LocationsFailing(failing) => failing_text(failing),
            Self::LocationHeld(held) => held_text(held),
            Self::RemovedMatchesNothing(block) => unmatched_removed_text(block),
            Self::TargetingInEffect => TARGETING_IN_EFFECT.to_owned(),
            Self::AppliedRecordNotWritten { record, reason } => format!(
                "the record of applied changes {record} could not be written: {}; the next \
                 plan cannot tell which differences of these clusters were made outside \
                 clusterform (nothing else depends on it)",
                clause(reason)
            ),
            Self::MissingAfterReplacement { cluster } => missing_after_replacement(cluster),
            Self::SilentController {
                cluster,
                setting,
                error,
            } => format!(
                "cluster {cluster}: its Slurm controller does not answer after `{setting}` changed ({}). \
                 The service checks each Slurm parameter on its own: some accepted combinations stop \
                 slurmctld (e.g. PreemptType=preempt/none with PreemptMode=SUSPEND,GANG) while the \
                 operation reports success; check `sinfo` on the login node, and revert the change if \
                 it fails",
                clause(error)
            ),
            Self::ShortIdleThreshold {
                threshold,
                momentary,
            } => format!(
                "--idle-for {} is shorter than {}: a cluster between two jobs qualifies as idle",
                Seconds::from(*threshold).to_units(2),
                Seconds::from(*momentary).to_units(2),
            ),
            Self::NoLongerIdle {
                cluster,
                recheck,
                why,
            } => format!("{cluster} {}: kept ({why})", recheck.became_busy()),
            Self::DriftUnknown(unknown) => drift_unknown_text(unknown),
            Self::NoneLeftIdle(Recheck::AfterApproval) => {
                "No idle cluster is left to destroy.".to_owned()
            }
            Self::NoneLeftIdle(Recheck::SavedPlan) => {
                "No cluster of the saved idle destroy is still idle: nothing to destroy.".to_owned()
            }
            Self::Waiting(waiting) => waiting.text().to_owned(),
            Self::WaitingForLock { timeout, holder } => format!(
                "Waiting up to {} for the lock, held by {}…",
                Seconds::from(*timeout).to_units(2),
                holder
                    .as_ref()
                    .map_or_else(|| "another clusterform run".to_owned(), ToString::to_string)
            ),
            Self::LockNotReleased { lock, error, id } => format!(
                "could not release the lock {lock}: {}; if it is still there, remove it with `clusterform force-unlock {id}`",
                clause(error)
            ),
            Self::Token(TokenNote::GcloudInstead { kind, credentials }) => format!(
                "credentials of type `{kind}` in {} are not supported directly; using `gcloud auth print-access-token` instead",
                credentials.display()
            ),
        }
    }
}

impl Recheck {
    fn became_busy(self) -> &'static str {
        match self {
            Self::AfterApproval => "became busy while waiting for approval",
            Self::SavedPlan => "is no longer idle since the plan was made",
        }
    }
}

impl Waiting {
    fn text(self) -> &'static str {
        match self {
            Self::ChangingClusters => {
                "Waiting for clusters with an operation in flight (started by another run), to plan them again once it ends…"
            }
            Self::UnchangedClusters => {
                "Waiting for unchanged clusters with an operation in flight (started by another run)…"
            }
        }
    }
}

/// `text` as a clause that `; ` joins to the next: its own closing full stop goes, so that
/// an error or a service's sentence never reads `….; …`.
pub(crate) fn clause(text: &str) -> &str {
    text.trim_end().trim_end_matches('.')
}

fn drift_unknown_text(unknown: &DriftUnknown) -> String {
    match unknown {
        DriftUnknown::NoRecord => {
            "there is no record of applied changes: clusterform cannot tell what changed outside it"
                .to_owned()
        }
        DriftUnknown::Unreadable { record, reason } => format!(
            "the record of applied changes {record} cannot be read: {}; clusterform cannot tell what changed outside it",
            clause(reason)
        ),
        DriftUnknown::Unrecorded { record, clusters } => format!(
            "the record of applied changes {record} holds nothing for {}: clusterform cannot tell what changed outside it there (the next apply of each records it)",
            ids(clusters)
        ),
    }
}

/// Terraform's warning for `-target`, in our words: a partial plan is for exceptional cases.
const TARGETING_IN_EFFECT: &str = "targeting is in effect: this plan considers only the --target \
clusters, so it may not show every change the configuration asks for (nor every deletion). Use \
--target to recover from mistakes or errors, not as part of a routine workflow.";

/// A replacement deleted `id` and no attempt could create it again: the run's summary says so,
/// never that nothing was left behind.
pub fn missing_after_replacement(id: &ClusterId) -> String {
    format!(
        "{id} was deleted for the replacement and is now missing: no attempt could create it \
         again; `clusterform apply` creates it once machines are available"
    )
}

/// `2 locations refused the List …`: names only; `-v` logs each answer.
fn refused_text(refused: &[UnreadLocation]) -> String {
    let count = refused.len();
    let (locations, were) = if count == 1 {
        ("location", "was")
    } else {
        ("locations", "were")
    };
    format!(
        "{count} {locations} refused the List for good (no permission, or a region the \
         project may not use) and {were} skipped: {}. Nothing there is planned; `regions = [...]` \
         in the provider block limits the scan to the regions you use.",
        shown(refused)
    )
}

/// The failing locations where nothing of the stack is known, with each answer.
fn failing_text(failing: &[UnreadLocation]) -> String {
    let listed: Vec<String> = failing
        .iter()
        .map(|unread| format!("{} ({})", short(&unread.location), unread.reason))
        .collect();
    let (lists, them) = if failing.len() == 1 {
        ("the List of", "it")
    } else {
        ("the Lists of", "them")
    };
    format!(
        "{lists} {} kept failing; going on without {them}: this stack's clusters there are not \
         seen, and none of them is changed or destroyed",
        listed.join("; ")
    )
}

/// A location that is an error: its answer, and which clusters are left as they are.
fn held_text(unread: &UnreadLocation) -> String {
    let what = unread.kind.what_the_list_did();
    let one = unread.held.len() == 1;
    let clusters = if unread.held.is_empty() {
        "no cluster of this stack there is planned".to_owned()
    } else {
        format!(
            "{} there {} left as {} (not created, changed or destroyed)",
            ids(&unread.held),
            if one { "is" } else { "are" },
            if one { "it is" } else { "they are" },
        )
    };
    format!(
        "the List of {}, which this stack uses, {what} ({}): {clusters}; the rest of the plan \
         goes on",
        short(&unread.location),
        unread.reason
    )
}

/// Why a `removed` block releases nothing, and what to do about it.
fn unmatched_removed_text(block: &UnmatchedRemovedBlock) -> String {
    let name = &block.name;
    let whence = format!(
        "the removed block for {} ({}:{})",
        name.id(),
        block.file.display(),
        block.line
    );
    match &block.why {
        UnmatchedWhy::NoCluster => format!(
            "{whence} matches no cluster in {}/{}: nothing to release. Check its ID, project and region; once a release is done the block can go",
            name.project(),
            name.region()
        ),
        UnmatchedWhy::Elsewhere(places) => format!(
            "{whence} names {}/{}, where no cluster {} lives, so it releases nothing; this stack's {} lives in {}. To release it instead, give the block that project and region",
            name.project(),
            name.region(),
            name.id(),
            name.id(),
            places
                .iter()
                .map(|(location, action)| fate_there(location, *action))
                .collect::<Vec<_>>()
                .join(" and ")
        ),
        UnmatchedWhy::NotOwned {
            owner: Some(other),
            stack,
        } => format!(
            "{whence} names a cluster of stack \"{other}\", not of \"{stack}\": nothing to release (only the stack that owns a cluster can release it)"
        ),
        UnmatchedWhy::NotOwned { owner: None, .. } => format!(
            "{whence} names a cluster that no stack owns (it has no clusterform-stack label): nothing to release; the block can go"
        ),
    }
}

/// `my-proj/europe-west4 (this plan destroys it there)`.
fn fate_there(location: &Location, action: Option<Action>) -> String {
    let fate = match action {
        Some(Action::Delete) => "this plan destroys it there",
        Some(Action::Replace) => "this plan replaces it there",
        Some(Action::Update) => "this plan updates it there",
        Some(Action::Create | Action::Release | Action::NoOp) | None => "this plan leaves it there",
    };
    format!("{} ({fate})", short(location))
}

/// `my-proj/europe-west4`.
fn short(location: &Location) -> String {
    format!("{}/{}", location.project(), location.region())
}

fn shown(unread: &[UnreadLocation]) -> String {
    unread
        .iter()
        .map(|unread| short(&unread.location))
        .collect::<Vec<_>>()
        .join(", ")
}

fn ids(held: &[ClusterId]) -> String {
    held.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `the cluster is UPDATING right now: …`: one warning of a change, as a sentence without its
/// `Warning:` label.
pub fn plan_warning(warning: &PlanWarning) -> String {
    match warning {
        PlanWarning::Busy { state } => format!(
            "the cluster is {} right now: apply waits for the running operation to end before sending its request",
            state.as_str()
        ),
        PlanWarning::StillWorking { state } => format!(
            "the cluster is {} right now: an operation is in flight on it (started by another run)",
            state.as_str()
        ),
        PlanWarning::BeingDeleted => "the cluster is being deleted right now (STOPPING): apply waits until it is gone, then creates it again".to_owned(),
        PlanWarning::DefaultPartitionMoves { from, to } => format!(
            "the default partition moves from {} to {}: default_partition_id is unset, so the first partition is the default for every job submitted without --partition",
            partition(from.as_deref()),
            partition(to.as_deref())
        ),
        PlanWarning::PoolShrinks { pool, from, to, nodes_reported } => format!(
            "max_node_count of pool {pool} goes from {from} to {to}: {}",
            shrink_consequence(*nodes_reported, warning.nodes_removed())
        ),
        PlanWarning::LabelsKept { keys } => labels_kept(keys),
        PlanWarning::CarriedFromLive { values } => format!(
            "this node_pools update sends back what the service filled in where the configuration \
             sets nothing, which may pin it (an unset node_image follows the default image, a set \
             one stays): {}",
            values.iter().map(carried).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn partition(id: Option<&str>) -> String {
    id.map_or_else(|| "none".to_owned(), |id| format!("`{id}`"))
}

/// What lowering a pool's maximum does to its nodes, as far as the cluster's report tells.
fn shrink_consequence(reported: Option<usize>, removed: Option<usize>) -> String {
    match (reported, removed) {
        (Some(nodes), Some(removed)) if removed > 0 => format!(
            "the cluster reports {nodes} nodes in the pool, so {removed} above the new maximum are removed, and Slurm jobs running on them are stopped"
        ),
        (Some(nodes), Some(_)) => format!(
            "the cluster reports {nodes} {} in the pool, none above the new maximum, so none is removed now",
            if nodes == 1 { "node" } else { "nodes" }
        ),
        _ => "nodes above the new maximum are removed, and Slurm jobs running on them are stopped"
            .to_owned(),
    }
}

fn labels_kept(keys: &[String]) -> String {
    let quoted: Vec<String> = keys.iter().map(|key| format!("`{key}`")).collect();
    let (which, are) = match quoted.as_slice() {
        [one] => (format!("the label {one}"), "is"),
        several => (format!("the labels {}", several.join(", ")), "are"),
    };
    format!(
        "{which} {are} not in the configuration and {are} kept: clusterform does not remove \
         labels someone else put on a cluster (declare them to manage them)"
    )
}

/// `node_pools[cpu].node_image = "projects/…"`; a value that may hold a secret as `(sensitive)`.
fn carried(value: &CarriedValue) -> String {
    match &value.value {
        Some(shown) => format!("{} = {shown}", value.path),
        None => format!("{} = (sensitive)", value.path),
    }
}

#[cfg(test)]
mod tests {
    use clusterform_model::{ClusterState, UnreadKind};
    use serde_json::json;

    use clusterform_testkit::unread_location as unread;

    use super::*;

    fn shrinking(nodes_reported: Option<usize>) -> PlanWarning {
        PlanWarning::PoolShrinks {
            pool: "cpu".to_owned(),
            from: "8".to_owned(),
            to: "4".to_owned(),
            nodes_reported,
        }
    }

    #[test]
    fn a_busy_cluster_is_named_by_its_state() {
        assert_eq!(
            plan_warning(&PlanWarning::Busy {
                state: ClusterState::Updating
            }),
            "the cluster is UPDATING right now: apply waits for the running operation to end before sending its request"
        );
        assert_eq!(
            plan_warning(&PlanWarning::StillWorking {
                state: ClusterState::Provisioning
            }),
            "the cluster is PROVISIONING right now: an operation is in flight on it (started by another run)"
        );
        assert!(plan_warning(&PlanWarning::BeingDeleted).contains("(STOPPING)"));
    }

    #[test]
    fn a_default_partition_that_moves_names_both_or_none() {
        let moves = PlanWarning::DefaultPartitionMoves {
            from: Some("cpu".to_owned()),
            to: None,
        };
        assert!(
            plan_warning(&moves).starts_with("the default partition moves from `cpu` to none:"),
            "{}",
            plan_warning(&moves)
        );
    }

    #[test]
    fn a_shrinking_pool_says_how_many_nodes_go_when_the_cluster_reports_them() {
        assert!(plan_warning(&shrinking(Some(6))).contains(
            "max_node_count of pool cpu goes from 8 to 4: the cluster reports 6 nodes in the pool, so 2 above the new maximum are removed"
        ));
        assert!(
            plan_warning(&shrinking(Some(1)))
                .contains("the cluster reports 1 node in the pool, none above the new maximum")
        );
        assert!(plan_warning(&shrinking(None)).ends_with(
            "nodes above the new maximum are removed, and Slurm jobs running on them are stopped"
        ));
    }

    #[test]
    fn kept_labels_are_quoted_in_one_sentence() {
        let one = PlanWarning::LabelsKept {
            keys: vec!["owner".to_owned()],
        };
        assert!(
            plan_warning(&one)
                .starts_with("the label `owner` is not in the configuration and is kept")
        );
        let two = PlanWarning::LabelsKept {
            keys: vec!["owner".to_owned(), "cost".to_owned()],
        };
        assert!(
            plan_warning(&two).starts_with(
                "the labels `owner`, `cost` are not in the configuration and are kept"
            )
        );
    }

    #[test]
    fn a_carried_value_that_may_be_secret_is_not_quoted() {
        let warning = PlanWarning::CarriedFromLive {
            values: vec![
                CarriedValue {
                    path: "node_pools[cpu].node_image".to_owned(),
                    value: Some(json!("projects/p/global/images/i")),
                },
                CarriedValue {
                    path: "node_pools[cpu].startup_script".to_owned(),
                    value: None,
                },
            ],
        };
        assert!(plan_warning(&warning).ends_with(
            "node_pools[cpu].node_image = \"projects/p/global/images/i\", node_pools[cpu].startup_script = (sensitive)"
        ));
    }

    #[test]
    fn refused_locations_make_one_note_naming_them_all() {
        let note = Note::LocationsRefused(vec![
            unread("us-east5", UnreadKind::Refused, false, &[]),
            unread("asia-south2", UnreadKind::Refused, false, &[]),
        ]);
        assert_eq!(note.level(), Level::Note);
        assert_eq!(
            note.text(),
            "2 locations refused the List for good (no permission, or a region the project \
             may not use) and were skipped: my-proj/us-east5, my-proj/asia-south2. Nothing there \
             is planned; `regions = [...]` in the provider block limits the scan to the regions \
             you use."
        );
    }

    #[test]
    fn failing_locations_make_one_warning_with_each_answer() {
        let note = Note::LocationsFailing(vec![
            unread("us-east5", UnreadKind::Failing, false, &[]),
            unread("asia-south2", UnreadKind::Failing, false, &[]),
        ]);
        assert_eq!(note.level(), Level::Warning);
        assert_eq!(
            note.text(),
            "the Lists of my-proj/us-east5 (UNAVAILABLE (503): try later); my-proj/asia-south2 \
             (UNAVAILABLE (503): try later) kept failing; going on without them: this stack's \
             clusters there are not seen, and none of them is changed or destroyed"
        );
    }

    #[test]
    fn a_location_of_the_stack_names_the_clusters_it_leaves_alone() {
        let held = Note::LocationHeld(unread(
            "us-central1",
            UnreadKind::Failing,
            true,
            &["train01", "train02"],
        ));
        assert_eq!(
            held.text(),
            "the List of my-proj/us-central1, which this stack uses, kept failing (UNAVAILABLE \
             (503): try later): train01, train02 there are left as they are (not created, \
             changed or destroyed); the rest of the plan goes on"
        );
    }

    #[test]
    fn a_chain_in_flight_names_its_attempt_as_apply_does() {
        let note = Note::ChainInFlight {
            cluster: ClusterId::parse("train01", false).unwrap(),
            attempt: Attempt::at(1),
            operation: "projects/p/locations/r/operations/7".to_owned(),
        };
        assert!(
            note.text()
                .starts_with("an earlier run left train01's fallback chain at attempt 2 (operation projects/p/locations/r/operations/7)"),
            "{}",
            note.text()
        );
        let unusable = Note::UnusableJournalEntry {
            entry: 3,
            journal: ".clusterform/journal.json".to_owned(),
            reason: "no operation".to_owned(),
            cluster: None,
        };
        assert_eq!(
            unusable.text(),
            "entry 3 of .clusterform/journal.json cannot be used (no operation); apply refuses to act on an unknown cluster until it is fixed or removed"
        );
    }

    #[test]
    fn a_removed_block_elsewhere_says_where_the_cluster_lives_and_its_fate() {
        let note = Note::RemovedMatchesNothing(UnmatchedRemovedBlock {
            name: ClusterName::new("my-proj", "us-central1", "old01").unwrap(),
            file: PathBuf::from("main.hcl"),
            line: 12,
            why: UnmatchedWhy::Elsewhere(vec![(
                Location::new("my-proj", "europe-west4").unwrap(),
                Some(Action::Delete),
            )]),
        });
        assert_eq!(
            note.text(),
            "the removed block for old01 (main.hcl:12) names my-proj/us-central1, where no cluster old01 lives, so it releases nothing; this stack's old01 lives in my-proj/europe-west4 (this plan destroys it there). To release it instead, give the block that project and region"
        );
        let owned = Note::RemovedMatchesNothing(UnmatchedRemovedBlock {
            why: UnmatchedWhy::NotOwned {
                owner: Some("team-b".to_owned()),
                stack: "research".to_owned(),
            },
            ..match note {
                Note::RemovedMatchesNothing(block) => block,
                _ => unreachable!(),
            }
        });
        assert!(
            owned
                .text()
                .contains("names a cluster of stack \"team-b\", not of \"research\"")
        );
    }

    #[test]
    fn running_work_notes_cannot_be_silenced_and_waiting_is_progress() {
        let kept = Note::NoLongerIdle {
            cluster: ClusterId::parse("train01", false).unwrap(),
            recheck: Recheck::AfterApproval,
            why: "2 jobs running".to_owned(),
        };
        assert_eq!(kept.level(), Level::AboutWork);
        assert_eq!(
            kept.text(),
            "train01 became busy while waiting for approval: kept (2 jobs running)"
        );
        let short = Note::ShortIdleThreshold {
            threshold: Duration::from_secs(120),
            momentary: Duration::from_secs(600),
        };
        assert_eq!(short.level(), Level::AboutWork);
        assert_eq!(
            short.text(),
            "--idle-for 2m is shorter than 10m: a cluster between two jobs qualifies as idle"
        );
        assert_eq!(
            Note::Waiting(Waiting::ChangingClusters).level(),
            Level::Progress
        );
        assert_eq!(Note::TargetingInEffect.level(), Level::Warning);
    }

    #[test]
    fn an_applied_record_not_written_is_a_warning_saying_what_depends_on_it() {
        let note = Note::AppliedRecordNotWritten {
            record: DocumentLocation::File(PathBuf::from(".clusterform/applied.json")),
            reason: "Permission denied (os error 13)".to_owned(),
        };
        assert_eq!(note.level(), Level::Warning);
        assert_eq!(
            note.text(),
            "the record of applied changes .clusterform/applied.json could not be written: \
             Permission denied (os error 13); the next plan cannot tell which differences of \
             these clusters were made outside clusterform (nothing else depends on it)"
        );
    }

    #[test]
    fn a_reason_ending_a_sentence_keeps_no_full_stop_before_the_semicolon() {
        let note = Note::LockNotReleased {
            lock: "gs://state/stack.lock".to_owned(),
            error: "DELETE failed: PERMISSION_DENIED (403): Access denied.".to_owned(),
            id: "1234".to_owned(),
        };
        assert_eq!(
            note.text(),
            "could not release the lock gs://state/stack.lock: DELETE failed: PERMISSION_DENIED \
             (403): Access denied; if it is still there, remove it with `clusterform force-unlock 1234`"
        );
    }

    #[test]
    fn a_lock_held_elsewhere_is_waited_for_as_progress_naming_its_holder() {
        let unknown = Note::WaitingForLock {
            timeout: Duration::from_secs(90),
            holder: None,
        };
        assert_eq!(unknown.level(), Level::Progress);
        assert_eq!(
            unknown.text(),
            "Waiting up to 1m30s for the lock, held by another clusterform run…"
        );
        let holder = LockInfo::for_this_process("apply", "1.2.3");
        let known = Note::WaitingForLock {
            timeout: Duration::from_secs(30),
            holder: Some(holder.clone()),
        };
        assert_eq!(
            known.text(),
            format!("Waiting up to 30s for the lock, held by {holder}…")
        );
    }

    #[test]
    fn a_lock_left_behind_is_a_warning_naming_the_command_that_removes_it() {
        let note = Note::LockNotReleased {
            lock: "gs://team-infra/clusterform/research.lock".to_owned(),
            error: "503 Service Unavailable".to_owned(),
            id: "4f6c".to_owned(),
        };
        assert_eq!(note.level(), Level::Warning);
        assert_eq!(
            note.text(),
            "could not release the lock gs://team-infra/clusterform/research.lock: 503 Service \
             Unavailable; if it is still there, remove it with `clusterform force-unlock 4f6c`"
        );
    }

    #[test]
    fn credentials_read_through_gcloud_are_a_warning_naming_the_file() {
        let note = Note::Token(TokenNote::GcloudInstead {
            kind: "authorized_user".to_owned(),
            credentials: PathBuf::from("/home/me/creds.json"),
        });
        assert_eq!(note.level(), Level::Warning);
        assert_eq!(
            note.text(),
            "credentials of type `authorized_user` in /home/me/creds.json are not supported \
             directly; using `gcloud auth print-access-token` instead"
        );
    }
}
