//! The plan data structure, shared by the planner (which builds it), the renderers, saved plan
//! files and the executor (which runs its requests). It serialises as the versioned JSON plan
//! document described in `docs/plan-json.md`.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use clusterform_model::fields::{ImpactClass, UpdateMaskPath};
use clusterform_model::paths::{FieldPath, Selector};
use clusterform_model::rest::{ClusterRequest, UpdateMask};
use clusterform_model::{
    Action, Attempt, ClusterName, Endpoint, ProvisioningModel, UnreadLocation, UpdateMode,
    cluster_address,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::options::PlanFlags;
use crate::plan_warning::PlanWarning;

/// Version of the JSON plan document and of saved plan files.
/// Version 2 added what applying a saved plan needs: the directory, the variable values and
/// whether it is a destroy plan. Version 3 records every flag the plan was made with
/// (`flags`, which holds `destroy` and `idle_for_seconds` now) and binds them to the
/// configuration digest (`flags_digest`). Version 4 stores each change's warnings as typed
/// objects (`{"kind": …}` with their data), which the views word. Version 5 records each
/// configuration file's digest (`config_files`), so that a plan refused for a changed
/// configuration names the files that changed.
pub const PLAN_FORMAT_VERSION: u32 = 5;

/// Everything a run would do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// [`PLAN_FORMAT_VERSION`].
    pub format_version: u32,
    /// The stack whose clusters this plan manages (the ownership label's value).
    pub stack: String,
    /// The configuration digest the plan was made from.
    pub config_digest: String,
    /// SHA-256 (hex) of each configuration file's text when the plan was made, by its name
    /// relative to `directory` ([`Config::file_digests`](clusterform_config::Config)).
    pub config_files: BTreeMap<String, String>,
    /// The configuration directory the plan was made from. The planner records
    /// [`Config::root`](clusterform_config::Config::root); the binary makes it absolute so that
    /// a saved plan can be applied from any working directory.
    pub directory: PathBuf,
    /// Every declared variable's value when the plan was made: applying a saved plan loads
    /// the configuration with exactly these. May hold values of `sensitive` variables.
    pub variables: BTreeMap<String, Value>,
    /// The flags the plan was made with: applying a saved plan plans again with them.
    pub flags: PlanFlags,
    /// [`PlanFlags::digest`] of `flags` with `config_digest`, as the plan was made (a saved
    /// plan: as its file says). A saved plan whose flags no longer give it was edited.
    pub flags_digest: String,
    /// Where the live clusters it was made from were read. The binary records it; applying a
    /// saved plan against another endpoint is refused. `None` in plans saved before it was
    /// recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<PlanEndpoint>,
    /// One entry per cluster considered, no-ops included, sorted by address.
    pub changes: Vec<ClusterChange>,
    /// The locations whose List gave nothing, and what of the stack is there: nothing there
    /// is in `changes`. The binary records them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreadable_locations: Vec<UnreadLocation>,
}

/// A configuration file that is not as it was when a saved plan was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangedFile {
    /// Its text changed (a comment is a change too).
    Edited(String),
    /// It is new.
    Added(String),
    /// It is no longer there.
    Gone(String),
}

impl ChangedFile {
    /// The file's name, relative to the configuration directory.
    pub fn name(&self) -> &str {
        match self {
            Self::Edited(name) | Self::Added(name) | Self::Gone(name) => name,
        }
    }
}

impl fmt::Display for ChangedFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Edited(name) => write!(f, "{name} changed"),
            Self::Added(name) => write!(f, "{name} is new"),
            Self::Gone(name) => write!(f, "{name} is gone"),
        }
    }
}

/// Where a plan's live clusters were read, as its file records it: `google` (the regional
/// Google endpoints), or the endpoint given — `local` (the built-in emulator) or its base URL
/// as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum PlanEndpoint {
    /// The regional Google endpoints: no endpoint was given.
    Google,
    /// The endpoint given.
    Given(Endpoint),
}

impl PlanEndpoint {
    /// How a plan file names [`PlanEndpoint::Google`].
    pub const GOOGLE: &'static str = "google";

    /// The endpoint a run reads from: the one given, else Google's.
    pub fn of(given: Option<&Endpoint>) -> Self {
        given.map_or(Self::Google, |endpoint| Self::Given(endpoint.clone()))
    }
}

impl fmt::Display for PlanEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Google => f.write_str(Self::GOOGLE),
            Self::Given(endpoint) => endpoint.fmt(f),
        }
    }
}

impl From<PlanEndpoint> for String {
    fn from(endpoint: PlanEndpoint) -> Self {
        endpoint.to_string()
    }
}

impl TryFrom<String> for PlanEndpoint {
    type Error = clusterform_model::EndpointError;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        if text == Self::GOOGLE {
            return Ok(Self::Google);
        }
        text.parse().map(Self::Given)
    }
}

impl Plan {
    /// How the configuration's files (`now`: [`Config::file_digests`] of the configuration
    /// loaded to apply the plan) differ from those the plan was made from, by name.
    ///
    /// [`Config::file_digests`]: clusterform_config::Config
    pub fn changed_files(&self, now: &BTreeMap<String, String>) -> Vec<ChangedFile> {
        let made = &self.config_files;
        let changed = made
            .iter()
            .filter_map(|(name, digest)| match now.get(name) {
                Some(current) if current == digest => None,
                Some(_) => Some(ChangedFile::Edited(name.clone())),
                None => Some(ChangedFile::Gone(name.clone())),
            });
        let added = now
            .keys()
            .filter(|name| !made.contains_key(*name))
            .map(|name| ChangedFile::Added(name.clone()));
        let mut files: Vec<ChangedFile> = changed.chain(added).collect();
        files.sort_by(|a, b| a.name().cmp(b.name()));
        files
    }

    /// Records that the plan is an idle destroy with a threshold of `seconds` (the idle filter
    /// kept only the clusters idle that long), binding the flags again.
    pub fn record_idle_threshold(&mut self, seconds: u64) {
        self.flags.idle_for = Some(seconds);
        self.flags_digest = self.flags.digest(&self.config_digest);
    }

    /// Whether the flags are the ones the plan was made with: `flags_digest` is their digest
    /// with `config_digest` (the configuration's, which applying compares first).
    pub fn flags_are_bound_to(&self, config_digest: &str) -> bool {
        self.flags.digest(config_digest) == self.flags_digest
    }

    /// Counts of each action.
    pub fn summary(&self) -> Summary {
        let mut summary = Summary::default();
        for change in &self.changes {
            match change.action {
                Action::Create => summary.add += 1,
                Action::Update => summary.change += 1,
                Action::Replace => summary.replace += 1,
                Action::Delete => summary.destroy += 1,
                Action::Release => summary.release += 1,
                Action::NoOp => {}
            }
        }
        summary
    }

    /// Whether the plan would do anything.
    pub fn has_changes(&self) -> bool {
        self.changes.iter().any(|c| c.action != Action::NoOp)
    }
}

/// Counts of actions, as in `Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.`
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Creates.
    pub add: usize,
    /// In-place updates.
    pub change: usize,
    /// Replacements.
    pub replace: usize,
    /// Deletes.
    pub destroy: usize,
    /// Clusters released from this stack without being deleted (`removed` blocks).
    #[serde(default)]
    pub release: usize,
}

/// What happens to one cluster.
///
/// An update's mask and mode are held once, in its PATCH request; the plan's document writes
/// them beside the requests too (`update_mask`, `update_mode`), and a document whose copies
/// disagree with its request is refused when read.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "ChangeDocument<'static>")]
pub struct ClusterChange {
    /// The cluster, written `{"project", "region", "id"}`.
    pub address: ClusterName,
    /// The action.
    pub action: Action,
    /// Why the cluster gets this action, where the fields alone do not say it.
    pub reason: Option<ChangeReason>,
    /// Every changed field (for a create: every set field; for a delete: none).
    pub fields: Vec<FieldChange>,
    /// Distinct impacts of the change, most severe last.
    pub impacts: Vec<Impact>,
    /// Things the user should know before applying.
    pub warnings: Vec<PlanWarning>,
    /// The requests the executor sends, in order (a replacement: delete, then create; an
    /// update: one PATCH with the smallest set of allowed mask paths covering `fields`).
    pub requests: Vec<ClusterRequest>,
    /// The live cluster's `updateTime` the plan was computed from (`None`: absent live).
    pub live_update_time: Option<String>,
    /// Per-action timeouts in seconds (`create`, `update`, `delete`), after defaults.
    pub timeouts: PlannedTimeouts,
    /// For each block that was compared (`""` = the cluster, `node_pools[cpu]`,
    /// `orchestrator_spec.slurm_spec`, …), how many of its attributes are set in the
    /// configuration and equal live; the text rendering hides them behind a count.
    pub unchanged_attributes: BTreeMap<String, usize>,
    /// What the change does when machines are out of capacity or quota.
    pub capacity: CapacityPlan,
    /// For a create, an update or a replacement: the digest of the declared cluster it brings
    /// the live one to ([`desired_digest`](crate::desired_digest)), which the executor records
    /// once the change is applied. `None` for deletes, releases and no-ops.
    pub desired_digest: Option<String>,
    /// The fields the live cluster differs in although the configuration is the one an earlier
    /// apply recorded: they were changed outside clusterform, and the change restores them.
    /// Only words the plan: the action, the fields and the requests are the same without it.
    pub drift: Vec<Drift>,
    /// The live cluster is in `ERROR` and is not replaced for it: no create of clusterform's
    /// left it so (it ran, then failed on the service's side). Only words the plan.
    pub in_error: Option<InError>,
    /// For a create, an update or a replacement of a cluster whose configuration sets labels:
    /// the keys it declares, which the executor records as the labels clusterform manages
    /// there. Live labels outside them are someone else's and are kept.
    pub declared_labels: Vec<String>,
}

/// A live cluster in `ERROR` that the plan does not replace for it (see
/// [`ClusterChange::in_error`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InError {
    /// `clusterStatus.state`, e.g. `ERROR`.
    pub state: String,
    /// The service's `clusterStatus.detail` and error message, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Since when, as far as the service says: the live cluster's `updateTime` (the service
    /// reports no time of the state change itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
}

/// A field of a live cluster that was changed outside clusterform.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drift {
    /// The field (a map's key as its own name: `labels.hotfix`; a whole node pool as
    /// `node_pools[gpu]`).
    pub path: FieldPath,
    /// What was done to it.
    pub how: DriftKind,
}

/// What was done to a field outside clusterform, seen from the live cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DriftKind {
    /// The live cluster has it, the configuration does not set it.
    Added,
    /// The configuration sets it, the live cluster lacks it.
    Removed,
    /// Both have it, with other values.
    Changed,
}

impl DriftKind {
    /// `added`, `removed`, `changed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "added",
            Self::Removed => "removed",
            Self::Changed => "changed",
        }
    }
}

impl fmt::Display for DriftKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a change does when its machines are out of capacity or quota: the node pools'
/// `fallback` alternatives, and whether a cluster its failed create leaves behind may go.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CapacityPlan {
    /// The requests of attempts 2, 3, … of the change's create (or of its update adding node
    /// pools): the same request with each pool's next alternative in place of the one before.
    /// Empty: nothing to fall back to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallbacks: Vec<ClusterRequest>,
    /// The chain of each pool the fallbacks change, as the plan shows it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chains: Vec<PoolChain>,
    /// The pools whose live machines are one of their alternatives rather than the declared
    /// ones: they match their declaration.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub running: Vec<RunningAlternative>,
    /// `lifecycle { prevent_destroy }`: a cluster that this run's failed create leaves in
    /// `ERROR` is kept and reported, never deleted (so no later alternative can be tried).
    #[serde(default, skip_serializing_if = "is_false")]
    pub keep_failed: bool,
    /// The last attempt known to have found no machines without the journal saying so (it and
    /// every attempt before it are out): the live cluster, in `ERROR` for a shortage and never
    /// `RUNNING`, runs its pools. The chain goes on with the attempt after it. `None`: from the
    /// first (or from where the journal says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_out: Option<Attempt>,
}

impl CapacityPlan {
    /// Whether the plan document needs to write it.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// What each pool with fallbacks runs on in `attempt` (attempt 1 is the pools as declared,
    /// which no chain lists): the alternative of the `fallback` it runs, or its last.
    pub fn alternatives_at(&self, attempt: Attempt) -> Vec<(&str, &PoolAlternative)> {
        self.chains
            .iter()
            .filter_map(|chain| {
                let fallback = attempt.fallback()?;
                let alternative = chain
                    .alternatives
                    .get(..fallback.min(chain.alternatives.len()))?
                    .last()?;
                Some((chain.pool.as_str(), alternative))
            })
            .collect()
    }
}

#[expect(clippy::trivially_copy_pass_by_ref, reason = "serde's skip test")]
fn is_false(value: &bool) -> bool {
    !*value
}

/// A node pool's alternatives after the declared machines, in the order they are tried.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolChain {
    /// The pool's ID.
    pub pool: String,
    /// Its `fallback` blocks, in order.
    pub alternatives: Vec<PoolAlternative>,
}

/// What one alternative of a pool runs on, as a plan names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolAlternative {
    /// `machine_spec.machine_type`.
    pub machine_type: Option<String>,
    /// `provisioning_model`, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioning_model: Option<ProvisioningModel>,
}

/// A live pool that runs one of its `fallback` alternatives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunningAlternative {
    /// The pool's ID.
    pub pool: String,
    /// The attempt whose machines it runs (attempt k+1 runs `fallback` k).
    pub attempt: Attempt,
    /// What that alternative runs on.
    pub alternative: PoolAlternative,
}

/// A [`ClusterChange`] as the plan's document writes it, with its update's mask and mode
/// beside the requests that hold them.
#[derive(Serialize, Deserialize)]
struct ChangeDocument<'a> {
    #[serde(serialize_with = "address_of", deserialize_with = "owned_address")]
    address: Cow<'a, ClusterName>,
    action: Action,
    #[serde(default, skip_serializing_if = "has_no_reason")]
    reason: Cow<'a, Option<ChangeReason>>,
    #[serde(default, skip_serializing_if = "no_drift")]
    drift: Cow<'a, [Drift]>,
    #[serde(default, skip_serializing_if = "not_in_error")]
    in_error: Cow<'a, Option<InError>>,
    #[serde(default, skip_serializing_if = "no_labels")]
    declared_labels: Cow<'a, [String]>,
    fields: Cow<'a, [FieldChange]>,
    update_mask: Cow<'a, [UpdateMaskPath]>,
    update_mode: Option<UpdateMode>,
    impacts: Cow<'a, [Impact]>,
    warnings: Cow<'a, [PlanWarning]>,
    requests: Cow<'a, [ClusterRequest]>,
    live_update_time: Cow<'a, Option<String>>,
    timeouts: PlannedTimeouts,
    #[serde(default, skip_serializing_if = "counts_nothing")]
    unchanged_attributes: Cow<'a, BTreeMap<String, usize>>,
    #[serde(default, skip_serializing_if = "plans_nothing")]
    capacity: Cow<'a, CapacityPlan>,
    #[serde(default, skip_serializing_if = "has_no_digest")]
    desired_digest: Cow<'a, Option<String>>,
}

#[expect(
    clippy::ptr_arg,
    reason = "serde hands a field to its helper by reference"
)]
fn address_of<S: serde::Serializer>(
    address: &Cow<'_, ClusterName>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    cluster_address::serialize(address, serializer)
}

fn owned_address<'de, 'a, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Cow<'a, ClusterName>, D::Error> {
    cluster_address::deserialize(deserializer).map(Cow::Owned)
}

#[expect(
    clippy::ptr_arg,
    reason = "serde hands a field to its helper by reference"
)]
fn has_no_reason(reason: &Cow<'_, Option<ChangeReason>>) -> bool {
    reason.is_none()
}

#[expect(
    clippy::ptr_arg,
    reason = "serde hands a field to its helper by reference"
)]
fn counts_nothing(unchanged: &Cow<'_, BTreeMap<String, usize>>) -> bool {
    unchanged.is_empty()
}

#[expect(
    clippy::ptr_arg,
    reason = "serde hands a field to its helper by reference"
)]
fn plans_nothing(capacity: &Cow<'_, CapacityPlan>) -> bool {
    capacity.is_empty()
}

#[expect(
    clippy::ptr_arg,
    reason = "serde hands a field to its helper by reference"
)]
fn no_drift(drift: &Cow<'_, [Drift]>) -> bool {
    drift.is_empty()
}

#[expect(
    clippy::ptr_arg,
    reason = "serde hands a field to its helper by reference"
)]
fn has_no_digest(digest: &Cow<'_, Option<String>>) -> bool {
    digest.is_none()
}

#[expect(
    clippy::ptr_arg,
    reason = "serde hands a field to its helper by reference"
)]
fn no_labels(labels: &Cow<'_, [String]>) -> bool {
    labels.is_empty()
}

#[expect(
    clippy::ptr_arg,
    reason = "serde hands a field to its helper by reference"
)]
fn not_in_error(in_error: &Cow<'_, Option<InError>>) -> bool {
    in_error.is_none()
}

impl Serialize for ClusterChange {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ChangeDocument {
            address: Cow::Borrowed(&self.address),
            action: self.action,
            reason: Cow::Borrowed(&self.reason),
            drift: Cow::Borrowed(&self.drift),
            in_error: Cow::Borrowed(&self.in_error),
            declared_labels: Cow::Borrowed(&self.declared_labels),
            fields: Cow::Borrowed(&self.fields),
            update_mask: Cow::Borrowed(self.update_mask()),
            update_mode: self.update_mode(),
            impacts: Cow::Borrowed(&self.impacts),
            warnings: Cow::Borrowed(&self.warnings),
            requests: Cow::Borrowed(&self.requests),
            live_update_time: Cow::Borrowed(&self.live_update_time),
            timeouts: self.timeouts,
            unchanged_attributes: Cow::Borrowed(&self.unchanged_attributes),
            capacity: Cow::Borrowed(&self.capacity),
            desired_digest: Cow::Borrowed(&self.desired_digest),
        }
        .serialize(serializer)
    }
}

/// A change's document whose `update_mask` or `update_mode` is not what its request sends.
#[derive(Debug, thiserror::Error)]
#[error(
    "the change of cluster {cluster} says its update {what} is {written}, but its request sends {sent}"
)]
pub struct UpdateDisagrees {
    cluster: String,
    what: &'static str,
    written: String,
    sent: String,
}

impl TryFrom<ChangeDocument<'static>> for ClusterChange {
    type Error = UpdateDisagrees;

    fn try_from(document: ChangeDocument<'static>) -> Result<Self, Self::Error> {
        let change = Self {
            address: document.address.into_owned(),
            action: document.action,
            reason: document.reason.into_owned(),
            fields: document.fields.into_owned(),
            impacts: document.impacts.into_owned(),
            warnings: document.warnings.into_owned(),
            requests: document.requests.into_owned(),
            live_update_time: document.live_update_time.into_owned(),
            timeouts: document.timeouts,
            unchanged_attributes: document.unchanged_attributes.into_owned(),
            capacity: document.capacity.into_owned(),
            desired_digest: document.desired_digest.into_owned(),
            drift: document.drift.into_owned(),
            in_error: document.in_error.into_owned(),
            declared_labels: document.declared_labels.into_owned(),
        };
        let disagrees = |what, written: String, sent: String| UpdateDisagrees {
            cluster: change.address.to_string(),
            what,
            written,
            sent,
        };
        if *document.update_mask != *change.update_mask() {
            let joined = |paths: &[UpdateMaskPath]| UpdateMask::new(paths.to_vec()).to_string();
            return Err(disagrees(
                "mask",
                joined(&document.update_mask),
                joined(change.update_mask()),
            ));
        }
        if document.update_mode != change.update_mode() {
            let named =
                |mode: Option<UpdateMode>| mode.map_or("none".to_owned(), |m| m.to_string());
            return Err(disagrees(
                "mode",
                named(document.update_mode),
                named(change.update_mode()),
            ));
        }
        Ok(change)
    }
}

impl ClusterChange {
    /// For an update (and a release's labels-only PATCH): the mask its PATCH sends.
    pub fn update_mask(&self) -> &[UpdateMaskPath] {
        self.patch().map_or(&[], |(mask, _)| mask.paths())
    }

    /// For an update (and a release's labels-only PATCH): the `updateMode` its PATCH sends.
    pub fn update_mode(&self) -> Option<UpdateMode> {
        self.patch().map(|(_, mode)| mode)
    }

    fn patch(&self) -> Option<(&UpdateMask, UpdateMode)> {
        self.requests.iter().find_map(|request| match request {
            ClusterRequest::Update { mask, mode, .. } => Some((mask, *mode)),
            ClusterRequest::Create { .. } | ClusterRequest::Delete { .. } => None,
        })
    }

    /// Whether applying the change can kill jobs: a delete, a replacement, or an update that
    /// recreates nodes, deletes a pool or lowers a pool's `max_node_count` (Slurm may stop the
    /// jobs running on the nodes that go).
    pub fn is_disruptive(&self) -> bool {
        self.disruption() != Disruption::Nothing
    }

    /// Which of the cluster's nodes the change takes away, with whatever runs on them.
    pub fn disruption(&self) -> Disruption {
        match self.action {
            Action::Delete | Action::Replace => Disruption::WholeCluster,
            Action::Update => self.update_disruption(),
            Action::Create | Action::Release | Action::NoOp => Disruption::Nothing,
        }
    }

    fn update_disruption(&self) -> Disruption {
        if self
            .impacts
            .iter()
            .any(|impact| impact.class == ImpactClass::ReplacesCluster)
        {
            return Disruption::WholeCluster;
        }
        let mut pools: Vec<PoolDisruption> = Vec::new();
        let mut add = |pool: &str, harm: PoolHarm| {
            match pools.iter_mut().find(|p| p.pool == pool) {
                // Deleting a pool takes all of it; recreating its nodes takes more than a shrink.
                Some(known) if harm.takes_more_than(known.harm) => known.harm = harm,
                Some(_) => {}
                None => pools.push(PoolDisruption {
                    pool: pool.to_owned(),
                    harm,
                }),
            }
        };
        for impact in &self.impacts {
            let harm = match impact.class {
                ImpactClass::RecreatesNodes => PoolHarm::RecreatesNodes,
                ImpactClass::DeletesPool => PoolHarm::Deleted,
                _ => continue,
            };
            add(impact.pool.as_deref().unwrap_or("?"), harm);
        }
        for field in &self.fields {
            if let Some((pool, from, to)) = field.pool_shrink() {
                add(pool, PoolHarm::Shrinks { from, to });
            }
        }
        if pools.is_empty() {
            Disruption::Nothing
        } else {
            Disruption::Pools(pools)
        }
    }
}

/// What a change takes away of a cluster's nodes ([`ClusterChange::disruption`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Disruption {
    /// Nothing: no node goes.
    Nothing,
    /// Every node: the cluster is deleted or replaced.
    WholeCluster,
    /// The nodes of these pools, in the order the change names them.
    Pools(Vec<PoolDisruption>),
}

/// One node pool whose nodes a change takes away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolDisruption {
    /// The pool's ID.
    pub pool: String,
    /// How.
    pub harm: PoolHarm,
}

/// How a change takes a pool's nodes away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolHarm {
    /// The service recreates every node of the pool.
    RecreatesNodes,
    /// The pool and its nodes are deleted.
    Deleted,
    /// `max_node_count` goes down: the nodes above the new maximum go (the service picks
    /// which).
    Shrinks {
        /// The live maximum.
        from: i64,
        /// The new maximum.
        to: i64,
    },
}

impl PoolHarm {
    fn rank(self) -> u8 {
        match self {
            Self::Shrinks { .. } => 0,
            Self::RecreatesNodes => 1,
            Self::Deleted => 2,
        }
    }

    fn takes_more_than(self, other: Self) -> bool {
        self.rank() > other.rank()
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

impl ClusterChange {
    /// The first Slurm setting the change sets or changes (a partition's `config` included),
    /// whose effect on the controller only a look at Slurm after the operation can tell.
    pub fn changed_slurm_setting(&self) -> Option<&str> {
        self.fields
            .iter()
            .map(|field| &field.path)
            .find(|path| {
                SLURM_SETTINGS.iter().any(|setting| path.is_within(setting))
                    || (path.is_within("orchestrator_spec.slurm_spec.partitions")
                        && path.segments().get(3).is_some_and(|s| s.name == "config"))
            })
            .map(FieldPath::as_str)
    }
}

impl FieldChange {
    /// Whether this change lowers a pool's `max_node_count`: the nodes above the new maximum
    /// are removed, with whatever runs on them.
    pub fn shrinks_pool(&self) -> bool {
        self.pool_shrink().is_some()
    }

    /// The pool whose `max_node_count` this change lowers, with the live and the new maximum.
    fn pool_shrink(&self) -> Option<(&str, i64, i64)> {
        let count = |value: &Option<Value>| {
            value.as_ref().and_then(|v| {
                v.as_i64()
                    .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
            })
        };
        let [pools, scaling, max] = self.path.segments() else {
            return None;
        };
        let Some(Selector::Key(pool)) = &pools.selector else {
            return None;
        };
        let is_max = (
            pools.name.as_str(),
            scaling.name.as_str(),
            max.name.as_str(),
        ) == ("node_pools", "scaling_spec", "max_node_count");
        match (count(&self.before), count(&self.after)) {
            (Some(from), Some(to)) if is_max && to < from => Some((pool, from, to)),
            _ => None,
        }
    }
}

/// Why a cluster gets its action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ChangeReason {
    /// Deleted: the cluster carries this stack's label and is no longer declared.
    NoLongerDeclared {
        /// The stack that owns it.
        stack: String,
    },
    /// Deleted: `destroy` was asked for this declared cluster.
    DestroyRequested,
    /// Deleted: `destroy --idle-for` found it idle for long enough.
    Idle {
        /// What its Slurm showed, e.g. `no active job or busy node; last busy 3h ago (>= 2h)`.
        evidence: String,
        /// The threshold, as `--idle-for` spells it (`2h`); absent in plans saved before it
        /// was kept.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        idle_for: Option<String>,
    },
    /// Created: the cluster is declared, and `destroy --idle-for` deleted it for being idle
    /// (the applied record remembers it); apply creates it again.
    RecreateAfterIdle {
        /// When it was deleted, RFC 3339.
        deleted_at: String,
        /// The threshold it was deleted with (`2h`).
        idle_for: String,
        /// What its Slurm showed then.
        evidence: String,
    },
    /// Replaced: `--replace` asked for it.
    ReplaceRequested,
    /// Replaced: the live cluster is broken, whatever its fields say.
    Broken {
        /// `clusterStatus.state`, e.g. `ERROR`.
        state: String,
        /// The service's `clusterStatus.detail` and error message, when given.
        detail: Option<String>,
    },
    /// The cluster is being deleted already (`STOPPING`): no DELETE is sent; apply waits for
    /// it to be gone (and, for a declared cluster, then creates it).
    BeingDeleted,
    /// Released by a `removed` block.
    Removed,
}

/// Timeouts, in seconds, after defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedTimeouts {
    /// Create.
    pub create: u64,
    /// Update.
    pub update: u64,
    /// Delete.
    pub delete: u64,
}

impl Default for PlannedTimeouts {
    fn default() -> Self {
        Self {
            create: 120 * 60,
            update: 60 * 60,
            delete: 120 * 60,
        }
    }
}

/// One changed field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldChange {
    /// snake_case path with selectors, e.g. `node_pools[cpu].scaling_spec.max_node_count`.
    pub path: FieldPath,
    /// Live value (JSON, normalised); `None` when absent.
    pub before: Option<Value>,
    /// Desired value; `None` when removed.
    pub after: Option<Value>,
    /// The field is immutable: this change is why the cluster is replaced.
    pub forces_replacement: bool,
    /// The value came from a sensitive variable: render `(sensitive)`.
    pub sensitive: bool,
    /// What the change does.
    pub impact: Impact,
}

/// An impact class, with the pool it concerns.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Impact {
    /// The class.
    pub class: ImpactClass,
    /// The node pool, for pool impacts.
    pub pool: Option<String>,
    /// The impact is our inference: the product documentation does not state it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inferred: bool,
}

impl fmt::Display for Impact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.class.describe(self.pool.as_deref()))?;
        if self.inferred {
            f.write_str(" (inferred)")?;
        }
        Ok(())
    }
}
