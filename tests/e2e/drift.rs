//! Drift: after an apply, a change made outside clusterform (a label added, a pool resized in
//! the console) is named field by field by the next plan, which restores the configuration,
//! even when the configuration changed too; `plan --refresh-only` shows only that; a missing
//! or corrupt applied record gives the plain plan.

use serde_json::{Value, json};

use crate::support::{ClusterSpec, Env, apply_ok, cluster_name, config, stderr};

/// The applied record of the configuration directory.
fn record_path(env: &Env) -> std::path::PathBuf {
    env.path().join(".clusterform/applied.json")
}

/// Changes train01's `team` label, adds a label `owner` of someone else's, and resizes its
/// `cpu` pool to 8 nodes, as someone in the console would.
fn hotfix_outside(env: &Env) {
    let name = cluster_name("train01");
    let mut live = env.emulator().cluster(&name).unwrap();
    live["labels"]["team"] = json!("oncall");
    live["labels"]["owner"] = json!("sre");
    for pool in live["nodePools"].as_array_mut().unwrap() {
        if pool["id"] == "cpu" {
            pool["scalingSpec"]["maxNodeCount"] = json!(8);
        }
    }
    env.emulator().insert_cluster(&name, live);
}

fn live(env: &Env) -> Value {
    env.emulator().cluster(&cluster_name("train01")).unwrap()
}

fn cpu_max_nodes(live: &Value) -> Value {
    live["nodePools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|pool| pool["id"] == "cpu")
        .unwrap()["scalingSpec"]["maxNodeCount"]
        .clone()
}

#[test]
fn a_change_made_outside_clusterform_is_named_and_restored() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(record_path(&env)).unwrap()).unwrap();
    assert_eq!(record["clusters"][0]["address"]["id"], "train01");
    hotfix_outside(&env);

    insta::assert_snapshot!(env.transcript(&["plan"]), @r#"
    clusterform will perform the following actions:

      # train01 changed outside clusterform: labels.team changed, node_pools[cpu].scaling_spec.max_node_count changed
      # train01 will be updated in place
      ~ cluster "train01" {
          ~ labels = {
              ~ "team" = "oncall" -> "ml"
            }
          ~ node_pool "cpu" {
              ~ scaling_spec {
                  ~ max_node_count = 8 -> 4
                    # (1 unchanged attribute hidden)
                }
                # (1 unchanged attribute hidden)
                # (1 unchanged block hidden)
            }
            # (1 unchanged attribute hidden)
            # (3 unchanged blocks hidden)
        }
        update mask: labels, node_pools
        update mode: USER_AND_SERVICE (the service may also refresh the startup, prolog and epilog scripts it manages; no node is recreated unless it refreshes a pool's startup script)
        impact: immediate; resizes pool cpu
        Warning: max_node_count of pool cpu goes from 8 to 4: the cluster reports 0 nodes in the pool, none above the new maximum, so none is removed now
        Warning: the label `owner` is not in the configuration and is kept: clusterform does not remove labels someone else put on a cluster (declare them to manage them)
        Warning: this node_pools update sends back what the service filled in where the configuration sets nothing, which may pin it (an unset node_image follows the default image, a set one stays): node_pools[login].node_image = "slurm-24-11-ubuntu-2204", node_pools[cpu].boot_disk.boot_disk_type = "pd-ssd", node_pools[cpu].boot_disk.boot_disk_size_gb = 100, node_pools[cpu].node_image = "slurm-24-11-ubuntu-2204"
        # no Slurm jobs active now

    Plan: 0 to add, 1 to change, 0 to replace, 0 to destroy.
    "#);

    let json = env.run(&["plan", "--json"]);
    assert!(json.status.success(), "{}", stderr(&json));
    let document: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        document["changes"][0]["drift"],
        json!([
            {"path": "labels.team", "how": "changed"},
            {"path": "node_pools[cpu].scaling_spec.max_node_count", "how": "changed"}
        ])
    );

    let applied = env.run(&["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    let restored = live(&env);
    assert_eq!(restored["labels"]["team"], "ml");
    assert_eq!(
        restored["labels"]["owner"], "sre",
        "a label someone else put on the cluster is kept"
    );
    assert_eq!(
        cpu_max_nodes(&restored),
        json!("4"),
        "the service writes int64 as a string"
    );
    insta::assert_snapshot!(env.transcript(&["plan"]), @"No changes. Your clusters match the configuration.");
}

#[test]
fn drift_and_a_configuration_change_in_the_same_cluster_are_both_shown() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    hotfix_outside(&env);
    // The pull request that reverts the hotfix changes the cluster too: the outside change
    // is still named, field by field, above what apply does.
    env.write_config(&config(&[ClusterSpec {
        display_name: "Research training v2",
        labels: r#"{ team = "vision" }"#,
        ..ClusterSpec::default()
    }]));
    insta::assert_snapshot!(env.transcript(&["plan"]), @r#"
    clusterform will perform the following actions:

      # train01 changed outside clusterform: labels.team changed, node_pools[cpu].scaling_spec.max_node_count changed
      # train01 will be updated in place
      ~ cluster "train01" {
          ~ display_name = "Research training" -> "Research training v2"
          ~ labels       = {
              ~ "team" = "oncall" -> "vision"
            }
          ~ node_pool "cpu" {
              ~ scaling_spec {
                  ~ max_node_count = 8 -> 4
                    # (1 unchanged attribute hidden)
                }
                # (1 unchanged attribute hidden)
                # (1 unchanged block hidden)
            }
            # (3 unchanged blocks hidden)
        }
        update mask: display_name, labels, node_pools
        # display_name is vouched for by the Terraform provider only: if the service refuses it, the cluster is unchanged (--replace forces the change)
        update mode: USER_AND_SERVICE (the service may also refresh the startup, prolog and epilog scripts it manages; no node is recreated unless it refreshes a pool's startup script)
        impact: immediate; resizes pool cpu
        Warning: max_node_count of pool cpu goes from 8 to 4: the cluster reports 0 nodes in the pool, none above the new maximum, so none is removed now
        Warning: the label `owner` is not in the configuration and is kept: clusterform does not remove labels someone else put on a cluster (declare them to manage them)
        Warning: this node_pools update sends back what the service filled in where the configuration sets nothing, which may pin it (an unset node_image follows the default image, a set one stays): node_pools[login].node_image = "slurm-24-11-ubuntu-2204", node_pools[cpu].boot_disk.boot_disk_type = "pd-ssd", node_pools[cpu].boot_disk.boot_disk_size_gb = 100, node_pools[cpu].node_image = "slurm-24-11-ubuntu-2204"
        # no Slurm jobs active now

    Plan: 0 to add, 1 to change, 0 to replace, 0 to destroy.
    "#);
    let json = env.run(&["plan", "--json"]);
    assert!(json.status.success(), "{}", stderr(&json));
    let document: Value = serde_json::from_slice(&json.stdout).unwrap();
    let drifted: Vec<&str> = document["changes"][0]["drift"]
        .as_array()
        .unwrap()
        .iter()
        .map(|drift| drift["path"].as_str().unwrap())
        .collect();
    assert!(!drifted.contains(&"display_name"), "{drifted:?}");
    assert!(drifted.contains(&"labels.team"), "{drifted:?}");
}

#[test]
fn refresh_only_shows_only_the_drift_and_proposes_nothing() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    insta::assert_snapshot!(env.transcript(&["plan", "--refresh-only", "--detailed-exitcode"]), @"No changes outside clusterform: every field the record of applied changes covers holds what clusterform last applied.");
    hotfix_outside(&env);
    let before = env.mutations().len();
    insta::assert_snapshot!(env.transcript(&["plan", "--refresh-only"]), @"
      # train01 changed outside clusterform:
          labels.team changed
          node_pools[cpu].scaling_spec.max_node_count changed

    Refresh only: 1 cluster changed outside clusterform (2 fields); nothing is proposed. Run `clusterform plan` to see what apply would do.
    ");
    insta::assert_snapshot!(env.transcript(&["plan", "--refresh-only", "--detailed-exitcode", "--json"]), @r#"
    {
      "format_version": 1,
      "refresh_only": true,
      "stack": "research",
      "clusters": [
        {
          "address": {
            "project": "my-proj",
            "region": "us-central1",
            "id": "train01"
          },
          "drift": [
            {
              "path": "labels.team",
              "how": "changed"
            },
            {
              "path": "node_pools[cpu].scaling_spec.max_node_count",
              "how": "changed"
            }
          ]
        }
      ]
    }
    [exit status: 2]
    "#);
    assert_eq!(
        env.mutations().len(),
        before,
        "refresh-only changes nothing"
    );
    // A configuration change is no drift, and refresh-only does not show it.
    env.write_config(&config(&[ClusterSpec {
        display_name: "Research training v2",
        ..ClusterSpec::default()
    }]));
    let text = env.transcript(&["plan", "--refresh-only"]).to_string();
    assert!(!text.contains("display_name"), "{text}");
    assert!(text.contains("labels.team changed"), "{text}");
    insta::assert_snapshot!(env.transcript(&["plan", "--refresh-only", "--out", "p.json"]), @"
    [stderr]
    Error: --out cannot be used with --refresh-only: a refresh-only plan only shows what changed outside clusterform and proposes nothing
    [exit status: 1]
    ");
}

#[test]
fn refresh_only_without_a_record_says_it_cannot_tell_and_exits_0() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    hotfix_outside(&env);
    std::fs::remove_file(record_path(&env)).unwrap();
    insta::assert_snapshot!(env.transcript(&["plan", "--refresh-only", "--detailed-exitcode"]), @"
    No changes outside clusterform: every field the record of applied changes covers holds what clusterform last applied.
    [stderr]
    Note: the record of applied changes ./.clusterform/applied.json holds nothing for train01: clusterform cannot tell what changed outside it there (the next apply of each records it)
    ");
    std::fs::write(record_path(&env), "{ not json").unwrap();
    insta::assert_snapshot!(env.transcript(&["plan", "--refresh-only", "--detailed-exitcode"]), @"
    No changes outside clusterform: every field the record of applied changes covers holds what clusterform last applied.
    [stderr]
    Note: the record of applied changes ./.clusterform/applied.json cannot be read: it is corrupt (key must be a string at line 1 column 3); clusterform cannot tell what changed outside it
    ");
}

#[test]
fn without_the_record_or_with_a_corrupt_one_the_plan_is_plain() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    hotfix_outside(&env);
    let with_record = env.transcript(&["plan"]).to_string();
    assert!(
        with_record.contains("changed outside clusterform"),
        "{with_record}"
    );

    std::fs::remove_file(record_path(&env)).unwrap();
    let without = env.transcript(&["plan"]).to_string();
    assert!(!without.contains("outside clusterform"), "{without}");
    // The same plan, less the drift line.
    let drift_line = with_record
        .lines()
        .find(|line| line.contains("changed outside clusterform"))
        .unwrap();
    assert_eq!(without, with_record.replace(&format!("{drift_line}\n"), ""));

    std::fs::write(record_path(&env), "{ not json").unwrap();
    let corrupt = env.run(&["plan", "-v"]);
    assert!(corrupt.status.success(), "{}", stderr(&corrupt));
    let text = String::from_utf8(corrupt.stdout.clone()).unwrap();
    assert!(!text.contains("outside clusterform"), "{text}");
    assert!(
        stderr(&corrupt).contains("the record of applied changes cannot be read"),
        "{}",
        stderr(&corrupt)
    );
    // An apply replaces the corrupt record with a readable one.
    let applied = env.run(&["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(record_path(&env)).unwrap()).unwrap();
    assert_eq!(record["version"], 1);
}

#[test]
fn destroying_a_cluster_drops_its_entry_from_the_record() {
    let env = Env::new(100);
    apply_ok(
        &env,
        &[ClusterSpec::default(), ClusterSpec::named("train02")],
    );
    let destroyed = env.run(&["destroy", "--auto-approve", "--target", "train02"]);
    assert!(destroyed.status.success(), "{}", stderr(&destroyed));
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(record_path(&env)).unwrap()).unwrap();
    let ids: Vec<&str> = record["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["address"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["train01"]);
}

#[cfg(unix)]
#[test]
fn an_unwritable_record_warns_and_the_apply_succeeds() {
    let env = Env::new(100);
    // A directory where the record's file belongs: it can be neither read nor replaced.
    std::fs::create_dir_all(record_path(&env).join("in-the-way")).unwrap();
    env.write_config(&config(&[ClusterSpec::default()]));
    let applied = env.run(&["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    let warning = stderr(&applied);
    assert!(
        warning.contains("Warning: the record of applied changes ./.clusterform/applied.json could not be written"),
        "{warning}"
    );
    assert!(env.emulator().cluster(&cluster_name("train01")).is_some());
}

/// A create an earlier run left in flight fails: resuming it marks its cluster, and a record
/// that cannot take the mark is told as after a plan's changes.
#[cfg(unix)]
#[test]
fn an_unwritable_record_is_told_when_an_earlier_run_is_resumed() {
    let env = Env::new(1500);
    env.emulator().set_faults(clusterform_emulator::FaultSpec {
        operation_failure_rate: 1.0,
        ..clusterform_emulator::FaultSpec::default()
    });
    env.write_config(&config(&[ClusterSpec::default()]));
    crate::support::apply_killed_once_journaled(&env, "train01");
    std::fs::create_dir_all(record_path(&env).join("in-the-way")).unwrap();
    env.emulator()
        .set_faults(clusterform_emulator::FaultSpec::default());

    let resumed = env.run(&["apply", "--auto-approve"]);
    let said = stderr(&resumed);
    let warning =
        "Warning: the record of applied changes ./.clusterform/applied.json could not be written";
    // The resumed create failed, so the run ends there: only the resume wrote the record.
    assert!(said.contains(warning), "{said}");
}

#[test]
fn a_label_taken_out_of_the_configuration_goes_and_someone_elses_stays() {
    let env = Env::new(50);
    apply_ok(
        &env,
        &[ClusterSpec {
            labels: r#"{ team = "ml", cost = "research" }"#,
            ..ClusterSpec::default()
        }],
    );
    let name = cluster_name("train01");
    let mut outside = live(&env);
    outside["labels"]["owner"] = json!("sre");
    env.emulator().insert_cluster(&name, outside);
    env.write_config(&config(&[ClusterSpec::default()]));
    let plan = env.run(&["plan"]);
    let text = String::from_utf8_lossy(&plan.stdout).to_string();
    assert!(
        text.contains("- \"cost\" = \"research\" -> null") && !text.contains("\"owner\" ="),
        "{text}"
    );
    assert!(
        text.contains("the label `owner` is not in the configuration and is kept"),
        "{text}"
    );
    let applied = env.run(&["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    let labels = &live(&env)["labels"];
    assert_eq!(labels.get("cost"), None, "clusterform's own label goes");
    assert_eq!(labels["owner"], "sre", "someone else's stays");
    assert_eq!(labels["team"], "ml");
    // Without the record, no undeclared label can be told to be clusterform's: all stay.
    std::fs::remove_file(record_path(&env)).unwrap();
    env.write_config(&config(&[ClusterSpec {
        labels: r#"{ team = "vision" }"#,
        ..ClusterSpec::default()
    }]));
    let applied = env.run(&["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    assert_eq!(live(&env)["labels"]["owner"], "sre");
}
