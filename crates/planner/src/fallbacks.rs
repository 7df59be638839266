//! A declared cluster's `fallback` alternatives in its plan: which alternative each live pool
//! runs (a pool that runs any of its alternatives matches its declaration, so a cluster that
//! fell back is not flipped back to the declared machines), and the chain each pool shows.
//! Only pools with static nodes (`min_node_count > 0`) have a chain: a create asks for no
//! other machines, so no other pool can make it fail for capacity.

use std::borrow::Cow;

use clusterform_config::{DesiredCluster, FALLBACK_FIELDS, PoolFallbacks};
use clusterform_model::fields::camel_case;
use clusterform_model::{Attempt, Cluster, NodePool};
use serde_json::{Map, Value};

use crate::diff;
use crate::plan::{PoolAlternative, PoolChain, RunningAlternative};

/// The declared cluster with each pool that runs one of its alternatives as that alternative,
/// and which ones they are. A pool whose declared machines match live, or that matches none
/// of its alternatives, stays as declared (the comparison then shows what differs from the
/// declaration).
pub(crate) fn as_running<'c>(
    cluster: &'c DesiredCluster,
    live: &Value,
) -> (Cow<'c, Cluster>, Vec<RunningAlternative>) {
    let mut running = Vec::new();
    for fallbacks in &cluster.fallbacks {
        let Some(live_pool) = live_pool(live, &fallbacks.pool) else {
            continue;
        };
        let declared = cluster
            .cluster
            .node_pools
            .iter()
            .flatten()
            .find(|pool| pool.id == fallbacks.pool);
        if declared.is_none_or(|pool| runs(pool, live_pool)) {
            continue;
        }
        if let Some(index) = fallbacks
            .alternatives
            .iter()
            .position(|alternative| runs(alternative, live_pool))
        {
            running.push(RunningAlternative {
                pool: fallbacks.pool.clone(),
                attempt: Attempt::at(index + 1),
                alternative: alternative_of(&fallbacks.alternatives[index]),
            });
        }
    }
    if running.is_empty() {
        return (Cow::Borrowed(&cluster.cluster), running);
    }
    let mut adopted = cluster.cluster.clone();
    for pool in adopted.node_pools.iter_mut().flatten() {
        if let Some(run) = running.iter().find(|run| run.pool == pool.id) {
            let alternatives = alternatives_of(cluster, &run.pool);
            if let Some(fallback) = run.attempt.fallback() {
                pool.clone_from(&alternatives[fallback - 1]);
            }
        }
    }
    (Cow::Owned(adopted), running)
}

/// `cluster` with the pools named in `pools` as attempt `attempt` has them.
pub(crate) fn with_attempt_of(
    cluster: &Cluster,
    desired: &DesiredCluster,
    pools: &[&str],
    attempt: usize,
) -> Cluster {
    let attempted = desired.attempt(attempt);
    let mut cluster = cluster.clone();
    for pool in cluster.node_pools.iter_mut().flatten() {
        if !pools.contains(&pool.id.as_str()) {
            continue;
        }
        let alternative = attempted
            .node_pools
            .iter()
            .flatten()
            .find(|candidate| candidate.id == pool.id);
        if let Some(alternative) = alternative {
            pool.clone_from(alternative);
        }
    }
    cluster
}

/// The chains of the pools named in `pools` (every pool with fallbacks, for a create).
pub(crate) fn chains(cluster: &DesiredCluster, pools: &[&str]) -> Vec<PoolChain> {
    cluster
        .fallbacks
        .iter()
        .filter(|fallbacks| pools.contains(&fallbacks.pool.as_str()))
        .map(|fallbacks| PoolChain {
            pool: fallbacks.pool.clone(),
            alternatives: fallbacks.alternatives.iter().map(alternative_of).collect(),
        })
        .collect()
}

/// Every pool whose fallbacks a create (or an update adding it) tries: a pool with fallbacks
/// that asks for machines at create ([`DesiredCluster::create_fallbacks`]). A pool that
/// starts empty cannot fail its create for capacity, so it has no chain.
pub(crate) fn pools_with_fallbacks(cluster: &DesiredCluster) -> Vec<&str> {
    cluster
        .create_fallbacks()
        .map(|fallbacks| fallbacks.pool.as_str())
        .collect()
}

fn alternatives_of<'c>(cluster: &'c DesiredCluster, pool: &str) -> &'c [NodePool] {
    cluster
        .fallbacks
        .iter()
        .find(|fallbacks| fallbacks.pool == pool)
        .map_or(&[], |fallbacks: &PoolFallbacks| &fallbacks.alternatives)
}

fn alternative_of(pool: &NodePool) -> PoolAlternative {
    PoolAlternative {
        machine_type: pool
            .machine_spec
            .as_ref()
            .and_then(|spec| spec.machine_type.clone()),
        provisioning_model: pool.provisioning_model.clone(),
    }
}

/// Whether every pool of `attempted` that has fallbacks runs as `attempted` has it in the live
/// cluster `live` (JSON), and the live cluster has every such pool.
pub(crate) fn runs_attempt(attempted: &Cluster, live: &Value) -> bool {
    attempted
        .node_pools
        .iter()
        .flatten()
        .all(|pool| live_pool(live, &pool.id).is_some_and(|live_pool| runs(pool, live_pool)))
}

/// The live pool `id`, as JSON.
fn live_pool<'l>(live: &'l Value, id: &str) -> Option<&'l Value> {
    live.get("nodePools")?
        .as_array()?
        .iter()
        .find(|pool| pool.get("id").and_then(Value::as_str) == Some(id))
}

/// Whether the live pool runs `candidate`: every field a fallback may set that `candidate`
/// sets is as live has it, compared as the plan compares fields.
fn runs(candidate: &NodePool, live_pool: &Value) -> bool {
    let desired = fallback_part(&serde_json::to_value(candidate).unwrap_or_default());
    let live = fallback_part(live_pool);
    let as_cluster =
        |pool: Value| Value::Object(Map::from_iter([("nodePools".to_owned(), [pool].into())]));
    diff::compare(&as_cluster(desired), &as_cluster(live))
        .changes
        .is_empty()
}

/// A pool's ID and the fields a fallback may set.
fn fallback_part(pool: &Value) -> Value {
    let keep = |key: &str| key == "id" || FALLBACK_FIELDS.iter().any(|f| camel_case(f) == key);
    let part = pool
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(key, _)| keep(key))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    Value::Object(part)
}
