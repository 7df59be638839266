//! The applied record: what each successful create and update applied is written beside the
//! journal (a file, or an object beside the journal's on Cloud Storage), a deleted cluster's
//! entry goes, and a record that cannot be written is a warning of a run that succeeds.

use std::sync::Arc;
use std::time::Duration;

use clusterform_emulator::EmulatorOptions;
use clusterform_executor::{
    AppliedChange, AppliedEntry, AppliedRecord, ApplyEngine, ApplyReport, Journal,
};
use clusterform_model::Action;
use clusterform_planner::{ClusterChange, FieldChange, Plan};
use clusterform_testkit::options_with_token;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::storage::storage_client;
use crate::support::*;

const BUCKET: &str = "team-infra";
const JOURNAL_OBJECT: &str = "clusterform/prod/research.journal.json";
const APPLIED_OBJECT: &str = "clusterform/prod/research.applied.json";

/// `change` with the digest `digest` of its declared cluster and a `labels` field.
fn with_digest(mut change: ClusterChange, digest: &str) -> ClusterChange {
    change.desired_digest = Some(digest.to_owned());
    change.fields = vec![
        serde_json::from_value::<FieldChange>(json!({
            "path": "labels", "before": null, "after": {"team": "ml"},
            "forces_replacement": false, "sensitive": false,
            "impact": {"class": "immediate", "pool": null}
        }))
        .unwrap(),
    ];
    change
}

async fn apply(engine: &ApplyEngine, plan: &Plan) -> ApplyReport {
    engine
        .apply(
            plan,
            Arc::new(RecordingSink::default()),
            CancellationToken::new(),
        )
        .await
}

fn engine(h: &Harness, dir: &std::path::Path) -> ApplyEngine {
    ApplyEngine::new(h.client(fast_retry()), Journal::open(dir).unwrap(), 4)
        .with_wait_options(fast_wait())
        .with_applied_record(AppliedRecord::open(dir))
}

/// The digest recorded for each cluster, by ID.
fn digests(record: &AppliedRecord) -> Vec<(String, String)> {
    record
        .entries()
        .into_iter()
        .map(|entry| (entry.address.id().to_string(), entry.digest))
        .collect()
}

#[tokio::test]
async fn creates_and_updates_are_recorded_and_a_delete_drops_its_entry() {
    let h = Harness::start(Duration::from_millis(50)).await;
    h.insert("upd");
    h.insert("del");
    let dir = tempfile::tempdir().unwrap();
    AppliedRecord::open(dir.path())
        .update(&[AppliedChange::Applied(AppliedEntry {
            address: address("del"),
            digest: "old".to_owned(),
            applied_at: "2026-11-10T12:00:00Z".to_owned(),
            labels: vec![],
            field_digests: Default::default(),
        })])
        .await
        .unwrap();
    let plan = plan(vec![
        with_digest(
            change("new", Action::Create, vec![create_request("new")]),
            "d-new",
        ),
        with_digest(
            change(
                "upd",
                Action::Update,
                vec![update_labels_request("upd", "infra")],
            ),
            "d-upd",
        ),
        change("del", Action::Delete, vec![delete_request("del")]),
    ]);
    let engine = engine(&h, dir.path());
    let report = apply(&engine, &plan).await;
    assert!(report.is_success(), "{report:?}");
    assert!(
        report.record_not_written.is_none(),
        "{:?}",
        report.record_not_written
    );

    let record = AppliedRecord::open(dir.path());
    assert_eq!(record.unreadable(), None);
    assert_eq!(
        digests(&record),
        [
            ("new".to_owned(), "d-new".to_owned()),
            ("upd".to_owned(), "d-upd".to_owned())
        ]
    );
    let entry = record.get(&address("upd")).unwrap();
    // The digest of each field of the cluster the update left, the ownership label left out.
    let live = h.live("upd");
    assert_eq!(
        entry.field_digests,
        clusterform_planner::field_digests(&live)
    );
    assert!(entry.field_digests.contains_key("labels.team"));
    assert!(
        !entry
            .field_digests
            .keys()
            .any(|path| path.contains("clusterform-stack"))
    );
    assert!(entry.applied_at.ends_with('Z'), "{}", entry.applied_at);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(AppliedRecord::path_in(dir.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[tokio::test]
async fn a_failed_change_keeps_the_entry_it_had() {
    let h = Harness::start(Duration::from_millis(50)).await;
    let dir = tempfile::tempdir().unwrap();
    // An update of a cluster that does not exist fails.
    let plan = plan(vec![with_digest(
        change(
            "gone",
            Action::Update,
            vec![update_labels_request("gone", "infra")],
        ),
        "d-new",
    )]);
    let report = apply(&engine(&h, dir.path()), &plan).await;
    assert!(!report.is_success());
    assert!(
        report.record_not_written.is_none(),
        "{:?}",
        report.record_not_written
    );
    assert!(!AppliedRecord::path_in(dir.path()).exists());
}

#[tokio::test]
async fn an_unwritable_record_is_a_warning_and_the_run_succeeds() {
    let h = Harness::start(Duration::from_millis(50)).await;
    let dir = tempfile::tempdir().unwrap();
    // A directory where the record's file belongs: it can be neither read nor replaced.
    let in_the_way = AppliedRecord::path_in(dir.path());
    std::fs::create_dir_all(in_the_way.join("something")).unwrap();
    let engine = engine(&h, dir.path());
    assert!(engine.applied_record().unwrap().unreadable().is_some());
    let plan = plan(vec![with_digest(
        change("new", Action::Create, vec![create_request("new")]),
        "d-new",
    )]);
    let report = apply(&engine, &plan).await;
    assert!(report.is_success(), "{report:?}");
    assert!(h.emulator.cluster(&cluster_name("new")).is_some());
    let warning = report.record_not_written.as_ref().unwrap().to_string();
    assert!(warning.contains("could not be written"), "{warning}");
    assert!(
        warning.contains(&*in_the_way.to_string_lossy()),
        "{warning}"
    );
    assert!(Journal::open(dir.path()).unwrap().is_empty());
}

#[tokio::test]
async fn a_fallbacks_win_records_the_fields_of_the_alternative_that_runs() {
    let mut options = options_with_token(Duration::from_millis(50));
    options.capacity_failures = vec!["c2-standard-60".parse().unwrap()];
    let h = Harness::with_options(options).await;
    let dir = tempfile::tempdir().unwrap();
    let on = |machine: &str| {
        let mut request = create_request("gpu");
        if let clusterform_model::rest::ClusterRequest::Create { body, .. } = &mut request {
            body["nodePools"][1]["machineSpec"]["machineType"] = json!(machine);
            // Static nodes: only a pool that asks for machines at create can run short then.
            body["nodePools"][1]["scalingSpec"]["minNodeCount"] = json!(1);
        }
        request
    };
    let mut create = with_digest(
        change("gpu", Action::Create, vec![on("c2-standard-60")]),
        "d-gpu",
    );
    create.capacity.fallbacks = vec![on("n2-standard-16")];
    let report = apply(&engine(&h, dir.path()), &plan(vec![create])).await;
    assert!(report.is_success(), "{report:?}");
    assert_eq!(
        report.outcomes[0].fallback_attempt.map(|a| a.number()),
        Some(2)
    );
    let entry = AppliedRecord::open(dir.path())
        .get(&address("gpu"))
        .unwrap();
    assert_eq!(entry.digest, "d-gpu");
    // The fields are the alternative's, as the cluster runs it.
    assert_eq!(
        entry.field_digests,
        clusterform_planner::field_digests(&h.live("gpu"))
    );
}

#[test]
fn a_record_written_before_field_digests_were_kept_loads_without_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = AppliedRecord::path_in(dir.path());
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let old = json!({"version": 1, "clusters": [{
        "address": {"project": PROJECT, "region": REGION, "id": "old"},
        "digest": "d-old",
        "fields": ["labels"],
        "applied_at": "2026-11-10T12:00:00Z",
    }]});
    std::fs::write(&path, old.to_string()).unwrap();
    let record = AppliedRecord::open(dir.path());
    assert_eq!(record.unreadable(), None);
    let entry = record.get(&address("old")).unwrap();
    assert_eq!(entry.digest, "d-old");
    assert!(entry.field_digests.is_empty());
}

#[tokio::test]
async fn a_change_without_a_digest_drops_the_clusters_entry() {
    let h = Harness::start(Duration::from_millis(50)).await;
    h.insert("upd");
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(&h, dir.path());
    let first = plan(vec![with_digest(
        change(
            "upd",
            Action::Update,
            vec![update_labels_request("upd", "infra")],
        ),
        "d-1",
    )]);
    assert!(apply(&engine, &first).await.is_success());
    assert!(
        AppliedRecord::open(dir.path())
            .get(&address("upd"))
            .is_some()
    );
    let second = plan(vec![change(
        "upd",
        Action::Update,
        vec![update_labels_request("upd", "ops")],
    )]);
    assert!(apply(&engine, &second).await.is_success());
    assert!(!AppliedRecord::path_in(dir.path()).exists());
}

async fn storage_harness() -> Harness {
    Harness::with_options(EmulatorOptions {
        operation_duration: Duration::from_millis(50),
        required_token: Some(TOKEN.to_owned()),
        buckets: vec![BUCKET.to_owned()],
        ..EmulatorOptions::default()
    })
    .await
}

/// The IDs of the clusters the applied object holds, sorted; `None` when it is absent.
fn stored(h: &Harness) -> Option<Vec<String>> {
    let (content, _) = h.emulator.object(BUCKET, APPLIED_OBJECT)?;
    let document: serde_json::Value = serde_json::from_slice(&content).unwrap();
    assert_eq!(document["version"], 1);
    let mut ids: Vec<String> = document["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["address"]["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    Some(ids)
}

#[tokio::test]
async fn with_the_journal_on_cloud_storage_the_record_is_the_object_beside_it() {
    let h = storage_harness().await;
    let storage = || storage_client(&h.server.base_url(), BUCKET, fast_retry());
    let journal = Journal::open_in_storage(storage(), JOURNAL_OBJECT.to_owned())
        .await
        .unwrap();
    let record = AppliedRecord::open_in_storage(storage(), APPLIED_OBJECT.to_owned()).await;
    assert_eq!(record.unreadable(), None);
    assert_eq!(
        record.location().to_string(),
        format!("gs://{BUCKET}/{APPLIED_OBJECT}")
    );
    let engine = ApplyEngine::new(h.client(fast_retry()), journal, 4)
        .with_wait_options(fast_wait())
        .with_applied_record(record);
    let plan = plan(vec![
        with_digest(
            change("a", Action::Create, vec![create_request("a")]),
            "d-a",
        ),
        with_digest(
            change("b", Action::Create, vec![create_request("b")]),
            "d-b",
        ),
    ]);
    let report = apply(&engine, &plan).await;
    assert!(report.is_success(), "{report:?}");
    assert!(
        report.record_not_written.is_none(),
        "{:?}",
        report.record_not_written
    );
    assert_eq!(stored(&h), Some(vec!["a".to_owned(), "b".to_owned()]));
    assert!(
        h.emulator.object(BUCKET, JOURNAL_OBJECT).is_none(),
        "the journal emptied"
    );
    let uploads = h
        .emulator
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.query.contains("research.applied.json"))
        .count();
    assert_eq!(uploads, 1, "one write for the whole run");
    // Another machine reads what this one recorded.
    let reopened = AppliedRecord::open_in_storage(storage(), APPLIED_OBJECT.to_owned()).await;
    assert_eq!(digests(&reopened).len(), 2);

    let delete = plan_of_delete("a");
    assert!(apply(&engine, &delete).await.is_success());
    assert_eq!(stored(&h), Some(vec!["b".to_owned()]));
}

fn plan_of_delete(id: &str) -> Plan {
    plan(vec![change(id, Action::Delete, vec![delete_request(id)])])
}

#[tokio::test]
async fn two_machines_writing_the_object_keep_each_others_entries() {
    let h = storage_harness().await;
    let storage = || storage_client(&h.server.base_url(), BUCKET, fast_retry());
    let a = AppliedRecord::open_in_storage(storage(), APPLIED_OBJECT.to_owned()).await;
    let b = AppliedRecord::open_in_storage(storage(), APPLIED_OBJECT.to_owned()).await;
    let entry = |id: &str| AppliedEntry {
        address: address(id),
        digest: format!("d-{id}"),
        applied_at: "2026-11-10T12:00:00Z".to_owned(),
        labels: vec!["team".to_owned()],
        field_digests: Default::default(),
    };
    a.update(&[AppliedChange::Applied(entry("a1"))])
        .await
        .unwrap();
    // `b` saw no object: its create loses, and its entry is made on top of `a`'s.
    b.update(&[AppliedChange::Applied(entry("b1"))])
        .await
        .unwrap();
    assert_eq!(stored(&h), Some(vec!["a1".to_owned(), "b1".to_owned()]));
    // `a` last saw only its own: its removal is made on top of `b1`.
    a.update(&[AppliedChange::Gone(address("a1"))])
        .await
        .unwrap();
    assert_eq!(stored(&h), Some(vec!["b1".to_owned()]));
}

#[tokio::test]
async fn a_delete_for_being_idle_leaves_a_tombstone_that_a_create_clears() {
    let h = Harness::start(Duration::from_millis(50)).await;
    h.insert("idle");
    let dir = tempfile::tempdir().unwrap();
    let mut delete = change("idle", Action::Delete, vec![delete_request("idle")]);
    delete.reason = Some(clusterform_planner::ChangeReason::Idle {
        evidence: "no active job or busy node; last busy 3h ago (>= 2h)".to_owned(),
        idle_for: Some("2h".to_owned()),
    });
    let engine = engine(&h, dir.path());
    let report = apply(&engine, &plan(vec![delete])).await;
    assert!(report.is_success(), "{report:?}");
    let record = AppliedRecord::open(dir.path());
    let Some(clusterform_executor::Mark::DeletedIdle {
        at,
        idle_for,
        evidence,
    }) = record.mark(&address("idle"))
    else {
        panic!("{:?}", record.marks());
    };
    assert!(at.ends_with('Z'), "{at}");
    assert_eq!(idle_for, "2h");
    assert!(evidence.contains("last busy 3h ago"), "{evidence}");

    let create = with_digest(
        change("idle", Action::Create, vec![create_request("idle")]),
        "d-idle",
    );
    let report = apply(&engine, &plan(vec![create])).await;
    assert!(report.is_success(), "{report:?}");
    let record = AppliedRecord::open(dir.path());
    assert!(record.marks().is_empty(), "{:?}", record.marks());
    assert_eq!(digests(&record), [("idle".to_owned(), "d-idle".to_owned())]);
}
