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

/// The fallback chain a create or an update walks: the pools whose alternatives it tries, in
/// the declaration's order. A create's chain has every pool with fallbacks that asks for
/// machines at create ([`DesiredCluster::create_fallbacks`]: a pool that starts empty cannot
/// fail its create for capacity, so it has no chain); an update's has those of them it adds.
/// Attempt k (from 0) puts each pool's k-th alternative, or its last when it has fewer, in
/// place of the pool, so a pool gets the same chain whether a create or an update adds it.
#[derive(Debug)]
pub(crate) struct FallbackChain<'c> {
    cluster: &'c DesiredCluster,
    pools: Vec<&'c PoolFallbacks>,
}

impl<'c> FallbackChain<'c> {
    /// The chain of a create of `cluster`.
    pub(crate) fn of_create(cluster: &'c DesiredCluster) -> Self {
        Self {
            cluster,
            pools: cluster.create_fallbacks().collect(),
        }
    }

    /// The chain of an update of the live cluster `live` (JSON) to `cluster`: the pools of
    /// a create's chain that the live cluster does not have.
    pub(crate) fn of_added(cluster: &'c DesiredCluster, live: &Value) -> Self {
        let mut chain = Self::of_create(cluster);
        chain
            .pools
            .retain(|fallbacks| live_pool(live, &fallbacks.pool).is_none());
        chain
    }

    /// The chain of an update that adds the pools `added` (by ID): the pools of a create's
    /// chain among them. What [`Self::of_added`] finds from the live cluster, found from the
    /// plan's added paths (preflight has the plan, not the live cluster).
    pub(crate) fn of_added_pools(cluster: &'c DesiredCluster, added: &[&str]) -> Self {
        let mut chain = Self::of_create(cluster);
        chain
            .pools
            .retain(|fallbacks| added.contains(&fallbacks.pool.as_str()));
        chain
    }

    /// The pools whose own `fallback` block `attempt` (from 1) runs: not those that have
    /// fewer blocks and run their last again.
    pub(crate) fn fallbacks_at(&self, attempt: usize) -> Vec<&'c str> {
        self.pools
            .iter()
            .filter(|fallbacks| (1..=fallbacks.alternatives.len()).contains(&attempt))
            .map(|fallbacks| fallbacks.pool.as_str())
            .collect()
    }

    /// How many attempts it has: one more than the most alternatives any of its pools has
    /// (1 without pools).
    pub(crate) fn attempts(&self) -> usize {
        1 + self
            .pools
            .iter()
            .map(|fallbacks| fallbacks.alternatives.len())
            .max()
            .unwrap_or(0)
    }

    /// `base` with the chain's pools as attempt `attempt` has them.
    pub(crate) fn attempt(&self, base: &Cluster, attempt: usize) -> Cluster {
        let attempted = self.cluster.attempt(attempt);
        let mut cluster = base.clone();
        for pool in cluster.node_pools.iter_mut().flatten() {
            if !self.pools.iter().any(|fallbacks| fallbacks.pool == pool.id) {
                continue;
            }
            if let Some(alternative) = attempted.node_pool(&pool.id) {
                pool.clone_from(alternative);
            }
        }
        cluster
    }

    /// Its pools' alternatives as the plan shows them.
    pub(crate) fn shown(&self) -> Vec<PoolChain> {
        self.pools
            .iter()
            .map(|fallbacks| PoolChain {
                pool: fallbacks.pool.clone(),
                alternatives: fallbacks.alternatives.iter().map(alternative_of).collect(),
            })
            .collect()
    }
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
