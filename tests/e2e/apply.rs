//! Creating and changing clusters: each kind of change reaches the API with the right mask,
//! mode and body, and the next plan is empty.

use serde_json::Value;

use crate::support::{
    ClusterSpec, Env, STACK, apply_ok, cluster_name, config, stderr, stdout, two_clusters,
};

fn assert_no_changes(env: &Env) {
    let output = env.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "plan after apply should be empty:\n{}{}",
        stdout(&output),
        stderr(&output)
    );
    assert!(
        stdout(&output).contains("No changes."),
        "{}",
        stdout(&output)
    );
}

fn last_patch(env: &Env) -> (String, Value) {
    let patch = env
        .mutations()
        .into_iter()
        .rev()
        .find(|r| r.method == "PATCH")
        .expect("a PATCH was sent");
    (patch.query, patch.body.unwrap_or(Value::Null))
}

#[test]
fn create_then_plan_shows_no_changes() {
    let env = Env::new(200);
    let output = apply_ok(&env, &[ClusterSpec::default()]);
    let out = stdout(&output);
    assert!(out.contains("+ cluster \"train01\""), "{out}");
    let status = stderr(&output);
    assert!(
        status.contains("Apply complete! Resources: 1 added, 0 changed, 0 replaced, 0 destroyed."),
        "{status}"
    );
    let live = env.emulator().cluster(&cluster_name("train01")).unwrap();
    assert_eq!(live["clusterStatus"]["state"], "RUNNING");
    assert_eq!(live["labels"]["clusterform-stack"], STACK);
    assert_eq!(live["labels"]["team"], "ml");
    assert_no_changes(&env);
}

#[test]
fn scaling_a_pool_patches_node_pools_with_both_pools() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.write_config(&config(&[ClusterSpec {
        max_nodes: 8,
        ..ClusterSpec::default()
    }]));
    let plan = env.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(plan.status.code(), Some(2), "{}", stderr(&plan));
    let text = stdout(&plan);
    assert!(text.contains("4 -> 8"), "{text}");
    assert!(text.contains("node_pools"), "{text}");
    assert!(text.contains("resizes pool cpu"), "{text}");

    apply_ok(
        &env,
        &[ClusterSpec {
            max_nodes: 8,
            ..ClusterSpec::default()
        }],
    );
    let (query, body) = last_patch(&env);
    assert!(query.contains("updateMask=node_pools"), "{query}");
    assert!(query.contains("updateMode=USER_AND_SERVICE"), "{query}");
    let pools = body["nodePools"].as_array().unwrap();
    let ids: Vec<_> = pools.iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2, "both pools are sent: {ids:?}");
    assert!(ids.contains(&"login") && ids.contains(&"cpu"));
    assert_no_changes(&env);
}

#[test]
fn adding_a_partition_patches_partitions_only() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    apply_ok(
        &env,
        &[ClusterSpec {
            extra_partition: true,
            ..ClusterSpec::default()
        }],
    );
    let (query, body) = last_patch(&env);
    assert!(
        query.contains("updateMask=orchestrator_spec.slurm_spec.partitions"),
        "{query}"
    );
    assert!(!query.contains("node_pools"), "{query}");
    let partitions = &body["orchestratorSpec"]["slurmSpec"]["partitions"];
    assert_eq!(partitions.as_array().unwrap().len(), 2, "{body}");
    assert_no_changes(&env);
}

#[test]
fn changing_labels_keeps_the_stack_label() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    apply_ok(
        &env,
        &[ClusterSpec {
            labels: r#"{ team = "research", cost = "q4" }"#,
            ..ClusterSpec::default()
        }],
    );
    let (query, body) = last_patch(&env);
    assert!(query.contains("updateMask=labels"), "{query}");
    assert_eq!(body["labels"]["clusterform-stack"], STACK);
    assert_eq!(body["labels"]["team"], "research");
    assert_no_changes(&env);
}

#[test]
fn user_only_mode_is_sent() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.write_config(&config(&[ClusterSpec {
        max_nodes: 6,
        ..ClusterSpec::default()
    }]));
    let output = env.run(&["apply", "--auto-approve", "--update-mode", "USER_ONLY"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("USER_ONLY"), "{}", stdout(&output));
    let (query, _) = last_patch(&env);
    assert!(query.contains("updateMode=USER_ONLY"), "{query}");
}

#[test]
fn a_subnetwork_change_replaces_delete_then_create() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.emulator().clear_requests();
    let other = "projects/my-proj/regions/us-central1/subnetworks/other";
    env.write_config(&config(&[ClusterSpec::default()]).replace(
        "projects/my-proj/regions/us-central1/subnetworks/default",
        other,
    ));
    let output = env.run(&["apply", "--auto-approve"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(out.contains("-/+"), "{out}");
    assert!(out.contains("# forces replacement"), "{out}");
    assert!(
        stderr(&output).contains("1 replaced"),
        "{}",
        stderr(&output)
    );
    let methods: Vec<_> = env.mutations().into_iter().map(|r| r.method).collect();
    assert_eq!(methods, ["DELETE", "POST"]);
    let live = env.emulator().cluster(&cluster_name("train01")).unwrap();
    assert_eq!(live["network"]["subnetwork"], other);
}

#[test]
fn a_removed_block_is_deleted() {
    let env = Env::new(100);
    apply_ok(&env, &two_clusters());
    let output = apply_ok(&env, &[ClusterSpec::default()]);
    assert!(
        stderr(&output).contains("1 destroyed"),
        "{}",
        stderr(&output)
    );
    assert!(env.emulator().cluster(&cluster_name("train02")).is_none());
    assert!(env.emulator().cluster(&cluster_name("train01")).is_some());
}

#[test]
fn json_plan_parses_and_carries_requests() {
    let env = Env::new(100);
    env.write_config(&config(&[ClusterSpec::default()]));
    let output = env.run(&["plan", "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let plan: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(plan["format_version"], 2);
    let request = &plan["changes"][0]["requests"][0];
    assert_eq!(request["method"], "POST");
    assert!(env.mutations().is_empty(), "plan sends nothing");
}

#[test]
fn full_apply_transcript() {
    let env = Env::new(100);
    env.write_config(&config(&[ClusterSpec::default()]));
    insta::assert_snapshot!(env.transcript(&["apply", "--auto-approve"]), @r#"
    clusterform will perform the following actions:

      # train01 will be created
      + cluster "train01" {
          + display_name = "Research training"
          + labels       = {
              + "team" = "ml"
            }
          + network {
              + network    = "projects/my-proj/global/networks/default"
              + subnetwork = "projects/my-proj/regions/us-central1/subnetworks/default"
            }
          + node_pool "login" {
              + machine_spec {
                  + machine_type = "n2-standard-8"
                }
              + scaling_spec {
                  + min_node_count = 1
                  + max_node_count = 1
                }
              + zone              = "us-central1-a"
              + enable_public_ips = true
              + boot_disk {
                  + boot_disk_type    = "pd-standard"
                  + boot_disk_size_gb = 120
                }
            }
          + node_pool "cpu" {
              + machine_spec {
                  + machine_type = "n2-standard-8"
                }
              + scaling_spec {
                  + min_node_count = 0
                  + max_node_count = 4
                }
              + zone = "us-central1-a"
            }
          + orchestrator_spec {
              + slurm_spec {
                  + home_directory_storage = "projects/my-proj/locations/us-central1-a/instances/home"
                  + login_node_pool_id     = "login"
                  + partition "cpu" {
                      + node_pool_ids = ["cpu"]
                    }
                  + prolog_bash_scripts    = [
                      + <<-EOT
                            #!/bin/bash
                            echo prolog
                        EOT,
                    ]
                }
            }
        }

    Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
    [stderr]
    [HH:MM:SS] train01: creating… [Ns]
    [HH:MM:SS] train01: create request accepted [Ns]
    [HH:MM:SS] train01: create done [Ns]
    [HH:MM:SS] train01: created [Ns]
    Apply complete! Resources: 1 added, 0 changed, 0 replaced, 0 destroyed.
    "#);
}
