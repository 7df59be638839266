//! The emulator's state file under hostile conditions, through the binary: a state path that
//! is a device or a FIFO is refused at start (by `clusterform emulator --state` and by
//! `endpoint = "local"`), and a save that fails (a full disk, a directory gone) fails the
//! request, so `apply` never reports as done a change a restart would lose.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::emulator_command::ServedEmulator;
use crate::support::{ClusterSpec, assert_succeeded, config, stderr, stdout};

/// `clusterform ARGS` in `dir`, against `endpoint` when one is given.
fn clusterform(dir: &Path, endpoint: Option<&str>, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_clusterform"));
    command
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("CLUSTERFORM_ACCESS_TOKEN", "any-token")
        .env("CLUSTERFORM_LOCAL_OPERATION_SECONDS", "0.3")
        .env_remove("CLUSTERFORM_ENDPOINT")
        .env_remove("GOOGLE_OAUTH_ACCESS_TOKEN")
        .env_remove("RUST_LOG");
    if let Some(endpoint) = endpoint {
        command.env("CLUSTERFORM_ENDPOINT", endpoint);
    }
    command.output().unwrap()
}

/// A FIFO at `path`.
fn make_fifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success());
}

fn assert_refused_as_not_a_file(output: &Output, path: &Path, kind: &str) {
    assert!(!output.status.success(), "{}", stderr(output));
    let message = stderr(output);
    let expected = format!("{} is {kind}, not a regular file", path.display());
    assert!(message.contains(&expected), "{message}");
}

#[test]
#[cfg(unix)]
fn the_emulator_command_refuses_a_state_file_that_is_a_device_or_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("state.json");
    make_fifo(&fifo);
    for (path, kind) in [(PathBuf::from("/dev/full"), "a device"), (fifo, "a FIFO")] {
        let state = path.to_str().unwrap();
        let output = clusterform(
            dir.path(),
            None,
            &["emulator", "--listen", "127.0.0.1:0", "--state", state],
        );
        assert_refused_as_not_a_file(&output, &path, kind);
    }
}

#[test]
#[cfg(unix)]
fn the_local_endpoint_refuses_a_state_file_that_is_a_device() {
    let dir = tempfile::tempdir().unwrap();
    let hcl = config(&[ClusterSpec::default()]);
    let local = hcl.replacen(
        "provider \"google\" {\n",
        "provider \"google\" {\n  endpoint = \"local\"\n",
        1,
    );
    assert_ne!(hcl, local, "{hcl}");
    std::fs::write(dir.path().join("main.hcl"), local).unwrap();
    std::fs::create_dir(dir.path().join(".clusterform")).unwrap();
    let state = dir.path().join(".clusterform/emulator.json");
    // A link: the CLI creates `.clusterform` itself, and a device node cannot be made there.
    std::os::unix::fs::symlink("/dev/full", &state).unwrap();
    let output = clusterform(dir.path(), None, &["apply", "--auto-approve"]);
    let shown = Path::new(".clusterform/emulator.json");
    assert_refused_as_not_a_file(&output, shown, "a device");
}

#[test]
#[cfg(unix)]
fn an_apply_whose_create_could_not_be_saved_fails_instead_of_reporting_it_done() {
    let dir = tempfile::tempdir().unwrap();
    let state_directory = dir.path().join("state");
    std::fs::create_dir(&state_directory).unwrap();
    let state = state_directory.join("emulator.json");
    let args = ["--op-seconds", "0.2", "--state", state.to_str().unwrap()];
    let served = ServedEmulator::start("127.0.0.1", &args);
    let machine = tempfile::tempdir().unwrap();
    std::fs::write(
        machine.path().join("main.hcl"),
        config(&[ClusterSpec::default()]),
    )
    .unwrap();
    // As a full disk would, every save fails from now on (permissions would not stop root):
    // the state's directory is moved away and a regular file put in its place.
    let moved = dir.path().join("moved");
    std::fs::rename(&state_directory, &moved).unwrap();
    std::fs::write(&state_directory, "not a directory").unwrap();

    let base_url = served.base_url();
    let failed = clusterform(
        machine.path(),
        Some(&base_url),
        &["apply", "--auto-approve"],
    );
    let said = format!("{}{}", stdout(&failed), stderr(&failed));
    assert_eq!(failed.status.code(), Some(1), "{said}");
    assert!(
        said.contains("cannot write the emulator state file") && said.contains("emulator.json"),
        "the reason is shown: {said}"
    );
    assert!(!said.contains("Apply complete"), "{said}");
    let plan = clusterform(machine.path(), Some(&base_url), &["plan"]);
    assert!(
        stdout(&plan).contains("1 to add"),
        "the failed create left nothing behind: {}",
        stdout(&plan)
    );

    drop(served);
    std::fs::remove_file(&state_directory).unwrap();
    std::fs::rename(&moved, &state_directory).unwrap();
    let restarted = ServedEmulator::start("127.0.0.1", &args);
    let applied = clusterform(
        machine.path(),
        Some(&restarted.base_url()),
        &["apply", "--auto-approve"],
    );
    assert_succeeded(&applied);
}
