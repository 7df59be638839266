//! The admin HTTP API under `/emulator/v1/`: Slurm jobs, nodes and controller, a cluster's
//! state, node states and events, capacity failures that make a create's operation fail
//! with a stockout, and refused locations; the token rule, refusals of bad bodies and unknown
//! clusters, and that faults never touch it.

use clusterform_emulator::{CapacityFailure, EmulatorOptions, FaultSpec};
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{PROJECT, TestServer, cluster_name, cluster_path, fast_options, seed};

const JOBS: &str = "/slurm/v0.0.42/jobs";

fn admin(id: &str, leaf: &str) -> String {
    format!("/emulator/v1/{}/{leaf}", cluster_name(id))
}

async fn put(server: &TestServer, path: &str, body: Value) -> (u16, Value) {
    server.call(Method::PUT, path, Some(body)).await
}

/// slurmrestd's JSON and status for `path` on cluster `id`.
async fn slurm(server: &TestServer, id: &str, path: &str) -> (Value, Value) {
    let url = format!("/v1beta1/{}:callSlurmRestApi", cluster_name(id));
    let request = json!({"method": "HTTP_METHOD_GET", "path": path});
    let (_, answer) = server.call(Method::POST, &url, Some(request)).await;
    let body = serde_json::from_str(answer["body"].as_str().unwrap()).unwrap_or(Value::Null);
    (answer["status"].clone(), body)
}

#[tokio::test]
async fn slurm_jobs_nodes_and_the_controller_are_set_over_http() {
    let server = TestServer::start(fast_options()).await;
    server.create_running("idle", seed()).await;
    let job = json!({"job_id": 7, "job_state": ["RUNNING"]});
    let node = json!({"name": "cpu-0", "state": ["ALLOCATED"],
                      "last_busy": {"set": true, "infinite": false, "number": 1_700_000_000}});
    assert_eq!(
        put(
            &server,
            &admin("idle", "slurm/jobs"),
            json!({"jobs": [job]})
        )
        .await,
        (200, json!({}))
    );
    assert_eq!(
        put(
            &server,
            &admin("idle", "slurm/nodes"),
            json!({"nodes": [node]})
        )
        .await,
        (200, json!({}))
    );
    assert_eq!(slurm(&server, "idle", JOBS).await.1["jobs"], json!([job]));
    assert_eq!(
        slurm(&server, "idle", "/slurm/v0.0.42/nodes").await.1["nodes"],
        json!([node])
    );

    let (status, _) = put(
        &server,
        &admin("idle", "slurm/controller"),
        json!({"up": false}),
    )
    .await;
    assert_eq!(status, 200);
    let (_, ping) = slurm(&server, "idle", "/slurm/v0.0.42/ping").await;
    assert_eq!(ping["pings"][0]["responding"], false);
    assert_eq!(slurm(&server, "idle", JOBS).await.0, 500);
    put(
        &server,
        &admin("idle", "slurm/controller"),
        json!({"up": true}),
    )
    .await;
    assert_eq!(slurm(&server, "idle", JOBS).await.0, 200);
}

#[tokio::test]
async fn a_cluster_state_node_states_and_events_are_set_over_http() {
    let server = TestServer::start(fast_options()).await;
    server.create_running("c1", seed()).await;
    let (status, _) = put(
        &server,
        &admin("c1", "status"),
        json!({"state": "ERROR", "detail": "Slurm controller failed to start."}),
    )
    .await;
    assert_eq!(status, 200);
    let (_, cluster) = server.get(&cluster_path("c1")).await;
    assert_eq!(cluster["clusterStatus"]["state"], "ERROR");
    assert_eq!(
        cluster["clusterStatus"]["detail"],
        "Slurm controller failed to start."
    );

    put(&server, &admin("c1", "status"), json!({"state": "RUNNING"})).await;
    let nodes =
        json!([{"nodePoolId": "cpu", "nodeState": "REPAIRING", "instanceName": "c1-cpu-0"}]);
    let (status, _) = put(
        &server,
        &admin("c1", "nodesStatus"),
        json!({"nodesStatus": nodes}),
    )
    .await;
    assert_eq!(status, 200);
    let events = json!([{"eventType": "VM_REPORT_AND_REPLACEMENT", "eventTime": "2026-11-30T20:00:00Z", "eventMessage": "Node c1-cpu-0 is being repaired."}]);
    let (status, _) = put(
        &server,
        &admin("c1", "clusterEvents"),
        json!({"clusterEvents": events}),
    )
    .await;
    assert_eq!(status, 200);
    let (_, cluster) = server.get(&cluster_path("c1")).await;
    assert_eq!(cluster["clusterStatus"]["state"], "RUNNING");
    assert_eq!(cluster["clusterStatus"]["nodesStatus"], nodes);
    assert_eq!(cluster["clusterEvents"], events);
}

#[tokio::test]
async fn unknown_clusters_and_bad_bodies_are_refused() {
    let server = TestServer::start(fast_options()).await;
    server.create_running("c1", seed()).await;
    let (status, error) = put(&server, &admin("absent", "slurm/jobs"), json!({"jobs": []})).await;
    assert_eq!(status, 404);
    assert_eq!(error["error"]["status"], "NOT_FOUND");
    for (leaf, body) in [
        ("slurm/jobs", json!({"job": []})),
        ("slurm/nodes", json!({"nodes": {}})),
        ("slurm/controller", json!({"up": "no"})),
        ("status", json!({"state": ""})),
        ("nodesStatus", json!([])),
        (
            "clusterEvents",
            json!({"clusterEvents": [{"eventType": "VM_REBOOT", "eventTime": "2026-11-30T20:00:00Z", "message": "rebooted"}]}),
        ),
    ] {
        let (status, error) = put(&server, &admin("c1", leaf), body).await;
        assert_eq!(status, 400, "{leaf}: {error}");
        assert_eq!(error["error"]["status"], "INVALID_ARGUMENT");
    }
    let (status, _) = server
        .call(Method::GET, &admin("c1", "slurm/jobs"), None)
        .await;
    assert_eq!(status, 404, "only PUT is served");
}

#[tokio::test]
async fn the_admin_api_needs_the_token_and_is_never_faulted() {
    let server = TestServer::start(EmulatorOptions {
        faults: "503=1".parse::<FaultSpec>().unwrap(),
        ..fast_options()
    })
    .await;
    let (status, answer) = server
        .call(Method::GET, "/emulator/v1/capacityFailures", None)
        .await;
    assert_eq!((status, answer), (200, json!({"capacityFailures": []})));
    let (status, _) = server.get(&cluster_path("c1")).await;
    assert_eq!(status, 503, "the cluster API is faulted");
    let unauthenticated = server
        .client
        .get(server.url("/emulator/v1/capacityFailures"))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthenticated.status().as_u16(), 401);
}

#[tokio::test]
async fn a_create_in_a_stocked_out_zone_is_accepted_then_fails_and_stays_in_error() {
    let server = TestServer::start(fast_options()).await;
    let failures = json!({"capacityFailures": [
        {"machineType": "n2-standard-8", "zone": "us-central1-a"}
    ]});
    let (status, answer) = put(&server, "/emulator/v1/capacityFailures", failures.clone()).await;
    assert_eq!((status, answer), (200, failures));
    let (status, operation) = server.create("stock", seed()).await;
    assert_eq!(status, 200, "the create is accepted: {operation}");
    let done = server.wait_done(&operation).await;
    assert_eq!(done["error"]["code"], 8);
    let message = format!(
        "The zone 'projects/{PROJECT}/zones/us-central1-a' does not have enough resources \
         available to fulfill the request. '(resource type:compute)'. (state:STOCKOUT)"
    );
    assert_eq!(done["error"]["message"], message);
    let (status, cluster) = server.get(&cluster_path("stock")).await;
    assert_eq!(status, 200, "the failed cluster stays registered");
    assert_eq!(cluster["clusterStatus"]["state"], "ERROR");
    assert_eq!(cluster["clusterStatus"]["error"]["code"], 8);
    let (status, _) = server.create("stock", seed()).await;
    assert_eq!(status, 409, "its ID stays taken until it is deleted");
}

#[tokio::test]
async fn capacity_failures_match_only_their_machine_type_and_zone() {
    let server = TestServer::start(EmulatorOptions {
        capacity_failures: vec![
            "a4-highgpu-8g".parse::<CapacityFailure>().unwrap(),
            "n2-standard-8@us-central1-b".parse().unwrap(),
        ],
        ..fast_options()
    })
    .await;
    let done = server.create_running("fine", seed()).await;
    assert!(done.get("error").is_none(), "{done}");
    let (_, listed) = server
        .call(Method::GET, "/emulator/v1/capacityFailures", None)
        .await;
    assert_eq!(
        listed["capacityFailures"],
        json!([{"machineType": "a4-highgpu-8g"},
               {"machineType": "n2-standard-8", "zone": "us-central1-b"}])
    );
    let (status, _) = put(
        &server,
        "/emulator/v1/capacityFailures",
        json!({"capacityFailures": []}),
    )
    .await;
    assert_eq!(status, 200);
    assert!(server.emulator().capacity_failures().is_empty());
}

#[tokio::test]
async fn a_refused_location_refuses_its_cluster_api_and_nothing_else() {
    let server = TestServer::start(fast_options()).await;
    server.create_running("c1", seed()).await;
    let refused = json!({"refusedLocations": [
        {"location": "us-central1", "project": PROJECT},
        {"location": "asia-south2", "kind": "not-allowlisted"}
    ]});
    let (status, answer) = put(&server, "/emulator/v1/refusedLocations", refused).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer,
        json!({"refusedLocations": [
            {"location": "us-central1", "project": PROJECT},
            {"location": "asia-south2", "kind": "not-allowlisted"}
        ]})
    );
    let list =
        format!("/v1beta1/projects/{PROJECT}/locations/us-central1/modelDevelopmentClusters");
    let (status, error) = server.get(&list).await;
    assert_eq!(status, 403, "{error}");
    assert_eq!(error["error"]["status"], "PERMISSION_DENIED");
    assert_eq!(
        error["error"]["message"],
        format!(
            "Permission 'aiplatform.modelDevelopmentClusters.list' denied on resource \
             '//aiplatform.googleapis.com/projects/{PROJECT}/locations/us-central1' (or it may \
             not exist)."
        )
    );
    let (status, _) = server.get(&cluster_path("c1")).await;
    assert_eq!(status, 403, "a Get is refused too");
    let (status, error) = server
        .get("/v1beta1/projects/other-proj/locations/asia-south2/modelDevelopmentClusters")
        .await;
    assert_eq!(status, 400, "{error}");
    assert_eq!(error["error"]["status"], "INVALID_ARGUMENT");
    let (status, _) = server
        .get("/v1beta1/projects/other-proj/locations/us-central1/modelDevelopmentClusters")
        .await;
    assert_eq!(status, 200, "another project's us-central1 answers");
    let (status, _) = put(&server, &admin("c1", "status"), json!({"state": "RUNNING"})).await;
    assert_eq!(status, 200, "the admin API is never refused");

    let (status, _) = put(
        &server,
        "/emulator/v1/refusedLocations",
        json!({"refusedLocations": [{"location": "US CENTRAL"}]}),
    )
    .await;
    assert_eq!(status, 400);
    let (status, answer) = put(
        &server,
        "/emulator/v1/refusedLocations",
        json!({"refusedLocations": []}),
    )
    .await;
    assert_eq!((status, answer), (200, json!({"refusedLocations": []})));
    let (status, _) = server.get(&list).await;
    assert_eq!(status, 200, "refusals can be lifted");
}

#[tokio::test]
async fn the_preflight_world_answers_the_quick_starts_reads_until_the_admin_api_replaces_it() {
    let server = TestServer::start(fast_options()).await;
    let service = format!("/serviceusage/v1/projects/{PROJECT}/services/file.googleapis.com");
    let subnetwork =
        format!("/compute/v1/projects/{PROJECT}/regions/europe-west4/subnetworks/default");
    let home = format!("/file/v1/projects/{PROJECT}/locations/us-central1-a/instances/home");
    let (status, answer) = server.get(&service).await;
    assert_eq!(
        (status, &answer["state"]),
        (200, &json!("ENABLED")),
        "{answer}"
    );
    let (status, answer) = server.get(&subnetwork).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["privateIpGoogleAccess"], true);
    assert_eq!(
        answer["network"],
        format!("https://www.googleapis.com/compute/v1/projects/{PROJECT}/global/networks/default")
    );
    let (status, answer) = server.get(&home).await;
    assert_eq!(
        (status, &answer["state"]),
        (200, &json!("READY")),
        "{answer}"
    );

    let world = json!({
        "disabledServices": [format!("projects/{PROJECT}/services/file.googleapis.com")],
        "subnetworks": [],
        "forbiddenApis": ["file"],
    });
    let (status, answer) = put(&server, "/emulator/v1/preflight", world).await;
    assert_eq!(status, 200, "{answer}");
    let (_, answer) = server.get(&service).await;
    assert_eq!(answer["state"], "DISABLED");
    let (status, _) = server.get(&subnetwork).await;
    assert_eq!(status, 404, "an empty list: no subnetwork exists");
    let (status, answer) = server.get(&home).await;
    assert_eq!(
        (status, &answer["error"]["status"]),
        (403, &json!("PERMISSION_DENIED"))
    );
    let (_, answer) = server.get("/emulator/v1/preflight").await;
    assert_eq!(answer["subnetworks"], json!([]));

    let (status, _) = put(
        &server,
        "/emulator/v1/preflight",
        json!({"forbiddenApis": ["dns"]}),
    )
    .await;
    assert_eq!(status, 400, "an API it does not serve");
}

#[tokio::test]
async fn the_preflight_world_answers_lustre_buckets_reservations_quotas_and_permissions() {
    let server = TestServer::start(fast_options()).await;
    let lustre = format!("/lustre/v1/projects/{PROJECT}/locations/us-central1-a/instances/scratch");
    let bucket = "/storage/v1/b/my-export";
    let reservation =
        format!("/compute/v1/projects/{PROJECT}/zones/us-central1-a/reservations/h100");
    let region = format!("/compute/v1/projects/{PROJECT}/regions/us-central1");
    let permissions = format!("/cloudresourcemanager/v1/projects/{PROJECT}:testIamPermissions");
    let account = "/iam/v1/projects/-/serviceAccounts/nodes@my-proj.iam.gserviceaccount.com";
    let act_as = format!("{account}:testIamPermissions");
    let asked = json!({"permissions": ["aiplatform.modelDevelopmentClusters.create", "iam.serviceAccounts.actAs"]});

    let (status, answer) = server.get(&lustre).await;
    assert_eq!(
        (status, &answer["state"]),
        (200, &json!("ACTIVE")),
        "{answer}"
    );
    assert_eq!(
        answer["network"],
        format!("projects/{PROJECT}/global/networks/default")
    );
    assert_eq!(server.get(bucket).await.0, 200);
    let (status, answer) = server.get(&reservation).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["specificReservation"]["count"], "64");
    let (_, answer) = server.get(&region).await;
    assert!(
        answer["quotas"]
            .as_array()
            .unwrap()
            .iter()
            .any(|q| q["metric"] == "PREEMPTIBLE_NVIDIA_H200_GPUS" && q["limit"] == 1024.0),
        "{answer}"
    );
    let (status, answer) = server
        .call(Method::POST, &permissions, Some(asked.clone()))
        .await;
    assert_eq!(
        (status, &answer["permissions"]),
        (200, &asked["permissions"])
    );
    assert_eq!(server.get(account).await.0, 200);

    let world = json!({
        "lustreInstances": [],
        "buckets": [],
        "reservations": [{
            "name": format!("projects/{PROJECT}/zones/us-central1-a/reservations/h100"),
            "machineType": "a3-megagpu-8g",
            "count": 4,
            "inUseCount": 3
        }],
        "quotas": [{"region": format!("projects/{PROJECT}/regions/us-central1"), "metric": "NVIDIA_H100_MEGA_GPUS", "limit": 8.0, "usage": 2.0}],
        "serviceAccounts": [],
        "deniedPermissions": ["aiplatform.modelDevelopmentClusters.create", "iam.serviceAccounts.actAs"],
    });
    let (status, answer) = put(&server, "/emulator/v1/preflight", world).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(server.get(&lustre).await.0, 404);
    assert_eq!(server.get(bucket).await.0, 404);
    let (_, answer) = server.get(&reservation).await;
    assert_eq!(
        answer["specificReservation"],
        json!({"count": "4", "inUseCount": "3", "instanceProperties": {"machineType": "a3-megagpu-8g"}})
    );
    let (_, answer) = server.get(&region).await;
    assert_eq!(
        answer["quotas"],
        json!([{"metric": "NVIDIA_H100_MEGA_GPUS", "limit": 8.0, "usage": 2.0}])
    );
    let (status, answer) = server
        .call(Method::POST, &permissions, Some(asked.clone()))
        .await;
    assert_eq!(
        (status, answer),
        (200, json!({})),
        "none granted: the list is left out"
    );
    assert_eq!(server.get(account).await.0, 404);
    assert_eq!(server.call(Method::POST, &act_as, Some(asked)).await.0, 404);

    let (status, _) = put(
        &server,
        "/emulator/v1/preflight",
        json!({"forbiddenApis": ["cloudresourcemanager", "iam"]}),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = server
        .call(Method::POST, &permissions, Some(json!({"permissions": []})))
        .await;
    assert_eq!(status, 403);
}
