//! Request faults: injected error statuses (with Retry-After on 429),
//! dropped connections, and reproducibility for a given seed.

use clusterform_emulator::{Emulator, EmulatorOptions, FaultSpec};

use crate::support::{TOKEN, TestServer, cluster_path, fast_options};

const REQUESTS: usize = 40;

/// Sends `REQUESTS` Gets and answers each outcome: the status, or 0 for a dropped connection.
async fn outcomes(server: &TestServer) -> Vec<u16> {
    let mut outcomes = Vec::new();
    for _ in 0..REQUESTS {
        let sent = server
            .client
            .get(server.url(&cluster_path("none")))
            .bearer_auth(TOKEN)
            .send()
            .await;
        outcomes.push(sent.map_or(0, |response| response.status().as_u16()));
    }
    outcomes
}

async fn server_with_faults(spec: &str) -> TestServer {
    let options = EmulatorOptions {
        faults: spec.parse().unwrap(),
        ..fast_options()
    };
    TestServer::start(options).await
}

#[tokio::test]
async fn error_rates_replace_answers_and_the_same_seed_repeats_them() {
    let spec = "503=0.3,500=0.2,seed=5";
    let first = outcomes(&server_with_faults(spec).await).await;
    let second = outcomes(&server_with_faults(spec).await).await;
    assert_eq!(first, second);
    let count = |status| first.iter().filter(|outcome| **outcome == status).count();
    assert!(
        count(503) > 0 && count(500) > 0 && count(404) > 0,
        "{first:?}"
    );
    assert_eq!(count(503) + count(500) + count(404), REQUESTS);
    let other_seed = outcomes(&server_with_faults("503=0.3,500=0.2,seed=6").await).await;
    assert_ne!(first, other_seed);
}

#[tokio::test]
async fn injected_errors_use_the_google_envelope_and_429_has_retry_after() {
    let server = server_with_faults("429=1,retry-after=7").await;
    let response = server
        .client
        .get(server.url(&cluster_path("x")))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 429);
    assert_eq!(response.headers()["retry-after"], "7");
    let error: serde_json::Value = response.json().await.unwrap();
    assert_eq!(error["error"]["status"], "RESOURCE_EXHAUSTED");
    server.emulator().set_faults("503=1".parse().unwrap());
    let response = server
        .client
        .get(server.url(&cluster_path("x")))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 503);
    assert!(response.headers().get("retry-after").is_none());
}

#[tokio::test]
async fn dropped_connections_get_no_answer_and_are_logged_with_status_zero() {
    let server = server_with_faults("drop=0.5,seed=3").await;
    let seen = outcomes(&server).await;
    let dropped = seen.iter().filter(|outcome| **outcome == 0).count();
    assert!(dropped > 0 && dropped < REQUESTS, "{seen:?}");
    let logged: Vec<u16> = server
        .emulator()
        .requests()
        .iter()
        .map(|request| request.status)
        .collect();
    assert_eq!(
        logged, seen,
        "one logged request per request sent, no retries"
    );
    let again = outcomes(&server_with_faults("drop=0.5,seed=3").await).await;
    assert_eq!(again, seen);
}

#[tokio::test]
async fn clearing_the_faults_restores_normal_answers() {
    let server = server_with_faults("503=1").await;
    assert!(
        outcomes(&server)
            .await
            .iter()
            .all(|outcome| *outcome == 503)
    );
    server.emulator().set_faults(FaultSpec::default());
    assert!(
        outcomes(&server)
            .await
            .iter()
            .all(|outcome| *outcome == 404)
    );
}

#[tokio::test]
async fn a_drop_through_the_bare_router_becomes_unavailable() {
    let emulator = Emulator::new(EmulatorOptions {
        faults: "drop=1".parse().unwrap(),
        ..fast_options()
    })
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let router = emulator.router();
    let server = tokio::spawn(async move { axum::serve(listener, router).await });
    let response = reqwest::Client::new()
        .get(format!("http://{address}{}", cluster_path("x")))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 503);
    server.abort();
}

#[tokio::test]
async fn latency_delays_but_does_not_change_answers() {
    let options = EmulatorOptions {
        latency: std::time::Duration::from_millis(20),
        ..fast_options()
    };
    let server = TestServer::start(options).await;
    let (status, _) = server.get(&cluster_path("none")).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_location_item_faults_that_location_only() {
    let server = server_with_faults("429=1,location=us-central1").await;
    let get = async |path: String| {
        let response = server
            .client
            .get(server.url(&path))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        response.status().as_u16()
    };
    assert_eq!(get(cluster_path("x")).await, 429);
    let elsewhere = "/v1beta1/projects/proj/locations/europe-west4/modelDevelopmentClusters/x";
    assert_eq!(get(elsewhere.to_owned()).await, 404);
    assert_eq!(get(cluster_path("x")).await, 429);
}
