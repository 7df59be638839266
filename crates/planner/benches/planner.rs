//! Planning and rendering 1,000 clusters held in memory: a mix of no-ops and in-place updates,
//! the live side shaped as the service returns it. Targets: both ≤ 50 ms.

use std::hint::black_box;

use clusterform_config::{Config, DesiredCluster, Provider};
use clusterform_planner::{LiveCluster, PlanOptions, plan, render_text};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

const CLUSTERS: usize = 1_000;

fn desired_json(max_nodes: u32) -> Value {
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

fn live_json(id: &str) -> Value {
    let mut live = desired_json(4);
    live["name"] = json!(format!(
        "projects/123456789012/locations/us-central1/modelDevelopmentClusters/{id}"
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

/// Every third cluster is resized; the others match.
fn world() -> (Config, Vec<LiveCluster>) {
    let mut clusters = Vec::with_capacity(CLUSTERS);
    let mut live = Vec::with_capacity(CLUSTERS);
    for n in 0..CLUSTERS {
        let id = format!("c{n:04}");
        let max_nodes = if n % 3 == 0 { 8 } else { 4 };
        clusters.push(DesiredCluster {
            id: id.clone(),
            project: "my-proj".into(),
            region: "us-central1".into(),
            cluster: serde_json::from_value(desired_json(max_nodes)).expect("desired"),
            ..DesiredCluster::default()
        });
        let cluster = serde_json::from_value(live_json(&id)).expect("live");
        live.push(LiveCluster::read_at("my-proj", "us-central1", cluster).expect("name"));
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

fn planning(c: &mut Criterion) {
    let (config, live) = world();
    let options = PlanOptions::default();
    c.bench_function("plan 1000 clusters", |b| {
        b.iter(|| plan(black_box(&config), black_box(&live), &options).expect("plan"));
    });
    let made = plan(&config, &live, &options).expect("plan");
    c.bench_function("render text of 1000 clusters", |b| {
        b.iter(|| render_text(black_box(&made), false));
    });
}

criterion_group!(benches, planning);
criterion_main!(benches);
