//! The apply engine: every action, ordering, failures, busy clusters, timeouts, cancellation.

use std::sync::Arc;
use std::time::Duration;

use clusterform_emulator::{EmulatorOptions, FaultSpec};
use clusterform_executor::{
    ApplyEngine, ApplyReport, ExecError, Journal, ProgressEvent, ProgressSink, Step,
};
use clusterform_model::fields::UpdateMaskPath;
use clusterform_model::rest::{ClusterRequest, RequestKind, UpdateMask};
use clusterform_model::{Action, Code};
use clusterform_planner::{ChangeReason, Plan, PlannedTimeouts};
use tokio_util::sync::CancellationToken;

use crate::proxy::{Mischief, Proxy, Rule, is_create, is_delete};
use crate::support::*;

/// An engine whose requests go through `proxy`.
fn engine_through(proxy: &Proxy, dir: &std::path::Path) -> ApplyEngine {
    ApplyEngine::new(
        client_for(proxy.base_url(), fast_retry()),
        Journal::open(dir).unwrap(),
        4,
    )
    .with_wait_options(fast_wait())
}

fn engine(h: &Harness, dir: &std::path::Path) -> ApplyEngine {
    ApplyEngine::new(h.client(fast_retry()), Journal::open(dir).unwrap(), 4)
        .with_wait_options(fast_wait())
}

/// Runs a plan with nobody watching its progress and no cancellation.
async fn apply_unobserved(engine: &ApplyEngine, plan: &Plan) -> ApplyReport {
    engine
        .apply(
            plan,
            Arc::new(RecordingSink::default()),
            CancellationToken::new(),
        )
        .await
}

#[tokio::test]
async fn every_action_runs_and_is_reported() {
    let h = Harness::start(Duration::from_millis(100)).await;
    for id in ["upd", "del", "rep", "same"] {
        h.insert(id);
    }
    let dir = tempfile::tempdir().unwrap();
    let plan = plan(vec![
        change("new", Action::Create, vec![create_request("new")]),
        change(
            "upd",
            Action::Update,
            vec![update_labels_request("upd", "infra")],
        ),
        change("del", Action::Delete, vec![delete_request("del")]),
        change(
            "rep",
            Action::Replace,
            vec![delete_request("rep"), create_request("rep")],
        ),
        change("same", Action::NoOp, vec![]),
    ]);
    let sink = Arc::new(RecordingSink::default());
    let engine = engine(&h, dir.path());
    let report = engine
        .apply(&plan, sink.clone(), CancellationToken::new())
        .await;

    assert!(report.is_success(), "{report:?}");
    assert_eq!(report.outcomes.len(), 4, "no-ops are skipped");
    let ids: Vec<_> = report
        .outcomes
        .iter()
        .map(|o| o.address.id().as_str())
        .collect();
    assert_eq!(ids, ["del", "new", "rep", "upd"]);
    assert!(h.emulator.cluster(&cluster_name("new")).is_some());
    assert!(h.emulator.cluster(&cluster_name("del")).is_none());
    assert_eq!(
        h.emulator.cluster(&cluster_name("upd")).unwrap()["labels"]["team"],
        "infra"
    );
    let new = report
        .outcomes
        .iter()
        .find(|o| o.address.id() == "new")
        .unwrap();
    assert_eq!(new.live.as_ref().and_then(|c| c.state()), Some("RUNNING"));
    assert!(engine.journal().is_empty());

    // The replacement deleted, waited, then created.
    let replaced: Vec<_> = h
        .emulator
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/rep") || r.query.contains("Id=rep"))
        .filter(|r| r.method == "DELETE" || r.method == "POST")
        .map(|r| r.method)
        .collect();
    assert_eq!(replaced, ["DELETE", "POST"]);
    let steps: Vec<_> = sink
        .events()
        .into_iter()
        .filter(|e| e.address.id() == "rep")
        .filter_map(|e| match e.step {
            Step::StepDone { request } => Some(request),
            _ => None,
        })
        .collect();
    assert_eq!(steps, [RequestKind::Delete, RequestKind::Create]);
    for id in ["new", "upd", "del", "rep"] {
        let events: Vec<_> = sink
            .events()
            .into_iter()
            .filter(|e| e.address.id() == id)
            .collect();
        assert_eq!(
            events.first().map(|e| &e.step),
            Some(&Step::Started),
            "{id}"
        );
        assert_eq!(
            events.last().map(|e| &e.step),
            Some(&Step::Finished),
            "{id}"
        );
    }
}

#[tokio::test]
async fn one_failure_does_not_stop_the_others() {
    let h = Harness::start(Duration::from_millis(100)).await;
    let dir = tempfile::tempdir().unwrap();
    let invalid = ClusterRequest::Create {
        name: address("bad"),
        body: serde_json::json!({"labels": {"clusterform-stack": STACK}}),
    };
    let plan = plan(vec![
        change("bad", Action::Create, vec![invalid]),
        change("good", Action::Create, vec![create_request("good")]),
    ]);
    let report = apply_unobserved(&engine(&h, dir.path()), &plan).await;
    let failed: Vec<_> = report.failed().collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(report.outcomes.len(), 2);
    assert!(!report.is_success());
    let failed = failed[0];
    assert_eq!(failed.address.id(), "bad");
    let err = failed.result.as_ref().unwrap_err();
    assert_eq!(err.api_code(), Some(Code::InvalidArgument), "{err}");
    assert!(h.emulator.cluster(&cluster_name("good")).is_some());
}

/// A PATCH refused for a path only the Terraform provider vouches for fails that cluster alone,
/// told apart (the CLI's hint names `--replace`); the cluster is unchanged and the others go on.
#[tokio::test]
async fn a_refused_provider_only_mask_path_fails_that_cluster_and_changes_nothing() {
    let h = Harness::with_options(EmulatorOptions {
        refused_update_paths: vec!["display_name".to_owned()],
        ..clusterform_testkit::options_with_token(Duration::from_millis(100))
    })
    .await;
    for id in ["renamed", "relabel"] {
        h.insert(id);
    }
    let before = h.emulator.cluster(&cluster_name("renamed")).unwrap();
    let mut rename = update_labels_request("renamed", "ml");
    if let ClusterRequest::Update { mask, body, .. } = &mut rename {
        *mask = UpdateMask::new(vec![UpdateMaskPath::DisplayName]);
        body["displayName"] = serde_json::json!("Renamed");
    }
    let plan = plan(vec![
        change("renamed", Action::Update, vec![rename]),
        change(
            "relabel",
            Action::Update,
            vec![update_labels_request("relabel", "infra")],
        ),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let report = apply_unobserved(&engine(&h, dir.path()), &plan).await;
    let failed: Vec<_> = report.failed().collect();
    assert_eq!(failed.len(), 1, "{report:?}");
    let err = failed[0].result.as_ref().unwrap_err();
    assert!(
        matches!(
            err,
            ExecError::MaskPathRefused { path: UpdateMaskPath::DisplayName, cluster, .. } if *cluster.id() == *"renamed"
        ),
        "{err}"
    );
    assert_eq!(
        h.emulator.cluster(&cluster_name("renamed")).unwrap(),
        before
    );
    let relabelled = h.emulator.cluster(&cluster_name("relabel")).unwrap();
    assert_eq!(relabelled["labels"]["team"], "infra");
}

#[tokio::test]
async fn failed_operations_name_the_cluster_code_and_message() {
    let h = Harness::with_options(EmulatorOptions {
        operation_duration: Duration::from_millis(100),
        faults: "opfail=1.0".parse::<FaultSpec>().unwrap(),
        ..EmulatorOptions::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let plan = plan(vec![change(
        "train01",
        Action::Create,
        vec![create_request("train01")],
    )]);
    let report = apply_unobserved(&engine(&h, dir.path()), &plan).await;
    let err = report.outcomes[0].result.as_ref().unwrap_err();
    let ExecError::OperationFailed {
        cluster,
        status,
        operation,
    } = err
    else {
        panic!("expected an operation failure, got {err}");
    };
    assert_eq!(**cluster, parsed_name("train01"));
    assert_ne!(status.canonical_code(), Code::Ok, "{status}");
    assert!(!status.message.is_empty());
    assert!(operation.contains("/operations/"));
    assert!(err.to_string().contains(&cluster_name("train01")), "{err}");
}

#[tokio::test]
async fn deleting_a_missing_cluster_succeeds() {
    let h = Harness::start(Duration::from_millis(50)).await;
    let dir = tempfile::tempdir().unwrap();
    let plan = plan(vec![change(
        "gone",
        Action::Delete,
        vec![delete_request("gone")],
    )]);
    let report = apply_unobserved(&engine(&h, dir.path()), &plan).await;
    assert!(report.is_success(), "{report:?}");
    assert_eq!(h.statuses("GET", "/gone"), vec![404]);
    assert_eq!(h.count("DELETE", "/gone"), 0, "nothing left to delete");
}

#[tokio::test]
async fn a_delete_held_by_another_operation_waits_and_is_sent_again() {
    let h = Harness::start(Duration::from_millis(50)).await;
    h.insert("train01");
    let proxy = Proxy::start(
        h.server.base_url(),
        Rule {
            applies_to: is_delete,
            mischief: Mischief::Refuse(409),
            // More than the client's retry budget (6 attempts): only waiting on the cluster
            // and sending again, for as long as the action's timeout allows, gets through.
            times: 10,
        },
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_through(&proxy, dir.path());
    let plan = plan(vec![change(
        "train01",
        Action::Delete,
        vec![delete_request("train01")],
    )]);
    let report = apply_unobserved(&engine, &plan).await;
    assert!(report.is_success(), "{report:?}");
    assert_eq!(
        h.count("DELETE", "/train01"),
        1,
        "sent again after ten ABORTED"
    );
    assert!(h.emulator.cluster(&cluster_name("train01")).is_none());
}

#[tokio::test]
async fn a_cluster_being_deleted_is_waited_for_without_a_second_delete() {
    let h = Harness::start(Duration::from_millis(400)).await;
    h.insert("train01");
    h.client.send(&delete_request("train01")).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut being_deleted = change("train01", Action::Delete, vec![]);
    being_deleted.reason = Some(ChangeReason::BeingDeleted);
    let report = apply_unobserved(&engine(&h, dir.path()), &plan(vec![being_deleted])).await;
    assert!(report.is_success(), "{report:?}");
    assert_eq!(
        h.count("DELETE", "/train01"),
        1,
        "only the first run's DELETE"
    );
    assert!(h.emulator.cluster(&cluster_name("train01")).is_none());
}

#[tokio::test]
async fn an_update_waits_for_a_busy_cluster_to_settle() {
    let h = Harness::start(Duration::from_millis(300)).await;
    h.insert("train01");
    h.client
        .send(&update_labels_request("train01", "first"))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let plan = plan(vec![change(
        "train01",
        Action::Update,
        vec![update_labels_request("train01", "second")],
    )]);
    let sink = Arc::new(RecordingSink::default());
    let report = engine(&h, dir.path())
        .apply(&plan, sink.clone(), CancellationToken::new())
        .await;
    assert!(report.is_success(), "{report:?}");
    assert!(
        sink.events().iter().any(|e| e.step
            == Step::Settling {
                state: "UPDATING".into()
            }),
        "{:?}",
        sink.events()
    );
    assert_eq!(
        h.statuses("PATCH", "/train01"),
        vec![200, 200],
        "no ABORTED"
    );
    assert_eq!(
        h.emulator.cluster(&cluster_name("train01")).unwrap()["labels"]["team"],
        "second"
    );
}

#[tokio::test]
async fn an_action_that_outlives_its_timeout_fails_and_stays_journaled() {
    let h = Harness::start(Duration::from_secs(30)).await;
    let dir = tempfile::tempdir().unwrap();
    let mut slow = change("slow", Action::Create, vec![create_request("slow")]);
    slow.timeouts = PlannedTimeouts {
        create: 1,
        update: 1,
        delete: 1,
    };
    let engine = engine(&h, dir.path());
    let report = apply_unobserved(&engine, &plan(vec![slow])).await;
    let err = report.outcomes[0].result.as_ref().unwrap_err();
    assert!(matches!(err, ExecError::Timeout { .. }), "{err}");
    assert_eq!(
        engine.journal().entries().len(),
        1,
        "the operation may still finish"
    );
}

#[tokio::test]
async fn a_cancelled_run_sends_nothing() {
    let h = Harness::start(Duration::from_millis(50)).await;
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let plan = plan(vec![change(
        "train01",
        Action::Create,
        vec![create_request("train01")],
    )]);
    let report = engine(&h, dir.path())
        .apply(&plan, Arc::new(RecordingSink::default()), cancel)
        .await;
    assert!(report.interrupted);
    assert!(matches!(
        report.outcomes[0].result,
        Err(ExecError::Cancelled)
    ));
    assert!(h.emulator.requests().is_empty());
}

#[tokio::test]
async fn a_cancel_while_a_create_is_on_the_wire_still_journals_its_operation() {
    let h = Harness::with_options(EmulatorOptions {
        operation_duration: Duration::from_millis(600),
        latency: Duration::from_millis(400),
        required_token: Some(TOKEN.to_owned()),
        ..EmulatorOptions::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let plan = plan(vec![change(
        "train01",
        Action::Create,
        vec![create_request("train01")],
    )]);
    let cancel = CancellationToken::new();
    let emulator = h.emulator.clone();
    let canceller = cancel.clone();
    // Cancel once the create has reached the server but before its (delayed) answer returns.
    tokio::spawn(async move {
        for _ in 0..500 {
            if emulator.requests().iter().any(|r| r.method == "POST") {
                canceller.cancel();
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    let report = engine(&h, dir.path())
        .apply(&plan, Arc::new(RecordingSink::default()), cancel)
        .await;
    assert!(report.interrupted);
    assert!(matches!(
        report.outcomes[0].result,
        Err(ExecError::Cancelled)
    ));
    assert_eq!(h.count("POST", "/modelDevelopmentClusters"), 1);
    let entries = Journal::open(dir.path()).unwrap().entries();
    assert_eq!(
        entries.len(),
        1,
        "the started operation is journaled: {entries:?}"
    );
    assert_eq!(entries[0].request, RequestKind::Create);
}

/// Cancels the run as soon as an operation is being waited for.
pub struct CancelWhenWaiting(pub CancellationToken);

impl ProgressSink for CancelWhenWaiting {
    fn event(&self, event: &ProgressEvent) {
        if matches!(event.step, Step::Submitted { .. }) {
            self.0.cancel();
        }
    }
}

#[tokio::test]
async fn a_second_engine_resumes_without_a_second_create() {
    let h = Harness::start(Duration::from_millis(600)).await;
    let dir = tempfile::tempdir().unwrap();
    let plan = plan(vec![
        change("one", Action::Create, vec![create_request("one")]),
        change("two", Action::Create, vec![create_request("two")]),
    ]);
    let cancel = CancellationToken::new();
    let first = ApplyEngine::new(
        h.client(fast_retry()),
        Journal::open(dir.path()).unwrap(),
        1,
    )
    .with_wait_options(fast_wait());
    let report = first
        .apply(&plan, Arc::new(CancelWhenWaiting(cancel.clone())), cancel)
        .await;
    assert!(report.interrupted);
    drop(first);

    // What a crash would leave: the journal on disk, read by a fresh process.
    let journal = Journal::open(dir.path()).unwrap();
    let entries = journal.entries();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0].request, RequestKind::Create);
    let resumed_id = entries[0].address.id().to_string();

    let second =
        ApplyEngine::new(h.client(fast_retry()), journal, 4).with_wait_options(fast_wait());
    let sink = Arc::new(RecordingSink::default());
    let report = second.resume(sink.clone(), CancellationToken::new()).await;
    assert!(report.is_success(), "{report:?}");
    assert_eq!(report.outcomes.len(), 1);
    assert!(matches!(sink.events()[0].step, Step::Resumed { .. }));
    assert_eq!(
        h.count("POST", "/modelDevelopmentClusters"),
        1,
        "no second create"
    );
    assert!(second.journal().is_empty());
    assert!(!dir.path().join(".clusterform/journal.json").exists());
    let live = h.emulator.cluster(&cluster_name(&resumed_id)).unwrap();
    assert_eq!(live["clusterStatus"]["state"], "RUNNING");
}

/// Resumes a journal holding one create of the live cluster `kept` whose operation the service
/// does not know, recorded with `timeout_seconds`.
async fn resume_forgotten_create(h: &Harness, timeout_seconds: u64) -> (ApplyEngine, ApplyReport) {
    h.insert("kept");
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path()).unwrap();
    journal
        .record(clusterform_executor::JournalEntry {
            address: address("kept"),
            action: Action::Create,
            request: RequestKind::Create,
            operation: "projects/123456789012/locations/us-central1/operations/777".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            timeout_seconds,
            attempt: None,
        })
        .await
        .unwrap();
    let engine =
        ApplyEngine::new(h.client(fast_retry()), journal, 4).with_wait_options(fast_wait());
    let report = engine
        .resume(Arc::new(RecordingSink::default()), CancellationToken::new())
        .await;
    (engine, report)
}

#[tokio::test]
async fn resume_reconciles_an_operation_the_service_forgot() {
    let h = Harness::start(Duration::from_millis(50)).await;
    let (engine, report) = resume_forgotten_create(&h, 60).await;
    assert!(report.is_success(), "{report:?}");
    assert!(engine.journal().is_empty());
    assert_eq!(h.count("POST", "/modelDevelopmentClusters"), 0);
}

/// A journal entry whose timeout is absurdly long (a hand-edited or corrupted file) resumes like
/// any other: the deadline saturates instead of overflowing.
#[tokio::test]
async fn an_entry_with_an_endless_timeout_is_resumed_without_a_panic() {
    let h = Harness::start(Duration::from_millis(50)).await;
    let (_, report) = resume_forgotten_create(&h, u64::MAX).await;
    assert!(report.is_success(), "{report:?}");
}

#[tokio::test]
async fn progress_reports_the_state_while_waiting() {
    let h = Harness::start(Duration::from_millis(300)).await;
    h.emulator.set_wait_unimplemented(true);
    let dir = tempfile::tempdir().unwrap();
    let plan = plan(vec![change(
        "train01",
        Action::Create,
        vec![create_request("train01")],
    )]);
    let sink = Arc::new(RecordingSink::default());
    let report = engine(&h, dir.path())
        .apply(&plan, sink.clone(), CancellationToken::new())
        .await;
    assert!(report.is_success(), "{report:?}");
    let waiting: Vec<_> = sink
        .events()
        .into_iter()
        .filter_map(|e| match e.step {
            Step::Waiting { state, .. } => Some(state),
            _ => None,
        })
        .collect();
    assert!(
        waiting.contains(&Some("PROVISIONING".to_owned())),
        "{waiting:?}"
    );
}

#[tokio::test]
async fn a_create_answered_with_a_server_error_is_adopted_and_awaited() {
    let h = Harness::start(Duration::from_millis(300)).await;
    let proxy = Proxy::start(
        h.server.base_url(),
        Rule {
            applies_to: is_create,
            mischief: Mischief::ReplaceAnswer(500),
            times: 1,
        },
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_through(&proxy, dir.path());
    let plan = plan(vec![change(
        "train01",
        Action::Create,
        vec![create_request("train01")],
    )]);
    let sink = Arc::new(RecordingSink::default());
    let report = engine
        .apply(&plan, sink.clone(), CancellationToken::new())
        .await;

    assert!(report.is_success(), "{report:?}");
    assert_eq!(
        report.outcomes[0].live.as_ref().and_then(|c| c.state()),
        Some("RUNNING"),
        "the adopted cluster was awaited until it finished provisioning"
    );
    assert_eq!(
        h.count("POST", "/modelDevelopmentClusters"),
        1,
        "no second create"
    );
    let steps: Vec<_> = sink.events().into_iter().map(|e| e.step).collect();
    assert!(
        steps.contains(&Step::Submitted {
            request: RequestKind::Create,
            operation: None,
        }),
        "{steps:?}"
    );
    assert!(
        steps.contains(&Step::Settling {
            state: "PROVISIONING".into()
        }),
        "{steps:?}"
    );
    assert!(engine.journal().is_empty(), "no operation to journal");
}

#[tokio::test]
async fn the_update_timeout_covers_waiting_for_a_busy_cluster() {
    let h = Harness::start(Duration::from_secs(30)).await;
    h.insert("train01");
    h.client
        .send(&update_labels_request("train01", "first"))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut update = change(
        "train01",
        Action::Update,
        vec![update_labels_request("train01", "second")],
    );
    update.timeouts = PlannedTimeouts {
        update: 1,
        ..PlannedTimeouts::default()
    };
    let engine = engine(&h, dir.path());
    let report = apply_unobserved(&engine, &plan(vec![update])).await;
    let err = report.outcomes[0].result.as_ref().unwrap_err();
    assert!(matches!(err, ExecError::Timeout { .. }), "{err}");
    assert!(err.to_string().contains("UPDATING"), "{err}");
    assert_eq!(
        h.count("PATCH", "/train01"),
        1,
        "the second update was never sent"
    );
    assert!(engine.journal().is_empty(), "this run started no operation");
}
