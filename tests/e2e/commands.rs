//! The smaller commands: `fmt`, `list`, `completions`, `emulator`, and the planning flags
//! `--target` and `--replace`.

use crate::support::{ClusterSpec, Env, STACK, apply_ok, config, stderr, stdout, two_clusters};

#[test]
fn fmt_check_reports_and_fmt_rewrites() {
    let env = Env::new(100);
    env.write_config(
        "provider \"google\" {\nproject=\"my-proj\"\n    region = \"us-central1\"\n}\n",
    );
    let check = env.run(&["fmt", "--check", "--diff"]);
    assert_eq!(check.status.code(), Some(1));
    assert!(stdout(&check).contains("+  project"), "{}", stdout(&check));
    assert!(stderr(&check).contains("main.hcl"), "{}", stderr(&check));

    #[cfg(unix)]
    let main_hcl = env.path().join("main.hcl");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let group_readable = std::fs::Permissions::from_mode(0o640);
        std::fs::set_permissions(&main_hcl, group_readable).unwrap();
    }
    let rewrite = env.run(&["fmt"]);
    assert!(rewrite.status.success(), "{}", stderr(&rewrite));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&main_hcl).unwrap().permissions().mode() & 0o777;
        assert_eq!(
            mode, 0o640,
            "fmt replaces the file atomically and keeps its mode"
        );
    }
    let again = env.run(&["fmt", "--check"]);
    assert!(
        again.status.success(),
        "formatting is idempotent: {}",
        stderr(&again)
    );
}

#[test]
fn list_prints_a_table() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    let output = env.run(&["list"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(out.contains("ID"), "{out}");
    assert!(
        out.contains("train01  my-proj  us-central1  RUNNING"),
        "{out}"
    );
    assert!(
        out.contains("login:1-1 cpu:0-4") || out.contains("cpu:0-4"),
        "{out}"
    );
    assert!(out.contains(STACK), "{out}");
}

#[test]
fn target_narrows_the_plan_and_replace_forces_one() {
    let env = Env::new(100);
    env.write_config(&config(&two_clusters()));
    let output = env.run(&["apply", "--auto-approve", "--target", "train02"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("1 added"), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("targeting is in effect"),
        "a partial plan says so: {}",
        stderr(&output)
    );
    let creates: Vec<_> = env.mutations().into_iter().map(|r| r.query).collect();
    assert_eq!(creates.len(), 1);
    assert!(creates[0].contains("train02"), "{creates:?}");

    apply_ok(&env, &two_clusters());
    env.emulator().clear_requests();
    let replace = env.run(&["apply", "--auto-approve", "--replace", "train01"]);
    assert!(replace.status.success(), "{}", stderr(&replace));
    assert!(
        !stderr(&replace).contains("targeting"),
        "{}",
        stderr(&replace)
    );
    let methods: Vec<_> = env.mutations().into_iter().map(|r| r.method).collect();
    assert_eq!(methods, ["DELETE", "POST"]);
}

#[test]
fn completions_are_generated() {
    let env = Env::new(100);
    let output = env.run(&["completions", "bash"]);
    assert!(output.status.success());
    assert!(stdout(&output).contains("clusterform"));
}

#[test]
fn the_emulator_refuses_a_non_loopback_address() {
    let env = Env::new(100);
    let output = env.run(&["emulator", "--listen", "0.0.0.0:0"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("--allow-remote"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn usage_errors_exit_1_and_help_exits_0() {
    let env = Env::new(100);
    for args in [
        &["plan", "--no-such-flag"][..],
        &["plan", "--update-mode", "SOMETIMES"][..],
        &["frobnicate"][..],
    ] {
        let output = env.run(args);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(stdout(&output).is_empty(), "{args:?}: errors go to stderr");
    }
    let help = env.run(&["plan", "--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(stdout(&help).contains("Usage"), "{}", stdout(&help));
}
