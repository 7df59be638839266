//! The command line's arguments: every command takes the configuration directory as the
//! positional `DIR` or `--chdir DIR` (both is a usage error), Terraform's single-dash spellings
//! work, `emulator` and `completions` list no configuration flags, and the emulator listens on
//! a host name.

use std::process::Output;

use serde_json::Value;

use crate::support::{
    ClusterSpec, Env, assert_succeeded, config, created_attributes_elided, stderr, stdout,
};

/// An empty working directory, so that only the directory named on the command line can be
/// the configuration.
fn elsewhere(env: &Env, args: &[&str]) -> Output {
    let cwd = tempfile::tempdir().unwrap();
    env.cmd(args).current_dir(cwd.path()).output().unwrap()
}

/// A configuration whose cluster's `team` label comes from a variable.
fn config_with_variable(env: &Env) {
    let spec = ClusterSpec {
        labels: "{ team = var.team }",
        ..ClusterSpec::default()
    };
    env.write_config(&format!(
        "variable \"team\" {{\n  type = string\n}}\n{}",
        config(&[spec])
    ));
}

#[test]
fn every_command_takes_the_directory_as_dir_or_chdir() {
    let env = Env::new(50);
    env.write_config(&config(&[ClusterSpec::default()]));
    let dir = env.path().to_str().unwrap();
    for args in [
        vec!["validate", dir],
        vec!["validate", "--chdir", dir],
        vec!["--chdir", dir, "validate"],
        vec!["plan", dir],
        vec!["plan", "--chdir", dir],
        vec!["list", "--chdir", dir],
        vec!["status", dir],
        vec!["--chdir", dir, "status"],
        vec!["fmt", "--chdir", dir],
        vec!["destroy", "--auto-approve", "--chdir", dir],
    ] {
        let output = elsewhere(&env, &args);
        assert_succeeded(&output);
    }
}

#[test]
fn a_directory_given_twice_is_a_usage_error() {
    let env = Env::new(50);
    env.write_config(&config(&[ClusterSpec::default()]));
    let dir = env.path().to_str().unwrap();
    let mut transcripts = String::new();
    for args in [
        vec!["plan", dir, "--chdir", dir],
        vec!["--chdir", dir, "validate", dir],
        vec!["apply", "--chdir", dir, dir],
        vec!["import", "train01", dir, "--chdir", dir],
        vec!["fmt", "--chdir", dir, "main.hcl"],
    ] {
        transcripts.push_str(&format!(
            "$ clusterform {}\n{}",
            args.join(" ").replace(dir, "[DIR]"),
            env.transcript_of(&elsewhere(&env, &args))
        ));
    }
    insta::assert_snapshot!(transcripts, @"
    $ clusterform plan [DIR] --chdir [DIR]
    [stderr]
    Error: the configuration directory is given twice (--chdir [DIR] and DIR [DIR]): give DIR or --chdir DIR, not both
    [exit status: 1]
    $ clusterform --chdir [DIR] validate [DIR]
    [stderr]
    Error: the configuration directory is given twice (--chdir [DIR] and DIR [DIR]): give DIR or --chdir DIR, not both
    [exit status: 1]
    $ clusterform apply --chdir [DIR] [DIR]
    [stderr]
    Error: the configuration directory is given twice (--chdir [DIR] and DIR [DIR]): give DIR or --chdir DIR, not both
    [exit status: 1]
    $ clusterform import train01 [DIR] --chdir [DIR]
    [stderr]
    Error: the configuration directory is given twice (--chdir [DIR] and DIR [DIR]): give DIR or --chdir DIR, not both
    [exit status: 1]
    $ clusterform fmt --chdir [DIR] main.hcl
    [stderr]
    Error: fmt takes PATHS or --chdir DIR, not both
    [exit status: 1]
    ");
    assert!(env.mutations().is_empty());
}

#[test]
fn an_endpoint_that_is_neither_local_nor_a_url_is_a_usage_error_that_never_shows_it() {
    let env = Env::new(50);
    env.write_config(&config(&[ClusterSpec::default()]));
    let dir = env.path().to_str().unwrap();
    let mut transcripts = String::new();
    for endpoint in ["lokal", "https://me:secret@"] {
        let args = ["plan", dir, "--endpoint", endpoint];
        let transcript = env.transcript_of(&elsewhere(&env, &args)).to_string();
        assert!(!transcript.contains("secret"), "{transcript}");
        transcripts.push_str(&transcript);
    }
    insta::assert_snapshot!(transcripts, @r#"
    [stderr]
    Error: the endpoint (--endpoint or the CLUSTERFORM_ENDPOINT variable) is neither "local" nor an http(s) URL; use "local" for the built-in emulator, or a base URL
    [exit status: 1]
    [stderr]
    Error: the endpoint (--endpoint or the CLUSTERFORM_ENDPOINT variable) is not a valid URL: empty host
    [exit status: 1]
    "#);
    assert!(env.emulator().requests().is_empty());
}

#[test]
fn import_takes_the_directory_like_every_command_and_has_no_dir_flag() {
    let env = Env::new(50);
    env.write_config(&config(&[ClusterSpec::default()]));
    let dir = env.path().to_str().unwrap();
    let output = elsewhere(&env, &["import", "train01", "--dir", dir]);
    insta::assert_snapshot!(env.transcript_of(&output), @"
    [stderr]
    Error: unexpected argument '--dir' found
      hint: to pass '--dir' as a value, use '-- --dir'
      Usage: clusterform import <ID> [DIR]
      For more information, try '--help'.
    [exit status: 1]
    ");
    // The directory is found (its provider names the project): the cluster is not.
    let output = elsewhere(&env, &["import", "train01", dir]);
    insta::assert_snapshot!(env.transcript_of(&output), @"
    [stderr]
    Error: cluster train01 was not found in any of the 12 locations looked in
      hint: check the ID; a cluster in a project or region the configuration does not name is imported with --project P --region R
    [exit status: 1]
    ");
}

#[test]
fn terraform_single_dash_spellings_plan_and_apply() {
    let env = Env::new(50);
    config_with_variable(&env);
    let dir = env.path().to_str().unwrap();
    let var_file = env.path().join("team.vars");
    std::fs::write(&var_file, "team = \"ml\"\n").unwrap();
    let output = elsewhere(
        &env,
        &[
            &format!("-chdir={dir}"),
            "plan",
            &format!("-var-file={}", var_file.display()),
            "-json",
            "-detailed-exitcode",
            "-target=train01",
            "-no-color",
        ],
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let plan: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert!(plan.is_object(), "{plan}");
    for out in [&["-out=first.json"][..], &["-out", "second.json"]] {
        let mut args = vec!["plan", "-var", "team=ml"];
        args.extend_from_slice(out);
        assert_succeeded(&env.run(&args));
    }
    assert!(env.path().join("first.json").is_file());
    assert!(env.path().join("second.json").is_file());

    let apply = env.transcript(&[
        "apply",
        "-auto-approve",
        "-parallelism=1",
        "-var",
        "team=ml",
    ]);
    insta::assert_snapshot!(apply.normalized_with(created_attributes_elided), @r#"
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

    let replace = env.transcript(&[
        "plan",
        "-var",
        "team=ml",
        "-replace=train01",
        "-detailed-exitcode",
    ]);
    insta::assert_snapshot!(replace, @r#"
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
    [exit status: 2]
    "#);
}

#[test]
fn single_dash_names_that_are_no_long_option_stay_errors() {
    let env = Env::new(50);
    insta::assert_snapshot!(env.transcript(&["plan", "-bogus"]), @"
    [stderr]
    Error: unexpected argument '-b' found
      hint: to pass '-b' as a value, use '-- -b'
      Usage: clusterform plan [OPTIONS] [DIR]
      For more information, try '--help'.
    [exit status: 1]
    ");
}

#[test]
fn emulator_and_completions_list_no_configuration_flags() {
    let env = Env::new(50);
    for command in [&["emulator", "--help"][..], &["completions", "--help"]] {
        let output = env.run(command);
        assert_succeeded(&output);
        let help = stdout(&output);
        for flag in ["--chdir", "--endpoint", "--var"] {
            assert!(!help.contains(flag), "{command:?} lists {flag}:\n{help}");
        }
    }
    insta::assert_snapshot!(env.transcript(&["--chdir", ".", "completions", "bash"]), @"
    [stderr]
    Error: `completions` reads no configuration: --chdir does nothing for it
    [exit status: 1]
    ");
    insta::assert_snapshot!(
        env.transcript(&["completions", "bash", "--endpoint", "http://127.0.0.1:1"]),
        @"
    [stderr]
    Error: `--endpoint` belongs to plan, apply, destroy, status, list and import, not to completions
    [exit status: 1]
    "
    );
}

#[test]
#[cfg(unix)]
fn the_emulator_listens_on_a_host_name_and_stays_on_loopback() {
    use std::process::Command;

    let emulator = crate::emulator_command::ServedEmulator::start("localhost", &[]);
    assert!(emulator.interrupt().success());

    let output = Command::new(env!("CARGO_BIN_EXE_clusterform"))
        .args(["emulator", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stdout(&output).is_empty(), "{}", stdout(&output));
    insta::assert_snapshot!(stderr(&output), @"Error: refusing to listen on 0.0.0.0:0: the emulator accepts any token; use a loopback address or --allow-remote");
}

/// `status train01`, as `kubectl get` is typed, where no directory `train01` is: the error
/// names `--target`; an existing directory of that name is still the configuration.
#[test]
fn status_of_a_cluster_id_that_is_no_directory_points_to_target() {
    let env = Env::new(50);
    env.write_config(&config(&[ClusterSpec::default()]));
    let output = env.run(&["status", "train01"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    insta::assert_snapshot!(stderr(&output), @"Error: status takes a configuration directory, and there is no directory `train01`; to show the cluster train01, run `clusterform status --target train01`");
    let missing = env.run(&["status", "no/such/dir"]);
    assert!(
        stderr(&missing).contains("cannot read the configuration directory"),
        "a path is still read as a directory: {}",
        stderr(&missing)
    );
}
