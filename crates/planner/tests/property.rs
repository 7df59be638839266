//! The property that proves the planner: applying a plan's requests to the live clusters with
//! the emulator's mask logic (an independent JSON implementation of the service's PATCH) and
//! planning again yields no changes; and no request names a mask path outside the allowed six.

use clusterform_emulator::mask::{ALLOWED_PATHS, apply_update_mask};
use clusterform_model::rest::RequestKind;
use clusterform_model::{Action, LiveCluster};
use clusterform_planner::{Plan, PlanError, PlanOptions, plan};
use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use proptest::sample::{select, subsequence};
use serde_json::{Value, json};

use crate::support::{PROJECT_NUMBER, REGION, STACK, cluster, config, desired, served};

const POOL_IDS: [&str; 3] = ["a", "b", "c"];

/// A node pool with a random mix of set and unset fields.
fn pool(id: &'static str) -> impl Strategy<Value = Value> {
    (
        (0..3i64, 0..4i64),
        select(vec!["us-central1-a", "us-central1-b"]),
        option::of(any::<bool>()),
        option::of((
            select(vec!["pd-ssd", "pd-standard"]),
            prop_oneof![Just(100i64), Just(200i64)],
        )),
        prop_oneof![4 => Just("n2-standard-8"), 1 => Just("n2-standard-16")],
        option::of(select(vec!["echo a", "echo b"])),
        option::of(btree_map(
            select(vec!["k1", "k2"]),
            select(vec!["v1", "v2"]),
            0..2,
        )),
    )
        .prop_map(
            move |((min, extra), zone, ips, disk, machine, script, labels)| {
                let mut pool = json!({
                    "id": id,
                    "machineSpec": {"machineType": machine},
                    "scalingSpec": {"minNodeCount": min, "maxNodeCount": min + extra},
                    "zone": zone,
                });
                if let Some(ips) = ips {
                    pool["enablePublicIps"] = json!(ips);
                }
                if let Some((kind, size)) = disk {
                    pool["bootDisk"] = json!({"bootDiskType": kind, "bootDiskSizeGb": size});
                }
                if let Some(script) = script {
                    pool["startupScript"] = json!(script);
                }
                if let Some(labels) = labels {
                    pool["labels"] = json!(labels);
                }
                pool
            },
        )
}

/// A cluster as a configuration could declare it.
fn cluster_json() -> impl Strategy<Value = Value> {
    (
        [pool("a"), pool("b"), pool("c")],
        subsequence(POOL_IDS.to_vec(), 1..=3).prop_shuffle(),
        option::of(btree_map(select(vec!["team", "env"]), select(vec!["x", "y"]), 0..3)),
        prop_oneof![4 => Just("One"), 1 => Just("Two")],
        option::of(subsequence(POOL_IDS.to_vec(), 0..=3).prop_shuffle()),
        option::of(vec(select(vec!["echo p1", "echo p2"]), 0..3)),
        option::of(select(vec!["a", "b"])),
    )
        .prop_map(|(pools, chosen, labels, display, partitions, prolog, login)| {
            let pools: Vec<Value> = chosen
                .iter()
                .map(|id| pools[POOL_IDS.iter().position(|p| p == id).unwrap_or(0)].clone())
                .collect();
            let mut slurm = json!({"homeDirectoryStorage": "projects/p/locations/us-central1-a/instances/home"});
            if let Some(partitions) = partitions {
                let partitions: Vec<Value> = partitions.iter().map(|id| json!({"id": id, "nodePoolIds": [id]})).collect();
                slurm["partitions"] = json!(partitions);
            }
            if let Some(prolog) = prolog {
                slurm["prologBashScripts"] = json!(prolog);
            }
            if let Some(login) = login {
                slurm["loginNodePoolId"] = json!(login);
            }
            let mut cluster = json!({
                "displayName": display,
                "network": {"network": "projects/p/global/networks/default"},
                "nodePools": pools,
                "orchestratorSpec": {"slurmSpec": slurm},
            });
            if let Some(labels) = labels {
                cluster["labels"] = json!(labels);
            }
            cluster
        })
}

/// A world: what is declared, and what exists live (served by the service, with neighbours).
#[derive(Debug, Clone)]
struct World {
    declared: Value,
    previous: Option<Value>,
    ignore: Vec<String>,
    orphan: bool,
}

fn world() -> impl Strategy<Value = World> {
    (
        cluster_json(),
        option::weighted(0.85, cluster_json()),
        vec(
            select(vec![
                "labels",
                "node_pool.a.scaling_spec",
                "node_pools[b].zone",
            ]),
            0..2,
        ),
        any::<bool>(),
    )
        .prop_map(|(declared, previous, ignore, orphan)| World {
            declared,
            previous,
            ignore: ignore.into_iter().map(str::to_owned).collect(),
            orphan,
        })
}

fn live_of(world: &World) -> Vec<Value> {
    let mut live = vec![
        served("other", &world.declared, Some("prod"), "RUNNING"),
        served("manual", &world.declared, None, "RUNNING"),
    ];
    if let Some(previous) = &world.previous {
        live.push(served("train01", previous, Some(STACK), "RUNNING"));
    }
    if world.orphan {
        live.push(served("old01", &world.declared, Some(STACK), "RUNNING"));
    }
    live
}

fn plan_for(world: &World, live: &[Value]) -> Result<Plan, PlanError> {
    let mut cluster_declared = desired("train01", world.declared.clone());
    cluster_declared.lifecycle.ignore_changes = world
        .ignore
        .iter()
        .map(|path| path.parse().unwrap())
        .collect();
    let live: Vec<LiveCluster> = live.iter().cloned().map(cluster).collect();
    plan(
        &config(vec![cluster_declared]),
        &live,
        &PlanOptions::default(),
    )
}

/// Runs the plan's requests against JSON clusters the way the service would.
fn apply(plan: &Plan, live: &mut Vec<Value>) {
    for change in &plan.changes {
        let id = change.address.id().as_str();
        for request in &change.requests {
            let position = live.iter().position(|c| id_of(c) == Some(id));
            match request.kind() {
                RequestKind::Delete => {
                    live.remove(position.expect("delete of an existing cluster"));
                }
                RequestKind::Create => {
                    assert!(position.is_none(), "create of an existing cluster");
                    let mut created = request.body().cloned().expect("create body");
                    created["name"] = json!(format!(
                        "projects/{PROJECT_NUMBER}/locations/{REGION}/modelDevelopmentClusters/{id}"
                    ));
                    live.push(created);
                }
                RequestKind::Update => {
                    let index = position.expect("update of an existing cluster");
                    let query = request.query();
                    let mask: Vec<&str> = query[0].1.split(',').collect();
                    let body = request.body().expect("patch body");
                    live[index] =
                        apply_update_mask(&live[index], body, &mask).expect("mask applies");
                }
            }
        }
    }
}

/// The cluster ID, the last segment of the name: the service spells the project as a number.
fn id_of(cluster: &Value) -> Option<&str> {
    cluster["name"].as_str()?.rsplit('/').next()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn applying_a_plan_converges(world in world()) {
        let mut live = live_of(&world);
        let first = match plan_for(&world, &live) {
            // Removing a pool the live login pool or a partition still uses is refused.
            Err(PlanError::RemovedPoolStillReferenced { .. }) => return Ok(()),
            other => other.expect("plan"),
        };
        for request in first.changes.iter().flat_map(|c| &c.requests) {
            if let Some((_, mask)) = request.query().into_iter().find(|(k, _)| k == "updateMask") {
                for path in mask.split(',') {
                    prop_assert!(ALLOWED_PATHS.contains(&path), "mask path {path} is not allowed");
                }
            }
        }
        apply(&first, &mut live);
        let second = plan_for(&world, &live).expect("plan");
        let left: Vec<_> = second.changes.iter().filter(|c| c.action != Action::NoOp).collect();
        prop_assert!(left.is_empty(), "after applying {:#?}\nstill to do: {:#?}", first.changes, left);
        prop_assert!(live.iter().any(|c| id_of(c) == Some("other")), "a cluster of another stack was touched");
    }
}
