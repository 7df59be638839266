//! The journal on disk: what an apply leaves behind while an operation runs.

use std::sync::Arc;
use std::time::Duration;

use clusterform_executor::{
    ApplyEngine, ExecError, Journal, JournalEntry, ProgressEvent, ProgressSink, StateError, Step,
    Submitted,
};
use clusterform_model::Action;
use clusterform_model::rest::RequestKind;
use tokio_util::sync::CancellationToken;

use crate::support::*;

/// Reads the journal file from disk at every progress event, as a crash at that moment would.
struct JournalSnooper {
    path: std::path::PathBuf,
    seen_while_waiting: std::sync::Mutex<Vec<String>>,
}

impl ProgressSink for JournalSnooper {
    fn event(&self, event: &ProgressEvent) {
        let operation = match &event.step {
            Step::Submitted {
                operation: Some(operation),
                ..
            }
            | Step::Waiting { operation, .. } => operation,
            _ => return,
        };
        {
            let text = std::fs::read_to_string(&self.path).expect("journal exists while waiting");
            let document: serde_json::Value =
                serde_json::from_str(&text).expect("journal is whole JSON");
            assert!(text.contains(operation.as_str()));
            assert!(!text.contains(TOKEN), "no token in the journal");
            self.seen_while_waiting
                .lock()
                .unwrap()
                .push(document["entries"][0]["operation"].to_string());
        }
    }
}

#[tokio::test]
async fn the_operation_is_journaled_before_waiting_and_removed_after() {
    let h = Harness::start(Duration::from_millis(300)).await;
    // Polling instead of long-polling, so that there are `Waiting` events to look at.
    h.emulator.set_wait_unimplemented(true);
    let dir = tempfile::tempdir().unwrap();
    let snooper = Arc::new(JournalSnooper {
        path: dir.path().join(".clusterform/journal.json"),
        seen_while_waiting: Default::default(),
    });
    let engine = ApplyEngine::new(
        h.client(fast_retry()),
        Journal::open(dir.path()).unwrap(),
        1,
    )
    .with_wait_options(fast_wait());
    let plan = plan(vec![change(
        "train01",
        Action::Create,
        vec![create_request("train01")],
    )]);
    let report = engine
        .apply(&plan, snooper.clone(), CancellationToken::new())
        .await;
    assert!(report.is_success(), "{report:?}");
    assert!(!snooper.seen_while_waiting.lock().unwrap().is_empty());
    assert!(
        !snooper.path.exists(),
        "removed once the operation finished"
    );
}

#[tokio::test]
async fn a_corrupt_journal_stops_the_engine_from_starting() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".clusterform")).unwrap();
    std::fs::write(dir.path().join(".clusterform/journal.json"), "{not json").unwrap();
    let err = Journal::open(dir.path()).unwrap_err();
    assert!(matches!(err, StateError::Journal { .. }));
    assert!(
        err.to_string().contains(".clusterform/journal.json"),
        "{err}"
    );
}

#[tokio::test]
async fn an_unusable_entry_blocks_its_cluster_and_no_other() {
    let h = Harness::start(Duration::from_millis(200)).await;
    let Submitted::Operation(in_flight) = h.client.send(&create_request("b")).await.unwrap() else {
        panic!("expected an operation");
    };
    let entry = |id: &str, operation: &str| {
        serde_json::to_value(JournalEntry {
            address: address(id),
            action: Action::Create,
            request: RequestKind::Create,
            operation: operation.to_owned(),
            started_at: "2026-11-10T12:00:00Z".into(),
            timeout_seconds: 7200,
            attempt: None,
        })
        .unwrap()
    };
    let unusable = entry("a", "../x");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".clusterform/journal.json");
    std::fs::create_dir(dir.path().join(".clusterform")).unwrap();
    let document =
        serde_json::json!({"version": 1, "entries": [unusable, entry("b", &in_flight.name)]});
    std::fs::write(&path, document.to_string()).unwrap();

    let engine = ApplyEngine::new(
        h.client(fast_retry()),
        Journal::open(dir.path()).unwrap(),
        2,
    )
    .with_wait_options(fast_wait());
    let resumed = engine
        .resume(Arc::new(RecordingSink::default()), CancellationToken::new())
        .await;
    assert!(
        resumed.is_success(),
        "the usable entry resumes: {resumed:?}"
    );
    assert_eq!(resumed.outcomes.len(), 1);

    let plan = plan(vec![
        change("a", Action::Create, vec![create_request("a")]),
        change("c", Action::Create, vec![create_request("c")]),
    ]);
    let report = engine
        .apply(
            &plan,
            Arc::new(RecordingSink::default()),
            CancellationToken::new(),
        )
        .await;
    let [a, c] = report.outcomes.as_slice() else {
        panic!("{report:?}");
    };
    let err = a.result.as_ref().unwrap_err();
    assert!(
        matches!(
            err,
            ExecError::State(StateError::UnusableJournalEntry { entry: 1, .. })
        ),
        "{err}"
    );
    assert!(err.to_string().contains(&*path.to_string_lossy()), "{err}");
    assert!(c.result.is_ok(), "{:?}", c.result);
    assert_eq!(
        h.count("POST", "/modelDevelopmentClusters"),
        2,
        "b and c only"
    );
    let left: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        left["entries"],
        serde_json::json!([unusable]),
        "kept verbatim"
    );
}

/// Puts a FIFO at `path` (opening one for reading waits for a writer: a hang, if it were opened).
#[cfg(unix)]
fn fifo_at(path: &std::path::Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

#[test]
#[cfg(unix)]
fn state_files_that_are_not_regular_files_are_refused_before_they_are_opened() {
    use clusterform_executor::{AppliedRecord, Journal};
    let dir = tempfile::tempdir().unwrap();
    fifo_at(&Journal::path_in(dir.path()));
    let refused = Journal::open(dir.path()).unwrap_err().to_string();
    assert!(
        refused.contains("journal.json") && refused.contains("a FIFO, not a regular file"),
        "{refused}"
    );

    fifo_at(&AppliedRecord::path_in(dir.path()));
    let record = AppliedRecord::open(dir.path());
    assert!(record.entries().is_empty());
    assert!(
        record
            .unreadable()
            .is_some_and(|why| why.contains("a FIFO, not a regular file")),
        "{:?}",
        record.unreadable()
    );
}

#[test]
#[cfg(unix)]
fn a_state_file_linked_to_an_endless_device_is_refused_not_read() {
    use clusterform_executor::{AppliedRecord, Journal};
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::path_in(dir.path());
    std::fs::create_dir_all(journal.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &journal).unwrap();
    std::os::unix::fs::symlink("/dev/zero", AppliedRecord::path_in(dir.path())).unwrap();
    let refused = Journal::open(dir.path()).unwrap_err().to_string();
    assert!(refused.contains("a character device"), "{refused}");
    assert!(
        AppliedRecord::open(dir.path())
            .unreadable()
            .is_some_and(|why| why.contains("a character device"))
    );
}

/// An applied record or journal larger than any run writes (a sparse file here, so the test
/// writes nothing) is refused by its size, never loaded: the record is an empty one with the
/// reason, the journal an error naming it.
#[test]
fn a_state_file_over_the_size_cap_is_refused_unread() {
    use clusterform_executor::{AppliedRecord, Journal};
    let dir = tempfile::tempdir().unwrap();
    let oversized = 64 * 1024 * 1024 + 1;
    let record = AppliedRecord::path_in(dir.path());
    std::fs::create_dir_all(record.parent().unwrap()).unwrap();
    std::fs::File::create(&record)
        .unwrap()
        .set_len(oversized)
        .unwrap();
    let opened = AppliedRecord::open(dir.path());
    assert!(opened.entries().is_empty());
    let why = opened.unreadable().unwrap_or_default().to_owned();
    assert!(why.contains("67108864"), "{why}");

    std::fs::File::create(Journal::path_in(dir.path()))
        .unwrap()
        .set_len(oversized)
        .unwrap();
    let refused = Journal::open(dir.path()).unwrap_err().to_string();
    assert!(
        refused.contains("journal.json") && refused.contains("67108864"),
        "{refused}"
    );
}
