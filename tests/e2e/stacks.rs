//! Stacks that cannot collide: a real endpoint needs an explicit `stack`, a directory-name stack
//! stays with the built-in emulator, and two directories of the same name own only their own
//! clusters.

use std::path::{Path, PathBuf};
use std::process::Output;

use tempfile::TempDir;

use crate::support::{ClusterSpec, Env, cluster_hcl, cluster_name, stderr};

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
    insta::assert_snapshot!(env.transcript(&["validate"]), @r#"
    [stderr]
    Error: the provider block sets no `stack`; it is required unless `endpoint = "local"`
       ╭─[main.hcl:1:1]
     1 │ provider "google" {
       · ─────────────────
     2 │   project = "my-proj"
       ╰────
      hint: add `stack = "..."` to `provider "google" { ... }`, e.g. `stack = "ml-prod"`. The stack names the owner of these clusters: clusterform labels every cluster it creates `clusterform-stack = <stack>` and destroys the clusters of its stack that the configuration no longer declares, so the name must be unique per configuration (at most 63 lowercase letters, digits, `_` and `-`). Only `endpoint = "local"` defaults it to the directory name.
    [exit status: 1]
    "#);
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
    let refusal = |args: &[&str]| env.transcript_of(&run_in(&env, &dir, args)).to_string();
    let plan = refusal(&["plan"]);
    for args in [
        &["apply", "--auto-approve"][..],
        &["destroy", "--auto-approve"],
        &["list"],
        &["import", "train01"],
    ] {
        assert_eq!(refusal(args), plan, "{args:?} is refused as plan is");
    }
    insta::assert_snapshot!(plan, @r#"
    [stderr]
    Error: the stack `infra` is only the directory's name, which may not own clusters at [ENDPOINT]
      hint: set `stack = "..."` in the provider block, a name unique to this configuration (it labels the clusters it owns; two directories called `infra` must not share one), or drop --endpoint / CLUSTERFORM_ENDPOINT to use the built-in emulator
    [exit status: 1]
    "#);
    assert!(
        env.emulator().requests().is_empty(),
        "nothing reaches the endpoint"
    );
    let keyed = run_in(
        &env,
        &dir,
        &[
            "plan",
            "--endpoint",
            "http://127.0.0.1:9/v1?key=endpoint-key-Zq8",
        ],
    );
    let said = stderr(&keyed);
    assert!(
        !said.contains("endpoint-key-Zq8") && said.contains("http://127.0.0.1:9/v1?***"),
        "the refusal shows the endpoint without its query: {said}"
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
    insta::assert_snapshot!(env.transcript_of(&refused), @r#"
    [stderr]
    Error: the provider block sets no `stack`; it is required unless `endpoint = "local"`
       ╭─[main.hcl:1:1]
     1 │ provider "google" {
       · ─────────────────
     2 │   project = "my-proj"
       ╰────
      hint: add `stack = "..."` to `provider "google" { ... }`, e.g. `stack = "ml-prod"`. The stack names the owner of these clusters: clusterform labels every cluster it creates `clusterform-stack = <stack>` and destroys the clusters of its stack that the configuration no longer declares, so the name must be unique per configuration (at most 63 lowercase letters, digits, `_` and `-`). Only `endpoint = "local"` defaults it to the directory name.
    [exit status: 1]
    "#);
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
    insta::assert_snapshot!(env.transcript_of(&plan_a), @"No changes. Your clusters match the configuration.");

    let destroy_b = run_in(&env, &b, &["destroy", "--auto-approve"]);
    assert!(destroy_b.status.success(), "{}", stderr(&destroy_b));
    assert!(env.emulator().cluster(&cluster_name("trainb")).is_none());
    assert!(env.emulator().cluster(&cluster_name("traina")).is_some());
}
