//! Saved plans, `--detailed-exitcode`, `show`, and ownership across stacks.

use std::time::Duration;

use clusterform_emulator::EmulatorOptions;
use serde_json::json;

use crate::support::{ClusterSpec, Env, TOKEN, apply_ok, cluster_name, config, stderr, stdout};

#[test]
fn detailed_exitcode_is_two_only_with_changes() {
    let env = Env::new(100);
    env.write_config(&config(&[ClusterSpec::default()]));
    assert_eq!(
        env.run(&["plan", "--detailed-exitcode"]).status.code(),
        Some(2)
    );
    assert_eq!(env.run(&["plan"]).status.code(), Some(0));
}

#[test]
fn a_saved_plan_applies_without_asking_and_show_prints_it() {
    let env = Env::new(100);
    env.write_config(&config(&[ClusterSpec::default()]));
    let plan = env.run(&["plan", "--out", "tfplan.json"]);
    assert!(plan.status.success(), "{}", stderr(&plan));
    let mode = std::fs::metadata(env.path().join("tfplan.json")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(mode.permissions().mode() & 0o777, 0o600);
    }
    let show = env.run(&["show", "tfplan.json"]);
    assert!(
        stdout(&show).contains("+ cluster \"train01\""),
        "{}",
        stdout(&show)
    );
    let apply = env.run(&["apply", "tfplan.json"]);
    assert!(apply.status.success(), "{}", stderr(&apply));
    assert!(env.emulator().cluster(&cluster_name("train01")).is_some());
}

#[test]
fn a_stale_saved_plan_is_refused() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.write_config(&config(&[ClusterSpec {
        max_nodes: 8,
        ..ClusterSpec::default()
    }]));
    assert!(env.run(&["plan", "--out", "tfplan.json"]).status.success());
    // Someone else changes the cluster after the plan was made.
    let mut live = env.emulator().cluster(&cluster_name("train01")).unwrap();
    live["labels"]["touched"] = json!("yes");
    live["updateTime"] = json!("2099-01-01T00:00:00Z");
    env.emulator()
        .insert_cluster(&cluster_name("train01"), live);
    env.emulator().clear_requests();
    let apply = env.run(&["apply", "tfplan.json"]);
    assert_eq!(apply.status.code(), Some(1));
    let err = stderr(&apply);
    assert!(
        err.contains("train01 changed since the plan was made"),
        "{err}"
    );
    assert!(env.mutations().is_empty(), "nothing was sent");
}

#[test]
fn a_plan_from_another_configuration_is_refused() {
    let env = Env::new(100);
    env.write_config(&config(&[ClusterSpec::default()]));
    assert!(env.run(&["plan", "--out", "tfplan.json"]).status.success());
    env.write_config(&config(&[ClusterSpec {
        max_nodes: 2,
        ..ClusterSpec::default()
    }]));
    let apply = env.run(&["apply", "tfplan.json"]);
    assert_eq!(apply.status.code(), Some(1));
    assert!(
        stderr(&apply).contains("different configuration"),
        "{}",
        stderr(&apply)
    );
}

#[test]
fn other_stacks_clusters_are_listed_across_pages_but_never_touched() {
    let env = Env::with_options(EmulatorOptions {
        operation_duration: Duration::from_millis(100),
        max_page_size: 7,
        required_token: Some(TOKEN.to_owned()),
        ..EmulatorOptions::default()
    });
    for i in 0..25 {
        let id = format!("other{i:02}");
        env.emulator().insert_cluster(
            &cluster_name(&id),
            json!({
                "labels": {"clusterform-stack": "someone-else"},
                "network": {"network": "projects/my-proj/global/networks/default"},
                "nodePools": [{"id": "login", "machineSpec": {"machineType": "n2-standard-8"}}],
                "orchestratorSpec": {"slurmSpec": {
                    "homeDirectoryStorage": "projects/my-proj/locations/us-central1-a/instances/h",
                    "loginNodePoolId": "login"}}
            }),
        );
    }
    apply_ok(&env, &[ClusterSpec::default()]);
    let lists = env
        .emulator()
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path.ends_with("/modelDevelopmentClusters"))
        .count();
    assert!(
        lists >= 3,
        "25+ clusters need several pages, saw {lists} list calls"
    );
    let plan = env.run(&["plan"]);
    assert!(stdout(&plan).contains("No changes."), "{}", stdout(&plan));
    let mutated: Vec<_> = env
        .mutations()
        .into_iter()
        .filter(|r| r.path.contains("/other"))
        .collect();
    assert!(mutated.is_empty(), "{mutated:?}");
    let list = env.run(&["list", "--json"]);
    let rows: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 26);
}

#[test]
fn an_unlabelled_cluster_is_not_adopted_silently() {
    let env = Env::new(100);
    env.emulator().insert_cluster(
        &cluster_name("train01"),
        json!({
            "network": {"network": "projects/my-proj/global/networks/default"},
            "nodePools": [{"id": "login", "machineSpec": {"machineType": "n2-standard-8"}}],
            "orchestratorSpec": {"slurmSpec": {
                "homeDirectoryStorage": "projects/my-proj/locations/us-central1-a/instances/h",
                "loginNodePoolId": "login"}}
        }),
    );
    env.write_config(&config(&[ClusterSpec::default()]));
    let plan = env.run(&["plan"]);
    assert_eq!(plan.status.code(), Some(1));
    assert!(
        stderr(&plan).contains("clusterform import train01"),
        "{}",
        stderr(&plan)
    );
}

#[test]
fn a_second_run_on_the_same_configuration_is_refused() {
    let env = Env::new(100);
    env.write_config(&config(&[ClusterSpec::default()]));
    let holder = clusterform_executor::LockInfo::for_this_process("apply", "test");
    let held = clusterform_executor::RunLock::acquire(env.path(), holder).unwrap();
    let apply = env.run(&["apply", "--auto-approve"]);
    assert_eq!(apply.status.code(), Some(1));
    let err = stderr(&apply);
    assert!(err.contains("the stack is locked by"), "{err}");
    assert!(env.mutations().is_empty());
    let destroy = env.run(&["destroy", "--auto-approve"]);
    assert!(stderr(&destroy).contains("the stack is locked by"));
    let plan = env.run(&["plan"]);
    assert!(plan.status.success(), "plan only reads: {}", stderr(&plan));
    drop(held);
    apply_ok(&env, &[ClusterSpec::default()]);
}
