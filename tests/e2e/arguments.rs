//! The command line's arguments: every command takes the configuration directory as the
//! positional `DIR` or `--chdir DIR` (both is a usage error), Terraform's single-dash spellings
//! work, `emulator` and `completions` list no configuration flags, and the emulator listens on
//! a host name.

use std::process::Output;

use serde_json::Value;

use crate::support::{ClusterSpec, Env, assert_succeeded, config, stderr, stdout};

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

#[track_caller]
fn assert_usage_error(output: &Output, expected: &str) {
    assert_eq!(output.status.code(), Some(1), "{}", stderr(output));
    assert!(stdout(output).is_empty(), "{}", stdout(output));
    assert!(stderr(output).contains(expected), "{}", stderr(output));
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
    for args in [
        vec!["plan", dir, "--chdir", dir],
        vec!["--chdir", dir, "validate", dir],
        vec!["apply", "--chdir", dir, dir],
        vec!["import", "train01", dir, "--chdir", dir],
        vec!["fmt", "--chdir", dir, "main.hcl"],
    ] {
        let output = elsewhere(&env, &args);
        assert_usage_error(&output, "not both");
    }
    assert!(env.mutations().is_empty());
}

#[test]
fn import_takes_the_directory_like_every_command_and_has_no_dir_flag() {
    let env = Env::new(50);
    env.write_config(&config(&[ClusterSpec::default()]));
    let dir = env.path().to_str().unwrap();
    let output = elsewhere(&env, &["import", "train01", "--dir", dir]);
    assert_usage_error(&output, "--dir");
    // The directory is found (its provider names the project): the cluster is not.
    let output = elsewhere(&env, &["import", "train01", dir]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("cluster projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01 was not found"),
        "{}",
        stderr(&output)
    );
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

    let output = env.run(&[
        "apply",
        "-auto-approve",
        "-parallelism=1",
        "-var",
        "team=ml",
    ]);
    assert_succeeded(&output);
    assert!(
        stderr(&output).contains("1 added") || stdout(&output).contains("1 added"),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );

    let output = env.run(&[
        "plan",
        "-var",
        "team=ml",
        "-replace=train01",
        "-detailed-exitcode",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("1 to replace"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn single_dash_names_that_are_no_long_option_stay_errors() {
    let env = Env::new(50);
    let output = env.run(&["plan", "-bogus"]);
    assert_usage_error(&output, "unexpected argument");
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
    let output = env.run(&["--chdir", ".", "completions", "bash"]);
    assert_usage_error(&output, "--chdir does nothing");
    let output = env.run(&["completions", "bash", "--endpoint", "http://127.0.0.1:1"]);
    assert_usage_error(&output, "--endpoint");
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
    assert_usage_error(&output, "--allow-remote");
}
