//! `callSlurmRestApi`: the documented answer (`body` as a string), injected jobs and nodes,
//! the default empty listings, `MinJobAge`, supported REST versions, unknown Slurm paths, the
//! ping and a controller that is down, clusters that are not running, and the unreachable
//! switch.

use std::time::Duration;

use clusterform_emulator::EmulatorOptions;
use reqwest::Method;
use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::support::{
    TestServer, cluster_name, cluster_path, fast_options, seed, transition_options,
};

const NODES: &str = "/slurm/v0.0.42/nodes";

const JOBS: &str = "/slurm/v0.0.42/jobs";

/// The call's HTTP status and its answer: `status` and `body`, as the Slurm Job API page of
/// the training-clusters docs shows it.
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

/// slurmrestd's JSON: the answer's `body`, which is a string, parsed.
fn slurm_json(answer: &Value) -> Value {
    assert!(answer.get("structuredBody").is_none(), "{answer}");
    let text = answer["body"].as_str().expect("`body` is a string");
    serde_json::from_str(text).expect("`body` is JSON")
}

#[tokio::test]
async fn jobs_are_served_from_what_the_test_injected() {
    let server = TestServer::start(fast_options()).await;
    server.create_running("slurm", seed()).await;
    let (status, answer) = call_slurm(&server, "slurm", JOBS).await;
    assert_eq!(status, 200);
    assert_eq!(answer["status"], 200);
    assert_eq!(slurm_json(&answer)["jobs"], json!([]));
    assert_eq!(slurm_json(&answer)["errors"], json!([]));
    assert_eq!(slurm_json(&answer)["last_backfill"]["set"], true);
    let job = json!({"job_id": 1, "job_state": ["RUNNING"], "end_time": {"set": true, "number": 1_700_000_000}});
    server
        .emulator()
        .set_slurm_jobs(&cluster_name("slurm"), vec![job.clone()]);
    let (_, answer) = call_slurm(&server, "slurm", JOBS).await;
    assert_eq!(slurm_json(&answer)["jobs"], json!([job]));
    let (_, answer) = call_slurm(&server, "slurm", "/slurm/v0.0.42/jobs/").await;
    assert_eq!(
        slurm_json(&answer)["jobs"],
        json!([job]),
        "the docs' spelling, with a trailing slash"
    );
    let (_, answer) = call_slurm(&server, "slurm", "/slurm/v0.0.42/diag").await;
    assert_eq!(answer["status"], 404);
    assert_eq!(
        answer["body"], "Unable find requested URL. Please view /openapi/v3 for API reference.",
        "slurmrestd's 404 is plain text"
    );
}

#[tokio::test]
async fn a_cluster_created_again_does_not_inherit_the_deleted_ones_slurm() {
    let server = TestServer::start(fast_options()).await;
    server.create_running("again", seed()).await;
    let name = cluster_name("again");
    server
        .emulator()
        .set_slurm_jobs(&name, vec![json!({"job_id": 1, "job_state": ["RUNNING"]})]);
    server
        .emulator()
        .set_slurm_nodes(&name, vec![json!({"name": "old-0", "state": ["IDLE"]})]);
    let (status, deleting) = server
        .call(Method::DELETE, &cluster_path("again"), None)
        .await;
    assert_eq!(status, 200, "{deleting}");
    server.wait_done(&deleting).await;
    server.create_running("again", seed()).await;
    let (_, answer) = call_slurm(&server, "again", JOBS).await;
    assert_eq!(slurm_json(&answer)["jobs"], json!([]));
    let (_, answer) = call_slurm(&server, "again", NODES).await;
    let nodes = slurm_json(&answer)["nodes"].clone();
    assert!(
        nodes
            .as_array()
            .unwrap()
            .iter()
            .all(|node| node["name"] != "old-0"),
        "{nodes}"
    );
}

#[tokio::test]
async fn nodes_are_the_compute_pools_until_a_test_injects_others() {
    let server = TestServer::start(fast_options()).await;
    server.create_running("slurm", seed()).await;
    let (_, answer) = call_slurm(&server, "slurm", NODES).await;
    assert_eq!(answer["status"], 200);
    let configured = slurm_json(&answer)["nodes"].as_array().unwrap().clone();
    assert!(!configured.is_empty());
    let started = server.emulator().cluster(&cluster_name("slurm")).unwrap()["startTime"].clone();
    let started = OffsetDateTime::parse(
        started.as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    for node in &configured {
        assert_eq!(
            node["last_busy"]["number"],
            started.unix_timestamp(),
            "{node}"
        );
        assert!(
            node["name"].as_str().unwrap().starts_with("slurm-cpu-"),
            "{node}"
        );
    }
    let node = json!({"name": "cpu-0", "state": ["IDLE", "POWERED_DOWN"],
                      "last_busy": {"set": true, "infinite": false, "number": 1_700_000_000}});
    server
        .emulator()
        .set_slurm_nodes(&cluster_name("slurm"), vec![node.clone()]);
    let (_, answer) = call_slurm(&server, "slurm", NODES).await;
    assert_eq!(slurm_json(&answer)["nodes"], json!([node]));
    assert_eq!(
        slurm_json(&answer)["meta"]["plugin"]["data_parser"],
        "data_parser/v0.0.42"
    );
}

#[tokio::test]
async fn finished_jobs_leave_the_listing_after_min_job_age_but_nodes_stay() {
    let server = TestServer::start(EmulatorOptions {
        min_job_age: Duration::from_secs(60),
        ..fast_options()
    })
    .await;
    server.create_running("slurm", seed()).await;
    let now = OffsetDateTime::now_utc().unix_timestamp();
    let ended = |id: i64, ago: i64| json!({"job_id": id, "job_state": ["COMPLETED"], "end_time": {"set": true, "infinite": false, "number": now - ago}});
    let name = cluster_name("slurm");
    server
        .emulator()
        .set_slurm_jobs(&name, vec![ended(1, 10), ended(2, 600)]);
    let node = json!({"name": "cpu-0", "state": ["IDLE"], "last_busy": {"set": true, "infinite": false, "number": now - 600}});
    server.emulator().set_slurm_nodes(&name, vec![node.clone()]);
    let (_, answer) = call_slurm(&server, "slurm", JOBS).await;
    assert_eq!(slurm_json(&answer)["jobs"], json!([ended(1, 10)]));
    let (_, answer) = call_slurm(&server, "slurm", NODES).await;
    assert_eq!(slurm_json(&answer)["nodes"], json!([node]));
}

#[tokio::test]
async fn an_unsupported_rest_version_answers_404_as_slurmrestd_does() {
    let server = TestServer::start(fast_options()).await;
    server.create_running("old", seed()).await;
    server
        .emulator()
        .set_slurm_api_versions(&cluster_name("old"), &["v0.0.40"]);
    let (status, answer) = call_slurm(&server, "old", JOBS).await;
    assert_eq!(status, 200, "the proxy call itself succeeds");
    assert_eq!(answer["status"], 404);
    let (_, answer) = call_slurm(&server, "old", "/slurm/v0.0.40/jobs").await;
    assert_eq!(answer["status"], 200);
}

#[tokio::test]
async fn the_options_choose_the_rest_versions_every_cluster_serves() {
    let server = TestServer::start(EmulatorOptions {
        slurm_api_versions: vec!["v0.0.44".to_owned(), "v0.0.43".to_owned()],
        ..fast_options()
    })
    .await;
    server.create_running("modern", seed()).await;
    for (path, status) in [
        ("/slurm/v0.0.45/jobs", 404),
        ("/slurm/v0.0.44/jobs", 200),
        ("/slurm/v0.0.43/nodes", 200),
        (JOBS, 404),
    ] {
        let (_, answer) = call_slurm(&server, "modern", path).await;
        assert_eq!(answer["status"], status, "{path}");
    }
}

#[tokio::test]
async fn the_default_versions_are_those_of_slurm_24_11() {
    let server = TestServer::start(fast_options()).await;
    server.create_running("plain", seed()).await;
    let mut served = Vec::new();
    for version in [
        "v0.0.45", "v0.0.44", "v0.0.43", "v0.0.42", "v0.0.41", "v0.0.40",
    ] {
        let (_, answer) = call_slurm(&server, "plain", &format!("/slurm/{version}/jobs")).await;
        if answer["status"] == 200 {
            served.push(version);
        }
    }
    assert_eq!(served, ["v0.0.42", "v0.0.41", "v0.0.40"]);
}

#[tokio::test]
async fn the_ping_reports_the_controller_and_a_down_one_fails_the_listings() {
    let server = TestServer::start(fast_options()).await;
    server.create_running("ctl", seed()).await;
    let (_, answer) = call_slurm(&server, "ctl", "/slurm/v0.0.42/ping").await;
    assert_eq!(answer["status"], 200);
    let pings = slurm_json(&answer)["pings"].clone();
    assert_eq!(pings[0]["pinged"], "UP");
    assert_eq!(pings[0]["responding"], true);

    server
        .emulator()
        .set_slurm_controller_down(&cluster_name("ctl"), true);
    let (_, answer) = call_slurm(&server, "ctl", "/slurm/v0.0.42/ping/").await;
    assert_eq!(answer["status"], 200, "slurmrestd answers its ping itself");
    assert_eq!(slurm_json(&answer)["pings"][0]["responding"], false);
    for path in [JOBS, NODES] {
        let (status, answer) = call_slurm(&server, "ctl", path).await;
        assert_eq!(status, 200, "the relay itself works");
        assert_eq!(answer["status"], 500, "{path}");
        assert_eq!(
            slurm_json(&answer)["errors"][0]["error"],
            "Unable to contact slurm controller (connect failure)"
        );
    }
    server
        .emulator()
        .set_slurm_controller_down(&cluster_name("ctl"), false);
    let (_, answer) = call_slurm(&server, "ctl", JOBS).await;
    assert_eq!(answer["status"], 200);
}

#[tokio::test]
async fn a_cluster_that_is_not_running_is_a_failed_precondition() {
    let server = TestServer::start(transition_options()).await;
    server.create("early", seed()).await;
    let (status, error) = call_slurm(&server, "early", JOBS).await;
    assert_eq!(status, 400);
    assert_eq!(error["error"]["status"], "FAILED_PRECONDITION");
    let (status, _) = call_slurm(&server, "absent", JOBS).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn an_unreachable_slurm_is_unavailable() {
    let server = TestServer::start(fast_options()).await;
    server.create_running("down", seed()).await;
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
    server.create_running("strict", seed()).await;
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
