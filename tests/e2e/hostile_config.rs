//! Hostile configuration through the binary: inputs that used to panic (exit 101), hang or
//! silently drop a file end in exit 1 with `file:line:col`, and nothing reaches the API.

use crate::support::{ClusterSpec, Env, PROVIDER, apply_ok, stderr};

/// The binary failed cleanly (exit 1, not a panic) and said `needle` on stderr.
fn assert_clean_failure(output: &std::process::Output, needle: &str) {
    let err = stderr(output);
    assert_eq!(output.status.code(), Some(1), "{err:.3000}");
    assert!(err.contains(needle), "{err:.3000}");
    assert!(!err.contains("panicked"), "{err:.3000}");
}

#[test]
fn a_diagnostic_past_column_65535_fails_cleanly_in_validate_plan_and_fmt() {
    let env = Env::new(100);
    let padding = "x".repeat(70_000);
    env.write_config(&format!(
        "{PROVIDER}\nlocals {{\n  long = [\"{padding}\", local.missing]\n}}\n"
    ));
    for command in [&["validate"][..], &["plan"]] {
        assert_clean_failure(&env.run(command), "undefined local `local.missing`");
    }
    env.write_config(&format!(
        "{PROVIDER}\nlocals {{\n  long = \"{padding}\" = \n}}\n"
    ));
    assert_clean_failure(&env.run(&["fmt", "--check"]), "syntax error");
    assert!(env.mutations().is_empty());
}

#[test]
fn modulo_by_zero_from_hcl_and_variables_fails_cleanly() {
    let env = Env::new(100);
    env.write_config(&format!(
        "{PROVIDER}\nvariable \"v\" {{\n  type = list(number)\n  default = []\n}}\nlocals {{\n  n = length(var.v) % 0\n}}\n"
    ));
    assert_clean_failure(&env.run(&["validate"]), "modulo by zero");
    let output = env
        .cmd(&["validate", "--var", "v=[1 % 0]"])
        .output()
        .unwrap();
    assert_clean_failure(&output, "modulo by zero");
    let output = env
        .cmd(&["validate"])
        .env("CLUSTERFORM_VAR_v", "[1 / 0]")
        .output()
        .unwrap();
    assert_clean_failure(&output, "division by zero");
}

#[cfg(unix)]
#[test]
fn a_broken_hcl_symlink_stops_the_plan_instead_of_destroying_its_clusters() {
    let env = Env::new(0);
    apply_ok(&env, &[ClusterSpec::default()]);
    // The cluster's file is now a symlink whose target is gone; the provider stays.
    env.write_config(PROVIDER);
    std::os::unix::fs::symlink(env.path().join("gone.hcl"), env.path().join("clusters.hcl"))
        .unwrap();
    let before = env.mutations().len();
    let output = env.run(&["apply", "--auto-approve"]);
    assert_clean_failure(&output, "clusters.hcl");
    assert_eq!(env.mutations().len(), before, "nothing was deleted");
}
