//! Saved plans that work from any directory (`plan --out F` here, `apply F` there), the flags a
//! saved plan refuses, `plan --destroy` with its saved destroy plan, and `import` into a
//! directory without configuration.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::{
    ClusterSpec, Env, STACK, apply_ok, cluster_name, config, destroyed_attributes_elided,
    hand_made_cluster, stderr, stdout,
};

/// The default cluster, its CPU pool's maximum taken from a variable without default.
fn config_with_variable() -> String {
    let hcl = config(&[ClusterSpec::default()])
        .replace("max_node_count = 4", "max_node_count = var.max_nodes");
    format!("variable \"max_nodes\" {{\n  type = number\n}}\n{hcl}")
}

/// Runs the binary with `cwd` as its working directory instead of the configuration's.
fn run_in(env: &Env, cwd: &Path, args: &[&str]) -> std::process::Output {
    env.cmd(args).current_dir(cwd).output().unwrap()
}

#[test]
fn a_plan_saved_here_applies_from_another_directory_with_its_variables() {
    let env = Env::new(100);
    env.write_config(&config_with_variable());
    let elsewhere = tempfile::tempdir().unwrap();
    let file = elsewhere.path().join("tfplan.json");
    let file = file.to_str().unwrap();
    let plan = env.run(&["plan", "--var", "max_nodes=6", "--out", file]);
    assert!(plan.status.success(), "{}", stderr(&plan));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let directory = std::fs::canonicalize(env.path()).unwrap();
    assert_eq!(saved["directory"], json!(directory.to_str().unwrap()));
    assert_eq!(saved["variables"], json!({"max_nodes": 6}));
    assert_eq!(saved["flags"]["destroy"], json!(false));

    // No --var now, and the working directory holds no configuration.
    let apply = run_in(&env, elsewhere.path(), &["apply", "tfplan.json"]);
    assert!(
        apply.status.success(),
        "{}{}",
        stdout(&apply),
        stderr(&apply)
    );
    let live = env.emulator().cluster(&cluster_name("train01")).unwrap();
    let max = &live["nodePools"][1]["scalingSpec"]["maxNodeCount"];
    assert!(*max == json!("6") || *max == json!(6), "{live}");
    assert!(
        directory.join(".clusterform").is_dir(),
        "the run's state lives in the configuration directory"
    );
}

#[test]
fn a_saved_plan_applies_only_against_the_endpoint_it_was_made_against() {
    let env = Env::new(100);
    env.write_config(&config(&[ClusterSpec::default()]));
    assert!(env.run(&["plan", "--out", "tfplan.json"]).status.success());
    let text = std::fs::read_to_string(env.path().join("tfplan.json")).unwrap();
    let saved: Value = serde_json::from_str(&text).unwrap();
    let made_against = env.server.base_url();
    assert_eq!(saved["endpoint"], json!(made_against));

    // Another emulator, say: the plan's live clusters were not read there.
    let elsewhere = "http://127.0.0.1:9";
    insta::assert_snapshot!(env.transcript(&["apply", "tfplan.json", "--endpoint", elsewhere]), @"
    [stderr]
    Error: the saved plan was made against endpoint `[ENDPOINT]`, not `http://127.0.0.1:9`: its live clusters were read there
      hint: apply it against `[ENDPOINT]` (set --endpoint, CLUSTERFORM_ENDPOINT or the provider's `endpoint` as when it was made), or run `clusterform plan --out FILE` again here
    [exit status: 1]
    ");
    let before = env.emulator().requests().len();

    let apply = env.run(&["apply", "tfplan.json"]);
    assert!(apply.status.success(), "{}", stderr(&apply));
    assert!(env.emulator().requests().len() > before);
}

#[test]
fn a_saved_plan_refuses_the_flags_it_fixed_and_another_directory() {
    let env = Env::new(100);
    env.write_config(&config(&[ClusterSpec::default()]));
    assert!(env.run(&["plan", "--out", "tfplan.json"]).status.success());
    let other = tempfile::tempdir().unwrap();
    let other = other.path().to_str().unwrap();
    let refused = [
        &["--target", "train01"][..],
        &["--replace", "train01"],
        &["--var", "a=b"],
        &["--var-file", "x.cfvars"],
        &["--update-mode", "USER_ONLY"],
        &["--chdir", other],
    ];
    let transcripts: String = refused
        .into_iter()
        .map(|flags| {
            let mut args = vec!["apply", "tfplan.json"];
            args.extend_from_slice(flags);
            format!("$ {}\n{}", args.join(" "), env.transcript(&args))
        })
        .collect();
    insta::assert_snapshot!(transcripts.replace(other, "[OTHER]"), @"
    $ apply tfplan.json --target train01
    [stderr]
    Error: --target cannot be used when applying a saved plan: the saved plan fixed the targets; plan again with --target
    [exit status: 1]
    $ apply tfplan.json --replace train01
    [stderr]
    Error: --replace cannot be used when applying a saved plan: the saved plan fixed the replacements; plan again with --replace
    [exit status: 1]
    $ apply tfplan.json --var a=b
    [stderr]
    Error: --var cannot be used when applying a saved plan: the saved plan fixed the variable values; plan again with --var
    [exit status: 1]
    $ apply tfplan.json --var-file x.cfvars
    [stderr]
    Error: --var-file cannot be used when applying a saved plan: the saved plan fixed the variable values; plan again with --var-file
    [exit status: 1]
    $ apply tfplan.json --update-mode USER_ONLY
    [stderr]
    Error: --update-mode cannot be used when applying a saved plan: the saved plan fixed the update mode; plan again with --update-mode
    [exit status: 1]
    $ apply tfplan.json --chdir [OTHER]
    [stderr]
    Error: the saved plan was made in [DIR], not in [OTHER]: a saved plan applies to the directory it was made in; drop --chdir
    [exit status: 1]
    ");
    assert!(env.mutations().is_empty(), "nothing was sent");
    // The recorded directory itself is accepted.
    let same = env.path().to_str().unwrap();
    let apply = env.run(&["apply", "tfplan.json", "--chdir", same]);
    assert!(apply.status.success(), "{}", stderr(&apply));
}

/// A saved plan names the directory it records when it is no longer there, and the files that
/// changed when the configuration there is not the one it was made from (a comment is a
/// change).
#[test]
fn a_saved_plan_refused_for_its_configuration_says_what_moved_or_changed() {
    let env = Env::new(100);
    let made_in = env.path().join("cfg");
    std::fs::create_dir(&made_in).unwrap();
    std::fs::write(made_in.join("main.hcl"), config(&[ClusterSpec::default()])).unwrap();
    std::fs::write(made_in.join("notes.hcl"), "# notes\n").unwrap();
    assert!(
        env.run(&["plan", "cfg", "--out", "tfplan.json"])
            .status
            .success()
    );

    std::fs::rename(&made_in, env.path().join("moved")).unwrap();
    insta::assert_snapshot!(env.transcript(&["apply", "tfplan.json"]), @"
    [stderr]
    Error: the saved plan records its configuration directory as [DIR]/cfg, and there is no directory there now
      hint: a saved plan applies to the directory it was made in: move the configuration back to [DIR]/cfg, or make the plan again where it is now (`clusterform plan --out FILE`)
    [exit status: 1]
    ");
    std::fs::rename(env.path().join("moved"), &made_in).unwrap();

    std::fs::write(made_in.join("notes.hcl"), "# notes, edited\n").unwrap();
    std::fs::write(made_in.join("extra.hcl"), "# more\n").unwrap();
    insta::assert_snapshot!(env.transcript(&["apply", "tfplan.json"]), @"
    [stderr]
    Error: the saved plan was made from a different configuration in [DIR]/cfg: extra.hcl is new; notes.hcl changed
      hint: run `clusterform plan --out FILE` again, review it, then apply the new plan
    [exit status: 1]
    ");
    assert!(env.mutations().is_empty(), "nothing was sent");
}

#[test]
fn plan_destroy_previews_and_its_saved_plan_destroys() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    insta::assert_snapshot!(env.transcript(&[
        "plan",
        "--destroy",
        "--detailed-exitcode",
        "--out",
        "destroy.json",
    ]).normalized_with(destroyed_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train01 will be destroyed: declared in this configuration, and destroy was requested
      - cluster "train01" { … }
        # no Slurm jobs active now

    Plan: 0 to add, 0 to change, 0 to replace, 1 to destroy.
    [stderr]

    Saved the plan to destroy.json. To perform exactly these actions, run:
      clusterform apply destroy.json
    [exit status: 2]
    "#);
    assert!(
        env.emulator().cluster(&cluster_name("train01")).is_some(),
        "plan deletes nothing"
    );
    let show = env.run(&["show", "--json", "destroy.json"]);
    let shown: Value = serde_json::from_str(&stdout(&show)).unwrap();
    assert_eq!(shown["flags"]["destroy"], json!(true));
    assert_eq!(shown["changes"][0]["action"], json!("delete"));
    assert_eq!(
        shown["changes"][0]["reason"]["kind"],
        json!("destroy_requested")
    );

    let elsewhere = tempfile::tempdir().unwrap();
    let file = env.path().join("destroy.json");
    let apply = run_in(&env, elsewhere.path(), &["apply", file.to_str().unwrap()]);
    insta::assert_snapshot!(env.transcript_of(&apply), @"
    [stderr]
    [HH:MM:SS] train01: destroying… [Ns]
    [HH:MM:SS] train01: delete request accepted [Ns]
    [HH:MM:SS] train01: delete done [Ns]
    [HH:MM:SS] train01: destroyed [Ns]
    Destroy complete! Resources: 1 destroyed.
    ");
    assert!(env.emulator().cluster(&cluster_name("train01")).is_none());
}

#[test]
fn destroy_without_a_terminal_hints_at_the_saved_destroy_plan() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    insta::assert_snapshot!(env.transcript(&["destroy"]).normalized_with(destroyed_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train01 will be destroyed: declared in this configuration, and destroy was requested
      - cluster "train01" { … }
        # no Slurm jobs active now

    Plan: 0 to add, 0 to change, 0 to replace, 1 to destroy.
    [stderr]
    Error: no terminal to ask for confirmation, and --auto-approve was not given
      hint: run with --auto-approve, or review the destroy first: `clusterform plan --destroy --out FILE`, then `clusterform apply FILE`
    [exit status: 1]
    "#);
    assert!(env.emulator().cluster(&cluster_name("train01")).is_some());
}

#[test]
fn import_into_an_empty_directory_writes_a_whole_configuration() {
    let env = Env::new(100);
    env.emulator()
        .insert_cluster(&cluster_name("legacy"), hand_made_cluster());
    let location = ["--project", "my-proj", "--region", "us-central1"];
    let mut args = vec!["import", "legacy"];
    args.extend_from_slice(&location);
    // No terminal to ask for the stack.
    insta::assert_snapshot!(env.transcript(&args), @"
    [stderr]
    Error: the directory has no configuration and there is no terminal to ask for its stack: pass --stack NAME (the owner of the clusters this configuration will manage)
    [exit status: 1]
    ");
    assert!(env.mutations().is_empty(), "nothing was sent");

    args.extend_from_slice(&["--stack", STACK]);
    insta::assert_snapshot!(env.transcript(&args), @"
    [stderr]
    Adding label clusterform-stack=research to legacy…
    Left out the node_image of login (slurm-24-11-ubuntu-2204), cpu (slurm-24-11-ubuntu-2204): the service fills it in, and a pool without it follows the default image; pass --keep-node-image to keep the pools on these images.
    Wrote ./main.hcl. `clusterform plan` should now show no changes for this cluster.
    ");
    let hcl = std::fs::read_to_string(env.path().join("main.hcl")).unwrap();
    assert!(hcl.starts_with("provider \"google\" {"), "{hcl}");
    assert!(
        hcl.contains("stack") && hcl.contains(&format!("\"{STACK}\"")),
        "{hcl}"
    );
    assert!(hcl.contains("cluster \"legacy\""), "{hcl}");
    let live = env.emulator().cluster(&cluster_name("legacy")).unwrap();
    assert_eq!(live["labels"]["clusterform-stack"], STACK);

    let validate = env.run(&["validate"]);
    assert!(
        validate.status.success(),
        "{}{}",
        stdout(&validate),
        stderr(&validate)
    );
    insta::assert_snapshot!(env.transcript(&["plan", "--detailed-exitcode"]), @"No changes. Your clusters match the configuration.");

    // Now the directory has a configuration: its provider sets the stack.
    insta::assert_snapshot!(env.transcript(&args), @"
    [stderr]
    Error: --stack is only for importing into a directory without configuration; the provider block of [DIR] sets the stack
    [exit status: 1]
    ");
}
