//! Retries by AIP-194, counted in the emulator's request log; and a create whose answer is lost.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use clusterform_emulator::FaultSpec;
use clusterform_executor::{ExecError, RetryPolicy, Submitted};

use crate::support::*;

fn faults(spec: &str) -> FaultSpec {
    spec.parse().unwrap()
}

#[tokio::test]
async fn unavailable_is_retried_until_the_attempts_run_out() {
    let h = Harness::start(Duration::from_millis(50)).await;
    h.emulator.set_faults(faults("503=1.0"));
    let client = h.client(RetryPolicy {
        max_attempts: 3,
        ..fast_retry()
    });
    let err = client
        .get_cluster(&parsed_name("train01"))
        .await
        .unwrap_err();
    assert_eq!(err.api_code_name(), Some("UNAVAILABLE"), "{err}");
    assert_eq!(h.emulator.requests().len(), 3);
}

#[tokio::test]
async fn flaky_reads_succeed_after_retries() {
    let h = Harness::start(Duration::from_millis(50)).await;
    h.insert("train01");
    h.emulator
        .set_faults(faults("503=0.2,500=0.1,drop=0.1,seed=7"));
    let client = h.client(RetryPolicy {
        max_attempts: 12,
        ..fast_retry()
    });
    for _ in 0..20 {
        assert!(
            client
                .get_cluster(&parsed_name("train01"))
                .await
                .unwrap()
                .is_some()
        );
    }
    let statuses = h.statuses("GET", "/train01");
    assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 20);
    assert!(statuses.contains(&503), "{statuses:?}");
    assert!(statuses.contains(&500), "{statuses:?}");
    assert!(statuses.contains(&0), "dropped connections: {statuses:?}");
}

#[tokio::test]
async fn internal_errors_are_not_retried_on_an_update() {
    let h = Harness::start(Duration::from_millis(50)).await;
    h.insert("train01");
    h.emulator.set_faults(faults("500=1.0"));
    let err = h
        .client
        .send(REGION, &update_labels_request("train01", "x"))
        .await
        .unwrap_err();
    assert_eq!(err.api_code_name(), Some("INTERNAL"), "{err}");
    assert_eq!(h.count("PATCH", "/train01"), 1);
}

#[tokio::test]
async fn too_many_requests_honours_retry_after() {
    let h = Harness::start(Duration::from_millis(50)).await;
    h.emulator.set_faults(faults("429=1.0,retry-after=0"));
    let client = h.client(RetryPolicy {
        max_attempts: 4,
        ..fast_retry()
    });
    let err = client.list_clusters(PROJECT, REGION).await.unwrap_err();
    assert_eq!(err.api_code_name(), Some("RESOURCE_EXHAUSTED"));
    assert_eq!(h.emulator.requests().len(), 4);

    // A Retry-After longer than the whole retry budget ends the retries at once.
    h.emulator.clear_requests();
    h.emulator.set_faults(faults("429=1.0,retry-after=30"));
    client.list_clusters(PROJECT, REGION).await.unwrap_err();
    assert_eq!(h.emulator.requests().len(), 1);
}

#[tokio::test]
async fn unauthenticated_and_invalid_requests_are_never_retried() {
    let h = Harness::start(Duration::from_millis(50)).await;
    let mut bad = create_request("train01");
    bad.body = Some(serde_json::json!({"displayName": "no pools"}));
    let err = h.client.send(REGION, &bad).await.unwrap_err();
    assert_eq!(err.api_code_name(), Some("INVALID_ARGUMENT"), "{err}");
    assert_eq!(h.emulator.requests().len(), 1);
}

#[tokio::test]
async fn aborted_waits_for_the_running_operation_and_retries() {
    let h = Harness::start(Duration::from_millis(300)).await;
    h.insert("train01");
    h.client
        .send(REGION, &update_labels_request("train01", "a"))
        .await
        .unwrap();
    let patient = h.client(RetryPolicy {
        max_attempts: 100,
        initial_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(50),
        max_elapsed: Duration::from_secs(10),
    });
    let submitted = patient
        .send(REGION, &update_labels_request("train01", "b"))
        .await
        .unwrap();
    assert!(matches!(submitted, Submitted::Operation(_)));
    let statuses = h.statuses("PATCH", "/train01");
    assert_eq!(statuses.first(), Some(&200));
    assert_eq!(statuses.last(), Some(&200));
    assert!(
        statuses.contains(&409),
        "the second update met ABORTED first: {statuses:?}"
    );
}

/// What the proxy does with the first create it sees.
#[derive(Clone, Copy, PartialEq)]
enum LoseAnswer {
    /// Forward it, then never answer (the create happened, its answer is lost).
    AfterForwarding,
    /// Never forward it (the create did not happen).
    BeforeForwarding,
}

#[derive(Clone)]
struct Proxy {
    upstream: String,
    http: reqwest::Client,
    lose_next_create: Arc<Mutex<Option<LoseAnswer>>>,
}

async fn forward(State(proxy): State<Proxy>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body: Bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
    let is_create =
        parts.method == "POST" && parts.uri.path().ends_with("/modelDevelopmentClusters");
    let lose = if is_create {
        proxy.lose_next_create.lock().unwrap().take()
    } else {
        None
    };
    if lose == Some(LoseAnswer::BeforeForwarding) {
        tokio::time::sleep(Duration::from_secs(30)).await;
    }
    let url = format!("{}{}", proxy.upstream, parts.uri);
    let mut upstream = proxy.http.request(parts.method.clone(), url).body(body);
    for (name, value) in &parts.headers {
        if name != "host" {
            upstream = upstream.header(name, value);
        }
    }
    let answer = upstream.send().await.unwrap();
    if lose == Some(LoseAnswer::AfterForwarding) {
        tokio::time::sleep(Duration::from_secs(30)).await;
    }
    let status = StatusCode::from_u16(answer.status().as_u16()).unwrap();
    (status, answer.bytes().await.unwrap()).into_response()
}

async fn start_proxy(upstream: String, lose: LoseAnswer) -> String {
    let proxy = Proxy {
        upstream,
        http: reqwest::Client::new(),
        lose_next_create: Arc::new(Mutex::new(Some(lose))),
    };
    let app = axum::Router::new().fallback(forward).with_state(proxy);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}")
}

fn impatient_client(base: &str) -> clusterform_executor::ApiClient {
    clusterform_executor::ApiClient::new(
        clusterform_executor::ClientOptions {
            endpoint: Some(base.to_owned()),
            request_timeout: Duration::from_millis(500),
            retry: fast_retry(),
            ..Default::default()
        },
        Arc::new(clusterform_executor::StaticToken::new(TOKEN)),
    )
    .unwrap()
}

#[tokio::test]
async fn a_create_whose_answer_was_lost_is_looked_up_not_resent() {
    let h = Harness::start(Duration::from_millis(300)).await;
    let base = start_proxy(h.handle.base_url(), LoseAnswer::AfterForwarding).await;
    let client = impatient_client(&base);
    let submitted = client
        .send(REGION, &create_request("train01"))
        .await
        .unwrap();
    let Submitted::Adopted(cluster) = submitted else {
        panic!("expected the cluster to be adopted, got {submitted:?}");
    };
    assert_eq!(cluster.label("clusterform-stack"), Some(STACK));
    assert_eq!(
        h.count("POST", "/modelDevelopmentClusters"),
        1,
        "the create was not re-sent"
    );
    assert!(h.count("GET", "/train01") >= 1, "the cluster was looked up");
}

#[tokio::test]
async fn a_create_that_never_arrived_is_sent_again() {
    let h = Harness::start(Duration::from_millis(50)).await;
    let base = start_proxy(h.handle.base_url(), LoseAnswer::BeforeForwarding).await;
    let client = impatient_client(&base);
    let submitted = client
        .send(REGION, &create_request("train01"))
        .await
        .unwrap();
    assert!(
        matches!(submitted, Submitted::Operation(_)),
        "{submitted:?}"
    );
    assert_eq!(
        h.count("POST", "/modelDevelopmentClusters"),
        1,
        "only the second attempt arrived"
    );
    assert_eq!(
        h.statuses("GET", "/train01"),
        vec![404],
        "looked up before re-sending"
    );
}

#[tokio::test]
async fn a_lost_create_does_not_adopt_someone_elses_cluster() {
    let h = Harness::start(Duration::from_millis(50)).await;
    h.emulator.insert_cluster(
        &cluster_name("train01"),
        cluster_body("train01", Some("other-stack")),
    );
    let base = start_proxy(h.handle.base_url(), LoseAnswer::BeforeForwarding).await;
    let client = impatient_client(&base);
    let err = client
        .send(REGION, &create_request("train01"))
        .await
        .unwrap_err();
    assert_eq!(err.api_code_name(), Some("ALREADY_EXISTS"), "{err}");
    assert!(matches!(err, ExecError::Api { .. }));
}
