//! Capacity fallbacks: a create whose machines run out walks its alternatives, deleting only
//! what its own failed create left; a quota refusal is not waited out; a cluster that existed
//! before is never deleted.

use std::sync::Arc;
use std::time::Duration;

use clusterform_executor::{
    AppliedRecord, ApplyEngine, ExecError, Journal, LeftBehind, Mark, Remains, Step,
};
use clusterform_model::fields::UpdateMaskPath;
use clusterform_model::rest::{ClusterRequest, RequestKind, UpdateMask};
use clusterform_model::{Action, Shortage, UpdateMode};
use clusterform_planner::ClusterChange;
use clusterform_testkit::options_with_token;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::*;

const DECLARED: &str = "c2-standard-60";
const FALLBACK: &str = "n2-standard-16";

/// The create of `id` with its `cpu` pool on `machine`, asking for one node at create (only a
/// pool with static nodes can run short at create).
fn create_on(id: &str, machine: &str) -> ClusterRequest {
    let mut body = cluster_body(id, Some(STACK));
    body["nodePools"][1]["machineSpec"]["machineType"] = json!(machine);
    body["nodePools"][1]["scalingSpec"]["minNodeCount"] = json!(1);
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

/// An engine on the journal in `dir`, as each run opens it.
fn engine(h: &Harness, dir: &std::path::Path) -> ApplyEngine {
    ApplyEngine::new(h.client.clone(), Journal::open(dir).unwrap(), 4)
        .with_wait_options(fast_wait())
}

async fn run(
    h: &Harness,
    dir: &std::path::Path,
    change: ClusterChange,
) -> clusterform_executor::ApplyReport {
    apply_one(&engine(h, dir), change).await
}

/// Applies a plan of `change` alone with `engine`, unobserved and never cancelled.
async fn apply_one(
    engine: &ApplyEngine,
    change: ClusterChange,
) -> clusterform_executor::ApplyReport {
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
    assert_eq!(
        report.outcomes[0].fallback_attempt.map(|a| a.number()),
        Some(2)
    );
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
    // Vertex AI's words without a detail, and Compute Engine's with one: both are quotas,
    // refused once, never retried as a rate limit.
    for (kind, text) in [
        ("quota", "exceed quota limits: aiplatform.googleapis.com/"),
        ("compute-quota", "GPUS_PER_GPU_FAMILY"),
    ] {
        let h = harness(&[&format!("{kind}:{DECLARED}")]).await;
        let dir = tempfile::tempdir().unwrap();
        let change = change("gpu", Action::Create, vec![create_on("gpu", DECLARED)]);
        let report = run(&h, dir.path(), change).await;
        let Err(ExecError::OutOfMachines { attempts, left, .. }) = &report.outcomes[0].result
        else {
            panic!("{:?}", report.outcomes[0].result);
        };
        assert_eq!(attempts[0].shortage, Shortage::Quota, "{kind}");
        assert!(attempts[0].message.contains(text), "{kind}");
        assert_eq!(attempts[0].code, Some(429));
        assert_eq!(attempts[0].status.as_deref(), Some("RESOURCE_EXHAUSTED"));
        assert_eq!(*left, LeftBehind::Nothing);
        assert_eq!(mutations(&h), ["POST 429"], "{kind}");
    }
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

/// Cancels the run at the first step `stop_at` picks, after recording it.
struct CancellingSink {
    cancel: CancellationToken,
    stop_at: fn(&Step) -> bool,
}

impl clusterform_executor::ProgressSink for CancellingSink {
    fn event(&self, event: &clusterform_executor::ProgressEvent) {
        if (self.stop_at)(&event.step) {
            self.cancel.cancel();
        }
    }
}

/// Applies `change` until `stop_at` sees its step, then interrupts the run; returns what the
/// journal left.
async fn interrupted(
    h: &Harness,
    dir: &std::path::Path,
    change: ClusterChange,
    stop_at: fn(&Step) -> bool,
) -> Vec<clusterform_executor::JournalEntry> {
    let engine = engine(h, dir);
    let cancel = CancellationToken::new();
    let sink = CancellingSink {
        cancel: cancel.clone(),
        stop_at,
    };
    let report = engine
        .apply(&plan(vec![change]), Arc::new(sink), cancel)
        .await;
    let Err(ExecError::Cancelled) = &report.outcomes[0].result else {
        panic!("not interrupted: {:?}", report.outcomes[0].result);
    };
    engine.journal().entries()
}

/// Resumes the journal in `dir` as the next run does, then applies `change`.
async fn resumed_then_applied(
    h: &Harness,
    dir: &std::path::Path,
    change: ClusterChange,
) -> clusterform_executor::ApplyReport {
    let engine = engine(h, dir);
    let resumed = engine
        .resume(Arc::new(RecordingSink::default()), CancellationToken::new())
        .await;
    assert!(resumed.is_success(), "{:?}", resumed.outcomes);
    apply_one(&engine, change).await
}

#[tokio::test]
async fn a_run_interrupted_while_deleting_the_failed_cluster_goes_on_with_the_next_attempt() {
    let h = harness(&[DECLARED]).await;
    let dir = tempfile::tempdir().unwrap();
    let left = interrupted(&h, dir.path(), chained_create("gpu"), |step| {
        matches!(
            step,
            Step::Submitted {
                request: RequestKind::Delete,
                ..
            }
        )
    })
    .await;
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(
        (left[0].request, left[0].attempt),
        (RequestKind::Delete, Some(0))
    );
    assert_eq!(mutations(&h), ["POST 200", "DELETE 200"]);

    // The cluster is gone by the next run, which plans its create again.
    let report = resumed_then_applied(&h, dir.path(), chained_create("gpu")).await;
    assert!(report.is_success(), "{:?}", report.outcomes[0].result);
    assert_eq!(
        report.outcomes[0].fallback_attempt.map(|a| a.number()),
        Some(2)
    );
    assert_eq!(
        mutations(&h),
        ["POST 200", "DELETE 200", "POST 200"],
        "no create of the declared machines again, no second delete"
    );
    let live = h.emulator.cluster(&cluster_name("gpu")).unwrap();
    assert_eq!(live["nodePools"][1]["machineSpec"]["machineType"], FALLBACK);
    assert!(Journal::open(dir.path()).unwrap().is_empty());
}

#[tokio::test]
async fn a_run_interrupted_before_deleting_the_failed_cluster_replaces_it_with_the_next_attempt() {
    let h = harness(&[DECLARED]).await;
    let dir = tempfile::tempdir().unwrap();
    let left = interrupted(&h, dir.path(), chained_create("gpu"), |step| {
        matches!(step, Step::FellShort { .. })
    })
    .await;
    assert_eq!(
        left.iter()
            .map(|e| (e.request, e.attempt))
            .collect::<Vec<_>>(),
        [(RequestKind::Create, Some(0))],
        "the failed create is the chain's place"
    );
    assert_eq!(mutations(&h), ["POST 200"]);
    let failed = h.emulator.cluster(&cluster_name("gpu")).unwrap();
    assert_eq!(failed["clusterStatus"]["state"], "ERROR");

    // The next run plans the cluster in ERROR for replacement: its delete, then the chain
    // from the attempt after the one that failed.
    let mut replace = chained_create("gpu");
    replace.action = Action::Replace;
    replace.requests.insert(0, delete_request("gpu"));
    let report = resumed_then_applied(&h, dir.path(), replace).await;
    assert!(report.is_success(), "{:?}", report.outcomes[0].result);
    assert_eq!(
        report.outcomes[0].fallback_attempt.map(|a| a.number()),
        Some(2)
    );
    assert_eq!(mutations(&h), ["POST 200", "DELETE 200", "POST 200"]);
    let live = h.emulator.cluster(&cluster_name("gpu")).unwrap();
    assert_eq!(live["nodePools"][1]["machineSpec"]["machineType"], FALLBACK);
    assert!(Journal::open(dir.path()).unwrap().is_empty());
}

/// An update of `id` adding a node pool `gpu` on `machine` (besides the seed's pools).
fn adding_pool_on(id: &str, machine: &str) -> ClusterRequest {
    let mut body = cluster_body(id, Some(STACK));
    let mut pool = body["nodePools"][1].clone();
    pool["id"] = json!("gpu");
    pool["machineSpec"]["machineType"] = json!(machine);
    pool["scalingSpec"]["minNodeCount"] = json!(1);
    body["nodePools"].as_array_mut().unwrap().push(pool);
    ClusterRequest::Update {
        name: address(id),
        mask: UpdateMask::new(vec![UpdateMaskPath::NodePools]),
        mode: UpdateMode::UserAndService,
        body,
    }
}

#[tokio::test]
async fn a_pool_added_by_update_falls_back_without_deleting_the_cluster() {
    let h = harness(&[DECLARED]).await;
    h.insert("gpu");
    let dir = tempfile::tempdir().unwrap();
    let mut change = change("gpu", Action::Update, vec![adding_pool_on("gpu", DECLARED)]);
    change.capacity.fallbacks = vec![adding_pool_on("gpu", FALLBACK)];
    let report = run(&h, dir.path(), change).await;
    assert!(report.is_success(), "{:?}", report.outcomes[0].result);
    assert_eq!(
        report.outcomes[0].fallback_attempt.map(|a| a.number()),
        Some(2)
    );
    let patches: Vec<u16> = h
        .emulator
        .requests()
        .iter()
        .filter(|r| r.method == "PATCH")
        .map(|r| r.status)
        .collect();
    assert_eq!(patches, [200, 200], "the declared pool, then its fallback");
    assert_eq!(mutations(&h), Vec::<String>::new(), "nothing deleted");
    let live = h.emulator.cluster(&cluster_name("gpu")).unwrap();
    let pools = live["nodePools"].as_array().unwrap();
    let gpu = pools.iter().find(|p| p["id"] == "gpu").unwrap();
    assert_eq!(gpu["machineSpec"]["machineType"], FALLBACK);
    assert!(Journal::open(dir.path()).unwrap().is_empty());
}

#[tokio::test]
async fn a_fallback_create_waits_while_the_service_holds_the_id_after_the_delete() {
    let h = harness(&[DECLARED]).await;
    h.emulator
        .set_id_blocked_after_delete(Duration::from_millis(300));
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(&h, dir.path());
    let sink = Arc::new(RecordingSink::default());
    let report = engine
        .apply(
            &plan(vec![chained_create("gpu")]),
            sink.clone(),
            CancellationToken::new(),
        )
        .await;
    assert!(report.is_success(), "{:?}", report.outcomes[0].result);
    let mutations = mutations(&h);
    assert_eq!(mutations[..2], ["POST 200", "DELETE 200"]);
    assert!(
        mutations[2..mutations.len() - 1]
            .iter()
            .all(|m| m == "POST 409"),
        "{mutations:?}"
    );
    assert_eq!(mutations.last().unwrap(), "POST 200", "{mutations:?}");
    assert!(mutations.len() > 3, "the ID was held: {mutations:?}");
    assert!(
        sink.events().iter().any(|e| e.step == Step::IdNotFree),
        "the wait is reported"
    );
}

/// An engine on the journal and applied record in `dir`.
fn recording_engine(h: &Harness, dir: &std::path::Path) -> ApplyEngine {
    engine(h, dir).with_applied_record(AppliedRecord::open(dir))
}

/// The replacement of `id` (already live) by the chained create.
fn chained_replacement(id: &str) -> ClusterChange {
    let mut change = chained_create(id);
    change.action = Action::Replace;
    change
        .requests
        .insert(0, ClusterRequest::Delete { name: address(id) });
    change
}

#[tokio::test]
async fn a_replacement_whose_every_attempt_fails_leaves_a_tombstone() {
    let h = harness(&[DECLARED, FALLBACK]).await;
    h.insert("gpu");
    let dir = tempfile::tempdir().unwrap();
    let report = apply_one(
        &recording_engine(&h, dir.path()),
        chained_replacement("gpu"),
    )
    .await;
    let outcome = &report.outcomes[0];
    let Err(ExecError::OutOfMachines { left, .. }) = &outcome.result else {
        panic!("{:?}", outcome.result);
    };
    assert_eq!(*left, LeftBehind::Missing);
    assert_eq!(outcome.remains, Some(Remains::Missing));
    let message = outcome.result.as_ref().unwrap_err().to_string();
    assert!(message.contains("now missing"), "{message}");
    assert!(!message.contains("nothing was left behind"), "{message}");
    assert!(h.emulator.cluster(&cluster_name("gpu")).is_none());
    let record = AppliedRecord::open(dir.path());
    let Some(Mark::DeletedForReplacement { at, error }) = record.mark(&address("gpu")) else {
        panic!("{:?}", record.marks());
    };
    assert!(at.ends_with('Z'), "{at}");
    assert!(error.contains("found no capacity"), "{error}");
}

#[tokio::test]
async fn a_replacement_refused_at_once_leaves_a_tombstone_too() {
    let h = harness(&[&format!("quota:{DECLARED}")]).await;
    h.insert("gpu");
    let dir = tempfile::tempdir().unwrap();
    let mut change = chained_replacement("gpu");
    change.capacity.fallbacks.clear();
    let report = apply_one(&recording_engine(&h, dir.path()), change).await;
    let Err(ExecError::OutOfMachines { left, .. }) = &report.outcomes[0].result else {
        panic!("{:?}", report.outcomes[0].result);
    };
    assert_eq!(*left, LeftBehind::Missing);
    let record = AppliedRecord::open(dir.path());
    assert!(
        matches!(
            record.mark(&address("gpu")),
            Some(Mark::DeletedForReplacement { .. })
        ),
        "{:?}",
        record.marks()
    );
}

#[tokio::test]
async fn a_failed_create_kept_by_prevent_destroy_is_marked_tainted_and_a_later_create_clears_it() {
    let h = harness(&[DECLARED]).await;
    let dir = tempfile::tempdir().unwrap();
    let mut kept = chained_create("gpu");
    kept.capacity.keep_failed = true;
    let report = apply_one(&recording_engine(&h, dir.path()), kept).await;
    assert_eq!(report.outcomes[0].remains, Some(Remains::FailedCluster));
    let record = AppliedRecord::open(dir.path());
    let Some(Mark::CreateFailed { error, .. }) = record.mark(&address("gpu")) else {
        panic!("{:?}", record.marks());
    };
    assert!(error.contains("no capacity"), "{error}");

    // The cluster is replaced on machines that exist: the mark goes.
    let mut replace = change(
        "gpu",
        Action::Replace,
        vec![
            ClusterRequest::Delete {
                name: address("gpu"),
            },
            create_on("gpu", FALLBACK),
        ],
    );
    replace.desired_digest = Some("d".to_owned());
    let report = apply_one(&recording_engine(&h, dir.path()), replace).await;
    assert!(report.is_success(), "{:?}", report.outcomes[0].result);
    let record = AppliedRecord::open(dir.path());
    assert_eq!(record.mark(&address("gpu")), None);
    assert!(record.get(&address("gpu")).is_some());
}

#[tokio::test]
async fn a_create_that_is_not_a_shortage_and_fails_is_marked_tainted() {
    let h = harness(&[]).await;
    h.emulator.set_faults(clusterform_emulator::FaultSpec {
        operation_failure_rate: 1.0,
        ..clusterform_emulator::FaultSpec::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let change = change("gpu", Action::Create, vec![create_on("gpu", DECLARED)]);
    let report = apply_one(&recording_engine(&h, dir.path()), change).await;
    assert!(report.outcomes[0].result.is_err());
    assert_eq!(report.outcomes[0].remains, Some(Remains::FailedCluster));
    let record = AppliedRecord::open(dir.path());
    assert!(matches!(
        record.mark(&address("gpu")),
        Some(Mark::CreateFailed { .. })
    ));
}

#[tokio::test]
async fn an_exhausted_create_that_cleaned_up_leaves_no_mark() {
    let h = harness(&[DECLARED, FALLBACK]).await;
    let dir = tempfile::tempdir().unwrap();
    let report = apply_one(&recording_engine(&h, dir.path()), chained_create("gpu")).await;
    assert!(report.outcomes[0].result.is_err());
    assert_eq!(report.outcomes[0].remains, None);
    assert!(AppliedRecord::open(dir.path()).marks().is_empty());
}

/// Once the chain's delete of its failed cluster is done, puts a cluster of `owner` (another
/// stack, or no stack label) under the same ID, as someone racing for it would.
struct IdTaker {
    emulator: clusterform_emulator::Emulator,
    owner: Option<&'static str>,
}

impl clusterform_executor::ProgressSink for IdTaker {
    fn event(&self, event: &clusterform_executor::ProgressEvent) {
        if event.step
            == (Step::StepDone {
                request: RequestKind::Delete,
            })
        {
            let id = event.address.id().as_str();
            self.emulator
                .insert_cluster(&cluster_name(id), cluster_body(id, self.owner));
        }
    }
}

#[tokio::test]
async fn a_cluster_of_another_owner_taking_the_id_between_attempts_fails_the_chain_at_once() {
    for owner in [Some("someone-else"), None] {
        let h = harness(&[DECLARED]).await;
        let dir = tempfile::tempdir().unwrap();
        let sink = Arc::new(IdTaker {
            emulator: h.emulator.clone(),
            owner,
        });
        let engine = engine(&h, dir.path());
        let plan = plan(vec![chained_create("gpu")]);
        let applied = engine.apply(&plan, sink, CancellationToken::new());
        let report = tokio::time::timeout(Duration::from_secs(30), applied)
            .await
            .expect("the chain does not wait for an ID another owner holds");
        match &report.outcomes[0].result {
            Err(ExecError::TakenByAnother { owner: taker, .. }) => {
                assert_eq!(taker.as_deref(), owner);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            mutations(&h),
            ["POST 200", "DELETE 200", "POST 409"],
            "one refused create, then nothing"
        );
        let live = h.emulator.cluster(&cluster_name("gpu")).unwrap();
        assert_eq!(
            live["labels"]["clusterform-stack"].as_str(),
            owner,
            "the other owner's cluster is left alone"
        );
    }
}
