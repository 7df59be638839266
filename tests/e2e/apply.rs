//! Creating and changing clusters: each kind of change reaches the API with the right mask,
//! mode and body, and the next plan is empty.

use serde_json::Value;

use crate::support::{
    ClusterSpec, Env, STACK, apply_ok, cluster_name, config, destroyed_attributes_elided, stderr,
    two_clusters,
};

/// The plan after an apply: no changes (several tests assert it, once each).
fn assert_no_changes(env: &Env) {
    insta::allow_duplicates! {
        insta::assert_snapshot!(
            env.transcript(&["plan", "--detailed-exitcode"]),
            @"No changes. Your clusters match the configuration."
        );
    }
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
    insta::assert_snapshot!(env.transcript(&["plan", "--detailed-exitcode"]), @r#"
    clusterform will perform the following actions:

      # train01 will be updated in place
      ~ cluster "train01" {
          ~ node_pool "cpu" {
              ~ scaling_spec {
                  ~ max_node_count = 4 -> 8
                    # (1 unchanged attribute hidden)
                }
                # (1 unchanged attribute hidden)
                # (1 unchanged block hidden)
            }
            # (2 unchanged attributes hidden)
            # (3 unchanged blocks hidden)
        }
        update mask: node_pools
        update mode: USER_AND_SERVICE (the service may also refresh the startup, prolog and epilog scripts it manages; no node is recreated unless it refreshes a pool's startup script)
        impact: resizes pool cpu
        Warning: this node_pools update sends back what the service filled in where the configuration sets nothing, which may pin it (an unset node_image follows the default image, a set one stays): node_pools[login].node_image = "slurm-24-11-ubuntu-2204", node_pools[cpu].boot_disk.boot_disk_type = "pd-ssd", node_pools[cpu].boot_disk.boot_disk_size_gb = 100, node_pools[cpu].node_image = "slurm-24-11-ubuntu-2204"

    Plan: 0 to add, 1 to change, 0 to replace, 0 to destroy.
    [exit status: 2]
    "#);

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
        extra_partition: true,
        ..ClusterSpec::default()
    }]));
    insta::assert_snapshot!(
        env.transcript(&["apply", "--auto-approve", "--update-mode", "USER_ONLY"]),
        @r#"
    clusterform will perform the following actions:

      # train01 will be updated in place
      ~ cluster "train01" {
          ~ orchestrator_spec {
              ~ slurm_spec {
                  + partition "all" {
                      + node_pool_ids = ["cpu", "login"]
                    }
                    # (3 unchanged attributes hidden)
                    # (1 unchanged block hidden)
                }
            }
            # (2 unchanged attributes hidden)
            # (3 unchanged blocks hidden)
        }
        update mask: orchestrator_spec.slurm_spec.partitions
        update mode: USER_ONLY (only the fields you set; the service does not refresh its managed fields)
        impact: slurm sync ≤ 15 s

    Plan: 0 to add, 1 to change, 0 to replace, 0 to destroy.
    [stderr]
    [HH:MM:SS] train01: updating… [Ns]
    [HH:MM:SS] train01: update request accepted [Ns]
    [HH:MM:SS] train01: update done [Ns]
    [HH:MM:SS] train01: updated [Ns]
    Apply complete! Resources: 0 added, 1 changed, 0 replaced, 0 destroyed.
    "#
    );
    let (query, _) = last_patch(&env);
    assert!(query.contains("updateMode=USER_ONLY"), "{query}");
}

#[test]
fn a_subnetwork_change_replaces_delete_then_create() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    crate::support::add_other_subnetwork(&env);
    env.emulator().clear_requests();
    let other = "projects/my-proj/regions/us-central1/subnetworks/other";
    env.write_config(&config(&[ClusterSpec::default()]).replace(
        "projects/my-proj/regions/us-central1/subnetworks/default",
        other,
    ));
    insta::assert_snapshot!(env.transcript(&["apply", "--auto-approve"]), @r#"
    clusterform will perform the following actions:

      # train01 must be replaced
    -/+ cluster "train01" {
          ~ network {
              ~ subnetwork = "projects/my-proj/regions/us-central1/subnetworks/default" -> "projects/my-proj/regions/us-central1/subnetworks/other" # forces replacement
                # (1 unchanged attribute hidden)
            }
            # (2 unchanged attributes hidden)
            # (3 unchanged blocks hidden)
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
    let live = env.emulator().cluster(&cluster_name("train01")).unwrap();
    assert_eq!(live["network"]["subnetwork"], other);
}

#[test]
fn a_removed_block_is_deleted() {
    let env = Env::new(100);
    apply_ok(&env, &two_clusters());
    env.write_config(&config(&[ClusterSpec::default()]));
    insta::assert_snapshot!(env.transcript(&["apply", "--auto-approve"]).normalized_with(destroyed_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train02 will be destroyed: owned by stack "research" and no longer in the configuration
      - cluster "train02" { … }
        # no Slurm jobs active now

    Plan: 0 to add, 0 to change, 0 to replace, 1 to destroy.
    [stderr]
    [HH:MM:SS] train02: destroying… [Ns]
    [HH:MM:SS] train02: delete request accepted [Ns]
    [HH:MM:SS] train02: delete done [Ns]
    [HH:MM:SS] train02: destroyed [Ns]
    Apply complete! Resources: 0 added, 0 changed, 0 replaced, 1 destroyed.
    "#);
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
    assert_eq!(plan["format_version"], 5);
    let request = &plan["changes"][0]["requests"][0];
    assert_eq!(request["method"], "POST");
    assert!(env.mutations().is_empty(), "plan sends nothing");
}
