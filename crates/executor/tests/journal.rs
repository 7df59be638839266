//! The journal on disk: what an apply leaves behind while an operation runs.

use std::sync::Arc;
use std::time::Duration;

use clusterform_executor::{ApplyEngine, ExecError, Journal, ProgressEvent, ProgressSink, Step};
use clusterform_planner::Action;
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
    assert!(matches!(err, ExecError::Journal { .. }));
    assert!(
        err.to_string().contains(".clusterform/journal.json"),
        "{err}"
    );
    assert!(err.hint().is_some());
}
