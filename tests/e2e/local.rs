//! The README's first command: the quick start on the built-in emulator, no account needed.

use assert_cmd::Command;

use crate::support::{examples_dir, stderr, stdout};

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

fn clusterform(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
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
    let apply = clusterform(dir.path(), &["apply", "--auto-approve"]);
    assert!(
        apply.status.success(),
        "{}{}",
        stdout(&apply),
        stderr(&apply)
    );
    assert!(stderr(&apply).contains("1 added"), "{}", stderr(&apply));
    assert!(dir.path().join(".clusterform/emulator.json").is_file());

    let plan = clusterform(dir.path(), &["plan"]);
    assert!(plan.status.success(), "{}", stderr(&plan));
    assert!(stdout(&plan).contains("No changes."), "{}", stdout(&plan));

    let destroy = clusterform(dir.path(), &["destroy", "--auto-approve"]);
    assert!(destroy.status.success(), "{}", stderr(&destroy));
    assert!(
        stderr(&destroy).contains("1 destroyed"),
        "{}",
        stderr(&destroy)
    );
}
