//! Saved plans, `--detailed-exitcode`, `show`, and ownership across stacks.

use std::time::Duration;

use clusterform_emulator::EmulatorOptions;
use serde_json::json;

use crate::support::{ClusterSpec, Env, TOKEN, apply_ok, cluster_name, config, stderr};

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
    apply_ok(&env, &[ClusterSpec::default()]);
    env.write_config(&config(&[ClusterSpec {
        labels: r#"{ team = "research" }"#,
        ..ClusterSpec::default()
    }]));
    let plan = env.run(&["plan", "--out", "tfplan.json"]);
    assert!(plan.status.success(), "{}", stderr(&plan));
    let mode = std::fs::metadata(env.path().join("tfplan.json")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(mode.permissions().mode() & 0o777, 0o600);
    }
    insta::assert_snapshot!(env.transcript(&["show", "tfplan.json"]), @r#"
    Made with: clusterform plan

    clusterform will perform the following actions:

      # train01 will be updated in place
      ~ cluster "train01" {
          ~ labels = {
              ~ "team" = "ml" -> "research"
            }
            # (1 unchanged attribute hidden)
            # (4 unchanged blocks hidden)
        }
        update mask: labels
        update mode: USER_AND_SERVICE (the service may also refresh the startup, prolog and epilog scripts it manages; no node is recreated unless it refreshes a pool's startup script)
        impact: immediate

    Plan: 0 to add, 1 to change, 0 to replace, 0 to destroy.
    "#);
    let apply = env.run(&["apply", "tfplan.json"]);
    assert!(apply.status.success(), "{}", stderr(&apply));
    let live = env.emulator().cluster(&cluster_name("train01")).unwrap();
    assert_eq!(live["labels"]["team"], "research");
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
    insta::assert_snapshot!(env.transcript(&["apply", "tfplan.json"]), @"
    [stderr]
    Error: the saved plan is stale:
      cluster train01 changed since the plan was made (updateTime [TIME] -> [TIME])
      hint: run `clusterform plan --out FILE` again, review it, then apply the new plan
    [exit status: 1]
    ");
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
    insta::assert_snapshot!(env.transcript(&["apply", "tfplan.json"]), @"
    [stderr]
    Error: the saved plan was made from a different configuration in [DIR]: main.hcl changed
      hint: run `clusterform plan --out FILE` again, review it, then apply the new plan
    [exit status: 1]
    ");
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
    insta::assert_snapshot!(env.transcript(&["plan"]), @"No changes. Your clusters match the configuration.");
    let mutated: Vec<_> = env
        .mutations()
        .into_iter()
        .filter(|r| r.path.contains("/other"))
        .collect();
    assert!(mutated.is_empty(), "{mutated:?}");
    let list = env.run(&["list", "--json"]);
    let document: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(document["clusters"].as_array().unwrap().len(), 26);
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
    insta::assert_snapshot!(env.transcript(&["plan"]), @"
    [stderr]
    Error: cluster `train01` exists in projects/my-proj/locations/us-central1 but is not managed by stack `research`
      hint: run `clusterform import train01` to adopt it into this stack, or pick another cluster ID
    [exit status: 1]
    ");
}

#[test]
fn a_second_run_on_the_same_configuration_is_refused() {
    let env = Env::new(100);
    env.write_config(&config(&[ClusterSpec::default()]));
    let holder = clusterform_executor::LockInfo::for_this_process("apply", "test");
    let who = holder.who.clone();
    let held = clusterform_executor::RunLock::acquire(env.path(), holder).unwrap();
    for command in ["apply", "destroy"] {
        insta::allow_duplicates! {
            insta::assert_snapshot!(
                env.transcript(&[command, "--auto-approve"]).normalized_with(|text| text.replace(&who, "[USER@HOST]")),
                @"
            [stderr]
            Error: the stack is locked by [USER@HOST] (pid [PID]) running `apply` since [TIME] (lock ID [UUID])
              hint: wait for the other run to finish (`--lock-timeout 10m` waits for it); the lock is released when it exits
            [exit status: 1]
            "
            );
        }
    }
    assert!(env.mutations().is_empty());
    let plan = env.run(&["plan"]);
    assert!(plan.status.success(), "plan only reads: {}", stderr(&plan));
    drop(held);
    apply_ok(&env, &[ClusterSpec::default()]);
}
