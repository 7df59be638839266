//! `plan()`: matching declared clusters with live ones, checking ownership, and choosing each
//! cluster's action, fields, mask, mode, impacts, warnings and requests.
//!
//! Ownership works without a state file: a live cluster belongs to this stack when its
//! `clusterform-stack` label says so. Declared clusters found live without the label (or with
//! another stack's) stop the plan; live clusters of this stack that are no longer declared are
//! deleted, each with its reason, unless a `removed` block releases them (their ownership
//! label is dropped, nothing else changes); every other live cluster is left alone and not
//! listed. Live clusters are matched by the address they were read at, never by their name.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use clusterform_config::{Config, DesiredCluster, Timeouts};
use clusterform_model::fields::{FieldAccess, ImpactClass, UpdateMaskPath, lookup};
use clusterform_model::rest::ClusterRequest;
use clusterform_model::{
    Action, Attempt, Cluster, ClusterName, ClusterState, STACK_LABEL, UpdateMode, paths,
};
use serde_json::Value;

use crate::diff;
use crate::drift::{AppliedDigests, IdleDeletion, digest_of, drift_by_field, drift_of};
use crate::error::PlanError;
use crate::fallbacks::{self, FallbackChain};
use crate::field_digests::FieldDigests;
use crate::ignore;
use crate::options::PlanOptions;
use crate::plan::{
    CapacityPlan, ChangeReason, ClusterChange, Drift, FieldChange, Impact, InError,
    PlannedTimeouts, RunningAlternative,
};
use crate::plan_warning::PlanWarning;
use crate::requests;
use crate::warnings;

/// The mode used when neither the flag, the cluster nor the provider sets one.
const DEFAULT_UPDATE_MODE: UpdateMode = UpdateMode::UserAndService;

/// Plans one declared cluster: its change, or `None` when destroying a cluster that is not
/// live (or that `options.keep_protected` leaves out). `applied` is what earlier applies
/// recorded: it words the change (its drift, a re-creation after an idle delete) and says
/// which clusters a create of clusterform's left failed (taint: replaced while in `ERROR`).
pub(crate) fn plan_declared(
    desired: &Config,
    cluster: &DesiredCluster,
    current: Option<&Cluster>,
    options: &PlanOptions,
    applied: Option<&AppliedDigests>,
) -> Result<Option<ClusterChange>, PlanError> {
    let address = cluster.name.clone();
    if let Some(current) = current {
        check_ownership(&address, current, &desired.provider.stack)?;
    }
    let planner = ClusterPlanner {
        desired,
        cluster,
        recorded: applied.and_then(|applied| applied.get(&address)),
        recorded_fields: applied.and_then(|applied| applied.field_digests(&address)),
        tainted: applied.is_some_and(|applied| applied.is_tainted(&address)),
        idle_deletion: applied.and_then(|applied| applied.idle_deletion(&address)),
        managed_labels: applied.map_or(&[], |applied| applied.managed_labels(&address)),
        address,
        options,
    };
    match (options.destroy, current) {
        (true, Some(_)) if options.keep_protected && cluster.lifecycle.prevent_destroy => Ok(None),
        (true, Some(current)) => planner.destroy(current).map(Some),
        (true, None) => Ok(None),
        (false, current) => planner.converge(current).map(Some),
    }
}

fn check_ownership(address: &ClusterName, live: &Cluster, stack: &str) -> Result<(), PlanError> {
    if live.is_owned_by(stack) {
        return Ok(());
    }
    match live.owner() {
        Some(owner) => Err(PlanError::OwnedByOtherStack {
            id: address.id().to_string(),
            stack: owner.to_owned(),
        }),
        None => Err(PlanError::Unowned {
            id: address.id().to_string(),
            project: address.project().to_owned(),
            region: address.region().to_owned(),
            stack: stack.to_owned(),
        }),
    }
}

fn timeouts_of(timeouts: &Timeouts) -> PlannedTimeouts {
    let defaults = PlannedTimeouts::default();
    PlannedTimeouts {
        create: timeouts.create.map_or(defaults.create, |s| s.0),
        update: timeouts.update.map_or(defaults.update, |s| s.0),
        delete: timeouts.delete.map_or(defaults.delete, |s| s.0),
    }
}

/// The live cluster as JSON without the ownership label, which plans never show.
fn without_stack_label(live: &Cluster) -> Value {
    let mut json = serde_json::to_value(live).unwrap_or_default();
    if let Some(object) = json.as_object_mut() {
        let labels = object.get_mut("labels").and_then(Value::as_object_mut);
        if let Some(labels) = labels {
            labels.remove(STACK_LABEL);
            if labels.is_empty() {
                object.remove("labels");
            }
        }
    }
    json
}

/// Fields whose values are scripts or Slurm settings, which can carry credentials (a token in a
/// startup script, `AccountingStoragePass` in a Slurm config).
const MAY_HOLD_SECRETS: &[&str] = &[
    "node_pools[].startup_script",
    "orchestrator_spec.slurm_spec.prolog_bash_scripts",
    "orchestrator_spec.slurm_spec.epilog_bash_scripts",
    "orchestrator_spec.slurm_spec.config",
    "orchestrator_spec.slurm_spec.partitions[].config",
    "orchestrator_spec.slurm_spec.node_sets[].config",
];

/// Hides the fields of `change` that may hold secrets. For a cluster no longer declared there
/// is no configuration left to say which of its values came from sensitive variables, so the
/// plan does not print any value that could be one.
pub(crate) fn hide_possible_secrets(change: &mut ClusterChange) {
    for field in &mut change.fields {
        let generic = field.path.generic();
        if MAY_HOLD_SECRETS
            .iter()
            .any(|secret| paths::is_within(&generic, secret))
        {
            field.sensitive = true;
        }
    }
}

/// The live labels the configuration does not declare and no earlier apply set (`managed`, the
/// applied record's), which are someone else's: labels are not authoritative, as the Terraform
/// provider's resource treats them, so a cluster's labels are compared, and updated, with them
/// kept. A label an apply set and the configuration no longer declares is removed; without the
/// record, every undeclared label is kept: clusterform never removes a label it cannot tell is
/// its own.
fn kept_labels(desired: &Value, live: &Value, managed: &[String]) -> Vec<(String, Value)> {
    let (Some(declared), Some(live)) = (
        desired.get("labels").and_then(Value::as_object),
        live.get("labels").and_then(Value::as_object),
    ) else {
        return Vec::new();
    };
    live.iter()
        .filter(|(key, _)| key.as_str() != STACK_LABEL && !declared.contains_key(*key))
        .filter(|(key, _)| !managed.contains(key))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

/// The desired cluster with the live labels it does not declare ([`kept_labels`]).
fn with_labels_kept<'j>(
    desired: Cow<'j, Value>,
    live: &Value,
    managed: &[String],
) -> Cow<'j, Value> {
    let kept = kept_labels(&desired, live, managed);
    if kept.is_empty() {
        return desired;
    }
    let mut desired = desired.into_owned();
    if let Some(labels) = desired.get_mut("labels").and_then(Value::as_object_mut) {
        labels.extend(kept);
    }
    Cow::Owned(desired)
}

/// Each carried value, hidden (`None`) where it may hold a secret.
fn without_possible_secrets(carried: Vec<requests::Carried>) -> Vec<(String, Option<Value>)> {
    carried
        .into_iter()
        .map(|carried| {
            let secret = MAY_HOLD_SECRETS
                .iter()
                .any(|secret| paths::is_within(carried.generic, secret));
            (carried.path, (!secret).then_some(carried.value))
        })
        .collect()
}

/// A delete of a live cluster, for `reason`. A cluster being deleted already gets no request:
/// apply waits for it to be gone instead of sending a second DELETE.
pub(crate) fn deletion(
    address: ClusterName,
    live: &Cluster,
    timeouts: PlannedTimeouts,
    reason: ChangeReason,
) -> ClusterChange {
    let (reason, requests) = if live.cluster_state() == Some(ClusterState::Stopping) {
        (ChangeReason::BeingDeleted, Vec::new())
    } else {
        (reason, vec![requests::delete(&address)])
    };
    ClusterChange {
        warnings: warnings::for_change(Action::Delete, &[], &Value::Null, &Value::Null, live),
        address,
        action: Action::Delete,
        reason: Some(reason),
        fields: diff::deletion(&without_stack_label(live)),
        impacts: Vec::new(),
        requests,
        live_update_time: live.update_time.clone(),
        timeouts,
        unchanged_attributes: BTreeMap::new(),
        capacity: CapacityPlan::default(),
        desired_digest: None,
        drift: Vec::new(),
        in_error: None,
        declared_labels: Vec::new(),
    }
}

/// A `removed` block's cluster that this stack owns: one `labels` PATCH drops the ownership
/// label and keeps everything else; the cluster keeps running. (One that is absent, or not
/// this stack's, has nothing to release.)
pub(crate) fn release(address: ClusterName, live: &Cluster) -> ClusterChange {
    let live_json = serde_json::to_value(live).unwrap_or_default();
    let request = requests::release(&address, &live_json);
    ClusterChange {
        warnings: warnings::for_change(Action::Release, &[], &Value::Null, &Value::Null, live),
        address,
        action: Action::Release,
        reason: Some(ChangeReason::Removed),
        fields: Vec::new(),
        impacts: Vec::new(),
        requests: vec![request],
        live_update_time: live.update_time.clone(),
        timeouts: PlannedTimeouts::default(),
        unchanged_attributes: BTreeMap::new(),
        capacity: CapacityPlan::default(),
        desired_digest: None,
        drift: Vec::new(),
        in_error: None,
        declared_labels: Vec::new(),
    }
}

/// Plans one declared cluster.
struct ClusterPlanner<'a> {
    desired: &'a Config,
    cluster: &'a DesiredCluster,
    address: ClusterName,
    options: &'a PlanOptions,
    /// The digest an earlier apply recorded for the cluster, if any.
    recorded: Option<&'a str>,
    /// The digest of each field of the cluster as an earlier apply left it, if recorded.
    recorded_fields: Option<&'a FieldDigests>,
    /// A create of clusterform's left the cluster failed (the applied record or the journal
    /// says so): in `ERROR`, it is replaced.
    tainted: bool,
    /// `destroy --idle-for` deleted the cluster, as the applied record remembers.
    idle_deletion: Option<&'a IdleDeletion>,
    /// The labels an earlier apply set on the cluster, as the applied record remembers.
    managed_labels: &'a [String],
}

/// A declared cluster and its live one, as they are compared.
struct Sides<'s> {
    live: &'s Cluster,
    /// The live cluster's writable fields.
    live_json: &'s Value,
    /// The declared cluster, each pool that runs one of its fallbacks as that alternative.
    declared: &'s Cluster,
    /// `declared` encoded.
    desired_json: &'s Value,
    /// `desired_json` as compared with live ([`ClusterPlanner::compared`]).
    compared: &'s Value,
}

/// What a change sends, what it does to the cluster, and its fallback chain.
struct Work {
    impacts: Vec<Impact>,
    requests: Vec<ClusterRequest>,
    capacity: CapacityPlan,
}

/// A live cluster is replaced when something forces it (`forced`: taint, `--replace`) or a
/// changed field does; updated when fields differ; else left alone.
fn action_of(forced: bool, changes: &[FieldChange]) -> Action {
    if forced || changes.iter().any(|c| c.forces_replacement) {
        Action::Replace
    } else if changes.is_empty() {
        Action::NoOp
    } else {
        Action::Update
    }
}

impl ClusterPlanner<'_> {
    fn destroy(self, live: &Cluster) -> Result<ClusterChange, PlanError> {
        self.check_destroy_allowed("destroy")?;
        let mut change = deletion(
            self.address.clone(),
            live,
            timeouts_of(&self.cluster.timeouts),
            ChangeReason::DestroyRequested,
        );
        // The live values of a sensitive attribute are as secret as the configured ones.
        change.fields = self.mark_sensitive(change.fields);
        Ok(change)
    }

    /// A missing cluster is created; one being deleted is created again once it is gone; a
    /// broken one is replaced; any other is compared field by field.
    fn converge(self, live: Option<&Cluster>) -> Result<ClusterChange, PlanError> {
        match live {
            None => {
                let reason = self
                    .idle_deletion
                    .map(|deletion| ChangeReason::RecreateAfterIdle {
                        deleted_at: deletion.deleted_at.clone(),
                        idle_for: deletion.idle_for.clone(),
                        evidence: deletion.evidence.clone(),
                    });
                self.creation(reason)
            }
            Some(live) if live.cluster_state() == Some(ClusterState::Stopping) => {
                self.creation(Some(ChangeReason::BeingDeleted))
            }
            Some(live) => self.comparison(live),
        }
    }

    /// The create of the declared cluster (its first attempt) and the creates of its later
    /// attempts, each pool's next `fallback` in place of the one before.
    fn creates(&self) -> Result<(ClusterRequest, CapacityPlan), PlanError> {
        let stack = &self.desired.provider.stack;
        let first = requests::create(&self.address, &self.encode(&self.cluster.cluster)?, stack);
        let chain = FallbackChain::of_create(self.cluster);
        let fallbacks = self.chain_requests(&chain, &self.cluster.cluster, |body| {
            Ok(requests::create(&self.address, body, stack))
        })?;
        let capacity = CapacityPlan {
            fallbacks,
            chains: chain.shown(),
            running: Vec::new(),
            keep_failed: self.cluster.lifecycle.prevent_destroy,
            known_out: None,
        };
        Ok((first, capacity))
    }

    /// The request of each later attempt of `chain` (from attempt 2), made by `request` from
    /// the body of the cluster the attempt asks for: `base` with the chain's pools as that
    /// attempt has them. A create's chain and an update's are built by this one loop.
    fn chain_requests(
        &self,
        chain: &FallbackChain<'_>,
        base: &Cluster,
        request: impl Fn(&Value) -> Result<ClusterRequest, PlanError>,
    ) -> Result<Vec<ClusterRequest>, PlanError> {
        (1..chain.attempts())
            .map(|attempt| request(&self.encode(&chain.attempt(base, attempt))?))
            .collect()
    }

    /// Why the live cluster must be replaced whatever its fields say, if it must: it is in
    /// `ERROR` and a create of clusterform's left it so (taint), or `--replace` names it. A
    /// cluster that went into `ERROR` later is not replaced unasked.
    /// `lost` is the attempt a create whose record was lost left the cluster at, if one did.
    fn replacement_reason(&self, live: &Cluster, lost: Option<Attempt>) -> Option<ChangeReason> {
        let ours = self.tainted || lost.is_some();
        if let Some(InError { state, detail, .. }) = in_error(live).filter(|_| ours) {
            return Some(ChangeReason::Broken { state, detail });
        }
        self.options
            .replace
            .iter()
            .any(|id| id == self.cluster.name.id().as_str())
            .then_some(ChangeReason::ReplaceRequested)
    }

    /// The attempt of this cluster's create chain whose failed create
    /// left the live cluster, when no record says so (its journal entry was lost to a kill
    /// while the create's answer was in flight): the cluster is in `ERROR` for a shortage, has
    /// never been `RUNNING` (no `startTime`), so no job ever ran on it, the applied record
    /// has no entry for it, and its pools are that attempt's (the latest attempt they match).
    /// `prevent_destroy` keeps such a cluster, as its chain would have.
    fn lost_failed_attempt(&self, live: &Cluster) -> Option<Attempt> {
        let status = live.cluster_status.as_ref()?;
        let never_ran = live.start_time.is_none();
        let short = status
            .error
            .as_ref()
            .is_some_and(|error| error.operation_shortage().is_some());
        // A cluster the applied record has an entry for was created (or updated) by a run
        // that ended well: it is not a create's leftover, whatever its times say.
        let recorded = self.recorded.is_some();
        if !(never_ran && short) || recorded || self.cluster.lifecycle.prevent_destroy {
            return None;
        }
        in_error(live)?;
        let live_json = self.encode(&live.writable()).ok()?;
        (0..self.cluster.attempts())
            .rev()
            .find(|&position| fallbacks::runs_attempt(&self.cluster.attempt(position), &live_json))
            .map(Attempt::at)
    }

    /// The digest of the declared cluster ([`crate::desired_digest`]), encoded as `declared`.
    fn digest(&self, declared: &Value) -> Result<String, PlanError> {
        digest_of(declared, self.cluster).map_err(|e| PlanError::Encode {
            id: self.cluster.name.id().to_string(),
            message: e.to_string(),
        })
    }

    fn encode(&self, cluster: &impl serde::Serialize) -> Result<Value, PlanError> {
        serde_json::to_value(cluster).map_err(|e| PlanError::Encode {
            id: self.cluster.name.id().to_string(),
            message: e.to_string(),
        })
    }

    /// `prevent_destroy` forbids any replacement; for a broken cluster that is an error of
    /// its own, since the cluster cannot be left as it is either.
    fn check_replace_allowed(&self, reason: Option<&ChangeReason>) -> Result<(), PlanError> {
        match reason {
            Some(ChangeReason::Broken { state, detail })
                if self.cluster.lifecycle.prevent_destroy =>
            {
                Err(PlanError::BrokenButProtected {
                    id: self.cluster.name.id().to_string(),
                    state: state.clone(),
                    detail: detail.clone(),
                })
            }
            _ => self.check_destroy_allowed("replace"),
        }
    }

    fn check_destroy_allowed(&self, action: &'static str) -> Result<(), PlanError> {
        if self.cluster.lifecycle.prevent_destroy {
            return Err(PlanError::PreventDestroy {
                id: self.cluster.name.id().to_string(),
                action,
            });
        }
        Ok(())
    }

    fn creation(self, reason: Option<ChangeReason>) -> Result<ClusterChange, PlanError> {
        let desired_json = self.encode(&self.cluster.cluster)?;
        let (create, capacity) = self.creates()?;
        let warnings = match reason {
            Some(ChangeReason::BeingDeleted) => vec![PlanWarning::BeingDeleted],
            _ => Vec::new(),
        };
        let desired_digest = Some(self.digest(&desired_json)?);
        let declared_labels = self.declared_labels();
        Ok(ClusterChange {
            fields: self.mark_sensitive(diff::creation(&desired_json)),
            address: self.address,
            action: Action::Create,
            reason,
            impacts: Vec::new(),
            warnings,
            requests: vec![create],
            live_update_time: None,
            timeouts: timeouts_of(&self.cluster.timeouts),
            unchanged_attributes: BTreeMap::new(),
            capacity,
            desired_digest,
            drift: Vec::new(),
            in_error: None,
            declared_labels,
        })
    }

    /// The desired cluster as compared with live: without ignored paths, and without a default
    /// partition already in effect.
    fn compared<'j>(&self, desired_json: &'j Value, live_json: &Value) -> Cow<'j, Value> {
        let compared = self.without_ignored(desired_json, live_json);
        let compared = without_default_in_effect(compared, live_json);
        with_labels_kept(compared, live_json, self.managed_labels)
    }

    /// The change that brings the live cluster to its declaration: compared field by field,
    /// each pool that runs one of its fallbacks compared with that alternative.
    fn comparison(self, live: &Cluster) -> Result<ClusterChange, PlanError> {
        // Comparing needs no output-only field, so the live status, events and times are not
        // encoded. (An update encodes the whole cluster again for its body, whose field order
        // is the whole cluster's.)
        let live_json = self.encode(&live.writable())?;
        let (declared, running) = fallbacks::as_running(self.cluster, &live_json);
        let desired_json = self.encode(&*declared)?;
        let compared = self.compared(&desired_json, &live_json);
        let sides = Sides {
            live,
            live_json: &live_json,
            declared: &declared,
            desired_json: &desired_json,
            compared: &compared,
        };
        let mut diff = diff::compare(&compared, &live_json);
        // Judged before a replacement compares the pools with their declaration again: a pool
        // running an alternative is no drift.
        let drift = self.drift(&diff.changes, &compared, &live_json)?;
        let lost = self.lost_failed_attempt(live);
        let reason = self.replacement_reason(live, lost);
        let action = action_of(reason.is_some(), &diff.changes);
        if action == Action::Replace && !running.is_empty() {
            // A replacement creates the declared cluster, from its first attempt.
            let declared_json = self.encode(&self.cluster.cluster)?;
            diff = diff::compare(&self.compared(&declared_json, &live_json), &live_json);
        }
        let desired_digest = self.changed_digest(action, running.is_empty(), &desired_json)?;
        let fields = self.mark_sensitive(diff.changes);
        let work = match action {
            Action::Replace => self.replacement(reason.as_ref(), lost)?,
            Action::Update => self.update(&fields, &sides, running)?,
            Action::Create | Action::Delete | Action::Release | Action::NoOp => Work {
                impacts: Vec::new(),
                requests: Vec::new(),
                capacity: self.capacity_as_running(running),
            },
        };
        // Not replaced for its ERROR: the plan says so.
        let in_error = in_error(live).filter(|_| action != Action::Replace);
        let warnings = self.comparison_warnings(action, &fields, &sides, work.requests.first());
        let (fields, unchanged) = match reason {
            // The cluster in ERROR goes whole, so what differs from it says nothing: the
            // replacement shows every field of the cluster it creates, as a create does.
            Some(ChangeReason::Broken { .. }) => (
                self.mark_sensitive(diff::recreation(&self.encode(&self.cluster.cluster)?)),
                BTreeMap::new(),
            ),
            _ => (fields, diff.unchanged),
        };
        let declared_labels = match action {
            Action::Update | Action::Replace => self.declared_labels(),
            Action::Create | Action::Delete | Action::Release | Action::NoOp => Vec::new(),
        };
        Ok(ClusterChange {
            warnings,
            declared_labels,
            address: self.address,
            action,
            reason,
            fields,
            impacts: work.impacts,
            requests: work.requests,
            live_update_time: live.update_time.clone(),
            timeouts: timeouts_of(&self.cluster.timeouts),
            unchanged_attributes: unchanged,
            capacity: work.capacity,
            desired_digest,
            drift,
            in_error,
        })
    }

    /// The digest a change records: the declared cluster's, even where a pool is compared with
    /// its running fallback (`desired_json` is the compared cluster, the declared one when no
    /// pool runs a fallback); none when nothing is sent.
    fn changed_digest(
        &self,
        action: Action,
        none_running: bool,
        desired_json: &Value,
    ) -> Result<Option<String>, PlanError> {
        match action {
            Action::Update | Action::Replace if none_running => {
                Ok(Some(self.digest(desired_json)?))
            }
            Action::Update | Action::Replace => {
                Ok(Some(self.digest(&self.encode(&self.cluster.cluster)?)?))
            }
            Action::Create | Action::Delete | Action::Release | Action::NoOp => Ok(None),
        }
    }

    /// What a plan keeps of a live cluster it does not replace: the pools that run a fallback.
    fn capacity_as_running(&self, running: Vec<RunningAlternative>) -> CapacityPlan {
        CapacityPlan {
            running,
            keep_failed: self.cluster.lifecycle.prevent_destroy,
            ..CapacityPlan::default()
        }
    }

    /// A replacement: the delete, then the declared cluster's create with its chain. Without
    /// a record, the chain goes on after the attempt the live cluster shows (`lost`).
    fn replacement(
        &self,
        reason: Option<&ChangeReason>,
        lost: Option<Attempt>,
    ) -> Result<Work, PlanError> {
        self.check_replace_allowed(reason)?;
        let (create, mut capacity) = self.creates()?;
        capacity.known_out = lost
            .filter(|_| !self.tainted)
            .filter(|out| out.number() < self.cluster.attempts());
        Ok(Work {
            impacts: vec![Impact {
                class: ImpactClass::ReplacesCluster,
                pool: None,
                inferred: false,
            }],
            requests: vec![requests::delete(&self.address), create],
            capacity,
        })
    }

    /// An update: one PATCH of the changed fields; the pools it adds that have fallbacks get
    /// their chain, each later attempt the same PATCH with those pools as the attempt has them.
    fn update(
        &self,
        fields: &[FieldChange],
        sides: &Sides<'_>,
        running: Vec<RunningAlternative>,
    ) -> Result<Work, PlanError> {
        let dangling =
            warnings::removed_pools_still_referenced(fields, sides.compared, sides.live_json);
        if !dangling.is_empty() {
            return Err(PlanError::RemovedPoolStillReferenced {
                id: self.cluster.name.id().to_string(),
                problems: dangling,
            });
        }
        let stack = &self.desired.provider.stack;
        let mask = update_mask(fields);
        let mode = self.update_mode();
        let whole_live = self.encode(sides.live)?;
        let patch = |compared: &Value| {
            requests::update(&self.address, &mask, mode, compared, &whole_live, stack)
        };
        let request = patch(sides.compared);
        let chain = FallbackChain::of_added(self.cluster, sides.live_json);
        let mut capacity = self.capacity_as_running(running);
        capacity.fallbacks = self.chain_requests(&chain, sides.declared, |attempted| {
            Ok(patch(&self.compared(attempted, sides.live_json)))
        })?;
        capacity.chains = chain.shown();
        Ok(Work {
            impacts: distinct_impacts(fields),
            requests: vec![request],
            capacity,
        })
    }

    /// The warnings of a compared cluster's change: the change's own, the labels an update
    /// keeps, and the values its first request carries from the live cluster.
    fn comparison_warnings(
        &self,
        action: Action,
        fields: &[FieldChange],
        sides: &Sides<'_>,
        first_request: Option<&ClusterRequest>,
    ) -> Vec<PlanWarning> {
        let (compared, live_json) = (sides.compared, sides.live_json);
        let mut warnings = warnings::for_change(action, fields, compared, live_json, sides.live);
        if action == Action::Update && fields.iter().any(|f| f.path.is_within("labels")) {
            let kept = kept_labels(sides.desired_json, live_json, self.managed_labels);
            warnings.extend(warnings::labels_kept(&kept));
        }
        if let Some(request) = first_request {
            let carried = requests::carried_from_live(compared, request);
            warnings.extend(warnings::carried_from_live(without_possible_secrets(
                carried,
            )));
        }
        warnings
    }

    /// What was changed outside clusterform since its last apply, as the applied record tells
    /// (nothing without a record): each field the plan changes whose live value is not the
    /// recorded one, or,
    /// from a record without field digests, every difference from a configuration whose
    /// digest is the recorded one (`as_running`: the comparison with each pool that runs an
    /// alternative as that alternative). This only words the plan.
    fn drift(
        &self,
        as_running: &[FieldChange],
        compared: &Value,
        live_json: &Value,
    ) -> Result<Vec<Drift>, PlanError> {
        if let Some(recorded) = self.recorded_fields {
            let ignored = &self.cluster.lifecycle.ignore_changes;
            return Ok(drift_by_field(
                recorded, live_json, compared, as_running, ignored,
            ));
        }
        let Some(recorded) = self.recorded.filter(|_| !as_running.is_empty()) else {
            return Ok(Vec::new());
        };
        let unchanged = self.digest(&self.encode(&self.cluster.cluster)?)? == recorded;
        Ok(if unchanged {
            drift_of(as_running)
        } else {
            Vec::new()
        })
    }

    /// The label keys the configuration declares for the cluster (none when it sets no
    /// labels), which the applied record keeps as the labels clusterform manages there.
    fn declared_labels(&self) -> Vec<String> {
        self.cluster
            .cluster
            .labels
            .iter()
            .flatten()
            .map(|(key, _)| key.clone())
            .collect()
    }

    /// The desired cluster JSON with every `ignore_changes` path taken out (copied only when
    /// there is something to take out).
    fn without_ignored<'j>(&self, desired_json: &'j Value, live_json: &Value) -> Cow<'j, Value> {
        let ignored = &self.cluster.lifecycle.ignore_changes;
        if ignored.is_empty() {
            return Cow::Borrowed(desired_json);
        }
        let mut compared = desired_json.clone();
        for path in ignored {
            ignore::apply(&mut compared, live_json, path.segments());
        }
        Cow::Owned(compared)
    }

    /// `--update-mode` > the cluster's `update_mode` > the provider's > USER_AND_SERVICE.
    fn update_mode(&self) -> UpdateMode {
        self.options
            .update_mode
            .or(self.cluster.update_mode)
            .or(self.desired.provider.update_mode)
            .unwrap_or(DEFAULT_UPDATE_MODE)
    }

    /// Flags changes that touch a value from a sensitive variable (the change lies inside a
    /// sensitive path, or contains one).
    fn mark_sensitive(&self, mut fields: Vec<FieldChange>) -> Vec<FieldChange> {
        for field in &mut fields {
            field.sensitive = self
                .cluster
                .sensitive_paths
                .iter()
                .any(|s| field.path.is_within(s) || paths::is_within(s, field.path.as_str()));
        }
        fields
    }
}

/// The desired cluster without its `default_partition_id` when that partition is the default
/// already and stays it: the live cluster sets none and lists it first, and the desired
/// partitions (or, when the configuration sets none, the live ones) still list it first. Slurm
/// sees no change then (API.md: without `default_partition_id` the first partition is the
/// default), so no update is planned for it.
fn without_default_in_effect<'j>(desired: Cow<'j, Value>, live: &Value) -> Cow<'j, Value> {
    const SLURM: &str = "/orchestratorSpec/slurmSpec";
    let first_partition = |cluster: &Value| {
        cluster
            .pointer(&format!("{SLURM}/partitions/0/id"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let Some(wanted) = desired
        .pointer(&format!("{SLURM}/defaultPartitionId"))
        .and_then(Value::as_str)
    else {
        return desired;
    };
    let live_default = live
        .pointer(&format!("{SLURM}/defaultPartitionId"))
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty());
    let first_after = if desired.pointer(&format!("{SLURM}/partitions")).is_some() {
        first_partition(&desired)
    } else {
        first_partition(live)
    };
    let in_effect = live_default.is_none()
        && first_partition(live).as_deref() == Some(wanted)
        && first_after.as_deref() == Some(wanted);
    if !in_effect {
        return desired;
    }
    let mut desired = desired.into_owned();
    if let Some(slurm) = desired.pointer_mut(SLURM).and_then(Value::as_object_mut) {
        slurm.remove("defaultPartitionId");
    }
    Cow::Owned(desired)
}

/// Whether the service reports the cluster in `ERROR` (a failed create, or a failure since),
/// with its detail, and since when (its `updateTime`: the service gives no time of the state
/// change itself).
fn in_error(live: &Cluster) -> Option<InError> {
    let status = live.cluster_status.as_ref()?;
    let state = status
        .state
        .as_deref()
        .filter(|s| ClusterState::of(s) == ClusterState::Error)?;
    let error = status.error.as_ref().map(|e| match e.code_name() {
        "" => e.message.clone(),
        code => format!("{code}: {}", e.message),
    });
    // The detail often repeats the error's message: said once, with the error's code.
    let detail = status.detail.as_ref().filter(|detail| {
        status
            .error
            .as_ref()
            .is_none_or(|e| e.message.trim_end_matches('.') != detail.trim_end_matches('.'))
    });
    // Joined by `; `, so a part's own closing full stop goes.
    let parts: Vec<String> = detail
        .cloned()
        .into_iter()
        .chain(error)
        .map(|part| part.trim_end_matches('.').to_owned())
        .filter(|p| !p.is_empty())
        .collect();
    Some(InError {
        state: state.to_owned(),
        detail: (!parts.is_empty()).then(|| parts.join("; ")),
        since: live.update_time.clone(),
    })
}

/// The smallest set of allowed mask paths covering the changes, in the documentation's order.
/// A change is covered by the mask path of its nearest mutable field: an added pool's
/// `machine_type` is immutable on its own but arrives through `node_pools`.
fn update_mask(fields: &[FieldChange]) -> Vec<UpdateMaskPath> {
    let used: BTreeSet<UpdateMaskPath> = fields
        .iter()
        .filter(|c| !c.forces_replacement)
        .filter_map(|c| covering_mask(c.path.as_str()))
        .collect();
    UpdateMaskPath::ALL
        .into_iter()
        .filter(|m| used.contains(m))
        .collect()
}

fn covering_mask(path: &str) -> Option<UpdateMaskPath> {
    let segments = paths::parse(path).ok()?;
    (1..=segments.len()).find_map(|len| {
        let generic = paths::generic(&segments[..len]);
        match lookup(generic.strip_suffix("[]").unwrap_or(&generic))?.access {
            FieldAccess::Mutable(mask) => Some(mask),
            FieldAccess::Immutable | FieldAccess::OutputOnly => None,
        }
    })
}

fn distinct_impacts(fields: &[FieldChange]) -> Vec<Impact> {
    let impacts: BTreeSet<Impact> = fields.iter().map(|c| c.impact.clone()).collect();
    impacts.into_iter().collect()
}
