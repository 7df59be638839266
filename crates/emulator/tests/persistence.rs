//! Persistence: the state file is written after each change, loaded by a new
//! emulator, and an operation in flight at shutdown still finishes after the restart.

use std::time::Duration;

use clusterform_emulator::{Emulator, EmulatorError, EmulatorOptions};
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{PROJECT, TestServer, cluster_name, cluster_path, fast_options, seed};

fn persistent_options(state_file: &std::path::Path) -> EmulatorOptions {
    EmulatorOptions {
        operation_duration: Duration::from_millis(300),
        state_file: Some(state_file.to_owned()),
        ..fast_options()
    }
}

#[tokio::test]
async fn an_operation_in_flight_finishes_after_a_restart() {
    let directory = tempfile::tempdir().unwrap();
    let state_file = directory.path().join("emulator.json");
    let first = TestServer::start(persistent_options(&state_file)).await;
    first.create_running("kept", seed()).await;
    let (status, operation) = first.create("inflight", seed()).await;
    assert_eq!(status, 200);
    first
        .emulator()
        .set_slurm_jobs(&cluster_name("kept"), vec![json!({"job_id": 9})]);
    first.server.shutdown().await;
    assert!(state_file.exists());

    let second = TestServer::start(persistent_options(&state_file)).await;
    let finished = second.wait_done(&operation).await;
    assert_eq!(finished["response"]["name"], cluster_name("inflight"));
    assert_eq!(
        second
            .emulator()
            .cluster(&cluster_name("inflight"))
            .unwrap()["clusterStatus"]["state"],
        "RUNNING"
    );
    assert_eq!(
        second.emulator().cluster(&cluster_name("kept")).unwrap()["clusterStatus"]["state"],
        "RUNNING"
    );
    let slurm_path = format!("/v1beta1/{}:callSlurmRestApi", cluster_name("kept"));
    let body = json!({"method": "HTTP_METHOD_GET", "path": "/slurm/v0.0.42/jobs"});
    let (_, answer) = second.call(Method::POST, &slurm_path, Some(body)).await;
    let jobs: Value = serde_json::from_str(answer["body"].as_str().unwrap()).unwrap();
    assert_eq!(jobs["jobs"], json!([{"job_id": 9}]));
    let (_, next) = second.create("third", seed()).await;
    assert_eq!(
        next["name"], "projects/123456789012/locations/us-central1/operations/3",
        "the ID counter persists"
    );
}

#[tokio::test]
async fn a_deleted_cluster_stays_deleted_after_a_restart() {
    let directory = tempfile::tempdir().unwrap();
    let state_file = directory.path().join("emulator.json");
    let first = TestServer::start(persistent_options(&state_file)).await;
    first.create_running("brief", seed()).await;
    let (_, operation) = first
        .call(
            Method::DELETE,
            &format!("/v1beta1/{}", cluster_name("brief")),
            None,
        )
        .await;
    first.wait_done(&operation).await;
    first.server.shutdown().await;
    let second = Emulator::new(persistent_options(&state_file)).unwrap();
    assert!(second.cluster(&cluster_name("brief")).is_none());
}

#[test]
fn a_corrupt_state_file_is_an_error_naming_it() {
    let directory = tempfile::tempdir().unwrap();
    let state_file = directory.path().join("emulator.json");
    std::fs::write(&state_file, "{\"clusters\": [").unwrap();
    let error = Emulator::new(persistent_options(&state_file)).unwrap_err();
    assert!(matches!(error, EmulatorError::CorruptState { .. }));
    assert!(
        error
            .to_string()
            .contains(&state_file.display().to_string()),
        "{error}"
    );
}

#[tokio::test]
async fn an_unwritable_state_file_fails_the_request_with_internal() {
    let directory = tempfile::tempdir().unwrap();
    let state_directory = directory.path().join("missing-directory");
    std::fs::create_dir(&state_directory).unwrap();
    let state_file = state_directory.join("emulator.json");
    let server = TestServer::start(persistent_options(&state_file)).await;
    // Removed while the emulator runs (its lock file with it): the next save fails.
    std::fs::remove_dir_all(&state_directory).unwrap();
    let (status, error) = server.create("nowhere", seed()).await;
    assert_eq!(status, 500);
    assert_eq!(error["error"]["status"], "INTERNAL");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("missing-directory")
    );
}

#[tokio::test]
async fn clusters_saved_without_project_numbers_are_kept_when_they_are_turned_on() {
    let directory = tempfile::tempdir().unwrap();
    let state_file = directory.path().join("emulator.json");
    let first = TestServer::start(persistent_options(&state_file)).await;
    first.create_running("older", seed()).await;
    first.server.shutdown().await;

    let numbered = EmulatorOptions {
        project_numbers: true,
        ..persistent_options(&state_file)
    };
    let second = TestServer::start(numbered).await;
    let (status, cluster) = second.get(&cluster_path("older")).await;
    assert_eq!(status, 200);
    assert_eq!(
        cluster["name"],
        format!(
            "projects/{}/locations/us-central1/modelDevelopmentClusters/older",
            clusterform_emulator::project_number_of(PROJECT)
        )
    );
}

#[tokio::test]
async fn a_second_emulator_on_the_same_state_file_is_refused_until_the_first_stops() {
    let directory = tempfile::tempdir().unwrap();
    let state_file = directory.path().join("emulator.json");
    let first = TestServer::start(persistent_options(&state_file)).await;
    let refused = Emulator::new(persistent_options(&state_file)).unwrap_err();
    assert!(
        matches!(&refused, EmulatorError::StateInUse { path, .. } if *path == state_file),
        "{refused}"
    );
    assert!(
        refused.to_string().contains(&*state_file.to_string_lossy()),
        "{refused}"
    );
    first.server.shutdown().await;
    Emulator::new(persistent_options(&state_file)).unwrap();
}

/// A state file in `directory/state`, and a way to make every later save fail: the directory
/// is moved away and a regular file put in its place (permissions would not stop root).
struct FailingSaves {
    _root: tempfile::TempDir,
    state_directory: std::path::PathBuf,
    moved: std::path::PathBuf,
    state_file: std::path::PathBuf,
}

impl FailingSaves {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let state_directory = root.path().join("state");
        std::fs::create_dir(&state_directory).unwrap();
        Self {
            moved: root.path().join("moved"),
            state_file: state_directory.join("emulator.json"),
            state_directory,
            _root: root,
        }
    }

    fn break_saves(&self) {
        std::fs::rename(&self.state_directory, &self.moved).unwrap();
        std::fs::write(&self.state_directory, "not a directory").unwrap();
    }

    fn mend_saves(&self) {
        std::fs::remove_file(&self.state_directory).unwrap();
        std::fs::rename(&self.moved, &self.state_directory).unwrap();
    }
}

#[tokio::test]
async fn a_change_whose_save_failed_is_not_kept() {
    let saves = FailingSaves::new();
    let server = TestServer::start(persistent_options(&saves.state_file)).await;
    server.create_running("kept", seed()).await;
    saves.break_saves();

    for attempt in ["first", "retry"] {
        let (status, error) = server.create("lost", seed()).await;
        assert_eq!(status, 500, "{attempt}: {error}");
        let message = error["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("cannot write the emulator state file")
                && message.contains(&*saves.state_file.to_string_lossy()),
            "{attempt}: {message}"
        );
        assert!(
            server.emulator().cluster(&cluster_name("lost")).is_none(),
            "{attempt}: the create was not saved, so it was not made"
        );
    }
    let delete = format!("/v1beta1/{}", cluster_name("kept"));
    let (status, _) = server.call(Method::DELETE, &delete, None).await;
    assert_eq!(status, 500);
    assert_eq!(
        server.emulator().cluster(&cluster_name("kept")).unwrap()["clusterStatus"]["state"],
        "RUNNING",
        "the delete was not saved, so it was not started"
    );

    saves.mend_saves();
    let (status, operation) = server.create("lost", seed()).await;
    assert_eq!(status, 200, "{operation}");
    server.server.shutdown().await;
    let restarted = Emulator::new(persistent_options(&saves.state_file)).unwrap();
    assert!(restarted.cluster(&cluster_name("lost")).is_some());
}

#[tokio::test]
async fn an_object_whose_save_failed_is_not_kept() {
    let saves = FailingSaves::new();
    let server = TestServer::start(EmulatorOptions {
        buckets: vec!["team-infra".to_owned()],
        ..persistent_options(&saves.state_file)
    })
    .await;
    saves.break_saves();
    let upload =
        "/upload/storage/v1/b/team-infra/o?uploadType=media&name=stack.lock&ifGenerationMatch=0";
    for attempt in ["first", "retry"] {
        let (status, error) = server
            .call(Method::POST, upload, Some(json!({"id": "lock"})))
            .await;
        assert_eq!(status, 500, "{attempt}: {error}");
        let (status, _) = server
            .call(Method::GET, "/storage/v1/b/team-infra/o/stack.lock", None)
            .await;
        assert_eq!(
            status, 404,
            "{attempt}: the object was not saved, so it is not there"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_state_path_that_is_a_device_or_a_fifo_is_refused_at_start() {
    let directory = tempfile::tempdir().unwrap();
    let fifo = directory.path().join("emulator.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for path in [std::path::PathBuf::from("/dev/full"), fifo] {
        let error = Emulator::new(persistent_options(&path)).unwrap_err();
        assert!(
            matches!(&error, EmulatorError::StateNotAFile { path: p, .. } if *p == path),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(
            message.contains(&*path.to_string_lossy()) && message.contains("not a regular file"),
            "{message}"
        );
    }
    assert!(
        !std::path::Path::new("/dev/full.lock").exists(),
        "nothing is created next to a refused state file"
    );
    let locks = std::fs::read_dir(directory.path()).unwrap().count();
    assert_eq!(locks, 1, "no lock file next to the FIFO");
}
