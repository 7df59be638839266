//! The emulator's state file under hostile conditions, through the binary: a state path that
//! is a device or a FIFO is refused at start (by `clusterform emulator --state` and by
//! `endpoint = "local"`), and a save that fails (a full disk, a directory gone) fails the
//! request, so `apply` never reports as done a change a restart would lose.

use std::path::Path;
use std::process::{Command, Output};

use crate::emulator_command::ServedEmulator;
use crate::support::{
    ClusterSpec, Transcript, assert_succeeded, config, created_attributes_elided,
    failure_seconds_hidden,
};

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
        command
            .env("CLUSTERFORM_ENDPOINT", endpoint)
            .envs(crate::support::preflight_env_at(endpoint));
    }
    command.output().unwrap()
}

/// `text` with the random part of each temporary file's name (`.tmpjnq9R3`) hidden.
fn temporary_names_hidden(text: &str) -> String {
    const TEMPORARY: &str = "/.tmp";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(TEMPORARY) {
        out.push_str(&rest[..at + TEMPORARY.len()]);
        rest = &rest[at + TEMPORARY.len()..];
        let random = rest.bytes().take_while(u8::is_ascii_alphanumeric).count();
        if random > 0 {
            out.push_str("[RANDOM]");
            rest = &rest[random..];
        }
    }
    out.push_str(rest);
    out
}

/// A FIFO at `path`.
fn make_fifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success());
}

/// The transcript of `output`, each of `shown` (a directory or an emulator's URL) replaced by
/// its placeholder.
fn transcript_of(output: &Output, shown: &[(&str, &str)]) -> Transcript {
    Transcript::of(output, |text| {
        shown
            .iter()
            .fold(text.to_owned(), |text, (what, placeholder)| {
                text.replace(what, placeholder)
            })
    })
}

#[test]
#[cfg(unix)]
fn the_emulator_command_refuses_a_state_file_that_is_a_device_or_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("state.json");
    make_fifo(&fifo);
    let shown = [(dir.path().to_str().unwrap(), "[DIR]")];
    let transcripts: String = [Path::new("/dev/full"), &fifo]
        .map(|path| {
            let state = path.to_str().unwrap();
            let args = ["emulator", "--listen", "127.0.0.1:0", "--state", state];
            let output = clusterform(dir.path(), None, &args);
            let command = args.join(" ").replace(shown[0].0, shown[0].1);
            format!("$ {command}\n{}", transcript_of(&output, &shown))
        })
        .concat();
    insta::assert_snapshot!(transcripts, @"
    $ emulator --listen 127.0.0.1:0 --state /dev/full
    [stderr]
    Error: the local emulator failed: the emulator state file /dev/full is a device, not a regular file
    [exit status: 1]
    $ emulator --listen 127.0.0.1:0 --state [DIR]/state.json
    [stderr]
    Error: the local emulator failed: the emulator state file [DIR]/state.json is a FIFO, not a regular file
    [exit status: 1]
    ");
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
    let shown = [(dir.path().to_str().unwrap(), "[DIR]")];
    insta::assert_snapshot!(transcript_of(&output, &shown), @"
    [stderr]
    Error: the local emulator failed: the emulator state file ./.clusterform/emulator.json is a device, not a regular file
    [exit status: 1]
    ");
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
    let shown = [
        (dir.path().to_str().unwrap(), "[STATE DIR]"),
        (machine.path().to_str().unwrap(), "[DIR]"),
        (base_url.as_str(), "[ENDPOINT]"),
    ];
    // The reason is shown, and no "Apply complete".
    insta::assert_snapshot!(transcript_of(&failed, &shown).normalized_with(failure_seconds_hidden).normalized_with(temporary_names_hidden).normalized_with(created_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train01 will be created
      + cluster "train01" { … }

    Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
    [stderr]
    [HH:MM:SS] train01: creating… [Ns]
    [HH:MM:SS] train01: FAILED after [N]s: POST [ENDPOINT]/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters?modelDevelopmentClusterId=train01 failed: INTERNAL (500): cannot write the emulator state file [STATE DIR]/state/emulator.json: Not a directory (os error 20) at path "[STATE DIR]/state/.tmp[RANDOM]"
    Error: Creation of cluster train01 failed: POST [ENDPOINT]/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters?modelDevelopmentClusterId=train01 failed: INTERNAL (500): cannot write the emulator state file [STATE DIR]/state/emulator.json: Not a directory (os error 20) at path "[STATE DIR]/state/.tmp[RANDOM]"
    Error: 1 of 1 actions failed
      hint: fix the cause above and run `clusterform apply` again; finished clusters are not touched twice
    [exit status: 1]
    "#);
    // The failed create left nothing behind.
    let plan = clusterform(machine.path(), Some(&base_url), &["plan"]);
    insta::assert_snapshot!(transcript_of(&plan, &shown).normalized_with(created_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train01 will be created
      + cluster "train01" { … }

    Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
    "#);

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
