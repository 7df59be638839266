//! The output contract: stdout carries only what was asked for (a plan, a JSON document, HCL),
//! so it can be parsed or redirected into a file; progress, status, warnings and errors go to
//! stderr, `--quiet` silences them, and every error has one style, printed once.

use std::time::Duration;

use serde_json::json;

use crate::support::{
    ClusterSpec, Env, PROVIDER, cluster_name, config, created_attributes_elided, final_screen,
    on_terminal, stderr, stdout, terminal_output, two_clusters,
};

#[test]
fn plan_json_with_out_prints_exactly_one_json_document() {
    let env = Env::new(100);
    env.write_config(&config(&[ClusterSpec::default()]));
    let output = env.run(&["plan", "--json", "--out", "plan.json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let document: serde_json::Value =
        serde_json::from_str(&stdout(&output)).unwrap_or_else(|err| {
            panic!(
                "stdout is not one JSON document ({err}):\n{}",
                stdout(&output)
            )
        });
    assert!(document.is_object(), "{document}");
    insta::assert_snapshot!(stderr(&output), @"

    Saved the plan to plan.json. To perform exactly these actions, run:
      clusterform apply plan.json
    ");
}

#[test]
fn imported_hcl_redirected_to_a_file_is_a_configuration() {
    let env = Env::new(100);
    env.emulator().insert_cluster(
        &cluster_name("legacy"),
        json!({
            "displayName": "Made by hand",
            "network": {"network": "projects/my-proj/global/networks/default"},
            "nodePools": [
                {"id": "login", "machineSpec": {"machineType": "n2-standard-8"},
                 "scalingSpec": {"minNodeCount": "1", "maxNodeCount": "1"}, "zone": "us-central1-a"}
            ],
            "orchestratorSpec": {"slurmSpec": {
                "homeDirectoryStorage": "projects/my-proj/locations/us-central1-a/instances/home",
                "loginNodePoolId": "login"}}
        }),
    );
    env.write_config(PROVIDER);
    let output = env.run(&["import", "legacy"]);
    assert!(output.status.success(), "{}", stderr(&output));
    insta::assert_snapshot!(stderr(&output), @"
    Found cluster legacy in my-proj/us-central1 (looked in 12 locations).
    Adding label clusterform-stack=research to legacy…
    Left out the node_image of login (slurm-24-11-ubuntu-2204): the service fills it in, and a pool without it follows the default image; pass --keep-node-image to keep the pools on these images.
    ");
    std::fs::write(env.path().join("legacy.hcl"), &output.stdout).unwrap();
    let validate = env.run(&["validate"]);
    assert!(
        validate.status.success(),
        "the redirected HCL does not load:\n{}\n{}",
        stdout(&output),
        stderr(&validate)
    );
}

#[test]
fn apply_progress_and_summary_stay_off_stdout() {
    let env = Env::new(100);
    env.write_config(&config(&[ClusterSpec::default()]));
    let output = env.run(&["apply", "--auto-approve"]);
    let out = stdout(&output);
    for commentary in ["train01: creating…", "train01: created", "Apply complete!"] {
        assert!(
            !out.contains(commentary),
            "{commentary:?} on stdout:\n{out}"
        );
    }
    insta::assert_snapshot!(env.transcript_of(&output).normalized_with(created_attributes_elided), @r#"
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
}

#[test]
fn an_empty_answer_is_still_the_answer() {
    let env = Env::new(100);
    env.write_config(PROVIDER);
    let list = env.run(&["list"]);
    assert!(list.status.success(), "{}", stderr(&list));
    assert_eq!(stdout(&list), "No clusters.\n");
    insta::assert_snapshot!(env.transcript(&["plan"]), @"No changes. Your clusters match the configuration.");
}

#[test]
fn quiet_keeps_stdout_and_silences_stderr() {
    let (loud, quiet) = (Env::new(100), Env::new(100));
    let clusters = two_clusters();
    for env in [&loud, &quiet] {
        env.write_config(&config(&clusters));
    }
    // `--target` adds a warning: it is silenced too.
    let plan = loud.run(&["plan", "--target", "train01"]);
    let quiet_plan = quiet.run(&["plan", "-q", "--target", "train01"]);
    assert!(quiet_plan.status.success(), "{}", stderr(&quiet_plan));
    insta::assert_snapshot!(loud.transcript_of(&plan).normalized_with(created_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train01 will be created
      + cluster "train01" { … }

    Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
    [stderr]
    Warning: targeting is in effect: this plan considers only the --target clusters, so it may not show every change the configuration asks for (nor every deletion). Use --target to recover from mistakes or errors, not as part of a routine workflow.
    "#);
    assert_eq!(stdout(&quiet_plan), stdout(&plan));
    assert_eq!(stderr(&quiet_plan), "");

    // An approved apply asks nobody about its plan: quiet, it prints nothing at all.
    let apply = loud.run(&["apply", "--auto-approve"]);
    let quiet_apply = quiet.run(&["apply", "--auto-approve", "--quiet"]);
    assert!(quiet_apply.status.success(), "{}", stderr(&quiet_apply));
    assert!(!stderr(&apply).is_empty() && !stdout(&apply).is_empty());
    assert_eq!(stdout(&quiet_apply), "");
    assert_eq!(stderr(&quiet_apply), "");
    assert_eq!(
        quiet
            .emulator()
            .cluster(&cluster_name("train01"))
            .map(|_| ()),
        Some(())
    );

    // One that asks shows the plan it asks about, quiet or not.
    quiet.write_config(&config(&clusters[..1]));
    let unapproved = quiet.run(&["apply", "--quiet"]);
    assert!(
        stdout(&unapproved).contains("will be destroyed"),
        "{}",
        stdout(&unapproved)
    );
}

#[test]
fn a_usage_error_is_an_error_like_any_other() {
    let env = Env::new(100);
    let output = env.run(&["plan", "--bogus"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout(&output), "");
    insta::assert_snapshot!(stderr(&output), @r"
    Error: unexpected argument '--bogus' found
      hint: to pass '--bogus' as a value, use '-- --bogus'
      Usage: clusterform plan [OPTIONS] [DIR]
      For more information, try '--help'.
    ");
}

#[test]
fn an_api_error_is_printed_once_with_its_hint() {
    let env = Env::new(100);
    env.write_config(&config(&[ClusterSpec::default()]));
    let output = env
        .cmd(&["plan"])
        .env("CLUSTERFORM_ACCESS_TOKEN", "expired")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout(&output), "");
    let base_url = env.server.base_url();
    let err = stderr(&output).replace(base_url.trim_end_matches('/'), "ENDPOINT");
    insta::assert_snapshot!(err, @r"
    Error: GET ENDPOINT/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters?pageSize=100 failed: UNAUTHENTICATED (401): Request had invalid authentication credentials: the bearer token is not the expected one. Expected an OAuth 2 access token.
      hint: the access token was rejected: run `gcloud auth application-default login` or refresh CLUSTERFORM_ACCESS_TOKEN
    ");
}

#[test]
fn diagnostics_name_files_from_the_working_directory() {
    let env = Env::new(100);
    let dir = env.path().join("infra");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(
        dir.join("main.hcl"),
        format!("{PROVIDER}\nvariable \"zone\" {{\n  bogus = 1\n}}\n"),
    )
    .unwrap();
    let output = env.run(&["validate", "infra"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout(&output), "");
    insta::assert_snapshot!(stderr(&output), @r#"
    Error: unknown argument `bogus` in a variable block
        ╭─[infra/main.hcl:9:3]
      8 │ variable "zone" {
      9 │   bogus = 1
        ·   ─────
     10 │ }
        ╰────
      hint: a variable accepts type, default, description, sensitive
    "#);
    let json = env.run(&["validate", "--json", "infra"]);
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        report["diagnostics"][0]["file"], "infra/main.hcl",
        "{report}"
    );
}

#[test]
fn verbose_logs_have_no_colour_codes_in_a_pipe() {
    let env = Env::new(100);
    env.write_config(&config(&[ClusterSpec::default()]));
    let output = env
        .cmd(&["plan", "-vv"])
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(err.contains("DEBUG"), "{err}");
    assert!(!err.contains('\u{1b}'), "{err}");
}

/// Logs on a terminal are printed above the progress bars, like every other stderr line: none
/// is glued to a bar's line, and no bar is left behind on the screen when the run ends. (`-vv`
/// logs every request the client sends, so logs are written while the bars are drawn.)
#[cfg(unix)]
#[test]
fn verbose_logs_on_a_terminal_leave_no_stale_progress_line() {
    let env = Env::new(1_000);
    env.write_config(&config(&two_clusters()));
    let mut session = on_terminal(&env, "apply --auto-approve -vv");
    let output = terminal_output(&mut session);
    let screen = final_screen(&output);
    let shown = screen.join("\n");
    assert!(
        output.matches(" DEBUG ").count() > 10,
        "too little was logged to test: {output:?}"
    );
    assert!(
        !screen.iter().any(|line| line.contains("creating…")),
        "a progress line was left behind:\n{shown}\n--- raw ---\n{output:?}"
    );
    assert_eq!(
        screen
            .iter()
            .filter(|line| line.contains(" DEBUG "))
            .count(),
        output.matches(" DEBUG ").count(),
        "a log line was erased:\n{shown}"
    );
}

#[test]
fn verbose_logs_each_request_with_its_status_and_time_and_never_the_token() {
    let env = Env::new(100);
    env.write_config(&config(&[ClusterSpec::default()]));
    let output = env.run(&["plan", "-v"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let err = stderr(&output);
    let answered = err
        .lines()
        .find(|line| {
            line.contains("answered")
                && line.contains("method=GET")
                && line.contains("locations/us-central1/modelDevelopmentClusters")
        })
        .unwrap_or_else(|| panic!("no List logged: {err}"));
    assert!(
        answered.contains("status=200") && answered.contains("millis="),
        "{answered}"
    );
    assert!(
        !err.contains(crate::support::TOKEN),
        "the token is never logged"
    );
    assert!(!err.contains("answer body"), "-v logs no bodies: {err}");
    let very = env.run(&["plan", "-vv"]);
    assert!(
        stderr(&very).contains("answer body"),
        "-vv logs the bodies: {}",
        stderr(&very)
    );
}

/// On a terminal, the List phase says how many locations it reads and how many are done, and
/// leaves no line behind once they are.
#[cfg(unix)]
#[test]
fn a_terminal_shows_how_many_locations_are_read_and_keeps_no_line_of_it() {
    let env = Env::with_options(clusterform_emulator::EmulatorOptions {
        latency: Duration::from_millis(400),
        required_token: Some(crate::support::TOKEN.to_owned()),
        ..clusterform_emulator::EmulatorOptions::default()
    });
    env.write_config(&config(&[ClusterSpec::default()]));
    // In colour: `--no-color` and NO_COLOR draw no live line.
    let command = format!(
        "env -u NO_COLOR CLUSTERFORM_ENDPOINT={} CLUSTERFORM_ACCESS_TOKEN={} {} plan {}",
        env.server.base_url(),
        crate::support::TOKEN,
        env!("CARGO_BIN_EXE_clusterform"),
        env.path().display()
    );
    let mut session = rexpect::spawn(&command, Some(60_000)).unwrap();
    let output = terminal_output(&mut session);
    let total = clusterform_model::SERVICE_REGIONS.len();
    assert!(
        output.contains(&format!("reading {total} locations…")),
        "{output:?}"
    );
    let screen = final_screen(&output);
    assert!(
        !screen.iter().any(|line| line.contains("reading")),
        "the line is gone once the Lists end: {}",
        screen.join("\n")
    );
}

/// A hint that names a command gives it the directory the user named, so that it runs from
/// where the user is.
#[test]
fn a_hint_names_the_directory_the_user_gave() {
    let env = Env::new(0);
    let dir = env.path().join("ex2/quickstart");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("main.hcl"), "locals {\n  a=1\n}\n").unwrap();
    let check = env.run(&["fmt", "--check", "ex2/quickstart"]);
    insta::assert_snapshot!(stderr(&check), @r"
    Error: 1 file(s) are not formatted: ex2/quickstart/main.hcl
      hint: run `clusterform fmt ex2/quickstart` to rewrite them
    ");
}
