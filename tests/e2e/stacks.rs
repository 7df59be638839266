//! Stacks that cannot collide: a real endpoint needs an explicit `stack`, a directory-name stack
//! stays with the built-in emulator, and two directories of the same name own only their own
//! clusters.

use std::path::{Path, PathBuf};
use std::process::Output;

use tempfile::TempDir;

use crate::support::{ClusterSpec, Env, cluster_hcl, cluster_name, stderr, stdout};

/// A provider block of the test project with these extra lines (e.g. `stack = "x"`).
fn provider(extra: &str) -> String {
    format!(
        "provider \"google\" {{\n  project = \"my-proj\"\n  region  = \"us-central1\"\n{extra}}}\n"
    )
}

/// A directory called `infra` inside a fresh temporary parent, holding `hcl` as `main.hcl`.
fn infra_dir(hcl: &str) -> (TempDir, PathBuf) {
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("infra");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("main.hcl"), hcl).unwrap();
    (parent, dir)
}

/// Runs the binary in `dir` against the test's emulator.
fn run_in(env: &Env, dir: &Path, args: &[&str]) -> Output {
    env.cmd(args).current_dir(dir).output().unwrap()
}

fn cluster(id: &'static str) -> String {
    cluster_hcl(&ClusterSpec {
        id,
        ..ClusterSpec::default()
    })
}

#[test]
fn validate_requires_a_stack_for_a_real_endpoint() {
    let env = Env::new(100);
    env.write_config(&format!("{}{}", provider(""), cluster("train01")));
    let output = env.run(&["validate"]);
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(err.contains("the provider block sets no `stack`"), "{err}");
    assert!(err.contains("main.hcl:1:1"), "{err}");
    assert!(err.contains("stack = \"...\""), "{err}");
}

#[test]
fn an_endpoint_override_refuses_a_directory_name_stack() {
    let env = Env::new(100);
    let local_only = format!(
        "{}{}",
        provider("  endpoint = \"local\"\n"),
        cluster("train01")
    );
    let (_parent, dir) = infra_dir(&local_only);
    let valid = run_in(&env, &dir, &["validate"]);
    assert!(valid.status.success(), "{}", stderr(&valid));
    for args in [
        &["plan"][..],
        &["apply", "--auto-approve"],
        &["destroy", "--auto-approve"],
        &["list"],
        &["import", "train01"],
    ] {
        let output = run_in(&env, &dir, args);
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let err = stderr(&output);
        assert!(
            err.contains("the stack `infra` is only the directory's name"),
            "{args:?}: {err}"
        );
        assert!(err.contains("set `stack = \"...\"`"), "{args:?}: {err}");
    }
    assert!(
        env.emulator().requests().is_empty(),
        "nothing reaches the endpoint"
    );
}

#[test]
fn two_infra_directories_with_their_own_stacks_leave_each_other_alone() {
    let env = Env::new(100);
    let (_a_parent, a) = infra_dir(&format!(
        "{}{}",
        provider("  stack   = \"team-a\"\n"),
        cluster("traina")
    ));
    let (_b_parent, b) = infra_dir(&format!("{}{}", provider(""), cluster("trainb")));

    let first = run_in(&env, &a, &["apply", "--auto-approve"]);
    assert!(first.status.success(), "{}", stderr(&first));

    // Without a stack the second `infra` is refused before it reaches the API.
    env.emulator().clear_requests();
    let refused = run_in(&env, &b, &["apply", "--auto-approve"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("sets no `stack`"),
        "{}",
        stderr(&refused)
    );
    assert!(env.emulator().requests().is_empty());

    std::fs::write(
        b.join("main.hcl"),
        format!(
            "{}{}",
            provider("  stack   = \"team-b\"\n"),
            cluster("trainb")
        ),
    )
    .unwrap();
    let second = run_in(&env, &b, &["apply", "--auto-approve"]);
    assert!(second.status.success(), "{}", stderr(&second));
    assert!(
        env.mutations().iter().all(|r| r.method != "DELETE"),
        "the second stack deleted something: {:?}",
        env.mutations()
    );
    assert!(env.emulator().cluster(&cluster_name("traina")).is_some());

    let plan_a = run_in(&env, &a, &["plan", "--detailed-exitcode"]);
    assert_eq!(plan_a.status.code(), Some(0), "{}", stdout(&plan_a));
    assert!(
        stdout(&plan_a).contains("No changes."),
        "{}",
        stdout(&plan_a)
    );

    let destroy_b = run_in(&env, &b, &["destroy", "--auto-approve"]);
    assert!(destroy_b.status.success(), "{}", stderr(&destroy_b));
    assert!(env.emulator().cluster(&cluster_name("trainb")).is_none());
    assert!(env.emulator().cluster(&cluster_name("traina")).is_some());
}
