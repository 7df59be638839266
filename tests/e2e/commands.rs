//! The smaller commands: `fmt`, `list`, `completions`, `emulator`, and the planning flags
//! `--target` and `--replace`.

use crate::support::{
    ClusterSpec, Env, apply_ok, config, created_attributes_elided, stderr, stdout, two_clusters,
};

#[test]
fn fmt_check_reports_and_fmt_rewrites() {
    let env = Env::new(100);
    env.write_config(
        "provider \"google\" {\nproject=\"my-proj\"\n    region = \"us-central1\"\n}\n",
    );
    insta::assert_snapshot!(env.transcript(&["fmt", "--check", "--diff"]), @r#"
    --- ./main.hcl
    +++ ./main.hcl
    @@ -1,4 +1,4 @@
     provider "google" {
    -project="my-proj"
    -    region = "us-central1"
    +  project = "my-proj"
    +  region  = "us-central1"
     }
    [stderr]
    Error: 1 file(s) are not formatted: ./main.hcl
      hint: run `clusterform fmt` to rewrite them
    [exit status: 1]
    "#);

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
    insta::assert_snapshot!(env.transcript(&["list"]), @r#"
    PROJECT  REGION       ID       STATE    HEALTH  POOLS (min-max(nodes))   ACCELERATORS  STACK     UPDATED
    my-proj  us-central1  train01  RUNNING  ok      login:1-1(1) cpu:0-4(0)  -             research  [TIME]

    Fleet: 1 cluster; GPUs running: none; idle GPU-hours: 0.0
    "#);
}

#[test]
fn target_narrows_the_plan_and_replace_forces_one() {
    let env = Env::new(100);
    env.write_config(&config(&two_clusters()));
    insta::assert_snapshot!(env.transcript(&["apply", "--auto-approve", "--target", "train02"]).normalized_with(created_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train02 will be created
      + cluster "train02" { … }

    Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
    [stderr]
    Warning: targeting is in effect: this plan considers only the --target clusters, so it may not show every change the configuration asks for (nor every deletion). Use --target to recover from mistakes or errors, not as part of a routine workflow.
    [HH:MM:SS] train02: creating… [Ns]
    [HH:MM:SS] train02: create request accepted [Ns]
    [HH:MM:SS] train02: create done [Ns]
    [HH:MM:SS] train02: created [Ns]
    Apply complete! Resources: 1 added, 0 changed, 0 replaced, 0 destroyed.
    "#);
    let creates: Vec<_> = env.mutations().into_iter().map(|r| r.query).collect();
    assert_eq!(creates.len(), 1);
    assert!(creates[0].contains("train02"), "{creates:?}");

    apply_ok(&env, &two_clusters());
    env.emulator().clear_requests();
    insta::assert_snapshot!(env.transcript(&["apply", "--auto-approve", "--replace", "train01"]), @r#"
    clusterform will perform the following actions:

      # train01 will be replaced, as requested
    -/+ cluster "train01" {
            # (2 unchanged attributes hidden)
            # (4 unchanged blocks hidden)
        }
        impact: replaces cluster
        # the live cluster is deleted first: its machines are not held for the new one, so if the create finds no machines, train01 is gone
        # no Slurm jobs active now

    Plan: 0 to add, 0 to change, 1 to replace, 0 to destroy.
    [stderr]
    [HH:MM:SS] train01: replacing… [Ns]
    [HH:MM:SS] train01: delete request accepted [Ns]
    [HH:MM:SS] train01: delete done [Ns]
    [HH:MM:SS] train01: create request accepted [Ns]
    [HH:MM:SS] train01: create done [Ns]
    [HH:MM:SS] train01: replaced [Ns]
    Apply complete! Resources: 0 added, 0 changed, 1 replaced, 0 destroyed.
    "#);
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
    insta::assert_snapshot!(env.transcript(&["emulator", "--listen", "0.0.0.0:0"]), @"
    [stderr]
    Error: refusing to listen on 0.0.0.0:0: the emulator accepts any token; use a loopback address or --allow-remote
    [exit status: 1]
    ");
}

/// `fmt --check` of a directory without `*.hcl` checks nothing, so it fails, naming the
/// directory; plain `fmt` there has nothing to do.
#[test]
fn fmt_check_of_a_directory_without_hcl_fails() {
    let env = Env::new(100);
    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path().to_str().unwrap();
    let output = env.run(&["fmt", "--check", dir]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(
        stderr(&output).replace(dir, "[EMPTY]"),
        "Error: [EMPTY] holds no *.hcl file: fmt --check has nothing to check\n  hint: name the configuration directory, or the files to check\n"
    );
    assert!(env.run(&["fmt", dir]).status.success());
}

#[test]
fn usage_errors_exit_1_and_help_exits_0() {
    let env = Env::new(100);
    let transcripts: String = [
        &["plan", "--no-such-flag"][..],
        &["plan", "--update-mode", "SOMETIMES"],
        &["frobnicate"],
    ]
    .into_iter()
    .map(|args| format!("$ {}\n{}", args.join(" "), env.transcript(args)))
    .collect();
    insta::assert_snapshot!(transcripts, @"
    $ plan --no-such-flag
    [stderr]
    Error: unexpected argument '--no-such-flag' found
      hint: to pass '--no-such-flag' as a value, use '-- --no-such-flag'
      Usage: clusterform plan [OPTIONS] [DIR]
      For more information, try '--help'.
    [exit status: 1]
    $ plan --update-mode SOMETIMES
    [stderr]
    Error: invalid value 'SOMETIMES' for '--update-mode <UPDATE_MODE>'
      [possible values: USER_ONLY, USER_AND_SERVICE, UPDATE_MODE_UNSPECIFIED]
      For more information, try '--help'.
    [exit status: 1]
    $ frobnicate
    [stderr]
    Error: unrecognized subcommand 'frobnicate'
      Usage: clusterform [OPTIONS] <COMMAND>
      For more information, try '--help'.
    [exit status: 1]
    ");
    let help = env.run(&["plan", "--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(stdout(&help).contains("Usage"), "{}", stdout(&help));
}

/// Terraform's `-auto-approve` given to `plan` names the commands that take it.
#[test]
fn a_flag_of_apply_given_to_plan_names_the_commands_that_take_it() {
    let env = Env::new(100);
    insta::assert_snapshot!(env.transcript(&["plan", "-auto-approve"]), @"
    [stderr]
    Error: `--auto-approve` belongs to apply, destroy and force-unlock, not to plan
    [exit status: 1]
    ");
}
