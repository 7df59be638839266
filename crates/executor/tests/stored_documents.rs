//! The journal and the applied record are one stored document with two uses: the same scenarios
//! run for both, against the emulator's Cloud Storage (machines racing on one object, each
//! keeping the other's changes; a change that loses every race ending in the one bounded
//! error) and on a local file.

use std::path::Path;
use std::time::Duration;

use axum::http::StatusCode;
use axum::response::IntoResponse;
use clusterform_emulator::EmulatorOptions;
use clusterform_executor::{
    AppliedChange, AppliedEntry, AppliedRecord, Journal, JournalEntry, StateDir, StorageClient,
};
use clusterform_model::Action;
use clusterform_model::rest::RequestKind;

use crate::scripted::Scripted;
use crate::storage::storage_client;
use crate::support::*;

const BUCKET: &str = "team-infra";

/// One use of the stored document, as these scenarios drive it: one line per cluster, added
/// and dropped.
trait StoredUse: Sized {
    /// The object the use is kept in.
    const OBJECT: &'static str;
    /// The key of the document's list of clusters.
    const LIST: &'static str;
    /// Whether an object that cannot be read is replaced by a write made on top of it.
    const REPLACES_UNREADABLE: bool;

    async fn open_object(client: StorageClient) -> Self;
    fn open_file(dir: &Path) -> Self;
    fn file(dir: &Path) -> std::path::PathBuf;
    /// Adds the line of cluster `id`; the error as the run would show it.
    async fn add(&self, id: &str) -> Result<(), String>;
    /// Drops the line of cluster `id`.
    async fn drop_line(&self, id: &str) -> Result<(), String>;
    /// The clusters this machine holds now, sorted.
    fn held(&self) -> Vec<String>;
}

/// The journal's line of a cluster: a create in flight, its operation named after the cluster.
fn journal_entry(id: &str) -> JournalEntry {
    JournalEntry {
        address: address(id),
        action: Action::Create,
        request: RequestKind::Create,
        operation: format!("projects/123/locations/{REGION}/operations/op-{id}"),
        started_at: "2026-11-10T12:00:00Z".into(),
        timeout_seconds: 7200,
        attempt: None,
    }
}

impl StoredUse for Journal {
    const OBJECT: &'static str = "clusterform/prod/research.journal.json";
    const LIST: &'static str = "entries";
    const REPLACES_UNREADABLE: bool = false;

    async fn open_object(client: StorageClient) -> Self {
        Journal::open_in_storage(client, Self::OBJECT.to_owned())
            .await
            .unwrap()
    }

    fn open_file(dir: &Path) -> Self {
        Journal::open(dir).unwrap()
    }

    fn file(dir: &Path) -> std::path::PathBuf {
        Journal::path_in(dir)
    }

    async fn add(&self, id: &str) -> Result<(), String> {
        self.record(journal_entry(id))
            .await
            .map_err(|e| e.to_string())
    }

    async fn drop_line(&self, id: &str) -> Result<(), String> {
        self.remove(&journal_entry(id).operation)
            .await
            .map_err(|e| e.to_string())
    }

    fn held(&self) -> Vec<String> {
        sorted(
            self.entries()
                .into_iter()
                .map(|e| e.address.id().to_string()),
        )
    }
}

impl StoredUse for AppliedRecord {
    const OBJECT: &'static str = "clusterform/prod/research.applied.json";
    const LIST: &'static str = "clusters";
    const REPLACES_UNREADABLE: bool = true;

    async fn open_object(client: StorageClient) -> Self {
        AppliedRecord::open_in_storage(client, Self::OBJECT.to_owned()).await
    }

    fn open_file(dir: &Path) -> Self {
        AppliedRecord::open(dir)
    }

    fn file(dir: &Path) -> std::path::PathBuf {
        AppliedRecord::path_in(dir)
    }

    async fn add(&self, id: &str) -> Result<(), String> {
        let entry = AppliedEntry {
            address: address(id),
            digest: format!("d-{id}"),
            applied_at: "2026-11-10T12:00:00Z".to_owned(),
            labels: Vec::new(),
            field_digests: Default::default(),
        };
        self.update(&[AppliedChange::Applied(entry)])
            .await
            .map_err(|e| e.to_string())
    }

    async fn drop_line(&self, id: &str) -> Result<(), String> {
        self.update(&[AppliedChange::Gone(address(id))])
            .await
            .map_err(|e| e.to_string())
    }

    fn held(&self) -> Vec<String> {
        sorted(
            self.entries()
                .into_iter()
                .map(|e| e.address.id().to_string()),
        )
    }
}

fn sorted(ids: impl Iterator<Item = String>) -> Vec<String> {
    let mut ids: Vec<String> = ids.collect();
    ids.sort();
    ids
}

fn ids(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|id| (*id).to_owned()).collect()
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

fn storage(h: &Harness) -> StorageClient {
    storage_client(&h.server.base_url(), BUCKET, fast_retry())
}

/// The clusters the live object of `U` holds, sorted; `None` when it is absent.
fn stored<U: StoredUse>(h: &Harness) -> Option<Vec<String>> {
    let (content, _) = h.emulator.object(BUCKET, U::OBJECT)?;
    let document: serde_json::Value = serde_json::from_slice(&content).unwrap();
    assert_eq!(document["version"], 1);
    let lines = document[U::LIST].as_array().unwrap();
    Some(sorted(lines.iter().map(|line| {
        line["address"]["id"].as_str().unwrap().to_owned()
    })))
}

fn preconditions_failed(h: &Harness) -> usize {
    h.emulator
        .requests()
        .iter()
        .filter(|request| request.status == 412)
        .count()
}

/// Two machines each write what the other has not seen, through every kind of write (a create,
/// a replace, a delete), and each loses a race: every change of both survives.
async fn both_machines_changes_survive_every_lost_race<U: StoredUse>() {
    let h = storage_harness().await;
    let (a, b) = (
        U::open_object(storage(&h)).await,
        U::open_object(storage(&h)).await,
    );
    // Both saw no object: `b`'s create loses and is made on top of `a`'s.
    a.add("a1").await.unwrap();
    b.add("b1").await.unwrap();
    assert_eq!(stored::<U>(&h), Some(ids(&["a1", "b1"])));
    // `a` last saw its own create: its replace loses.
    a.add("a2").await.unwrap();
    // `b` last saw the object before `a2`: its removal is made on top of `a2`.
    b.drop_line("b1").await.unwrap();
    assert_eq!(stored::<U>(&h), Some(ids(&["a1", "a2"])));
    a.drop_line("a1").await.unwrap();
    b.add("b2").await.unwrap();
    // `a` saw only `a2` and believes it empties the document: its delete loses, `b2` stays.
    a.drop_line("a2").await.unwrap();
    assert_eq!(stored::<U>(&h), Some(ids(&["b2"])));
    assert_eq!(a.held(), ids(&["b2"]), "a holds what b wrote");
    assert_eq!(preconditions_failed(&h), 6);
    b.drop_line("b2").await.unwrap();
    assert_eq!(
        stored::<U>(&h),
        None,
        "an empty document deletes the object"
    );
}

/// A rival writes between every read and every upload: the change gives up after the one
/// bounded number of attempts, names the object, and holds nothing it did not write.
async fn a_change_that_loses_every_race_ends_in_the_bounded_error<U: StoredUse>() {
    let server = Scripted::start(|seen, _| {
        if seen.method == "POST" {
            let body = serde_json::json!({"error": {"code": 412, "message": "precondition"}});
            (StatusCode::PRECONDITION_FAILED, axum::Json(body)).into_response()
        } else {
            let empty = format!(r#"{{"version":1,"{}":[]}}"#, U::LIST);
            (StatusCode::OK, [("x-goog-generation", "7")], empty).into_response()
        }
    })
    .await;
    let machine = U::open_object(storage_client(server.base_url(), BUCKET, fast_retry())).await;
    let error = machine.add("a").await.unwrap_err();
    assert!(
        error.contains(&format!("gs://{BUCKET}/{}", U::OBJECT)),
        "{error}"
    );
    assert!(
        error.contains("gave up after 16 attempts: other runs kept replacing it"),
        "{error}"
    );
    let uploads = server
        .requests()
        .iter()
        .filter(|seen| seen.method == "POST")
        .count();
    assert_eq!(uploads, 16);
    assert!(
        machine.held().is_empty(),
        "nothing held that was not written"
    );
}

/// Another machine leaves an object that cannot be read between this machine's read and its
/// write: the journal, which may name operations still running, refuses to write over it; the
/// advisory record replaces it with what this run knows.
async fn an_unreadable_object_met_on_a_lost_race<U: StoredUse>() {
    let h = storage_harness().await;
    let machine = U::open_object(storage(&h)).await;
    storage(&h)
        .create_if_absent(U::OBJECT, b"{not json")
        .await
        .unwrap();
    let written = machine.add("a").await;
    if U::REPLACES_UNREADABLE {
        written.unwrap();
        assert_eq!(stored::<U>(&h), Some(ids(&["a"])));
    } else {
        let error = written.unwrap_err();
        assert!(error.contains("corrupt"), "{error}");
        assert_eq!(
            h.emulator.object(BUCKET, U::OBJECT).unwrap().0,
            b"{not json".to_vec()
        );
    }
}

/// On a local file: what a write leaves is what the next opening holds, and emptying the
/// document removes the file.
async fn a_local_file_holds_what_each_write_left<U: StoredUse>() {
    let dir = tempfile::tempdir().unwrap();
    let first = U::open_file(dir.path());
    first.add("a1").await.unwrap();
    first.add("a2").await.unwrap();
    let second = U::open_file(dir.path());
    assert_eq!(second.held(), ids(&["a1", "a2"]));
    second.drop_line("a1").await.unwrap();
    assert_eq!(U::open_file(dir.path()).held(), ids(&["a2"]));
    let files: Vec<_> = std::fs::read_dir(StateDir::of(dir.path()).path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files, vec![U::file(dir.path())], "no temporary file left");
    second.drop_line("a2").await.unwrap();
    assert!(!U::file(dir.path()).exists());
}

/// A test of `scenario` for each use: `scenario::journal` and `scenario::applied_record`.
macro_rules! for_both_uses {
    ($($scenario:ident),* $(,)?) => {$(
        mod $scenario {
            use clusterform_executor::{AppliedRecord, Journal};

            #[tokio::test]
            async fn journal() {
                super::$scenario::<Journal>().await;
            }

            #[tokio::test]
            async fn applied_record() {
                super::$scenario::<AppliedRecord>().await;
            }
        }
    )*};
}

for_both_uses!(
    both_machines_changes_survive_every_lost_race,
    a_change_that_loses_every_race_ends_in_the_bounded_error,
    an_unreadable_object_met_on_a_lost_race,
    a_local_file_holds_what_each_write_left,
);
