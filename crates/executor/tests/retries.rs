//! Retries by AIP-194, counted in the emulator's request log; and a create whose answer is lost.

use std::sync::Arc;
use std::time::Duration;

use clusterform_emulator::FaultSpec;
use clusterform_executor::{RetryPolicy, Submitted, TransportError};
use clusterform_model::rest::ClusterRequest;

use crate::proxy::{Mischief, Proxy, Rule, is_create};
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
    assert_eq!(
        err.api_code(),
        Some(clusterform_model::Code::Unavailable),
        "{err}"
    );
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
        .send(&update_labels_request("train01", "x"))
        .await
        .unwrap_err();
    assert_eq!(
        err.api_code(),
        Some(clusterform_model::Code::Internal),
        "{err}"
    );
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
    let err = client.list_clusters(&location()).await.unwrap_err();
    assert_eq!(
        err.api_code(),
        Some(clusterform_model::Code::ResourceExhausted)
    );
    assert_eq!(h.emulator.requests().len(), 4);

    // A Retry-After longer than the whole retry budget ends the retries at once.
    h.emulator.clear_requests();
    h.emulator.set_faults(faults("429=1.0,retry-after=30"));
    client.list_clusters(&location()).await.unwrap_err();
    assert_eq!(h.emulator.requests().len(), 1);
}

#[tokio::test]
async fn unauthenticated_and_invalid_requests_are_never_retried() {
    let h = Harness::start(Duration::from_millis(50)).await;
    let bad = ClusterRequest::Create {
        name: address("train01"),
        body: serde_json::json!({"displayName": "no pools"}),
    };
    let err = h.client.send(&bad).await.unwrap_err();
    assert_eq!(
        err.api_code(),
        Some(clusterform_model::Code::InvalidArgument),
        "{err}"
    );
    assert_eq!(h.emulator.requests().len(), 1);
}

#[tokio::test]
async fn aborted_is_left_to_the_engine_for_changes() {
    let h = Harness::start(Duration::from_millis(300)).await;
    h.insert("train01");
    h.client
        .send(&update_labels_request("train01", "a"))
        .await
        .unwrap();
    let err = h
        .client
        .send(&update_labels_request("train01", "b"))
        .await
        .unwrap_err();
    assert!(err.is_aborted(), "{err}");
    assert_eq!(
        h.statuses("PATCH", "/train01"),
        [200, 409],
        "not retried blindly"
    );
}

/// The first create misbehaves; everything else passes.
fn first_create(mischief: Mischief) -> Rule {
    Rule {
        applies_to: is_create,
        mischief,
        times: 1,
    }
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
    let proxy = Proxy::start(h.server.base_url(), first_create(Mischief::LoseAnswer)).await;
    let client = impatient_client(proxy.base_url());
    let submitted = client.send(&create_request("train01")).await.unwrap();
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
    let proxy = Proxy::start(h.server.base_url(), first_create(Mischief::Swallow)).await;
    let client = impatient_client(proxy.base_url());
    let submitted = client.send(&create_request("train01")).await.unwrap();
    assert_resent_after_a_lookup(&h, &submitted);
}

#[tokio::test]
async fn a_lost_create_does_not_adopt_someone_elses_cluster() {
    let h = Harness::start(Duration::from_millis(50)).await;
    h.emulator.insert_cluster(
        &cluster_name("train01"),
        cluster_body("train01", Some("other-stack")),
    );
    let proxy = Proxy::start(h.server.base_url(), first_create(Mischief::Swallow)).await;
    let client = impatient_client(proxy.base_url());
    let err = client.send(&create_request("train01")).await.unwrap_err();
    assert_eq!(
        err.api_code(),
        Some(clusterform_model::Code::AlreadyExists),
        "{err}"
    );
    assert!(matches!(err, TransportError::Api { .. }));
}

#[tokio::test]
async fn a_create_answered_with_a_server_error_is_looked_up_not_resent() {
    for status in [500, 502, 504] {
        let h = Harness::start(Duration::from_millis(300)).await;
        let proxy = Proxy::start(
            h.server.base_url(),
            first_create(Mischief::ReplaceAnswer(status)),
        )
        .await;
        let client = client_for(proxy.base_url(), fast_retry());
        let submitted = client.send(&create_request("train01")).await.unwrap();
        let Submitted::Adopted(cluster) = submitted else {
            panic!("{status}: expected the cluster to be adopted, got {submitted:?}");
        };
        assert_eq!(cluster.label("clusterform-stack"), Some(STACK), "{status}");
        assert_eq!(
            proxy.count("POST", "/modelDevelopmentClusters"),
            1,
            "{status}: the client sent the create once"
        );
        assert_eq!(h.count("POST", "/modelDevelopmentClusters"), 1, "{status}");
        assert_eq!(
            h.statuses("GET", "/train01"),
            vec![200],
            "{status}: looked up once, found"
        );
    }
}

#[tokio::test]
async fn a_create_refused_with_a_server_error_is_sent_again_after_looking() {
    let h = Harness::start(Duration::from_millis(50)).await;
    let proxy = Proxy::start(h.server.base_url(), first_create(Mischief::Refuse(502))).await;
    let client = client_for(proxy.base_url(), fast_retry());
    let submitted = client.send(&create_request("train01")).await.unwrap();
    assert_eq!(proxy.count("POST", "/modelDevelopmentClusters"), 2);
    assert_resent_after_a_lookup(&h, &submitted);
}

#[tokio::test]
async fn retry_after_is_waited_for_and_counts_against_the_budget() {
    let h = Harness::start(Duration::from_millis(50)).await;
    h.emulator.set_faults(faults("429=1.0,retry-after=1"));
    // Backoff alone would allow ten quick attempts; a 1 s Retry-After within a 1.5 s budget
    // allows exactly two: the second attempt starts after 1 s, and another 1 s wait would
    // end beyond the budget.
    let client = h.client(RetryPolicy {
        max_attempts: 10,
        max_elapsed: Duration::from_millis(1500),
        ..fast_retry()
    });
    let err = client.list_clusters(&location()).await.unwrap_err();
    assert_eq!(
        err.api_code(),
        Some(clusterform_model::Code::ResourceExhausted),
        "{err}"
    );
    assert_eq!(
        h.statuses("GET", "/modelDevelopmentClusters"),
        vec![429, 429]
    );
}

#[tokio::test]
async fn the_elapsed_budget_stops_retries_before_the_attempts_run_out() {
    let h = Harness::start(Duration::from_millis(50)).await;
    h.emulator.set_faults(faults("503=1.0"));
    let client = h.client(RetryPolicy {
        max_attempts: 1000,
        initial_backoff: Duration::from_millis(50),
        max_backoff: Duration::from_millis(50),
        max_elapsed: Duration::from_millis(200),
    });
    let err = client
        .get_cluster(&parsed_name("train01"))
        .await
        .unwrap_err();
    assert_eq!(
        err.api_code(),
        Some(clusterform_model::Code::Unavailable),
        "{err}"
    );
    // Waits average 25 ms: a 200 ms budget ends the retries after a handful of attempts,
    // far from the 1000 the attempt limit would allow.
    let attempts = h.count("GET", "/train01");
    assert!((2..100).contains(&attempts), "{attempts} attempts");
}

/// The create was sent again, after a GET found no cluster, and only that attempt arrived.
fn assert_resent_after_a_lookup(h: &Harness, submitted: &Submitted) {
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
