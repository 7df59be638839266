//! The README's first command: the quick start on the built-in emulator, no account needed.

use assert_cmd::Command;

use std::process::Output;

use crate::support::{
    Transcript, created_attributes_elided, destroyed_attributes_elided, examples_dir,
};

fn copy_quickstart() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(examples_dir().join("quickstart")).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
        }
    }
    dir
}

fn clusterform(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clusterform"))
        .args(args)
        .arg(dir)
        .env("NO_COLOR", "1")
        .env("CLUSTERFORM_LOCAL_OPERATION_SECONDS", "0.3")
        .env_remove("CLUSTERFORM_ENDPOINT")
        .env_remove("CLUSTERFORM_ACCESS_TOKEN")
        .output()
        .unwrap()
}

#[test]
fn quickstart_applies_plans_clean_and_destroys_on_the_local_emulator() {
    let dir = copy_quickstart();
    let transcript_of = |output: &Output| {
        let shown = dir.path().display().to_string();
        Transcript::of(output, |text| text.replace(&shown, "[DIR]"))
    };
    let apply = clusterform(dir.path(), &["apply", "--auto-approve"]);
    insta::assert_snapshot!(transcript_of(&apply).normalized_with(created_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train01 will be created
      + cluster "train01" { … }

    Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
    [stderr]
    [HH:MM:SS] train01: creating… [Ns]
    [HH:MM:SS] train01: create request accepted [Ns]
    [HH:MM:SS] train01: create done [Ns]
    [HH:MM:SS] train01: created [Ns]
    Apply complete! Resources: 1 added, 0 changed, 0 replaced, 0 destroyed.
    "#);
    assert!(dir.path().join(".clusterform/emulator.json").is_file());

    let plan = clusterform(dir.path(), &["plan"]);
    insta::assert_snapshot!(transcript_of(&plan), @"No changes. Your clusters match the configuration.");

    let destroy = clusterform(dir.path(), &["destroy", "--auto-approve"]);
    insta::assert_snapshot!(transcript_of(&destroy).normalized_with(destroyed_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train01 will be destroyed: declared in this configuration, and destroy was requested
      - cluster "train01" { … }
        # no Slurm jobs active now

    Plan: 0 to add, 0 to change, 0 to replace, 1 to destroy.
    [stderr]
    [HH:MM:SS] train01: destroying… [Ns]
    [HH:MM:SS] train01: delete request accepted [Ns]
    [HH:MM:SS] train01: delete done [Ns]
    [HH:MM:SS] train01: destroyed [Ns]
    Destroy complete! Resources: 1 destroyed.
    "#);
}

/// A second command in a directory whose built-in emulator an `apply` is serving says that,
/// and how to run both: not an emulator lock error.
#[test]
fn a_second_command_while_apply_runs_on_the_local_emulator_says_what_holds_it() {
    let dir = copy_quickstart();
    let mut apply = std::process::Command::new(env!("CARGO_BIN_EXE_clusterform"))
        .args(["apply", "--auto-approve"])
        .arg(dir.path())
        .env("NO_COLOR", "1")
        .env("CLUSTERFORM_LOCAL_OPERATION_SECONDS", "20")
        .env_remove("CLUSTERFORM_ENDPOINT")
        .env_remove("CLUSTERFORM_ACCESS_TOKEN")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The journal is written before the create is sent, while the emulator is held.
    let journal = dir.path().join(".clusterform/journal.json");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !journal.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let status = clusterform(dir.path(), &["status"]);
    apply.kill().unwrap();
    apply.wait().unwrap();
    let shown = dir.path().display().to_string();
    let transcript = Transcript::of(&status, |text| text.replace(&shown, "[DIR]"));
    insta::assert_snapshot!(transcript, @r#"
    [stderr]
    Error: another clusterform command in [DIR] is using the built-in emulator (`endpoint = "local"`): it serves one command at a time from [DIR]/.clusterform/emulator.json
      hint: wait for that command to finish; if it is a `clusterform emulator` serving this state, give this command the `--endpoint` it printed; to run commands side by side, serve the state with `clusterform emulator --state [DIR]/.clusterform/emulator.json` and give each command that `--endpoint`
    [exit status: 1]
    "#);
}
