//! Operations: GET, the `:wait` long poll and its UNIMPLEMENTED switch, and
//! operations that fail by injection.

use clusterform_emulator::{EmulatorOptions, FaultSpec};
use reqwest::Method;
use serde_json::json;

use crate::support::{TestServer, cluster_name, cluster_path, fast_options, seed};

#[tokio::test]
async fn get_returns_the_operation_until_and_after_it_is_done() {
    let server = TestServer::start(fast_options()).await;
    let (_, operation) = server.create("opget", seed()).await;
    let path = format!("/v1/{}", operation["name"].as_str().unwrap());
    let (status, polled) = server.get(&path).await;
    assert_eq!(status, 200);
    assert_eq!(polled["name"], operation["name"]);
    server.wait_done(&operation).await;
    let (_, polled) = server.get(&path).await;
    assert_eq!(polled["done"], true);
    assert!(polled.get("error").is_none());
    assert_eq!(
        polled["metadata"]["genericMetadata"]["createTime"],
        operation["metadata"]["genericMetadata"]["createTime"]
    );
}

#[tokio::test]
async fn an_unknown_operation_is_not_found() {
    let server = TestServer::start(fast_options()).await;
    let (status, error) = server
        .get("/v1/projects/123456789012/locations/us-central1/operations/999")
        .await;
    assert_eq!(status, 404);
    assert_eq!(error["error"]["status"], "NOT_FOUND");
    let (status, _) = server
        .call(
            Method::POST,
            "/v1/projects/123456789012/locations/us-central1/operations/999:wait",
            None,
        )
        .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn wait_with_a_zero_timeout_returns_the_running_operation() {
    let options = EmulatorOptions {
        operation_duration: std::time::Duration::from_secs(60),
        ..fast_options()
    };
    let server = TestServer::start(options).await;
    let (_, operation) = server.create("slow", seed()).await;
    let path = format!(
        "/v1/{}:wait?timeout=0s",
        operation["name"].as_str().unwrap()
    );
    let (status, polled) = server.call(Method::POST, &path, None).await;
    assert_eq!(status, 200);
    assert!(polled.get("done").is_none());
    let (status, error) = server
        .call(Method::POST, &path.replace("0s", "soon"), None)
        .await;
    assert_eq!(status, 400);
    assert_eq!(error["error"]["status"], "INVALID_ARGUMENT");
}

#[tokio::test]
async fn wait_returns_the_finished_operation() {
    let server = TestServer::start(fast_options()).await;
    let (_, operation) = server.create("waited", seed()).await;
    let path = format!(
        "/v1/{}:wait?timeout=10s",
        operation["name"].as_str().unwrap()
    );
    let (status, finished) = server.call(Method::POST, &path, None).await;
    assert_eq!(status, 200);
    assert_eq!(finished["done"], true);
    assert_eq!(finished["response"]["clusterStatus"]["state"], "RUNNING");
}

#[tokio::test]
async fn wait_can_be_switched_to_unimplemented() {
    let server = TestServer::start(fast_options()).await;
    let (_, operation) = server.create("nowait", seed()).await;
    let path = format!("/v1/{}:wait", operation["name"].as_str().unwrap());
    server.emulator().set_wait_unimplemented(true);
    let (status, error) = server.call(Method::POST, &path, None).await;
    assert_eq!(status, 501);
    assert_eq!(error["error"]["status"], "UNIMPLEMENTED");
    server.emulator().set_wait_unimplemented(false);
    let (status, _) = server.call(Method::POST, &path, None).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn opfail_makes_a_create_end_in_error() {
    let options = EmulatorOptions {
        faults: "opfail=1".parse().unwrap(),
        ..fast_options()
    };
    let server = TestServer::start(options).await;
    let (status, operation) = server.create("broken", seed()).await;
    assert_eq!(status, 200);
    let finished = server.wait_done(&operation).await;
    assert_eq!(finished["error"]["code"], 13);
    assert!(finished.get("response").is_none());
    let cluster = server.emulator().cluster(&cluster_name("broken")).unwrap();
    assert_eq!(cluster["clusterStatus"]["state"], "ERROR");
    assert_eq!(cluster["clusterStatus"]["error"]["code"], 13);
}

#[tokio::test]
async fn opfail_limited_to_another_location_leaves_operations_here_alone() {
    let options = EmulatorOptions {
        faults: "opfail=1,location=europe-west4".parse().unwrap(),
        ..fast_options()
    };
    let server = TestServer::start(options).await;
    let (status, operation) = server.create("fine", seed()).await;
    assert_eq!(status, 200);
    let finished = server.wait_done(&operation).await;
    assert!(finished.get("error").is_none(), "{finished}");
    let cluster = server.emulator().cluster(&cluster_name("fine")).unwrap();
    assert_eq!(cluster["clusterStatus"]["state"], "RUNNING");
}

#[tokio::test]
async fn opfail_leaves_an_updated_cluster_running_and_unchanged() {
    let server = TestServer::start(fast_options()).await;
    server.create_running("keep", seed()).await;
    let before = server.emulator().cluster(&cluster_name("keep")).unwrap();
    server.emulator().set_faults(FaultSpec {
        operation_failure_rate: 1.0,
        ..FaultSpec::default()
    });
    let path = format!("{}?updateMask=labels", cluster_path("keep"));
    let (status, operation) = server
        .call(Method::PATCH, &path, Some(json!({"labels": {"x": "y"}})))
        .await;
    assert_eq!(status, 200);
    let finished = server.wait_done(&operation).await;
    assert_eq!(finished["error"]["code"], 13);
    assert_eq!(
        server.emulator().cluster(&cluster_name("keep")).unwrap(),
        before
    );
}
