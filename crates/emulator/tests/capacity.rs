//! Capacity failures of each kind on creates and on updates adding a node pool (a stockout
//! and a machine type not allowed fail the operation, a quota refuses at once), an entry
//! that fails a limited number of times, the ID a cluster holds until its delete completes
//! (and a while after with `id_blocked_after_delete`), and the admin API for both.

use std::time::Duration;

use clusterform_emulator::{CapacityFailure, EmulatorOptions};
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{PROJECT, TestServer, cluster_path, fast_options, seed, transition_options};

const GPU: &str = "a4-highgpu-8g";
const QUOTA_MESSAGE: &str =
    "Quota 'GPUS_PER_GPU_FAMILY' exceeded. Limit: 0.0 in region us-central1.";
const VERTEX_QUOTA_MESSAGE: &str = "The following quota metrics exceed quota limits: aiplatform.googleapis.com/custom_model_training_nvidia_h100_gpus";

fn already_exists(id: &str) -> Value {
    json!({"error": {
        "code": 409,
        "message": format!(
            "There is an existing ModelDevelopmentCluster with the same ID \"{id}\". Please \
             delete the existing cluster and try again or use a different ID."
        ),
        "status": "ALREADY_EXISTS",
        "details": [],
    }})
}

async fn serve_with(failures: &[&str]) -> TestServer {
    TestServer::start(EmulatorOptions {
        capacity_failures: failures.iter().map(|f| f.parse().unwrap()).collect(),
        ..fast_options()
    })
    .await
}

/// The seed cluster with a GPU pool in us-central1-b added.
fn seed_with_gpu() -> Value {
    let mut cluster = seed();
    cluster["nodePools"]
        .as_array_mut()
        .unwrap()
        .push(gpu_pool());
    cluster
}

/// A GPU pool that asks for one node at create: only such a pool can run short then.
fn gpu_pool() -> Value {
    json!({"id": "gpu", "machineSpec": {"machineType": GPU}, "zone": "us-central1-b",
           "provisioningModel": "SPOT",
           "scalingSpec": {"minNodeCount": 1, "maxNodeCount": 2}})
}

/// [`seed_with_gpu`] with its GPU pool starting empty: every node of it dynamic.
fn seed_with_empty_gpu() -> Value {
    let mut cluster = seed_with_gpu();
    cluster["nodePools"][2]["scalingSpec"]["minNodeCount"] = json!(0);
    cluster
}

async fn delete(server: &TestServer, id: &str) -> Value {
    let (status, operation) = server.call(Method::DELETE, &cluster_path(id), None).await;
    assert_eq!(status, 200, "{operation}");
    operation
}

/// PATCHes the live cluster `id` with `gpu_pool` added to its node pools.
async fn add_gpu_pool(server: &TestServer, id: &str) -> (u16, Value) {
    let (_, live) = server.get(&cluster_path(id)).await;
    let mut pools = live["nodePools"].as_array().unwrap().clone();
    pools.push(gpu_pool());
    let path = format!("{}?updateMask=node_pools", cluster_path(id));
    server
        .call(Method::PATCH, &path, Some(json!({"nodePools": pools})))
        .await
}

fn pool_ids(cluster: &Value) -> Vec<&str> {
    cluster["nodePools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pool| pool["id"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_quota_failure_refuses_the_create_at_once_and_registers_nothing() {
    let server = serve_with(&["quota:a4-highgpu-8g"]).await;
    let (status, error) = server.create("quota", seed_with_gpu()).await;
    assert_eq!(status, 429, "{error}");
    assert_eq!(
        error,
        json!({"error": {"code": 429, "message": VERTEX_QUOTA_MESSAGE,
                         "status": "RESOURCE_EXHAUSTED", "details": []}}),
        "Vertex AI's words, without a detail"
    );
    let server = serve_with(&["compute-quota:a4-highgpu-8g"]).await;
    for _ in 0..2 {
        let (status, error) = server.create("quota", seed_with_gpu()).await;
        assert_eq!(status, 429, "waiting does not fix it: {error}");
        assert_eq!(
            error,
            json!({"error": {
                "code": 429,
                "message": QUOTA_MESSAGE,
                "status": "RESOURCE_EXHAUSTED",
                "details": [{
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [{"subject": format!("project:{PROJECT}"),
                                    "description": QUOTA_MESSAGE}],
                }],
            }})
        );
        let (status, _) = server.get(&cluster_path("quota")).await;
        assert_eq!(status, 404, "nothing is created");
    }
    let done = server.create_running("quota", seed()).await;
    assert!(
        done.get("error").is_none(),
        "a create without the GPU pool is fine: {done}"
    );
}

#[tokio::test]
async fn a_pool_that_starts_empty_creates_whatever_the_capacity() {
    let server = serve_with(&["a4-highgpu-8g", "quota:a4-highgpu-8g"]).await;
    let done = server
        .create_running("dynamic", seed_with_empty_gpu())
        .await;
    assert!(
        done.get("error").is_none(),
        "no machine is asked for: {done}"
    );
    assert_eq!(
        server.emulator().capacity_failures().len(),
        2,
        "nothing is used up"
    );
    let (status, operation) = server.create("static", seed_with_gpu()).await;
    assert_eq!(status, 200, "{operation}");
    let failed = server.wait_done(&operation).await;
    assert_eq!(failed["error"]["code"], 8, "{failed}");
}

#[tokio::test]
async fn a_machine_type_not_allowed_fails_the_create_operation_and_stays_in_error() {
    let server = serve_with(&["not-allowed:a4-highgpu-8g"]).await;
    let (status, operation) = server.create("vm", seed_with_gpu()).await;
    assert_eq!(status, 200, "the create is accepted: {operation}");
    let done = server.wait_done(&operation).await;
    let error = json!({"code": 3, "message": "machine type a4-highgpu-8g is not allowed for VM",
                       "details": []});
    assert_eq!(done["error"], error);
    let (_, cluster) = server.get(&cluster_path("vm")).await;
    assert_eq!(cluster["clusterStatus"]["state"], "ERROR");
    assert_eq!(cluster["clusterStatus"]["error"], error);
    assert_eq!(
        server.create("vm", seed()).await,
        (409, already_exists("vm"))
    );
}

#[tokio::test]
async fn a_stockout_with_times_clears_after_that_many_creates() {
    let server = serve_with(&["a4-highgpu-8g@us-central1-b/1"]).await;
    let (_, operation) = server.create("retry", seed_with_gpu()).await;
    let failed = server.wait_done(&operation).await;
    assert_eq!(failed["error"]["code"], 8);
    assert!(server.emulator().capacity_failures().is_empty(), "used up");
    let deleted = delete(&server, "retry").await;
    server.wait_done(&deleted).await;
    let done = server.create_running("retry", seed_with_gpu()).await;
    assert!(done.get("error").is_none(), "{done}");
}

#[tokio::test]
async fn an_update_adding_a_pool_over_quota_is_refused_and_changes_nothing() {
    let server = serve_with(&[]).await;
    server.create_running("grow", seed()).await;
    let (_, before) = server.get(&cluster_path("grow")).await;
    server
        .emulator()
        .set_capacity_failures(vec!["quota:a4-highgpu-8g".parse().unwrap()]);
    let (status, error) = add_gpu_pool(&server, "grow").await;
    assert_eq!(status, 429, "{error}");
    assert_eq!(error["error"]["message"], VERTEX_QUOTA_MESSAGE);
    assert_eq!(server.get(&cluster_path("grow")).await, (200, before));
}

#[tokio::test]
async fn an_update_adding_a_pool_that_fails_keeps_the_previous_spec_and_runs_again() {
    for (failure, code) in [("a4-highgpu-8g", 8), ("not-allowed:a4-highgpu-8g", 3)] {
        let server = serve_with(&[]).await;
        server.create_running("grow", seed()).await;
        let (_, before) = server.get(&cluster_path("grow")).await;
        server
            .emulator()
            .set_capacity_failures(vec![failure.parse().unwrap()]);
        let (status, operation) = add_gpu_pool(&server, "grow").await;
        assert_eq!(status, 200, "the update is accepted: {operation}");
        let done = server.wait_done(&operation).await;
        assert_eq!(done["error"]["code"], code, "{failure}: {done}");
        let (_, after) = server.get(&cluster_path("grow")).await;
        assert_eq!(
            pool_ids(&after),
            ["login", "cpu"],
            "{failure}: the pool is not added"
        );
        assert_eq!(after["clusterStatus"]["state"], "RUNNING", "{failure}");
        assert_eq!(after["nodePools"], before["nodePools"], "{failure}");
    }
}

#[tokio::test]
async fn an_update_that_adds_no_matching_pool_is_unaffected() {
    let server = TestServer::start(EmulatorOptions {
        capacity_failures: vec!["quota:a4-highgpu-8g".parse().unwrap()],
        ..fast_options()
    })
    .await;
    server
        .emulator()
        .insert_cluster(&crate::support::cluster_name("has"), seed_with_gpu());
    let path = format!("{}?updateMask=labels", cluster_path("has"));
    let (status, operation) = server
        .call(
            Method::PATCH,
            &path,
            Some(json!({"labels": {"team": "infra"}})),
        )
        .await;
    assert_eq!(status, 200, "the GPU pool exists already: {operation}");
    let done = server.wait_done(&operation).await;
    assert!(done.get("error").is_none(), "{done}");
    assert_eq!(
        server.emulator().capacity_failures().len(),
        1,
        "an unmatched update uses up nothing"
    );
}

#[tokio::test]
async fn the_id_stays_taken_while_the_delete_runs_and_is_free_once_it_is_done() {
    let server = TestServer::start(transition_options()).await;
    server.create_running("busy", seed()).await;
    let deleting = delete(&server, "busy").await;
    let (_, cluster) = server.get(&cluster_path("busy")).await;
    assert_eq!(cluster["clusterStatus"]["state"], "STOPPING");
    assert_eq!(
        server.create("busy", seed()).await,
        (409, already_exists("busy"))
    );
    server.wait_done(&deleting).await;
    let (status, operation) = server.create("busy", seed()).await;
    assert_eq!(status, 200, "{operation}");
}

#[tokio::test]
async fn the_id_can_stay_taken_a_while_after_its_delete_completed() {
    let blocked_for = Duration::from_millis(1_500);
    let server = TestServer::start(EmulatorOptions {
        id_blocked_after_delete: blocked_for,
        ..fast_options()
    })
    .await;
    server.create_running("later", seed()).await;
    let deleting = delete(&server, "later").await;
    let deleted = server.wait_done(&deleting).await;
    assert!(deleted.get("error").is_none(), "{deleted}");
    let (status, _) = server.get(&cluster_path("later")).await;
    assert_eq!(status, 404, "the cluster is gone");
    assert_eq!(
        server.create("later", seed()).await,
        (409, already_exists("later")),
        "but its ID is not free yet"
    );
    tokio::time::sleep(blocked_for).await;
    let done = server.create_running("later", seed()).await;
    assert!(done.get("error").is_none(), "{done}");
}

#[tokio::test]
async fn the_admin_api_sets_kinds_times_and_the_blocked_time() {
    let server = serve_with(&[]).await;
    let failures = json!({"capacityFailures": [
        {"machineType": GPU, "zone": "us-central1-b", "kind": "quota"},
        {"machineType": "a3-highgpu-8g", "kind": "not-allowed", "times": 2},
        {"machineType": "a3-megagpu-8g", "kind": "stockout"},
    ]});
    let path = "/emulator/v1/capacityFailures";
    let (status, answer) = server.call(Method::PUT, path, Some(failures)).await;
    assert_eq!(status, 200, "{answer}");
    let listed = json!({"capacityFailures": [
        {"machineType": GPU, "zone": "us-central1-b", "kind": "quota"},
        {"machineType": "a3-highgpu-8g", "kind": "not-allowed", "times": 2},
        {"machineType": "a3-megagpu-8g"},
    ]});
    assert_eq!(answer, listed, "a stockout is written without its kind");
    assert_eq!(server.get(path).await, (200, listed));
    let texts: Vec<String> = server
        .emulator()
        .capacity_failures()
        .iter()
        .map(CapacityFailure::to_string)
        .collect();
    assert_eq!(
        texts,
        [
            "quota:a4-highgpu-8g@us-central1-b",
            "not-allowed:a3-highgpu-8g/2",
            "a3-megagpu-8g"
        ]
    );
    for bad in [
        json!({"capacityFailures": [{"machineType": GPU, "kind": "full"}]}),
        json!({"capacityFailures": [{"machineType": GPU, "times": 0}]}),
    ] {
        let (status, error) = server.call(Method::PUT, path, Some(bad.clone())).await;
        assert_eq!(status, 400, "{bad}: {error}");
    }

    let path = "/emulator/v1/idBlockedAfterDelete";
    assert_eq!(server.get(path).await, (200, json!({"seconds": 0.0})));
    let (status, answer) = server
        .call(Method::PUT, path, Some(json!({"seconds": 2.5})))
        .await;
    assert_eq!((status, answer), (200, json!({"seconds": 2.5})));
    assert_eq!(
        server.emulator().id_blocked_after_delete(),
        Duration::from_millis(2_500)
    );
    for bad in [json!({"seconds": -1}), json!({"seconds": "2s"}), json!({})] {
        let (status, error) = server.call(Method::PUT, path, Some(bad.clone())).await;
        assert_eq!(status, 400, "{bad}: {error}");
    }
}
