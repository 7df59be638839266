//! Hostile configuration through the binary: inputs that used to panic (exit 101), hang or
//! silently drop a file end in exit 1 with `file:line:col`, and nothing reaches the API.

use crate::support::{ClusterSpec, Env, PROVIDER, apply_ok};

#[test]
fn a_diagnostic_past_column_65535_fails_cleanly_in_validate_plan_and_fmt() {
    let env = Env::new(100);
    let padding = "x".repeat(70_000);
    let mut transcripts = String::new();
    env.write_config(&format!(
        "{PROVIDER}\nlocals {{\n  long = [\"{padding}\", local.missing]\n}}\n"
    ));
    let padding_elided = |text: &str| text.replace(&padding, "x…");
    for command in [&["validate"][..], &["plan"]] {
        transcripts.push_str(&format!(
            "$ clusterform {}\n{}",
            command.join(" "),
            env.transcript(command).normalized_with(padding_elided)
        ));
    }
    env.write_config(&format!(
        "{PROVIDER}\nlocals {{\n  long = \"{padding}\" = \n}}\n"
    ));
    transcripts.push_str(&format!(
        "$ clusterform fmt --check\n{}",
        env.transcript(&["fmt", "--check"])
            .normalized_with(padding_elided)
    ));
    insta::assert_snapshot!(transcripts, @r#"
    $ clusterform validate
    [stderr]
    Error: undefined local `local.missing`
      at main.hcl:9:70015
      hint: define it in a `locals { missing = ... }` block
    [exit status: 1]
    $ clusterform plan
    [stderr]
    Error: undefined local `local.missing`
      at main.hcl:9:70015
      hint: define it in a `locals { missing = ... }` block
    [exit status: 1]
    $ clusterform fmt --check
    [stderr]
    Error: syntax error: expected newline or eof
      at ./main.hcl:9:70013
      hint: near `…xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" =`
    [exit status: 1]
    "#);
    assert!(env.mutations().is_empty());
}

#[test]
fn modulo_by_zero_from_hcl_and_variables_fails_cleanly() {
    let env = Env::new(100);
    env.write_config(&format!(
        "{PROVIDER}\nvariable \"v\" {{\n  type = list(number)\n  default = []\n}}\nlocals {{\n  n = length(var.v) % 0\n}}\n"
    ));
    insta::assert_snapshot!(env.transcript(&["validate"]), @"
    [stderr]
    Error: modulo by zero: `0 % 0`
        ╭─[main.hcl:13:7]
     12 │ locals {
     13 │   n = length(var.v) % 0
        ·       ─────────────────
     14 │ }
        ╰────
    [exit status: 1]
    ");
    insta::assert_snapshot!(env.transcript(&["validate", "--var", "v=[1 % 0]"]), @"
    [stderr]
    Error: invalid value for variable `v` from --var v=...: modulo by zero: `1 % 0`
      at <command line>
      hint: the variable's type is list(number)
    [exit status: 1]
    ");
    let output = env
        .cmd(&["validate"])
        .env("CLUSTERFORM_VAR_v", "[1 / 0]")
        .output()
        .unwrap();
    insta::assert_snapshot!(env.transcript_of(&output), @"
    [stderr]
    Error: invalid value for variable `v` from CLUSTERFORM_VAR_v: division by zero: `1 / 0`
      at <environment>
      hint: the variable's type is list(number)
    [exit status: 1]
    ");
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
    insta::assert_snapshot!(env.transcript_of(&output), @"
    [stderr]
    Error: cannot read file: it is a symbolic link to `[DIR]/gone.hcl`, which does not exist
      at clusters.hcl
      hint: remove the link or restore the file it points to
    [exit status: 1]
    ");
    assert_eq!(env.mutations().len(), before, "nothing was deleted");
}
