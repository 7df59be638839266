//! A declared pool's `fallback` alternatives: the create's chain of requests, the update that
//! adds such a pool, a live pool running an alternative (no drift), and `--replace`, which
//! starts the chain from the top again.

use clusterform_config::{DesiredCluster, PoolFallbacks};
use clusterform_model::rest::ClusterRequest;
use clusterform_model::{Action, NodePool};
use clusterform_planner::{ClusterChange, PlanOptions, PoolAlternative, plan};
use serde_json::{Value, json};

use crate::support::*;

const FALLBACK: &str = "n2-standard-16";

/// The canonical cluster with its `cpu` pool asking for one node at create: a chain applies
/// only through a pool with static nodes (the testkit's starts empty). It shadows the
/// testkit's `seed` in this file.
fn seed() -> Value {
    let mut cluster = clusterform_testkit::seed();
    cluster["nodePools"][1]["scalingSpec"]["minNodeCount"] = json!(1);
    cluster
}

/// [`seed`] as the service returns it, running.
fn live_seed(id: &str) -> clusterform_model::LiveCluster {
    cluster(served(id, &seed(), Some(STACK), "RUNNING"))
}

/// The seed's `cpu` pool on `machine`.
fn cpu_pool_on(machine: &str) -> NodePool {
    let mut pool = seed()["nodePools"][1].clone();
    pool["machineSpec"]["machineType"] = json!(machine);
    serde_json::from_value(pool).unwrap()
}

/// `train01` as `wanted` declares it, its `cpu` pool falling back to [`FALLBACK`].
fn with_fallback(wanted: Value) -> DesiredCluster {
    let mut declared = desired("train01", wanted);
    declared.fallbacks = vec![PoolFallbacks {
        pool: "cpu".to_owned(),
        alternatives: vec![cpu_pool_on(FALLBACK)],
    }];
    declared
}

fn planned(declared: DesiredCluster, live: &[clusterform_model::LiveCluster]) -> ClusterChange {
    planned_with(declared, live, &PlanOptions::default())
}

fn planned_with(
    declared: DesiredCluster,
    live: &[clusterform_model::LiveCluster],
    options: &PlanOptions,
) -> ClusterChange {
    plan(&config(vec![declared]), live, options)
        .unwrap()
        .changes
        .remove(0)
}

/// The machine type of pool `pool` in a request's body.
fn machine_of(request: &ClusterRequest, pool: &str) -> Value {
    let body = match request {
        ClusterRequest::Create { body, .. } | ClusterRequest::Update { body, .. } => body,
        ClusterRequest::Delete { .. } => panic!("a delete has no body"),
    };
    let pools = body["nodePools"].as_array().unwrap();
    let found = pools.iter().find(|p| p["id"] == pool).unwrap();
    found["machineSpec"]["machineType"].clone()
}

/// Puts the live pool `pool` (found by ID: the service orders pools its own way) on `machine`.
fn set_machine(live: &mut Value, pool: &str, machine: &str) {
    let pools = live["nodePools"].as_array_mut().unwrap();
    let found = pools.iter_mut().find(|p| p["id"] == pool).unwrap();
    found["machineSpec"]["machineType"] = json!(machine);
}

fn fallback_alternative() -> PoolAlternative {
    PoolAlternative {
        machine_type: Some(FALLBACK.to_owned()),
        provisioning_model: None,
    }
}

#[test]
fn a_create_carries_its_fallbacks_create_and_shows_the_chain() {
    let change = planned(with_fallback(seed()), &[]);
    assert_eq!(change.action, Action::Create);
    let declared = seed()["nodePools"][1]["machineSpec"]["machineType"].clone();
    assert_eq!(machine_of(&change.requests[0], "cpu"), declared);
    let [fallback] = change.capacity.fallbacks.as_slice() else {
        panic!("{:?}", change.capacity.fallbacks);
    };
    assert!(matches!(fallback, ClusterRequest::Create { .. }));
    assert_eq!(machine_of(fallback, "cpu"), FALLBACK);
    assert_eq!(change.capacity.chains.len(), 1);
    assert_eq!(change.capacity.chains[0].pool, "cpu");
    assert_eq!(
        change.capacity.chains[0].alternatives,
        [fallback_alternative()]
    );
}

#[test]
fn a_pool_that_starts_empty_has_no_chain_at_create() {
    let mut empty_at_create = clusterform_testkit::seed();
    empty_at_create["nodePools"][1]["scalingSpec"]["minNodeCount"] = json!(0);
    let change = planned(with_fallback(empty_at_create), &[]);
    assert_eq!(change.action, Action::Create);
    assert!(change.capacity.fallbacks.is_empty());
    assert!(change.capacity.chains.is_empty());
}

#[test]
fn a_live_pool_running_its_fallback_matches_its_declaration() {
    let mut live = served("train01", &seed(), Some(STACK), "RUNNING");
    set_machine(&mut live, "cpu", FALLBACK);
    let change = planned(with_fallback(seed()), &[cluster(live)]);
    assert_eq!(change.action, Action::NoOp, "{:?}", change.fields);
    let [running] = change.capacity.running.as_slice() else {
        panic!("{:?}", change.capacity.running);
    };
    assert_eq!(
        (running.pool.as_str(), running.attempt.number()),
        ("cpu", 2)
    );
    assert_eq!(running.alternative, fallback_alternative());
}

#[test]
fn a_live_pool_running_neither_its_declaration_nor_a_fallback_is_a_change() {
    let mut live = served("train01", &seed(), Some(STACK), "RUNNING");
    set_machine(&mut live, "cpu", "n2-highmem-32");
    let change = planned(with_fallback(seed()), &[cluster(live)]);
    assert_ne!(change.action, Action::NoOp);
    assert!(change.capacity.running.is_empty());
    assert!(
        change
            .fields
            .iter()
            .any(|f| f.path.to_string().contains("machine_type")),
        "{:?}",
        change.fields
    );
}

#[test]
fn a_pool_added_by_update_falls_back_by_update() {
    let mut wanted = seed();
    let mut gpu = wanted["nodePools"][1].clone();
    gpu["id"] = json!("gpu");
    wanted["nodePools"]
        .as_array_mut()
        .unwrap()
        .push(gpu.clone());
    let mut declared = desired("train01", wanted);
    gpu["machineSpec"]["machineType"] = json!(FALLBACK);
    declared.fallbacks = vec![PoolFallbacks {
        pool: "gpu".to_owned(),
        alternatives: vec![serde_json::from_value(gpu).unwrap()],
    }];
    let change = planned(declared, &[live_seed("train01")]);
    assert_eq!(change.action, Action::Update);
    let [fallback] = change.capacity.fallbacks.as_slice() else {
        panic!("{:?}", change.capacity.fallbacks);
    };
    let ClusterRequest::Update { mask, .. } = fallback else {
        panic!("not an update: {fallback:?}");
    };
    assert_eq!(
        mask.paths(),
        change.update_mask(),
        "the same mask as the declared pool's"
    );
    assert_eq!(machine_of(fallback, "gpu"), FALLBACK);
    let declared_machine = seed()["nodePools"][1]["machineSpec"]["machineType"].clone();
    assert_eq!(machine_of(&change.requests[0], "gpu"), declared_machine);
    let chained: Vec<&str> = change
        .capacity
        .chains
        .iter()
        .map(|c| c.pool.as_str())
        .collect();
    assert_eq!(chained, ["gpu"]);
}

/// The pool `pool` of a request's body.
fn pool_of(request: &ClusterRequest, pool: &str) -> Value {
    let body = match request {
        ClusterRequest::Create { body, .. } | ClusterRequest::Update { body, .. } => body,
        ClusterRequest::Delete { .. } => panic!("a delete has no body"),
    };
    let pools = body["nodePools"].as_array().unwrap();
    pools.iter().find(|p| p["id"] == pool).unwrap().clone()
}

#[test]
fn a_pool_added_by_update_gets_the_chain_it_gets_in_a_create() {
    let mut wanted = seed();
    let mut gpu = wanted["nodePools"][1].clone();
    gpu["id"] = json!("gpu");
    wanted["nodePools"]
        .as_array_mut()
        .unwrap()
        .push(gpu.clone());
    let mut declared = desired("train01", wanted);
    let alternative = |machine: &str, min: u64| {
        let mut pool = gpu.clone();
        pool["machineSpec"]["machineType"] = json!(machine);
        pool["scalingSpec"]["minNodeCount"] = json!(min);
        serde_json::from_value::<NodePool>(pool).unwrap()
    };
    declared.fallbacks = vec![PoolFallbacks {
        pool: "gpu".to_owned(),
        alternatives: vec![alternative(FALLBACK, 1), alternative("n2-highmem-32", 2)],
    }];
    let created = planned(declared.clone(), &[]);
    let updated = planned(declared, &[live_seed("train01")]);
    assert_eq!(
        (created.action, updated.action),
        (Action::Create, Action::Update)
    );
    assert_eq!(created.capacity.chains, updated.capacity.chains);
    assert_eq!(created.capacity.fallbacks.len(), 2);
    assert_eq!(updated.capacity.fallbacks.len(), 2);
    for (create, update) in created
        .capacity
        .fallbacks
        .iter()
        .zip(&updated.capacity.fallbacks)
    {
        assert!(
            matches!(create, ClusterRequest::Create { .. }),
            "{create:?}"
        );
        assert!(
            matches!(update, ClusterRequest::Update { .. }),
            "{update:?}"
        );
        assert_eq!(pool_of(create, "gpu"), pool_of(update, "gpu"));
    }
}

#[test]
fn an_update_of_a_pool_that_exists_does_not_walk_its_fallbacks() {
    let mut wanted = seed();
    wanted["labels"] = json!({"team": "research"});
    let change = planned(with_fallback(wanted), &[live_seed("train01")]);
    assert_eq!(change.action, Action::Update);
    assert!(change.capacity.fallbacks.is_empty());
    assert!(change.capacity.chains.is_empty());
}

#[test]
fn replace_starts_from_the_declared_machines_even_when_a_fallback_runs() {
    let mut live = served("train01", &seed(), Some(STACK), "RUNNING");
    set_machine(&mut live, "cpu", FALLBACK);
    let options = PlanOptions {
        replace: vec!["train01".to_owned()],
        ..PlanOptions::default()
    };
    let change = planned_with(with_fallback(seed()), &[cluster(live)], &options);
    assert_eq!(change.action, Action::Replace);
    let declared = seed()["nodePools"][1]["machineSpec"]["machineType"].clone();
    assert!(matches!(change.requests[0], ClusterRequest::Delete { .. }));
    assert_eq!(machine_of(&change.requests[1], "cpu"), declared);
    assert_eq!(machine_of(&change.capacity.fallbacks[0], "cpu"), FALLBACK);
}

#[test]
fn a_pool_running_the_alternative_clusterform_chose_is_no_drift_even_under_replace() {
    let mut live = served("train01", &seed(), Some(STACK), "RUNNING");
    set_machine(&mut live, "cpu", FALLBACK);
    let live = cluster(live);
    let declared = with_fallback(seed());
    let digest = clusterform_planner::desired_digest(&declared).unwrap();
    let whole: clusterform_planner::AppliedDigests =
        [(address("train01"), digest)].into_iter().collect();
    let per_field = whole.clone().with_field_digests(
        address("train01"),
        clusterform_planner::field_digests(&live.cluster),
    );
    let replace = PlanOptions {
        replace: vec!["train01".to_owned()],
        ..PlanOptions::default()
    };
    for options in [PlanOptions::default(), replace] {
        for record in [&whole, &per_field] {
            let config = config(vec![declared.clone()]);
            let change = clusterform_planner::PlanBuilder::new(&config, &options)
                .with_applied(record)
                .finish(std::slice::from_ref(&live))
                .unwrap()
                .changes
                .remove(0);
            assert!(change.drift.is_empty(), "{options:?}: {:?}", change.drift);
        }
    }
}

/// The seed's `cpu` machine type.
const DECLARED_CPU: &str = "n2-standard-8";
const THIRD: &str = "n2-standard-4";

/// `train01` with its `cpu` pool falling back to [`FALLBACK`], then to [`THIRD`].
fn with_two_fallbacks() -> DesiredCluster {
    let mut declared = with_fallback(seed());
    declared.fallbacks[0].alternatives.push(cpu_pool_on(THIRD));
    declared
}

/// `train01` as a failed create on `machine` leaves it: in ERROR for a stockout, never
/// started.
fn left_by_a_create_on(machine: &str) -> Value {
    let mut live = served("train01", &seed(), Some(STACK), "ERROR");
    set_machine(&mut live, "cpu", machine);
    live["clusterStatus"]["error"] = json!({"code": 8, "message": "(state:STOCKOUT)"});
    live
}

fn planned_with_record(
    declared: DesiredCluster,
    live: &[clusterform_model::LiveCluster],
    applied: &clusterform_planner::AppliedDigests,
) -> ClusterChange {
    let declared = config(vec![declared]);
    let options = PlanOptions::default();
    clusterform_planner::PlanBuilder::new(&declared, &options)
        .with_applied(applied)
        .finish(live)
        .unwrap()
        .changes
        .remove(0)
}

/// With no journal entry nor record, a stack cluster a chain's attempt left in ERROR is
/// matched to that attempt by its pools, and the chain goes on after it.
#[test]
fn a_chain_that_lost_its_place_goes_on_after_the_attempt_its_cluster_runs() {
    for (machine, known_out) in [(DECLARED_CPU, Some(1)), (FALLBACK, Some(2)), (THIRD, None)] {
        let live = cluster(left_by_a_create_on(machine));
        let change = planned(with_two_fallbacks(), std::slice::from_ref(&live));
        assert_eq!(change.action, Action::Replace, "{machine}");
        assert!(
            matches!(
                change.reason,
                Some(clusterform_planner::ChangeReason::Broken { .. })
            ),
            "{machine}: {:?}",
            change.reason
        );
        // The last alternative left it: the chain was at its end, a new one starts at the top.
        assert_eq!(
            change.capacity.known_out.map(|out| out.number()),
            known_out,
            "{machine}"
        );
    }
}

/// A cluster that ran, that the applied record knows, that failed for another reason or that
/// `prevent_destroy` protects is never taken for a lost attempt's leftover.
#[test]
fn a_cluster_that_ran_or_is_recorded_is_not_taken_for_a_lost_attempt() {
    let mut started = left_by_a_create_on(FALLBACK);
    started["startTime"] = json!("2026-11-02T10:10:00Z");
    let mut other_failure = left_by_a_create_on(FALLBACK);
    other_failure["clusterStatus"]["error"] = json!({"code": 13, "message": "boot failure"});
    for live in [started, other_failure] {
        let live = cluster(live);
        let change = planned(with_two_fallbacks(), std::slice::from_ref(&live));
        assert_ne!(
            change.action,
            Action::Replace,
            "{:?}",
            live.cluster.cluster_status
        );
        assert!(change.in_error.is_some());
    }
    let live = cluster(left_by_a_create_on(FALLBACK));
    let recorded: clusterform_planner::AppliedDigests =
        [(live.address.clone(), "digest".to_owned())]
            .into_iter()
            .collect();
    let change = planned_with_record(with_two_fallbacks(), std::slice::from_ref(&live), &recorded);
    assert_ne!(change.action, Action::Replace);
    let mut protected = with_two_fallbacks();
    protected.lifecycle.prevent_destroy = true;
    let change = planned(protected, std::slice::from_ref(&live));
    assert_ne!(change.action, Action::Replace);
}
