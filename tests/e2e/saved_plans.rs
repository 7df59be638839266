//! Saved plans that work from any directory (`plan --out F` here, `apply F` there), the flags a
//! saved plan refuses, `plan --destroy` with its saved destroy plan, and `import` into a
//! directory without configuration.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::{
    ClusterSpec, Env, STACK, apply_ok, cluster_name, config, hand_made_cluster, stderr, stdout,
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
    assert_eq!(saved["destroy"], json!(false));

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
    let apply = env.run(&["apply", "tfplan.json", "--endpoint", elsewhere]);
    let err = stderr(&apply);
    assert_eq!(apply.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("made against endpoint `{made_against}`")),
        "{err}"
    );
    assert!(err.contains(&format!("not `{elsewhere}`")), "{err}");
    assert!(err.contains("hint:"), "{err}");
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
        (&["--target", "train01"][..], "--target"),
        (&["--replace", "train01"], "--replace"),
        (&["--var", "a=b"], "--var"),
        (&["--var-file", "x.cfvars"], "--var-file"),
        (&["--update-mode", "USER_ONLY"], "--update-mode"),
        (&["--chdir", other], "not in"),
    ];
    for (flags, named) in refused {
        let mut args = vec!["apply", "tfplan.json"];
        args.extend_from_slice(flags);
        let output = env.run(&args);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{flags:?}: {}",
            stderr(&output)
        );
        assert_eq!(stdout(&output), "", "{flags:?}");
        assert!(
            stderr(&output).contains(named),
            "{flags:?}: {}",
            stderr(&output)
        );
    }
    assert!(env.mutations().is_empty(), "nothing was sent");
    // The recorded directory itself is accepted.
    let same = env.path().to_str().unwrap();
    let apply = env.run(&["apply", "tfplan.json", "--chdir", same]);
    assert!(apply.status.success(), "{}", stderr(&apply));
}

#[test]
fn plan_destroy_previews_and_its_saved_plan_destroys() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    let plan = env.run(&[
        "plan",
        "--destroy",
        "--detailed-exitcode",
        "--out",
        "destroy.json",
    ]);
    assert_eq!(plan.status.code(), Some(2), "{}", stderr(&plan));
    assert!(
        stdout(&plan).contains("train01") && stdout(&plan).contains("destroy"),
        "{}",
        stdout(&plan)
    );
    assert!(
        env.emulator().cluster(&cluster_name("train01")).is_some(),
        "plan deletes nothing"
    );
    let show = env.run(&["show", "--json", "destroy.json"]);
    let shown: Value = serde_json::from_str(&stdout(&show)).unwrap();
    assert_eq!(shown["destroy"], json!(true));
    assert_eq!(shown["changes"][0]["action"], json!("delete"));
    assert_eq!(
        shown["changes"][0]["reason"]["kind"],
        json!("destroy_requested")
    );

    let elsewhere = tempfile::tempdir().unwrap();
    let file = env.path().join("destroy.json");
    let apply = run_in(&env, elsewhere.path(), &["apply", file.to_str().unwrap()]);
    assert!(apply.status.success(), "{}", stderr(&apply));
    let said = format!("{}{}", stdout(&apply), stderr(&apply));
    assert!(
        said.contains("Destroy complete! Resources: 1 destroyed."),
        "{said}"
    );
    assert!(env.emulator().cluster(&cluster_name("train01")).is_none());
}

#[test]
fn destroy_without_a_terminal_hints_at_the_saved_destroy_plan() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    let output = env.run(&["destroy"]);
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(err.contains("--auto-approve"), "{err}");
    assert!(
        err.contains("clusterform plan --destroy --out FILE")
            && err.contains("clusterform apply FILE"),
        "{err}"
    );
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
    let no_stack = env.run(&args);
    assert_eq!(no_stack.status.code(), Some(1));
    assert!(
        stderr(&no_stack).contains("--stack"),
        "{}",
        stderr(&no_stack)
    );
    assert!(env.mutations().is_empty(), "nothing was sent");

    args.extend_from_slice(&["--stack", STACK]);
    let import = env.run(&args);
    assert!(import.status.success(), "{}", stderr(&import));
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
    let plan = env.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(
        plan.status.code(),
        Some(0),
        "{}{}",
        stdout(&plan),
        stderr(&plan)
    );
    assert!(stdout(&plan).contains("No changes."), "{}", stdout(&plan));

    // Now the directory has a configuration: its provider sets the stack.
    let again = env.run(&args);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stderr(&again)
            .contains("--stack is only for importing into a directory without configuration"),
        "{}",
        stderr(&again)
    );
}
