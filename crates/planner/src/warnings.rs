//! Warnings shown under a cluster's change: things that are allowed but that a user would want
//! to know before applying (the default partition moves, the cluster is busy, a pool gets
//! smaller), and the one thing that is not allowed although each field is valid on its own:
//! removing a node pool that the login pool or a partition still refers to after the update.

use clusterform_model::{Action, Cluster, ClusterState};
use serde_json::Value;

use crate::plan::FieldChange;
use crate::plan_warning::{CarriedValue, PlanWarning};

const PARTITIONS: &str = "/orchestratorSpec/slurmSpec/partitions";
const DEFAULT_PARTITION: &str = "/orchestratorSpec/slurmSpec/defaultPartitionId";
const LOGIN_POOL: &str = "/orchestratorSpec/slurmSpec/loginNodePoolId";

/// The warnings for one change. `desired` is the desired cluster JSON with ignored fields
/// removed, `live` the live cluster JSON.
pub(crate) fn for_change(
    action: Action,
    fields: &[FieldChange],
    desired: &Value,
    live: &Value,
    live_cluster: &Cluster,
) -> Vec<PlanWarning> {
    let working = working_state(live_cluster);
    if action == Action::NoOp {
        return working
            .map(|state| PlanWarning::StillWorking { state })
            .into_iter()
            .collect();
    }
    let mut warnings: Vec<PlanWarning> = working
        .map(|state| PlanWarning::Busy { state })
        .into_iter()
        .collect();
    warnings.extend(default_partition_moves(fields, desired, live));
    warnings.extend(
        fields
            .iter()
            .filter_map(|field| pool_shrinks(field, live_cluster)),
    );
    warnings
}

/// The labels someone else put on a cluster, for a labels update that keeps them.
pub(crate) fn labels_kept(kept: &[(String, Value)]) -> Option<PlanWarning> {
    (!kept.is_empty()).then(|| PlanWarning::LabelsKept {
        keys: kept.iter().map(|(key, _)| key.clone()).collect(),
    })
}

/// What a `node_pools` PATCH sends back of what the service filled in; a value that may hold a
/// secret comes without it.
pub(crate) fn carried_from_live(carried: Vec<(String, Option<Value>)>) -> Option<PlanWarning> {
    (!carried.is_empty()).then(|| PlanWarning::CarriedFromLive {
        values: carried
            .into_iter()
            .map(|(path, value)| CarriedValue { path, value })
            .collect(),
    })
}

/// A pool whose `max_node_count` goes down, with what the cluster reports of the pool's nodes.
fn pool_shrinks(field: &FieldChange, live: &Cluster) -> Option<PlanWarning> {
    if !field.shrinks_pool() {
        return None;
    }
    let pool = field.impact.pool.clone().unwrap_or_else(|| "?".to_owned());
    let shown = |value: &Option<Value>| {
        value.as_ref().map_or_else(String::new, |v| {
            v.as_str().map_or_else(|| v.to_string(), str::to_owned)
        })
    };
    Some(PlanWarning::PoolShrinks {
        nodes_reported: live.nodes_reported(&pool),
        pool,
        from: shown(&field.before),
        to: shown(&field.after),
    })
}

/// The state of a cluster an operation is changing right now (one in `ERROR` is replaced and
/// one `STOPPING` waited for: their plans say so themselves).
fn working_state(live: &Cluster) -> Option<ClusterState> {
    live.cluster_state().filter(|s| s.is_working())
}

fn default_partition_moves(
    fields: &[FieldChange],
    desired: &Value,
    live: &Value,
) -> Option<PlanWarning> {
    let partitions_change = fields
        .iter()
        .any(|c| c.path.is_within("orchestrator_spec.slurm_spec.partitions"));
    let has_default = |cluster: &Value| {
        cluster
            .pointer(DEFAULT_PARTITION)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    if !partitions_change || has_default(desired) || has_default(live) {
        return None;
    }
    let first = |cluster: &Value| {
        cluster
            .pointer(PARTITIONS)?
            .as_array()?
            .first()?
            .get("id")?
            .as_str()
            .map(str::to_owned)
    };
    let (before, after) = (first(live), first(desired));
    if before == after {
        return None;
    }
    Some(PlanWarning::DefaultPartitionMoves {
        from: before,
        to: after,
    })
}

/// Each node pool the update removes while the login pool or a partition still refers to it
/// after the update (what the configuration sets, else what stays live because it is not sent).
pub(crate) fn removed_pools_still_referenced(
    fields: &[FieldChange],
    desired: &Value,
    live: &Value,
) -> Vec<String> {
    let mut removed: Vec<&str> = fields
        .iter()
        .filter(|c| c.impact.class == clusterform_model::fields::ImpactClass::DeletesPool)
        .filter_map(|c| c.impact.pool.as_deref())
        .collect();
    removed.dedup();
    // What stays after the update: the desired value where the configuration sets it, the
    // live value where it does not (it is not sent).
    let after = |pointer: &str| desired.pointer(pointer).or_else(|| live.pointer(pointer));
    let partitions = after(PARTITIONS)
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let login = after(LOGIN_POOL).and_then(Value::as_str);
    let mut warnings = Vec::new();
    for pool in removed {
        if login == Some(pool) {
            warnings.push(format!(
                "node pool `{pool}` would be removed, but login_node_pool_id still refers to it"
            ));
        }
        for partition in partitions {
            let refers = partition
                .get("nodePoolIds")
                .and_then(Value::as_array)
                .is_some_and(|ids| ids.iter().any(|id| id.as_str() == Some(pool)));
            if refers {
                let id = partition.get("id").and_then(Value::as_str).unwrap_or("?");
                warnings.push(format!(
                    "node pool `{pool}` would be removed, but partition `{id}` still refers to it"
                ));
            }
        }
    }
    warnings
}
