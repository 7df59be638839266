//! Broken and busy clusters: a failed create leaves the cluster in `ERROR`
//! with the service's detail and error, tests can put a cluster in any state,
//! and a cluster held by an operation or in a transitional state refuses
//! updates and deletes (a second delete included) with `ABORTED`.

use clusterform_emulator::EmulatorOptions;
use reqwest::Method;
use serde_json::json;

use crate::support::{
    TestServer, cluster_name, cluster_path, fast_options, seed, transition_options,
};

#[tokio::test]
async fn a_failed_create_leaves_an_error_cluster_with_detail_and_error() {
    let options = EmulatorOptions {
        faults: "opfail=1".parse().unwrap(),
        ..fast_options()
    };
    let server = TestServer::start(options).await;
    let (_, operation) = server.create("failed", seed()).await;
    let finished = server.wait_done(&operation).await;
    let (status, cluster) = server.get(&cluster_path("failed")).await;
    assert_eq!(status, 200);
    let cluster_status = &cluster["clusterStatus"];
    assert_eq!(cluster_status["state"], "ERROR");
    assert_eq!(
        cluster_status["detail"],
        "Cluster creation failed; the cluster cannot be used and should be deleted."
    );
    assert_eq!(cluster_status["error"], finished["error"]);
}

#[tokio::test]
async fn tests_can_set_a_cluster_state_with_detail() {
    let server = TestServer::start(fast_options()).await;
    server.create_running("hook", seed()).await;
    let emulator = server.emulator();
    assert!(emulator.set_cluster_status(&cluster_name("hook"), "ERROR", Some("Boot disk lost.")));
    let (_, cluster) = server.get(&cluster_path("hook")).await;
    assert_eq!(
        cluster["clusterStatus"],
        json!({"state": "ERROR", "detail": "Boot disk lost.",
               "error": {"code": 13, "message": "Boot disk lost.", "details": []}})
    );
    assert!(emulator.set_cluster_status(&cluster_name("hook"), "RUNNING", None));
    let (_, cluster) = server.get(&cluster_path("hook")).await;
    assert_eq!(cluster["clusterStatus"]["state"], "RUNNING");
    assert_eq!(
        cluster["clusterStatus"]["nodesStatus"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert!(!emulator.set_cluster_status(&cluster_name("ghost"), "ERROR", None));
}

#[tokio::test]
async fn an_error_cluster_can_be_deleted() {
    let server = TestServer::start(fast_options()).await;
    server.create_running("err", seed()).await;
    server
        .emulator()
        .set_cluster_status(&cluster_name("err"), "ERROR", None);
    let (status, operation) = server
        .call(Method::DELETE, &cluster_path("err"), None)
        .await;
    assert_eq!(status, 200, "{operation}");
    server.wait_done(&operation).await;
    assert!(server.emulator().cluster(&cluster_name("err")).is_none());
}

#[tokio::test]
async fn a_cluster_in_a_transitional_state_refuses_updates_and_deletes() {
    let server = TestServer::start(fast_options()).await;
    server.create_running("moving", seed()).await;
    for state in ["PROVISIONING", "UPDATING", "STOPPING"] {
        server
            .emulator()
            .set_cluster_status(&cluster_name("moving"), state, None);
        let attempts = [
            (Method::DELETE, cluster_path("moving"), None),
            (
                Method::PATCH,
                format!("{}?updateMask=labels", cluster_path("moving")),
                Some(json!({})),
            ),
        ];
        for (method, path, body) in attempts {
            let (status, error) = server.call(method, &path, body).await;
            assert_eq!(status, 409, "{state}");
            assert_eq!(error["error"]["status"], "ABORTED");
            assert_eq!(
                error["error"]["message"],
                format!(
                    "Cluster {} is {state}; retry when it is done.",
                    cluster_name("moving")
                )
            );
        }
    }
}

#[tokio::test]
async fn a_second_delete_while_the_first_runs_is_aborted() {
    let server = TestServer::start(transition_options()).await;
    server.create_running("twice", seed()).await;
    let (status, first) = server
        .call(Method::DELETE, &cluster_path("twice"), None)
        .await;
    assert_eq!(status, 200);
    let (status, error) = server
        .call(Method::DELETE, &cluster_path("twice"), None)
        .await;
    assert_eq!(status, 409);
    assert_eq!(error["error"]["status"], "ABORTED");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(first["name"].as_str().unwrap()),
        "{message}"
    );
    let (_, stopping) = server.get(&cluster_path("twice")).await;
    assert_eq!(stopping["clusterStatus"]["state"], "STOPPING");
    server.wait_done(&first).await;
    let (status, _) = server
        .call(Method::DELETE, &cluster_path("twice"), None)
        .await;
    assert_eq!(status, 404);
}
