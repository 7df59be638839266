//! The GPUs a change adds or removes, by accelerator type: on the static nodes now
//! (`min_node_count` × GPUs per node) and at most (`max_node_count` × GPUs per node, as far as
//! the pools may scale). Derived from a change as the plan holds it, so a plan file carries no
//! copy: the new pools are its create or PATCH request's (the whole cluster after the change),
//! the old pools are the new ones with each changed field's `before` (a delete's fields are
//! every live field). A replacement removes the old and adds the new; an update adds or removes
//! the difference; a pool whose GPUs the catalogue cannot tell is named, never guessed.

use std::collections::BTreeMap;

use clusterform_model::fields::ImpactClass;
use clusterform_model::paths::Selector;
use clusterform_model::rest::ClusterRequest;
use clusterform_model::{Action, GpusPerNode, MachineSpec, NodePool, ScalingSpec};
use serde::Serialize;
use serde_json::Value;

use crate::plan::{ClusterChange, FieldChange, Plan};

/// What a change (or a whole plan) does to the GPUs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GpuChange {
    /// By accelerator type, the types whose GPUs change.
    pub by_type: BTreeMap<String, GpuShift>,
    /// The pools whose GPUs cannot be told, which the counts leave out.
    pub unknown_pools: Vec<UnknownPool>,
}

/// The GPUs of one accelerator type that a change adds and removes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct GpuShift {
    /// On the static nodes (`min_node_count`), which run from the change on.
    pub now: Shift,
    /// On as many nodes as the pools may scale to (`max_node_count`).
    pub at_most: Shift,
}

/// GPUs added and removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Shift {
    /// Added.
    pub added: u64,
    /// Removed.
    pub removed: u64,
}

/// A pool whose machine type the catalogue does not know and whose accelerators are not named
/// in full.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnknownPool {
    /// The pool's ID.
    pub pool: String,
    /// Its machine type, when set.
    pub machine_type: Option<String>,
}

impl GpuChange {
    /// Whether it adds or removes nothing known and knows of no unknown pool.
    pub fn is_empty(&self) -> bool {
        self.by_type.is_empty() && self.unknown_pools.is_empty()
    }

    /// Adds `other`'s counts and unknown pools to these.
    pub fn absorb(&mut self, other: &Self) {
        for (kind, shift) in &other.by_type {
            let total = self.by_type.entry(kind.clone()).or_default();
            total.now.absorb(shift.now);
            total.at_most.absorb(shift.at_most);
        }
        self.unknown_pools
            .extend(other.unknown_pools.iter().cloned());
    }
}

impl Shift {
    fn absorb(&mut self, other: Self) {
        self.added += other.added;
        self.removed += other.removed;
    }

    /// `new - old`, as an addition or a removal.
    fn difference(old: u64, new: u64) -> Self {
        Self {
            added: new.saturating_sub(old),
            removed: old.saturating_sub(new),
        }
    }
}

impl Plan {
    /// What every change of the plan does to the GPUs, together.
    pub fn gpu_change(&self) -> GpuChange {
        let mut total = GpuChange::default();
        for change in &self.changes {
            total.absorb(&change.gpu_change());
        }
        total
    }
}

impl ClusterChange {
    /// What the change does to the cluster's GPUs.
    pub fn gpu_change(&self) -> GpuChange {
        let new = self.new_pools();
        let old = old_pools(&new, &self.fields);
        match self.action {
            Action::Create | Action::Replace | Action::Delete => replaced(&old, &new),
            Action::Update => updated(&old, &new),
            Action::Release | Action::NoOp => GpuChange::default(),
        }
    }

    /// The pools the change takes away and those it brings: every old and every new pool of
    /// a create, a replacement or a delete; only the pools an update changes (a pool it changes
    /// is taken away as it was and brought as it will be).
    pub(crate) fn pools_changed(&self) -> (Vec<PoolGpus>, Vec<PoolGpus>) {
        let new = self.new_pools();
        let old = old_pools(&new, &self.fields);
        match self.action {
            Action::Create | Action::Replace | Action::Delete => (old, new),
            Action::Update => {
                let gone = not_in(&old, &new);
                let came = not_in(&new, &old);
                (gone, came)
            }
            Action::Release | Action::NoOp => (Vec::new(), Vec::new()),
        }
    }

    /// The pools the change leaves: those of its create or PATCH request, none for a delete.
    fn new_pools(&self) -> Vec<PoolGpus> {
        let body = self.requests.iter().find_map(|request| match request {
            ClusterRequest::Create { body, .. } | ClusterRequest::Update { body, .. } => Some(body),
            ClusterRequest::Delete { .. } => None,
        });
        let pools = body
            .and_then(|body| body.get("nodePools"))
            .and_then(|pools| serde_json::from_value::<Vec<NodePool>>(pools.clone()).ok());
        pools
            .into_iter()
            .flatten()
            .map(|pool| PoolGpus {
                id: pool.id,
                machine: pool.machine_spec.unwrap_or_default(),
                scaling: pool.scaling_spec.unwrap_or_default(),
            })
            .collect()
    }
}

/// What of a pool decides its GPUs (and its cost).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PoolGpus {
    id: String,
    pub(crate) machine: MachineSpec,
    scaling: ScalingSpec,
}

/// A pool's GPUs of one type, now and at most, or why they cannot be told.
enum Counted {
    Gpus {
        kind: String,
        now: u64,
        at_most: u64,
    },
    None,
    Unknown(UnknownPool),
}

impl PoolGpus {
    /// Its nodes now (`min_node_count`) and at most (`max_node_count`, never below now).
    pub(crate) fn nodes(&self) -> (u64, u64) {
        let nodes = |count: Option<i64>| count.and_then(|n| u64::try_from(n).ok()).unwrap_or(0);
        let now = nodes(self.scaling.min_node_count);
        (now, nodes(self.scaling.max_node_count).max(now))
    }

    fn counted(&self) -> Counted {
        let (now, at_most) = self.nodes();
        match self.machine.gpus_per_node() {
            GpusPerNode::Gpus { kind, count } => Counted::Gpus {
                kind,
                now: now * count,
                at_most: at_most * count,
            },
            GpusPerNode::None => Counted::None,
            GpusPerNode::Unknown => Counted::Unknown(UnknownPool {
                pool: self.id.clone(),
                machine_type: self.machine.machine_type.clone(),
            }),
        }
    }
}

/// The field of a pool a change sets, when it is one that decides the pool's GPUs.
enum PoolField {
    MachineType,
    AcceleratorType,
    AcceleratorCount,
    MinNodes,
    MaxNodes,
}

/// The pool and the GPU-deciding field `change` is about, if it is one.
fn pool_field(change: &FieldChange) -> Option<(&str, PoolField)> {
    let [pools, block, leaf] = change.path.segments() else {
        return None;
    };
    let Some(Selector::Key(pool)) = &pools.selector else {
        return None;
    };
    if pools.name != "node_pools" {
        return None;
    }
    let field = match (block.name.as_str(), leaf.name.as_str()) {
        ("machine_spec", "machine_type") => PoolField::MachineType,
        ("machine_spec", "accelerator_type") => PoolField::AcceleratorType,
        ("machine_spec", "accelerator_count") => PoolField::AcceleratorCount,
        ("scaling_spec", "min_node_count") => PoolField::MinNodes,
        ("scaling_spec", "max_node_count") => PoolField::MaxNodes,
        _ => return None,
    };
    Some((pool, field))
}

/// The pools before the change: the new ones with each changed field's `before` (a pool added
/// had nothing before), and the pools only `before` values name (deleted ones).
fn old_pools(new: &[PoolGpus], fields: &[FieldChange]) -> Vec<PoolGpus> {
    let mut old: Vec<PoolGpus> = new
        .iter()
        .filter(|pool| !fields.iter().any(|field| adds_pool(field, &pool.id)))
        .cloned()
        .collect();
    for field in fields {
        let Some((id, which)) = pool_field(field) else {
            continue;
        };
        let Some(before) = &field.before else {
            continue;
        };
        let index = match old.iter().position(|pool| pool.id == id) {
            Some(index) => index,
            None => {
                old.push(PoolGpus {
                    id: id.to_owned(),
                    machine: MachineSpec::default(),
                    scaling: ScalingSpec::default(),
                });
                old.len() - 1
            }
        };
        set(&mut old[index], &which, before);
    }
    old
}

/// Whether `field` is part of the pool `pool` appearing whole.
fn adds_pool(field: &FieldChange, pool: &str) -> bool {
    field.before.is_none()
        && field.impact.pool.as_deref() == Some(pool)
        && field.impact.class == ImpactClass::AddsPool
}

fn set(pool: &mut PoolGpus, field: &PoolField, value: &Value) {
    let text = || value.as_str().map(str::to_owned);
    // Live integers may come as numbers or as strings.
    let number = || {
        value
            .as_i64()
            .or_else(|| value.as_str().and_then(|s| s.parse().ok()))
    };
    match field {
        PoolField::MachineType => pool.machine.machine_type = text(),
        PoolField::AcceleratorType => pool.machine.accelerator_type = text(),
        PoolField::AcceleratorCount => pool.machine.accelerator_count = number(),
        PoolField::MinNodes => pool.scaling.min_node_count = number(),
        PoolField::MaxNodes => pool.scaling.max_node_count = number(),
    }
}

/// GPUs of each type, now and at most, over `pools`; the pools that cannot be told aside.
#[derive(Default)]
struct Tally {
    by_type: BTreeMap<String, (u64, u64)>,
    unknown: Vec<UnknownPool>,
}

fn tally<'p>(pools: impl IntoIterator<Item = &'p PoolGpus>) -> Tally {
    let mut tally = Tally::default();
    for pool in pools {
        match pool.counted() {
            Counted::Gpus { kind, now, at_most } => {
                let entry = tally.by_type.entry(kind).or_default();
                entry.0 += now;
                entry.1 += at_most;
            }
            Counted::None => {}
            Counted::Unknown(unknown) => tally.unknown.push(unknown),
        }
    }
    tally
}

/// Every old GPU removed, every new one added (a create has no old pools, a delete no new).
fn replaced(old: &[PoolGpus], new: &[PoolGpus]) -> GpuChange {
    let (old, new) = (tally(old), tally(new));
    let mut change = GpuChange::default();
    for (kind, (now, at_most)) in old.by_type {
        let shift = change.by_type.entry(kind).or_default();
        shift.now.removed += now;
        shift.at_most.removed += at_most;
    }
    for (kind, (now, at_most)) in new.by_type {
        let shift = change.by_type.entry(kind).or_default();
        shift.now.added += now;
        shift.at_most.added += at_most;
    }
    change
        .by_type
        .retain(|_, shift| *shift != GpuShift::default());
    change.unknown_pools = either(old.unknown, new.unknown);
    change
}

/// The unknown pools of both sides, a pool unknown on both named once.
fn either(mut old: Vec<UnknownPool>, new: Vec<UnknownPool>) -> Vec<UnknownPool> {
    for unknown in new {
        if !old.contains(&unknown) {
            old.push(unknown);
        }
    }
    old
}

/// The pools of `pools` that `others` does not hold as they are.
fn not_in(pools: &[PoolGpus], others: &[PoolGpus]) -> Vec<PoolGpus> {
    pools
        .iter()
        .filter(|pool| !others.contains(pool))
        .cloned()
        .collect()
}

/// The difference of each type between the old and the new pools; only a pool the update
/// changes can make its count unknown.
fn updated(old: &[PoolGpus], new: &[PoolGpus]) -> GpuChange {
    let (gone, came) = (not_in(old, new), not_in(new, old));
    let (before, after) = (tally(&gone), tally(&came));
    let mut change = GpuChange::default();
    let kinds: Vec<&String> = before.by_type.keys().chain(after.by_type.keys()).collect();
    for kind in kinds {
        let (old_now, old_most) = before.by_type.get(kind).copied().unwrap_or_default();
        let (new_now, new_most) = after.by_type.get(kind).copied().unwrap_or_default();
        let shift = GpuShift {
            now: Shift::difference(old_now, new_now),
            at_most: Shift::difference(old_most, new_most),
        };
        if shift != GpuShift::default() {
            change.by_type.insert(kind.clone(), shift);
        }
    }
    change.unknown_pools = either(before.unknown, after.unknown);
    change
}

#[cfg(test)]
mod tests {
    use clusterform_config::Config;
    use clusterform_model::LiveCluster;
    use clusterform_testkit::{STACK, cluster, config, desired, seed, served};
    use serde_json::json;

    use super::*;
    use crate::PlanOptions;

    /// The seed cluster with a pool `gpu` of `machine_spec`, 2 to `max` nodes.
    fn with_gpus(machine_spec: &Value, max: u32) -> Value {
        let mut cluster = seed();
        cluster["nodePools"].as_array_mut().unwrap().push(json!({
            "id": "gpu", "machineSpec": machine_spec, "zone": "us-central1-a",
            "scalingSpec": {"minNodeCount": 2, "maxNodeCount": max}
        }));
        cluster
    }

    fn live(cluster: &Value) -> LiveCluster {
        self::cluster(served("train01", cluster, Some(STACK), "RUNNING"))
    }

    fn planned(config: &Config, live: &[LiveCluster]) -> GpuChange {
        let plan = crate::plan(config, live, &PlanOptions::default()).unwrap();
        assert_eq!(plan.changes.len(), 1);
        plan.changes[0].gpu_change()
    }

    fn declared(cluster: Value) -> Config {
        config(vec![desired("train01", cluster)])
    }

    fn shift(now: (u64, u64), at_most: (u64, u64)) -> GpuShift {
        GpuShift {
            now: Shift {
                added: now.0,
                removed: now.1,
            },
            at_most: Shift {
                added: at_most.0,
                removed: at_most.1,
            },
        }
    }

    fn only(kind: &str, shift: GpuShift) -> GpuChange {
        GpuChange {
            by_type: BTreeMap::from([(kind.to_owned(), shift)]),
            unknown_pools: Vec::new(),
        }
    }

    fn b200() -> Value {
        json!({"machineType": "a4-highgpu-8g"})
    }

    #[test]
    fn a_create_adds_the_built_in_accelerators_of_its_machine_type() {
        let change = planned(&declared(with_gpus(&b200(), 4)), &[]);
        assert_eq!(change, only("NVIDIA_B200", shift((16, 0), (32, 0))));
    }

    #[test]
    fn accelerators_the_pool_names_count_for_a_machine_type_outside_the_catalogue() {
        let spec = json!({"machineType": "x9-custom-4g", "acceleratorType": "NVIDIA_H100_80GB",
                          "acceleratorCount": 4});
        let change = planned(&declared(with_gpus(&spec, 3)), &[]);
        assert_eq!(change, only("NVIDIA_H100_80GB", shift((8, 0), (12, 0))));
    }

    #[test]
    fn a_delete_removes_every_gpu_of_the_live_cluster() {
        let change = planned(&config(vec![]), &[live(&with_gpus(&b200(), 4))]);
        assert_eq!(change, only("NVIDIA_B200", shift((0, 16), (0, 32))));
    }

    #[test]
    fn a_replacement_removes_the_old_gpus_and_adds_the_new() {
        let h200 = json!({"machineType": "a3-ultragpu-8g"});
        let change = planned(
            &declared(with_gpus(&b200(), 4)),
            &[live(&with_gpus(&h200, 4))],
        );
        let mut wanted = only("NVIDIA_B200", shift((16, 0), (32, 0)));
        wanted
            .by_type
            .insert("NVIDIA_H200_141GB".to_owned(), shift((0, 16), (0, 32)));
        assert_eq!(change, wanted);
    }

    #[test]
    fn a_scale_up_adds_only_the_difference() {
        let change = planned(
            &declared(with_gpus(&b200(), 6)),
            &[live(&with_gpus(&b200(), 4))],
        );
        assert_eq!(change, only("NVIDIA_B200", shift((0, 0), (16, 0))));
    }

    #[test]
    fn an_added_pool_adds_its_gpus_and_a_deleted_one_removes_them() {
        let added = planned(&declared(with_gpus(&b200(), 4)), &[live(&seed())]);
        assert_eq!(added, only("NVIDIA_B200", shift((16, 0), (32, 0))));
        let removed = planned(&declared(seed()), &[live(&with_gpus(&b200(), 4))]);
        assert_eq!(removed, only("NVIDIA_B200", shift((0, 16), (0, 32))));
    }

    #[test]
    fn an_update_that_leaves_the_pools_alone_changes_no_gpus() {
        let mut relabelled = with_gpus(&b200(), 4);
        relabelled["labels"]["team"] = json!("vision");
        let change = planned(&declared(relabelled), &[live(&with_gpus(&b200(), 4))]);
        assert!(change.is_empty(), "{change:?}");
    }

    #[test]
    fn a_machine_type_outside_the_catalogue_is_unknown_and_counted_as_nothing() {
        let change = planned(
            &declared(with_gpus(&json!({"machineType": "x9-custom-8g"}), 4)),
            &[],
        );
        assert_eq!(
            change,
            GpuChange {
                by_type: BTreeMap::new(),
                unknown_pools: vec![UnknownPool {
                    pool: "gpu".to_owned(),
                    machine_type: Some("x9-custom-8g".to_owned()),
                }],
            }
        );
    }

    #[test]
    fn a_plan_adds_up_its_changes() {
        let config = config(vec![
            desired("train01", with_gpus(&b200(), 4)),
            desired("train02", with_gpus(&b200(), 2)),
        ]);
        let plan = crate::plan(&config, &[], &PlanOptions::default()).unwrap();
        assert_eq!(
            plan.gpu_change(),
            only("NVIDIA_B200", shift((32, 0), (48, 0)))
        );
    }
}
