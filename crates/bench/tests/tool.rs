//! The binary under measurement: a missing one is named, and a run that does not end as the
//! benchmark requires (a plan that finds changes) stops the benchmark instead of being timed.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

fn bench(clusterform: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_clusterform-bench"))
        .args([
            "--quick",
            "--samples",
            "1",
            "--latency-ms",
            "1",
            "--clusterform",
        ])
        .arg(clusterform)
        .output()
        .unwrap()
}

#[test]
fn a_missing_binary_is_named_with_how_to_build_it() {
    let output = bench(Path::new("/nonexistent/clusterform"));
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no clusterform binary at /nonexistent/clusterform")
            && stderr.contains("cargo build --release -p clusterform"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn a_plan_that_finds_changes_stops_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("clusterform");
    std::fs::write(
        &fake,
        "#!/bin/sh\n[ \"$1\" = --version ] && exit 0\necho 'Plan: 1 to add' >&2\nexit 2\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let output = bench(&fake);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("`clusterform plan --detailed-exitcode` exited with Some(2) (expected 0)")
            && stderr.contains("Plan: 1 to add"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty(), "no table from a failed run");
}
