//! Fleets across regions: a quota error backs off its region only, and the per-location
//! limit of apply's parallelism holds without keeping other locations waiting.

use std::sync::Arc;
use std::time::Duration;

use clusterform_emulator::{EmulatorOptions, FaultSpec, RecordedRequest};
use clusterform_executor::{ApiClient, ApplyEngine, ApplyReport, ExecError, Journal, RetryPolicy};
use clusterform_model::rest::ClusterRequest;
use clusterform_model::{Action, ClusterName};
use clusterform_planner::ClusterChange;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio_util::sync::CancellationToken;

use crate::scripted::{Scripted, Seen, google_error};
use crate::support::*;

const QUOTA_REGION: &str = "us-east1";
const OTHER_REGION: &str = "europe-west4";

fn address_in(region: &str, id: &str) -> ClusterName {
    ClusterName::new(PROJECT, region, id).unwrap()
}

fn create_in(region: &str, id: &str) -> ClusterRequest {
    ClusterRequest::Create {
        name: address_in(region, id),
        body: cluster_body(id, Some(STACK)),
    }
}

/// The planned create of cluster `id` in `region`.
fn create_change_in(region: &str, id: &str) -> ClusterChange {
    let mut change = change(id, Action::Create, vec![create_in(region, id)]);
    change.address = address_in(region, id);
    change
}

/// Applies `changes` with `engine`, recording nothing but the report.
async fn apply(
    engine: &ApplyEngine,
    changes: Vec<ClusterChange>,
    cancel: CancellationToken,
) -> ApplyReport {
    engine
        .apply(&plan(changes), Arc::new(RecordingSink::default()), cancel)
        .await
}

fn is_in(request: &RecordedRequest, region: &str) -> bool {
    request.path.contains(&format!("/locations/{region}/"))
}

/// Positions in the emulator's log of the requests for `region`.
fn positions_in(log: &[RecordedRequest], region: &str) -> Vec<usize> {
    (0..log.len()).filter(|&i| is_in(&log[i], region)).collect()
}

/// An emulator whose every answer in [`QUOTA_REGION`] is `429` with `Retry-After: seconds`.
async fn quota_harness(retry_after_seconds: u64) -> Harness {
    Harness::with_options(EmulatorOptions {
        required_token: Some(TOKEN.to_owned()),
        faults: format!("429=1,retry-after={retry_after_seconds},location={QUOTA_REGION}")
            .parse::<FaultSpec>()
            .unwrap(),
        ..EmulatorOptions::default()
    })
    .await
}

#[tokio::test]
async fn a_quota_error_holds_back_its_region_and_no_other() {
    let h = quota_harness(3).await;
    let client = h.client(RetryPolicy {
        max_attempts: 2,
        ..fast_retry()
    });
    let first_read = tokio::spawn({
        let client = client.clone();
        async move {
            let name = address_in(QUOTA_REGION, "first");
            client.get_cluster(&name).await
        }
    });
    while !h.emulator.requests().iter().any(|r| r.status == 429) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Time for the client to read the answer (the gate stays closed for 3 s).
    tokio::time::sleep(Duration::from_millis(500)).await;
    // A write to the region, from a clone, after the region answered 429.
    let held_write = tokio::spawn({
        let client = client.clone();
        async move { client.send(&create_in(QUOTA_REGION, "second")).await }
    });
    for id in ["a", "b", "c", "d", "e"] {
        let found = client.get_cluster(&address_in(OTHER_REGION, id)).await;
        assert!(matches!(found, Ok(None)), "{found:?}");
    }

    let read_error = first_read.await.unwrap().unwrap_err();
    assert!(read_error.is_quota_exhausted(), "{read_error}");
    let write_error = held_write.await.unwrap().unwrap_err();
    assert!(write_error.is_quota_exhausted(), "{write_error}");
    let log = h.emulator.requests();
    let quota = positions_in(&log, QUOTA_REGION);
    let other = positions_in(&log, OTHER_REGION);
    assert_eq!(other.len(), 5, "{log:#?}");
    assert!(
        log[quota[0]].method == "GET" && log[quota[0]].status == 429,
        "{log:#?}"
    );
    // The other region went at full speed while the quota region's gate was closed: nothing
    // was sent to the quota region between its first 429 and the other region's last answer.
    assert!(
        quota[1] > *other.last().unwrap(),
        "a request reached {QUOTA_REGION} while its gate was closed: {log:#?}"
    );
    assert!(
        log.iter()
            .any(|r| r.method == "POST" && is_in(r, QUOTA_REGION))
    );
}

/// Applies the create of a cluster in [`QUOTA_REGION`] through `client`, with a journal in
/// `dir`, interrupted 300 ms in: the interruption must end the apply within 20 s, the action
/// cancelled.
async fn create_interrupted(client: ApiClient, dir: &std::path::Path) {
    let engine =
        ApplyEngine::new(client, Journal::open(dir).unwrap(), 1).with_wait_options(fast_wait());
    let cancel = CancellationToken::new();
    let interrupt = tokio::spawn({
        let cancel = cancel.clone();
        async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            cancel.cancel();
        }
    });
    let report = tokio::time::timeout(
        Duration::from_secs(20),
        apply(
            &engine,
            vec![create_change_in(QUOTA_REGION, "second")],
            cancel,
        ),
    )
    .await
    .expect("the interruption ended the apply");
    interrupt.await.unwrap();
    assert!(report.interrupted, "{report:#?}");
    assert!(
        matches!(report.outcomes[0].result, Err(ExecError::Cancelled)),
        "{report:#?}"
    );
}

#[tokio::test]
async fn an_interruption_ends_a_wait_for_a_region_backing_off_with_nothing_sent() {
    let h = quota_harness(60).await;
    let client = h.client(RetryPolicy {
        max_attempts: 1,
        max_elapsed: Duration::from_secs(120),
        ..fast_retry()
    });
    // The region answers a quota error: its gate closes for a minute.
    let refused = client.get_cluster(&address_in(QUOTA_REGION, "first")).await;
    assert!(refused.unwrap_err().is_quota_exhausted());
    let dir = tempfile::tempdir().unwrap();
    create_interrupted(client, dir.path()).await;
    assert_eq!(
        h.count("POST", "/modelDevelopmentClusters"),
        0,
        "nothing was sent"
    );
}

#[tokio::test]
async fn an_interruption_ends_the_retry_wait_of_a_change_refused_for_quota() {
    // Every create is refused for a rate of requests (a quota per minute, which waiting lifts)
    // with `Retry-After: 60`.
    let server = Scripted::start(|_: &Seen, _| {
        let mut refused = google_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Mutate requests' and limit 'Mutate requests per minute'");
        refused
            .headers_mut()
            .insert("retry-after", "60".parse().unwrap());
        refused
    })
    .await;
    let client = client_for(
        server.base_url(),
        RetryPolicy {
            max_elapsed: Duration::from_secs(120),
            ..fast_retry()
        },
    );
    let dir = tempfile::tempdir().unwrap();
    create_interrupted(client, dir.path()).await;
    let sent: Vec<Seen> = server.requests();
    assert_eq!(sent.len(), 1, "one refused create, nothing else: {sent:#?}");
    assert_eq!(sent[0].method, "POST");
    assert!(
        Journal::open(dir.path()).unwrap().is_empty(),
        "nothing was started"
    );
}

/// When each cluster of `region` was created and when it became `RUNNING`.
fn lifetimes(h: &Harness, region: &str, ids: &[&str]) -> Vec<(OffsetDateTime, OffsetDateTime)> {
    let time_of = |cluster: &serde_json::Value, field: &str| {
        OffsetDateTime::parse(cluster[field].as_str().unwrap(), &Rfc3339).unwrap()
    };
    let mut lifetimes: Vec<_> = ids
        .iter()
        .map(|id| {
            let name =
                format!("projects/{PROJECT}/locations/{region}/modelDevelopmentClusters/{id}");
            let cluster = h.emulator.cluster(&name).unwrap();
            (
                time_of(&cluster, "createTime"),
                time_of(&cluster, "startTime"),
            )
        })
        .collect();
    lifetimes.sort();
    lifetimes
}

#[tokio::test]
async fn the_per_location_limit_holds_and_leaves_the_global_slots_to_other_locations() {
    let h = Harness::start(Duration::from_secs(1)).await;
    let dir = tempfile::tempdir().unwrap();
    let capped = ["e1", "e2", "e3", "e4"];
    let others = ["w1", "w2"];
    // The capped location's clusters come first: with a global limit of 2, two of them must
    // not take both global slots while only one of them may run.
    let changes = capped
        .iter()
        .map(|id| (QUOTA_REGION, id))
        .chain(others.iter().map(|id| (OTHER_REGION, id)))
        .map(|(region, id)| create_change_in(region, id))
        .collect();
    let engine = ApplyEngine::new(
        h.client(fast_retry()),
        Journal::open(dir.path()).unwrap(),
        2,
    )
    .with_parallelism_per_location(Some(1))
    .with_wait_options(fast_wait());

    let report = apply(&engine, changes, CancellationToken::new()).await;

    assert!(report.is_success(), "{report:#?}");
    let capped_lifetimes = lifetimes(&h, QUOTA_REGION, &capped);
    for pair in capped_lifetimes.windows(2) {
        assert!(
            pair[1].0 >= pair[0].1,
            "two creates ran at once in {QUOTA_REGION}: {capped_lifetimes:?}"
        );
    }
    let other_lifetimes = lifetimes(&h, OTHER_REGION, &others);
    assert!(
        other_lifetimes[1].0 >= other_lifetimes[0].1,
        "two creates ran at once in {OTHER_REGION}: {other_lifetimes:?}"
    );
    // The other location used the second global slot while the capped one was busy.
    assert!(
        other_lifetimes[0].0 < capped_lifetimes[0].1,
        "{OTHER_REGION} waited for {QUOTA_REGION}: {capped_lifetimes:?} {other_lifetimes:?}"
    );
}

#[tokio::test]
async fn without_a_per_location_limit_one_location_runs_in_parallel() {
    let h = Harness::start(Duration::from_secs(1)).await;
    let dir = tempfile::tempdir().unwrap();
    let ids = ["e1", "e2"];
    let changes = ids
        .iter()
        .map(|id| create_change_in(QUOTA_REGION, id))
        .collect();
    let engine = ApplyEngine::new(
        h.client(fast_retry()),
        Journal::open(dir.path()).unwrap(),
        2,
    )
    .with_wait_options(fast_wait());

    let report = apply(&engine, changes, CancellationToken::new()).await;

    assert!(report.is_success(), "{report:#?}");
    let both = lifetimes(&h, QUOTA_REGION, &ids);
    assert!(both[1].0 < both[0].1, "{both:?}");
}
