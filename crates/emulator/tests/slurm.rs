//! `callSlurmRestApi`: injected jobs, the default empty listing, unknown Slurm
//! paths, clusters that are not running, and the unreachable switch.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{TestServer, cluster_name, cpu_cluster, fast_options, transition_options};

const JOBS: &str = "/slurm/v0.0.42/jobs";

async fn call_slurm(server: &TestServer, id: &str, path: &str) -> (u16, Value) {
    let url = format!("/v1beta1/{}:callSlurmRestApi", cluster_name(id));
    server
        .call(
            Method::POST,
            &url,
            Some(json!({"method": "HTTP_METHOD_GET", "path": path})),
        )
        .await
}

#[tokio::test]
async fn jobs_are_served_from_what_the_test_injected() {
    let server = TestServer::start(fast_options()).await;
    server.create_running("slurm", cpu_cluster()).await;
    let (status, answer) = call_slurm(&server, "slurm", JOBS).await;
    assert_eq!(status, 200);
    assert_eq!(
        answer,
        json!({"status": 200, "structuredBody": {"jobs": []}})
    );
    let job = json!({"job_id": 1, "job_state": ["RUNNING"], "end_time": {"set": true, "number": 1_700_000_000}});
    server
        .emulator()
        .set_slurm_jobs(&cluster_name("slurm"), vec![job.clone()]);
    let (_, answer) = call_slurm(&server, "slurm", JOBS).await;
    assert_eq!(answer["structuredBody"]["jobs"], json!([job]));
    let (status, answer) = call_slurm(&server, "slurm", "/slurm/v0.0.42/nodes").await;
    assert_eq!(status, 200);
    assert_eq!(answer["status"], 404);
}

#[tokio::test]
async fn a_cluster_that_is_not_running_is_a_failed_precondition() {
    let server = TestServer::start(transition_options()).await;
    server.create("early", cpu_cluster()).await;
    let (status, error) = call_slurm(&server, "early", JOBS).await;
    assert_eq!(status, 400);
    assert_eq!(error["error"]["status"], "FAILED_PRECONDITION");
    let (status, _) = call_slurm(&server, "absent", JOBS).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn an_unreachable_slurm_is_unavailable() {
    let server = TestServer::start(fast_options()).await;
    server.create_running("down", cpu_cluster()).await;
    server
        .emulator()
        .set_slurm_unreachable(&cluster_name("down"), true);
    let (status, error) = call_slurm(&server, "down", JOBS).await;
    assert_eq!(status, 503);
    assert_eq!(error["error"]["status"], "UNAVAILABLE");
    server
        .emulator()
        .set_slurm_unreachable(&cluster_name("down"), false);
    let (status, _) = call_slurm(&server, "down", JOBS).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_request_without_method_or_path_is_invalid() {
    let server = TestServer::start(fast_options()).await;
    server.create_running("strict", cpu_cluster()).await;
    let url = format!("/v1beta1/{}:callSlurmRestApi", cluster_name("strict"));
    let (status, error) = server
        .call(Method::POST, &url, Some(json!({"path": JOBS})))
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        error["error"]["message"],
        "The request field `method` is required and must be a string."
    );
}
