//! `fmt` reads configuration files by the loader's rules: regular files only, at most
//! `MAX_SOURCE_BYTES`, never blocking on a FIFO or a device; a symlinked file is formatted
//! through its link; and a `*.hcl` entry it cannot read fails the run, naming the entry.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use clusterform_config::MAX_SOURCE_BYTES;

use crate::support::{Env, stderr};

const FORMATTED: &str = "provider \"google\" {\n  project = \"my-proj\"\n}\n";
const UNFORMATTED: &str = "provider \"google\" {\nproject=\"my-proj\"\n}\n";

/// Runs `fmt` with `args`; a read that blocks fails the test at the timeout.
fn fmt(env: &Env, args: &[&str]) -> Output {
    let mut all = vec!["fmt"];
    all.extend_from_slice(args);
    env.cmd(&all)
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap()
}

/// Asserts that `output` failed and that its stderr holds every one of `needles`.
fn assert_failed_naming(output: &Output, needles: &[&str]) {
    let err = stderr(output);
    assert!(
        !output.status.success() && output.status.code().is_some(),
        "expected a failure, got {:?}: {err}",
        output.status
    );
    for needle in needles {
        assert!(err.contains(needle), "{needle:?} is not in: {err}");
    }
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo failed");
}

#[test]
fn fmt_refuses_devices_and_fifos_without_reading_them() {
    let env = Env::new(0);
    mkfifo(&env.path().join("pipe.hcl"));
    for args in [&["/dev/zero"][..], &["--check", "/dev/zero"], &["pipe.hcl"]] {
        assert_failed_naming(
            &fmt(&env, args),
            &[args[args.len() - 1], "not a regular file"],
        );
    }
}

#[test]
fn fmt_refuses_a_file_over_the_size_limit() {
    let env = Env::new(0);
    let huge = "#".repeat(usize::try_from(MAX_SOURCE_BYTES).unwrap() + 1);
    std::fs::write(env.path().join("huge.hcl"), &huge).unwrap();
    assert_failed_naming(&fmt(&env, &["huge.hcl"]), &["huge.hcl", "too large"]);
    assert_eq!(
        std::fs::read_to_string(env.path().join("huge.hcl")).unwrap(),
        huge
    );
}

#[test]
fn fmt_writes_a_symlinked_file_through_its_link() {
    let env = Env::new(0);
    let shared = env.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::write(shared.join("provider.hcl"), UNFORMATTED).unwrap();
    let config = env.path().join("config");
    std::fs::create_dir(&config).unwrap();
    let link = config.join("main.hcl");
    symlink("../shared/provider.hcl", &link).unwrap();

    let output = fmt(&env, &["config"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link stays a link"
    );
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        Path::new("../shared/provider.hcl")
    );
    assert_eq!(
        std::fs::read_to_string(shared.join("provider.hcl")).unwrap(),
        FORMATTED
    );
    let leftovers: Vec<_> = std::fs::read_dir(&shared).unwrap().collect();
    assert_eq!(
        leftovers.len(),
        1,
        "no temporary file is left next to the target"
    );
}

#[test]
fn fmt_and_fmt_check_fail_on_entries_they_cannot_read_and_write_nothing() {
    let env = Env::new(0);
    env.write_config(UNFORMATTED);
    symlink(
        env.path().join("missing.hcl"),
        env.path().join("broken.hcl"),
    )
    .unwrap();
    for args in [&["--check"][..], &[]] {
        assert_failed_naming(&fmt(&env, args), &["broken.hcl", "which does not exist"]);
    }
    assert_eq!(
        std::fs::read_to_string(env.path().join("main.hcl")).unwrap(),
        UNFORMATTED,
        "a run that fails on one entry rewrites no file"
    );
    std::fs::remove_file(env.path().join("broken.hcl")).unwrap();

    mkfifo(&env.path().join("pipe.hcl"));
    assert_failed_naming(&fmt(&env, &["--check"]), &["pipe.hcl", "a FIFO"]);
    std::fs::remove_file(env.path().join("pipe.hcl")).unwrap();

    std::fs::create_dir(env.path().join("folder.hcl")).unwrap();
    assert_failed_naming(&fmt(&env, &["--check"]), &["folder.hcl", "a directory"]);
}

#[test]
fn a_syntax_error_in_one_file_rewrites_no_file() {
    let env = Env::new(0);
    std::fs::write(env.path().join("a.hcl"), UNFORMATTED).unwrap();
    std::fs::write(env.path().join("b.hcl"), "provider {\n").unwrap();
    assert_failed_naming(&fmt(&env, &[]), &["b.hcl", "syntax error"]);
    assert_eq!(
        std::fs::read_to_string(env.path().join("a.hcl")).unwrap(),
        UNFORMATTED
    );
}
