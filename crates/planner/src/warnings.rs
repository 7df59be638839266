//! Warnings shown under a cluster's change: things that are allowed but that a user would want
//! to know before applying (the default partition moves, the cluster is busy, a pool gets
//! smaller), and the one thing that is not allowed although each field is valid on its own:
//! removing a node pool that the login pool or a partition still refers to after the update.

use clusterform_model::{Action, Cluster};
use serde_json::Value;

use crate::plan::FieldChange;

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
) -> Vec<String> {
    let mut warnings = Vec::new();
    if action == Action::NoOp {
        return still_working(live_cluster).into_iter().collect();
    }
    if let Some(busy) = busy(live_cluster) {
        warnings.push(busy);
    }
    warnings.extend(default_partition_moves(fields, desired, live));
    warnings.extend(
        fields
            .iter()
            .filter_map(|field| pool_shrinks(field, live_cluster)),
    );
    warnings
}

/// `the labels owner, cost-center are not in the configuration and are kept: …`, for a labels
/// update of a cluster that carries labels someone else put on it.
pub(crate) fn labels_kept(kept: &[(String, Value)]) -> Option<String> {
    if kept.is_empty() {
        return None;
    }
    let keys: Vec<String> = kept.iter().map(|(key, _)| format!("`{key}`")).collect();
    let (which, are) = match keys.as_slice() {
        [one] => (format!("the label {one}"), "is"),
        several => (format!("the labels {}", several.join(", ")), "are"),
    };
    Some(format!(
        "{which} {are} not in the configuration and {are} kept: clusterform does not remove \
         labels someone else put on a cluster (declare them to manage them)"
    ))
}

/// What a `node_pools` PATCH sends back of what the service filled in (`node_pools[cpu].node_image
/// = "projects/…"`); a value that may hold a secret is not quoted.
pub(crate) fn carried_from_live(carried: &[(String, Option<Value>)]) -> Option<String> {
    if carried.is_empty() {
        return None;
    }
    let each: Vec<String> = carried
        .iter()
        .map(|(path, value)| match value {
            Some(value) => format!("{path} = {value}"),
            None => format!("{path} = (sensitive)"),
        })
        .collect();
    Some(format!(
        "this node_pools update sends back what the service filled in where the configuration \
         sets nothing, which may pin it (an unset node_image follows the default image, a set \
         one stays): {}",
        each.join(", ")
    ))
}

/// `max_node_count of pool cpu goes from 8 to 4: …`, for a pool that gets smaller, with what
/// the cluster reports of the pool's nodes (`clusterStatus.nodesStatus`) when it reports them:
/// how many are above the new maximum. Without that report, the nodes above it may be any.
fn pool_shrinks(field: &FieldChange, live: &Cluster) -> Option<String> {
    if !field.shrinks_pool() {
        return None;
    }
    let pool = field.impact.pool.as_deref().unwrap_or("?");
    let shown =
        |value: &Option<Value>| value.as_ref().map_or_else(String::new, ToString::to_string);
    let (before, after) = (shown(&field.before), shown(&field.after));
    let (before, after) = (before.trim_matches('"'), after.trim_matches('"'));
    let consequence = match (live.nodes_reported(pool), after.parse::<usize>()) {
        (Some(nodes), Ok(maximum)) if nodes > maximum => format!(
            "the cluster reports {nodes} nodes in the pool, so {} above the new maximum are removed, and Slurm jobs running on them are stopped",
            nodes - maximum
        ),
        (Some(nodes), Ok(_)) => format!(
            "the cluster reports {nodes} {} in the pool, none above the new maximum, so none is removed now",
            if nodes == 1 { "node" } else { "nodes" }
        ),
        _ => "nodes above the new maximum are removed, and Slurm jobs running on them are stopped"
            .to_owned(),
    };
    Some(format!(
        "max_node_count of pool {pool} goes from {before} to {after}: {consequence}"
    ))
}

/// The service is working on the cluster already (one in `ERROR` is replaced and one
/// `STOPPING` waited for: their plans say so themselves).
fn busy(live: &Cluster) -> Option<String> {
    let state = live.cluster_state().filter(|s| s.is_working())?.as_str();
    Some(format!(
        "the cluster is {state} right now: apply waits for the running operation to end before sending its request"
    ))
}

/// For a cluster that matches its configuration: an operation started earlier (perhaps by a
/// run that was killed before it could journal it) is still running on it.
fn still_working(live: &Cluster) -> Option<String> {
    let state = live.cluster_state().filter(|s| s.is_working())?.as_str();
    Some(format!(
        "the cluster is {state} right now: an operation started earlier is still running on it"
    ))
}

fn default_partition_moves(
    fields: &[FieldChange],
    desired: &Value,
    live: &Value,
) -> Option<String> {
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
    let name = |id: Option<String>| id.map_or_else(|| "none".to_owned(), |id| format!("`{id}`"));
    Some(format!(
        "the default partition moves from {} to {}: default_partition_id is unset, so the first partition is the default for every job submitted without --partition",
        name(before),
        name(after)
    ))
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
