//! A saved plan is input from another machine: before it is applied, it is planned again,
//! once, from the configuration and the live clusters with the flags it records, and its
//! changes must be exactly what that plan gives — the same clusters, each with the same action,
//! fields, update mask and mode, timeouts and requests. The flags must be the ones it was made
//! with (their digest with the configuration's). A file whose flags, requests or set of changes
//! were edited (a delete added outside its `--target`, turned into a destroy, another mask or
//! mode, a replacement asked for) or that names a cluster twice is refused, naming the cluster;
//! nothing of it is applied.

use std::collections::{BTreeMap, BTreeSet};

use clusterform_config::Config;
use clusterform_model::{ClusterName, LiveCluster};

use crate::builder::plan;
use crate::plan::{ChangeReason, ClusterChange, Plan};

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
    /// The plan's `flags` are not the ones its `flags_digest` was made from, with this
    /// configuration.
    #[error(
        "the plan's flags are not the ones it was made with: `flags_digest` is not the digest of its `flags` and configuration"
    )]
    FlagsEdited,
    /// One cluster has two changes.
    #[error("cluster {address} has two changes in the plan")]
    Repeated {
        /// The cluster, `project/region/id`.
        address: String,
    },
    /// The plan's flags make no plan now.
    #[error("the plan cannot be made again from the configuration with its flags now: {reason}")]
    Unplannable {
        /// Why.
        reason: String,
    },
    /// The plan changes a cluster that is neither declared nor live (another project or
    /// location, a cluster the configuration does not name).
    #[error("cluster {address} is not a cluster the configuration and the live clusters give")]
    Unknown {
        /// The cluster.
        address: String,
    },
    /// The plan changes a known cluster that planning again with its flags leaves alone (out
    /// of its targets, not deleted by it).
    #[error(
        "cluster {address} has a change in the plan, but planning again with the plan's flags gives it none"
    )]
    Extra {
        /// The cluster.
        address: String,
    },
    /// Planning again with the plan's flags gives a change the plan lacks.
    #[error(
        "cluster {address} has no change in the plan, but planning again with the plan's flags gives one"
    )]
    Missing {
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

/// Every way `saved` differs from what `config` and `live` give now, planned again once with
/// the flags it records (whose digest must be theirs with `config`'s).
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
    if !saved.flags_are_bound_to(&config.digest) {
        // Planning with flags that were edited would only word the edit's consequences.
        mismatches.push(SavedPlanMismatch::FlagsEdited);
        return mismatches;
    }
    let mut seen = BTreeSet::new();
    for change in &saved.changes {
        if !seen.insert(&change.address) {
            mismatches.push(SavedPlanMismatch::Repeated {
                address: shown(&change.address),
            });
        }
    }
    match plan(config, live, &saved.flags.options()) {
        Ok(fresh) => mismatches.extend(change_mismatches(saved, &fresh, config, live)),
        Err(error) => mismatches.push(SavedPlanMismatch::Unplannable {
            reason: error.to_string(),
        }),
    }
    mismatches
}

/// How the saved changes differ from the `fresh` plan's: a change of a cluster it does not
/// change, a change unlike its, and a change of its that the saved plan lacks — unless the
/// saved plan is an idle destroy, whose idle filter left out the clusters that were busy.
fn change_mismatches(
    saved: &Plan,
    fresh: &Plan,
    config: &Config,
    live: &[LiveCluster],
) -> Vec<SavedPlanMismatch> {
    let idle = saved.flags.idle_for.is_some();
    let again: BTreeMap<&ClusterName, &ClusterChange> =
        fresh.changes.iter().map(|c| (&c.address, c)).collect();
    let mut mismatches: Vec<SavedPlanMismatch> = saved
        .changes
        .iter()
        .filter_map(|change| {
            let address = shown(&change.address);
            match again.get(&change.address) {
                Some(again) => first_difference(change, again, idle)
                    .map(|what| SavedPlanMismatch::Differs { address, what }),
                None if is_known(&change.address, config, live) => {
                    Some(SavedPlanMismatch::Extra { address })
                }
                None => Some(SavedPlanMismatch::Unknown { address }),
            }
        })
        .collect();
    if !idle {
        let planned: BTreeSet<&ClusterName> = saved.changes.iter().map(|c| &c.address).collect();
        mismatches.extend(
            fresh
                .changes
                .iter()
                .filter(|change| !planned.contains(&change.address))
                .map(|change| SavedPlanMismatch::Missing {
                    address: shown(&change.address),
                }),
        );
    }
    mismatches
}

/// Whether the configuration declares the cluster or it is live.
fn is_known(address: &ClusterName, config: &Config, live: &[LiveCluster]) -> bool {
    config
        .clusters
        .iter()
        .any(|cluster| cluster.name == *address)
        || live.iter().any(|cluster| cluster.address == *address)
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
