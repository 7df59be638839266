//! Builders of our crates' typed values around the canonical cluster: a configuration,
//! declared and live clusters, a Slurm job, a plan against the seed, and the benchmark fleet.

use std::collections::BTreeSet;

use clusterform_config::{
    Config, DesiredCluster, Lifecycle, Provider, RemovedCluster, SourceLocation, Timeouts,
};
use clusterform_model::{
    Cluster, ClusterId, ClusterName, LiveCluster, Location, RunningJob, UnreadKind, UnreadLocation,
};
use clusterform_planner::{Plan, PlanOptions};
use serde_json::{Value, json};

use crate::{PROJECT, PROJECT_NUMBER, REGION, STACK, seed, served};

/// A configuration of stack `research` with these clusters.
pub fn config(clusters: Vec<DesiredCluster>) -> Config {
    Config {
        provider: Provider {
            project: Some(PROJECT.to_owned()),
            region: Some(REGION.to_owned()),
            stack: STACK.to_owned(),
            ..Provider::default()
        },
        clusters,
        digest: "3f1c0ffee".to_owned(),
        ..Config::default()
    }
}

/// `PROJECT`/`REGION`, where the fixtures' clusters live.
pub fn location() -> Location {
    Location::new(PROJECT, REGION).expect("the fixtures' location is valid")
}

/// A location of [`PROJECT`] in `region` whose List gave nothing (`kind`, with a 503's words),
/// `named` by the configuration or not, holding the stack's clusters `held`.
pub fn unread_location(
    region: &str,
    kind: UnreadKind,
    named: bool,
    held: &[&str],
) -> UnreadLocation {
    UnreadLocation {
        location: Location::new(PROJECT, region).expect("a valid region"),
        kind,
        reason: "UNAVAILABLE (503): try later".to_owned(),
        named,
        held: held
            .iter()
            .map(|id| ClusterId::parse(id, false).expect("a valid cluster ID"))
            .collect(),
    }
}

/// The name of cluster `id` in `PROJECT`/`REGION`.
pub fn address(id: &str) -> ClusterName {
    ClusterName::new(PROJECT, REGION, id).expect("a valid cluster ID")
}

/// A declared cluster from its desired JSON, in `PROJECT`/`REGION`.
pub fn desired(id: &str, cluster: Value) -> DesiredCluster {
    let cluster = serde_json::from_value(cluster).expect("desired cluster JSON");
    declared(address(id), cluster)
}

/// `cluster` declared at `name`, with nothing else set.
pub fn declared(name: ClusterName, cluster: Cluster) -> DesiredCluster {
    DesiredCluster {
        name,
        cluster,
        update_mode: None,
        timeouts: Timeouts::default(),
        lifecycle: Lifecycle::default(),
        sensitive_paths: BTreeSet::new(),
        fallbacks: Vec::new(),
        location: SourceLocation::default(),
    }
}

/// A `removed` block for cluster `id` in `PROJECT`/`REGION`.
pub fn removed(id: &str) -> RemovedCluster {
    RemovedCluster {
        name: address(id),
        location: SourceLocation::default(),
    }
}

/// A live cluster from JSON, as a List of `PROJECT`/`REGION` returns it.
pub fn cluster(json: Value) -> LiveCluster {
    let cluster: Cluster = serde_json::from_value(json).expect("live cluster JSON");
    LiveCluster::read_at(&location(), cluster).expect("a readable name")
}

/// Slurm job `id` in `state` (`RUNNING`, `PENDING`, …), with nothing else known.
pub fn slurm_job(id: i64, state: &str) -> RunningJob {
    RunningJob {
        id: Some(id),
        name: None,
        user: None,
        state: state.to_owned(),
        nodes: None,
        partition: None,
        pools: Vec::new(),
        started_at: None,
    }
}

/// The seed cluster, live and owned by `research`.
pub fn live_seed(id: &str) -> LiveCluster {
    cluster(served(id, &seed(), Some(STACK), "RUNNING"))
}

/// Plans the desired `train01` against the seed cluster as the service returns it.
pub fn plan_against_seed(wanted: Value) -> Plan {
    clusterform_planner::plan(
        &config(vec![desired("train01", wanted)]),
        &[live_seed("train01")],
        &PlanOptions::default(),
    )
    .unwrap()
}

fn fleet_desired_json(max_nodes: u32) -> Value {
    json!({
        "displayName": "Research training",
        "labels": {"team": "ml"},
        "network": {"network": "projects/my-proj/global/networks/default"},
        "nodePools": [
            {"id": "login", "machineSpec": {"machineType": "n2-standard-8"},
             "scalingSpec": {"minNodeCount": 1, "maxNodeCount": 1}, "zone": "us-central1-a"},
            {"id": "cpu", "machineSpec": {"machineType": "n2-standard-8"},
             "scalingSpec": {"minNodeCount": 0, "maxNodeCount": max_nodes}, "zone": "us-central1-a"}
        ],
        "orchestratorSpec": {"slurmSpec": {
            "homeDirectoryStorage": "projects/my-proj/locations/us-central1-a/instances/home",
            "loginNodePoolId": "login",
            "partitions": [{"id": "cpu", "nodePoolIds": ["cpu"]}]
        }}
    })
}

fn fleet_live_json(id: &str) -> Value {
    let mut live = fleet_desired_json(4);
    live["name"] = json!(format!(
        "projects/{PROJECT_NUMBER}/locations/{REGION}/modelDevelopmentClusters/{id}"
    ));
    live["labels"]["clusterform-stack"] = json!("bench");
    live["updateTime"] = json!("2026-11-02T10:30:00Z");
    live["clusterStatus"] = json!({"state": "RUNNING"});
    for pool in live["nodePools"].as_array_mut().into_iter().flatten() {
        pool["nodeImage"] = json!("slurm-image");
        pool["bootDisk"] = json!({"bootDiskType": "pd-ssd", "bootDiskSizeGb": "100"});
    }
    live
}

/// A fleet of `size` clusters declared and live, as the benchmarks plan and render it: every
/// third cluster is resized, the others match; the live side is shaped as the service returns
/// it (project-number names, defaults, integers as strings).
pub fn fleet(size: usize) -> (Config, Vec<LiveCluster>) {
    let mut clusters = Vec::with_capacity(size);
    let mut live = Vec::with_capacity(size);
    for n in 0..size {
        let id = format!("c{n:04}");
        let max_nodes = if n % 3 == 0 { 8 } else { 4 };
        let wanted = serde_json::from_value(fleet_desired_json(max_nodes)).expect("desired");
        clusters.push(declared(address(&id), wanted));
        let cluster = serde_json::from_value(fleet_live_json(&id)).expect("live");
        live.push(LiveCluster::read_at(&location(), cluster).expect("name"));
    }
    let config = Config {
        provider: Provider {
            stack: "bench".into(),
            ..Provider::default()
        },
        clusters,
        ..Config::default()
    };
    (config, live)
}
