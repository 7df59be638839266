//! The journal kept as a Cloud Storage object in the emulator: records and removals through
//! the object, machines racing on it (each keeps the others' entries), a run killed on one
//! machine resumed from another, and errors naming the object.

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use axum::response::IntoResponse;
use clusterform_emulator::EmulatorOptions;
use clusterform_executor::{ApplyEngine, Journal, JournalEntry, StateError, Step, StorageClient};
use clusterform_model::Action;
use clusterform_model::rest::RequestKind;
use tokio_util::sync::CancellationToken;

use crate::scripted::Scripted;
use crate::storage::storage_client;
use crate::support::*;

const BUCKET: &str = "team-infra";
const OBJECT: &str = "clusterform/prod/research.journal.json";

async fn harness(operation_duration: Duration) -> Harness {
    Harness::with_options(EmulatorOptions {
        operation_duration,
        required_token: Some(TOKEN.to_owned()),
        buckets: vec![BUCKET.to_owned()],
        ..EmulatorOptions::default()
    })
    .await
}

fn storage(h: &Harness, bucket: &str) -> StorageClient {
    storage_client(&h.server.base_url(), bucket, fast_retry())
}

/// The journal of one machine: its own client on the shared object.
async fn open(h: &Harness) -> Journal {
    Journal::open_in_storage(storage(h, BUCKET), OBJECT.to_owned())
        .await
        .unwrap()
}

fn entry(id: &str, operation: u32) -> JournalEntry {
    JournalEntry {
        address: address(id),
        action: Action::Create,
        request: RequestKind::Create,
        operation: format!("projects/123/locations/{REGION}/operations/{operation}"),
        started_at: "2026-11-10T12:00:00Z".into(),
        timeout_seconds: 7200,
        attempt: None,
    }
}

/// The clusters of the entries the live object holds, sorted; `None` when it is absent.
fn stored_clusters(h: &Harness) -> Option<Vec<String>> {
    let (content, _) = h.emulator.object(BUCKET, OBJECT)?;
    let document: serde_json::Value = serde_json::from_slice(&content).unwrap();
    let mut clusters: Vec<String> = document["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["address"]["id"].as_str().unwrap().to_owned())
        .collect();
    clusters.sort();
    Some(clusters)
}

fn preconditions_failed(h: &Harness) -> usize {
    h.emulator
        .requests()
        .iter()
        .filter(|request| request.status == 412)
        .count()
}

#[tokio::test]
async fn records_and_removals_go_through_the_object() {
    let h = harness(Duration::from_millis(50)).await;
    let journal = open(&h).await;
    assert!(journal.is_empty());
    assert_eq!(
        journal.location().to_string(),
        format!("gs://{BUCKET}/{OBJECT}")
    );
    journal.record(entry("a", 1)).await.unwrap();
    journal.record(entry("b", 2)).await.unwrap();
    assert_eq!(stored_clusters(&h), Some(vec!["a".into(), "b".into()]));
    assert_eq!(open(&h).await.entries(), vec![entry("a", 1), entry("b", 2)]);

    journal.remove(&entry("a", 1).operation).await.unwrap();
    assert_eq!(open(&h).await.entries(), vec![entry("b", 2)]);
    journal.remove(&entry("b", 2).operation).await.unwrap();
    assert_eq!(
        stored_clusters(&h),
        None,
        "an empty journal deletes the object"
    );
    assert_eq!(preconditions_failed(&h), 0);
}

#[tokio::test]
async fn two_machines_keep_each_others_entries_through_every_kind_of_write() {
    let h = harness(Duration::from_millis(50)).await;
    let (a, b) = (open(&h).await, open(&h).await);
    // Both saw no object: `b`'s create loses and is merged.
    a.record(entry("a1", 1)).await.unwrap();
    b.record(entry("b1", 2)).await.unwrap();
    assert_eq!(stored_clusters(&h), Some(vec!["a1".into(), "b1".into()]));
    // `a` last saw its own create: its replace loses and is merged.
    a.record(entry("a2", 3)).await.unwrap();
    // `b` last saw the object before `a2`: its removal is made on top of `a2`.
    b.remove(&entry("b1", 2).operation).await.unwrap();
    assert_eq!(stored_clusters(&h), Some(vec!["a1".into(), "a2".into()]));
    a.remove(&entry("a1", 1).operation).await.unwrap();
    b.record(entry("b2", 4)).await.unwrap();
    // `a` saw only `a2` and believes it empties the journal: its delete loses, `b2` stays.
    a.remove(&entry("a2", 3).operation).await.unwrap();
    assert_eq!(stored_clusters(&h), Some(vec!["b2".into()]));
    assert_eq!(a.entries(), vec![entry("b2", 4)], "a sees what b wrote");
    assert_eq!(preconditions_failed(&h), 6);
}

#[tokio::test]
async fn concurrent_records_from_two_machines_all_land() {
    let h = harness(Duration::from_millis(50)).await;
    let (a, b) = (open(&h).await, open(&h).await);
    let record_all = async |journal: &Journal, prefix: &str, first: u32| {
        for n in first..first + 8 {
            journal
                .record(entry(&format!("{prefix}{n}"), n))
                .await
                .unwrap();
        }
    };
    tokio::join!(record_all(&a, "a", 1), record_all(&b, "b", 101));
    let stored = stored_clusters(&h).unwrap();
    assert_eq!(stored.len(), 16, "{stored:?}");
    assert_eq!(open(&h).await.entries().len(), 16);
}

#[tokio::test]
async fn a_run_killed_on_one_machine_is_resumed_from_another_without_a_second_create() {
    let h = harness(Duration::from_millis(800)).await;
    let plan = plan(vec![change(
        "train01",
        Action::Create,
        vec![create_request("train01")],
    )]);
    let machine_a =
        ApplyEngine::new(h.client(fast_retry()), open(&h).await, 1).with_wait_options(fast_wait());
    let sink = Arc::new(RecordingSink::default());
    tokio::select! {
        report = machine_a.apply(&plan, sink, CancellationToken::new()) => {
            panic!("the run ended before it was killed: {report:?}")
        }
        () = async {
            while stored_clusters(&h).is_none() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        } => {}
    }
    // Killed: nothing of machine A runs any more, and nothing of it is on machine B's disk.
    drop(machine_a);
    let machine_b = tempfile::tempdir().unwrap();
    assert!(Journal::open(machine_b.path()).unwrap().is_empty());

    let journal = open(&h).await;
    let entries = journal.entries();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0].request, RequestKind::Create);
    let machine_b =
        ApplyEngine::new(h.client(fast_retry()), journal, 4).with_wait_options(fast_wait());
    let sink = Arc::new(RecordingSink::default());
    let report = machine_b
        .resume(sink.clone(), CancellationToken::new())
        .await;
    assert!(report.is_success(), "{report:?}");
    assert!(matches!(sink.events()[0].step, Step::Resumed { .. }));
    assert!(h.emulator.cluster(&cluster_name("train01")).is_some());
    assert_eq!(
        h.count("POST", "/modelDevelopmentClusters"),
        1,
        "no second create"
    );
    assert_eq!(
        stored_clusters(&h),
        None,
        "the finished operation is removed"
    );
}

#[tokio::test]
async fn an_apply_of_many_clusters_keeps_to_cloud_storages_one_write_an_object_a_second() {
    let h = Harness::with_options(EmulatorOptions {
        operation_duration: Duration::from_millis(1500),
        required_token: Some(TOKEN.to_owned()),
        buckets: vec![BUCKET.to_owned()],
        object_mutation_limit: true,
        ..EmulatorOptions::default()
    })
    .await;
    let ids: Vec<String> = (1..=12).map(|n| format!("c{n}")).collect();
    let plan = plan(
        ids.iter()
            .map(|id| change(id, Action::Create, vec![create_request(id)]))
            .collect(),
    );
    let engine =
        ApplyEngine::new(h.client(fast_retry()), open(&h).await, 12).with_wait_options(fast_wait());

    let report = engine
        .apply(
            &plan,
            Arc::new(RecordingSink::default()),
            CancellationToken::new(),
        )
        .await;

    assert!(report.is_success(), "{report:?}");
    let journal_writes: Vec<_> = h
        .emulator
        .requests()
        .into_iter()
        .filter(|r| r.method != "GET" && r.path.contains("journal.json"))
        .collect();
    assert!(
        journal_writes.iter().all(|r| r.status != 429),
        "a journal write was refused for the object's rate: {journal_writes:#?}"
    );
    // 24 changes (12 records, 12 removals) in a few writes: the ones asked for while a write
    // was under way or paced went out together.
    assert!(journal_writes.len() < 12, "{journal_writes:#?}");
    assert_eq!(stored_clusters(&h), None);
}

#[tokio::test]
async fn a_corrupt_object_is_an_error_naming_it_and_is_left_alone() {
    let h = harness(Duration::from_millis(50)).await;
    let journal = open(&h).await;
    let client = storage(&h, BUCKET);
    client.create_if_absent(OBJECT, b"{not json").await.unwrap();

    let error = Journal::open_in_storage(client.clone(), OBJECT.to_owned())
        .await
        .unwrap_err();
    assert!(matches!(error, StateError::Journal { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains(&format!("gs://{BUCKET}/{OBJECT}")),
        "{message}"
    );
    assert!(message.contains("corrupt"), "{message}");

    // A journal opened before the corruption meets it on its next write, and writes nothing.
    let error = journal.record(entry("a", 1)).await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains(&format!("gs://{BUCKET}/{OBJECT}")),
        "{error}"
    );
    assert_eq!(
        h.emulator.object(BUCKET, OBJECT).unwrap().0,
        b"{not json".to_vec()
    );
}

#[tokio::test]
async fn a_missing_bucket_is_an_error_naming_it() {
    let h = harness(Duration::from_millis(50)).await;
    let error = Journal::open_in_storage(storage(&h, "no-such-bucket"), OBJECT.to_owned())
        .await
        .unwrap_err();
    assert!(matches!(error, StateError::JournalStorage(_)), "{error:?}");
    insta::assert_snapshot!(error.to_string(), @"journal gs://no-such-bucket/clusterform/prod/research.journal.json: the bucket `no-such-bucket` does not exist");
}

#[tokio::test]
async fn a_change_that_loses_every_race_gives_up_after_a_bounded_number_of_attempts() {
    // A rival that writes between every read and every upload of ours.
    let server = Scripted::start(|seen, _| {
        if seen.method == "POST" {
            let body = serde_json::json!({"error": {"code": 412, "message": "precondition"}});
            (StatusCode::PRECONDITION_FAILED, axum::Json(body)).into_response()
        } else {
            let empty = r#"{"version":1,"entries":[]}"#;
            (StatusCode::OK, [("x-goog-generation", "7")], empty).into_response()
        }
    })
    .await;
    let client = storage_client(server.base_url(), BUCKET, fast_retry());
    let journal = Journal::open_in_storage(client, OBJECT.to_owned())
        .await
        .unwrap();
    let error = journal.record(entry("a", 1)).await.unwrap_err();
    insta::assert_snapshot!(error.to_string(), @"journal gs://team-infra/clusterform/prod/research.journal.json: gave up after 16 attempts: other runs kept replacing it");
    let uploads = server
        .requests()
        .iter()
        .filter(|seen| seen.method == "POST")
        .count();
    assert_eq!(uploads, 16);
    assert!(journal.is_empty(), "nothing recorded that was not written");
}
