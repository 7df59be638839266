//! Capacity fallbacks: a create whose machines run out walks its alternatives, deleting only
//! what its own failed create left; a quota refusal is not waited out; a cluster that existed
//! before is never deleted.

use std::sync::Arc;
use std::time::Duration;

use clusterform_executor::{ApplyEngine, ExecError, Journal, LeftBehind};
use clusterform_model::rest::ClusterRequest;
use clusterform_model::{Action, Shortage};
use clusterform_planner::ClusterChange;
use clusterform_testkit::options_with_token;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::*;

const DECLARED: &str = "c2-standard-60";
const FALLBACK: &str = "n2-standard-16";

/// The create of `id` with its `cpu` pool on `machine`.
fn create_on(id: &str, machine: &str) -> ClusterRequest {
    let mut body = cluster_body(id, Some(STACK));
    body["nodePools"][1]["machineSpec"]["machineType"] = json!(machine);
    ClusterRequest::Create {
        name: address(id),
        body,
    }
}

/// The create of `id` on the declared machines, falling back to [`FALLBACK`].
fn chained_create(id: &str) -> ClusterChange {
    let mut change = change(id, Action::Create, vec![create_on(id, DECLARED)]);
    change.capacity.fallbacks = vec![create_on(id, FALLBACK)];
    change
}

async fn harness(failures: &[&str]) -> Harness {
    let mut options = options_with_token(Duration::from_millis(50));
    options.capacity_failures = failures.iter().map(|f| f.parse().unwrap()).collect();
    Harness::with_options(options).await
}

async fn run(
    h: &Harness,
    dir: &std::path::Path,
    change: ClusterChange,
) -> clusterform_executor::ApplyReport {
    let engine = ApplyEngine::new(h.client.clone(), Journal::open(dir).unwrap(), 4)
        .with_wait_options(fast_wait());
    engine
        .apply(
            &plan(vec![change]),
            Arc::new(RecordingSink::default()),
            CancellationToken::new(),
        )
        .await
}

/// Method and status of every create and delete the emulator received, in order.
fn mutations(h: &Harness) -> Vec<String> {
    h.emulator
        .requests()
        .iter()
        .filter(|r| (r.method == "POST" && !r.path.ends_with(":wait")) || r.method == "DELETE")
        .map(|r| format!("{} {}", r.method, r.status))
        .collect()
}

#[tokio::test]
async fn a_stockout_deletes_the_failed_cluster_then_creates_the_fallback() {
    let h = harness(&[DECLARED]).await;
    let dir = tempfile::tempdir().unwrap();
    let report = run(&h, dir.path(), chained_create("gpu")).await;
    assert!(report.is_success(), "{:?}", report.outcomes[0].result);
    assert_eq!(report.outcomes[0].fallback_attempt, Some(2));
    assert_eq!(mutations(&h), ["POST 200", "DELETE 200", "POST 200"]);
    let live = h.emulator.cluster(&cluster_name("gpu")).unwrap();
    assert_eq!(live["nodePools"][1]["machineSpec"]["machineType"], FALLBACK);
    assert!(Journal::open(dir.path()).unwrap().is_empty());
}

#[tokio::test]
async fn an_exhausted_chain_says_why_and_leaves_nothing_behind() {
    let h = harness(&[DECLARED, FALLBACK]).await;
    let dir = tempfile::tempdir().unwrap();
    let report = run(&h, dir.path(), chained_create("gpu")).await;
    let Err(ExecError::OutOfMachines { attempts, left, .. }) = &report.outcomes[0].result else {
        panic!("{:?}", report.outcomes[0].result);
    };
    assert_eq!(attempts.len(), 2);
    assert!(attempts.iter().all(|a| a.shortage == Shortage::Capacity));
    assert_eq!(*left, LeftBehind::Deleted);
    assert_eq!(
        mutations(&h),
        ["POST 200", "DELETE 200", "POST 200", "DELETE 200"]
    );
    assert!(h.emulator.cluster(&cluster_name("gpu")).is_none());
    assert!(Journal::open(dir.path()).unwrap().is_empty());
}

#[tokio::test]
async fn a_quota_refusal_is_not_retried_and_the_fallback_is_sent_at_once() {
    let h = harness(&[&format!("quota:{DECLARED}")]).await;
    let dir = tempfile::tempdir().unwrap();
    let report = run(&h, dir.path(), chained_create("gpu")).await;
    assert!(report.is_success(), "{:?}", report.outcomes[0].result);
    assert_eq!(mutations(&h), ["POST 429", "POST 200"]);
}

#[tokio::test]
async fn a_quota_refusal_without_a_fallback_fails_at_once() {
    let h = harness(&[&format!("quota:{DECLARED}")]).await;
    let dir = tempfile::tempdir().unwrap();
    let change = change("gpu", Action::Create, vec![create_on("gpu", DECLARED)]);
    let report = run(&h, dir.path(), change).await;
    let Err(ExecError::OutOfMachines { attempts, left, .. }) = &report.outcomes[0].result else {
        panic!("{:?}", report.outcomes[0].result);
    };
    assert_eq!(attempts[0].shortage, Shortage::Quota);
    assert!(attempts[0].message.contains("GPUS_PER_GPU_FAMILY"));
    assert_eq!(*left, LeftBehind::Nothing);
    assert_eq!(mutations(&h), ["POST 429"]);
}

#[tokio::test]
async fn a_failed_create_of_a_cluster_that_already_existed_deletes_nothing() {
    let h = harness(&[DECLARED]).await;
    h.insert("gpu");
    let dir = tempfile::tempdir().unwrap();
    let report = run(&h, dir.path(), chained_create("gpu")).await;
    assert!(report.outcomes[0].result.is_err());
    assert_eq!(mutations(&h), ["POST 409"]);
    assert!(h.emulator.cluster(&cluster_name("gpu")).is_some());
}

#[tokio::test]
async fn prevent_destroy_keeps_the_failed_cluster_and_ends_the_chain() {
    let h = harness(&[DECLARED]).await;
    let dir = tempfile::tempdir().unwrap();
    let mut change = chained_create("gpu");
    change.capacity.keep_failed = true;
    let report = run(&h, dir.path(), change).await;
    let Err(ExecError::OutOfMachines { left, .. }) = &report.outcomes[0].result else {
        panic!("{:?}", report.outcomes[0].result);
    };
    assert_eq!(*left, LeftBehind::Kept);
    assert_eq!(mutations(&h), ["POST 200"]);
    let live = h.emulator.cluster(&cluster_name("gpu")).unwrap();
    assert_eq!(live["clusterStatus"]["state"], "ERROR");
}
