//! A saved plan is input from another machine: before it is applied, each of its changes is
//! planned again from the configuration and the live clusters, with the options the change
//! itself shows (its update mode, a requested replacement), and must come out the same — its
//! action, fields, update mask and mode, timeouts and every request. A file whose requests
//! were edited (another cluster or project, an injected startup script, another mask or mode)
//! or that names a cluster twice is refused, naming the cluster; nothing of it is applied.

use std::collections::{BTreeMap, BTreeSet};

use clusterform_config::Config;
use clusterform_model::{ClusterName, LiveCluster, UpdateMode};

use crate::options::PlanOptions;
use crate::plan::{ChangeReason, ClusterChange, Plan};
use crate::planning::plan;

/// How a saved plan differs from what its configuration and the live clusters give now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SavedPlanMismatch {
    /// The plan manages another stack than the configuration.
    #[error("the plan manages stack `{planned}`, the configuration stack `{configured}`")]
    Stack {
        /// The plan's stack.
        planned: String,
        /// The configuration's.
        configured: String,
    },
    /// One cluster has two changes.
    #[error("cluster {address} has two changes in the plan")]
    Repeated {
        /// The cluster, `project/region/id`.
        address: String,
    },
    /// The change cannot be planned now.
    #[error("cluster {address} cannot be planned from the configuration now: {reason}")]
    Unplannable {
        /// The cluster.
        address: String,
        /// Why.
        reason: String,
    },
    /// Planning the cluster again gives no change for it (another project or location, a
    /// cluster the configuration does not name).
    #[error("cluster {address} is not a cluster the configuration and the live clusters give")]
    Unknown {
        /// The cluster.
        address: String,
    },
    /// Planning the cluster again gives another change.
    #[error("cluster {address}: the plan's {what}: not what its change implies")]
    Differs {
        /// The cluster.
        address: String,
        /// What differs: `action`, `fields`, `update mask`, `update mode`, `timeouts`,
        /// `requests`, `desired digest`.
        what: &'static str,
    },
}

/// Every way `saved` differs from what `config` and `live` give now, each change planned again
/// with the update mode it shows and, when it shows one, its requested replacement.
pub fn saved_plan_mismatches(
    saved: &Plan,
    config: &Config,
    live: &[LiveCluster],
) -> Vec<SavedPlanMismatch> {
    let mut mismatches = Vec::new();
    if saved.stack != config.provider.stack {
        mismatches.push(SavedPlanMismatch::Stack {
            planned: saved.stack.clone(),
            configured: config.provider.stack.clone(),
        });
    }
    let mut seen = BTreeSet::new();
    for change in &saved.changes {
        if !seen.insert(&change.address) {
            mismatches.push(SavedPlanMismatch::Repeated {
                address: shown(&change.address),
            });
        }
    }
    for (mode, changes) in by_update_mode(saved) {
        mismatches.extend(group_mismatches(
            saved.destroy,
            saved.idle_for.is_some(),
            mode,
            &changes,
            config,
            live,
        ));
    }
    mismatches
}

/// The saved changes grouped by the update mode each shows.
fn by_update_mode(saved: &Plan) -> BTreeMap<Option<UpdateMode>, Vec<&ClusterChange>> {
    let mut groups: BTreeMap<Option<UpdateMode>, Vec<&ClusterChange>> = BTreeMap::new();
    for change in &saved.changes {
        groups.entry(change.update_mode()).or_default().push(change);
    }
    groups
}

/// The mismatches of the changes that show one update mode, planned again together.
fn group_mismatches(
    destroy: bool,
    idle: bool,
    update_mode: Option<UpdateMode>,
    changes: &[&ClusterChange],
    config: &Config,
    live: &[LiveCluster],
) -> Vec<SavedPlanMismatch> {
    let options = PlanOptions {
        targets: changes.iter().map(|c| c.address.id().to_string()).collect(),
        replace: changes
            .iter()
            .filter(|c| c.reason == Some(ChangeReason::ReplaceRequested))
            .map(|c| c.address.id().to_string())
            .collect(),
        update_mode,
        destroy,
        // An idle destroy leaves protected clusters out, as `plan --destroy --idle-for` did.
        keep_protected: idle,
    };
    let fresh = match plan(config, live, &options) {
        Ok(fresh) => fresh,
        Err(error) => {
            return changes
                .iter()
                .map(|c| SavedPlanMismatch::Unplannable {
                    address: shown(&c.address),
                    reason: error.to_string(),
                })
                .collect();
        }
    };
    changes
        .iter()
        .filter_map(|saved| {
            let address = shown(&saved.address);
            let Some(again) = fresh.changes.iter().find(|c| c.address == saved.address) else {
                return Some(SavedPlanMismatch::Unknown { address });
            };
            first_difference(saved, again, idle)
                .map(|what| SavedPlanMismatch::Differs { address, what })
        })
        .collect()
}

/// What the executor would do differently: the first of action, fields, mask, mode, timeouts,
/// requests and the digest it would record that differs (warnings, impacts, drift and running
/// jobs only inform). In an idle destroy (`idle`), a deletion's reason is the idle evidence
/// where planning again gives a requested destroy: apply reads the evidence again.
fn first_difference(
    saved: &ClusterChange,
    again: &ClusterChange,
    idle: bool,
) -> Option<&'static str> {
    let same_reason = saved.reason == again.reason
        || (idle
            && matches!(saved.reason, Some(ChangeReason::Idle { .. }))
            && again.reason == Some(ChangeReason::DestroyRequested));
    [
        ("action", saved.action == again.action && same_reason),
        ("fields", saved.fields == again.fields),
        ("update mask", saved.update_mask() == again.update_mask()),
        ("update mode", saved.update_mode() == again.update_mode()),
        ("timeouts", saved.timeouts == again.timeouts),
        ("requests", saved.requests == again.requests),
        // What the executor records once the change is applied; a plan saved without it
        // records nothing.
        (
            "desired digest",
            saved.desired_digest.is_none() || saved.desired_digest == again.desired_digest,
        ),
    ]
    .into_iter()
    .find(|(_, same)| !same)
    .map(|(what, _)| what)
}

fn shown(address: &ClusterName) -> String {
    address.to_string()
}
