//! Benchmark: Get of one cluster over loopback HTTP with a reused reqwest
//! client, reported as requests per second (criterion's elements/s). The
//! emulator must never be the bottleneck of another benchmark; the target is
//! at least 2,000 requests/s on a 2-core machine.

use std::time::Duration;

use clusterform_emulator::{Emulator, EmulatorOptions};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;

const CLUSTER: &str = "projects/bench/locations/us-central1/modelDevelopmentClusters/bench01";

fn get_cluster(criterion: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("a Tokio runtime for the benchmark");
    let emulator = Emulator::new(EmulatorOptions::default()).expect("an in-memory emulator");
    emulator.insert_cluster(
        CLUSTER,
        json!({
            "network": {"network": "projects/bench/global/networks/default"},
            "nodePools": [{"id": "login", "machineSpec": {"machineType": "n2-standard-8"},
                           "scalingSpec": {"minNodeCount": 1, "maxNodeCount": 1}}],
            "orchestratorSpec": {"slurmSpec": {"homeDirectoryStorage": "projects/bench/locations/us-central1-a/instances/home",
                                               "loginNodePoolId": "login"}}
        }),
    );
    let handle = runtime
        .block_on(emulator.serve("127.0.0.1:0".parse().expect("a socket address")))
        .expect("the emulator listens on loopback");
    let url = format!("{}/v1beta1/{CLUSTER}", handle.base_url());
    let client = reqwest::Client::new();

    let mut group = criterion.benchmark_group("emulator");
    group.throughput(Throughput::Elements(1));
    group.bench_function("get_cluster_over_loopback", |bencher| {
        bencher.iter(|| {
            runtime.block_on(async {
                let response = client
                    .get(&url)
                    .bearer_auth("bench")
                    .send()
                    .await
                    .expect("an answer");
                assert!(response.status().is_success());
                response.bytes().await.expect("a body")
            })
        });
    });
    group.finish();
    runtime.block_on(handle.shutdown());
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);
    targets = get_cluster
}
criterion_main!(benches);
