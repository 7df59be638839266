//! What clusterform remembers of its own runs (the applied record's marks) and says about it:
//! a cluster in ERROR is replaced only when a create of ours left it so (taint); a replacement
//! that found no machines says the cluster is now missing, in the summary and in `status`; a
//! cluster `destroy --idle-for` deleted is re-created with a note saying why it was gone.

use std::time::Duration;

use clusterform_emulator::EmulatorOptions;
use serde_json::{Value, json};

use crate::support::{
    ClusterSpec, Env, TOKEN, apply_ok, assert_succeeded, cluster_name, config,
    created_attributes_elided, failure_seconds_hidden, seconds_of_ages_hidden, stdout,
};

fn sent(env: &Env, method: &str) -> usize {
    env.mutations()
        .iter()
        .filter(|r| r.method == method)
        .count()
}

/// An environment whose emulator has no capacity for `machine_type`.
fn short_of(machine_type: &str) -> Env {
    Env::with_options(EmulatorOptions {
        operation_duration: Duration::from_millis(100),
        required_token: Some(TOKEN.to_owned()),
        project_numbers: true,
        capacity_failures: vec![machine_type.parse().unwrap()],
        ..EmulatorOptions::default()
    })
}

/// The `plan --json` document.
fn plan_json(env: &Env) -> Value {
    let output = env.run(&["plan", "--json"]);
    serde_json::from_str(&stdout(&output)).unwrap()
}

#[test]
fn a_cluster_that_ran_then_went_into_error_is_reported_never_replaced_unasked() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    assert!(env.emulator().set_cluster_status(
        &cluster_name("train01"),
        "ERROR",
        Some("boot disk corrupted"),
    ));
    insta::assert_snapshot!(env.transcript(&["apply", "--auto-approve"]), @"
    No changes. Your clusters match the configuration.
    Note: train01: the cluster is in ERROR since [TIME] (INTERNAL: boot disk corrupted); it is left as it is, since no create of clusterform's failed there: `clusterform apply --replace train01` replaces it
    ");
    assert_eq!(sent(&env, "DELETE"), 0, "nothing is replaced unasked");

    let document = plan_json(&env);
    let change = &document["changes"][0];
    assert_eq!(change["action"], "no_op", "{change}");
    assert_eq!(change["in_error"]["state"], "ERROR", "{change}");
    assert_eq!(
        change["in_error"]["detail"],
        "INTERNAL: boot disk corrupted"
    );
    assert!(change["in_error"]["since"].as_str().is_some(), "{change}");

    insta::assert_snapshot!(env.transcript(&["status", "--detailed-exitcode"]), @r#"
    PROJECT  REGION       ID       STATE  NODES             SLURM JOBS  SLURM NODES  IDLE SINCE
    my-proj  us-central1  train01  ERROR  login: 0; cpu: 0  -           -            -

    Needs attention:
      train01: cluster is in ERROR: boot disk corrupted

    Fleet: 1 cluster; GPUs running: none; idle GPU-hours: 0.0
    [exit status: 2]
    "#);

    let replaced = env.run(&["apply", "--replace", "train01", "--auto-approve"]);
    assert_succeeded(&replaced);
    assert_eq!(sent(&env, "DELETE"), 1);
    let live = env.emulator().cluster(&cluster_name("train01")).unwrap();
    assert_eq!(live["clusterStatus"]["state"], "RUNNING");
}

#[test]
fn a_failed_create_of_ours_left_in_error_is_replaced_by_the_next_plan() {
    let env = short_of("n2-standard-8");
    env.write_config(&config(&[ClusterSpec::protected()]));
    let failed = env.run(&["apply", "--auto-approve"]);
    assert_eq!(failed.status.code(), Some(1));
    let live = env.emulator().cluster(&cluster_name("train01")).unwrap();
    assert_eq!(live["clusterStatus"]["state"], "ERROR");
    // Tainted: the plan would replace it, which prevent_destroy forbids.
    insta::assert_snapshot!(env.transcript(&["plan"]), @"
    [stderr]
    Error: cluster `train01` is in ERROR (Cluster creation failed; the cluster cannot be used and should be deleted; RESOURCE_EXHAUSTED: The zone 'projects/253589482369/zones/us-central1-a' does not have enough resources available to fulfill the request. '(resource type:compute)'. (state:STOCKOUT)), and lifecycle.prevent_destroy forbids replacing it
      hint: repair the cluster in the console, or remove `prevent_destroy = true` to let clusterform replace it
    [exit status: 1]
    ");
    // Without the protection, the next plan replaces it.
    env.write_config(&config(&[ClusterSpec::default()]));
    insta::assert_snapshot!(env.transcript(&["plan", "--detailed-exitcode"]), @r#"
    clusterform will perform the following actions:

      # train01 is in ERROR (Cluster creation failed; the cluster cannot be used and should be deleted; RESOURCE_EXHAUSTED: The zone 'projects/253589482369/zones/us-central1-a' does not have enough resources available to fulfill the request. '(resource type:compute)'. (state:STOCKOUT)); it will be replaced
    -/+ cluster "train01" {
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
        impact: replaces cluster
        # the live cluster is deleted first: its machines are not held for the new one, so if the create finds no machines, train01 is gone
        # Slurm is not asked while the cluster is ERROR

    Plan: 0 to add, 0 to change, 1 to replace, 0 to destroy.
    [exit status: 2]
    "#);
}

#[test]
fn a_replacement_that_finds_no_machines_says_the_cluster_is_missing() {
    let env = short_of("n2-standard-32");
    apply_ok(&env, &[ClusterSpec::default()]);
    let bigger = config(&[ClusterSpec::default()]).replace(
        "machine_type = \"n2-standard-8\"",
        "machine_type = \"n2-standard-32\"",
    );
    assert_ne!(bigger, config(&[ClusterSpec::default()]));
    env.write_config(&bigger);
    insta::assert_snapshot!(
        env.transcript(&["apply", "--auto-approve"]).normalized_with(failure_seconds_hidden),
        @r#"
    clusterform will perform the following actions:

      # train01 must be replaced
    -/+ cluster "train01" {
          ~ node_pool "login" {
              ~ machine_spec {
                  ~ machine_type = "n2-standard-8" -> "n2-standard-32" # forces replacement
                }
                # (2 unchanged attributes hidden)
                # (2 unchanged blocks hidden)
            }
          ~ node_pool "cpu" {
              ~ machine_spec {
                  ~ machine_type = "n2-standard-8" -> "n2-standard-32" # forces replacement
                }
                # (1 unchanged attribute hidden)
                # (1 unchanged block hidden)
            }
            # (2 unchanged attributes hidden)
            # (2 unchanged blocks hidden)
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
    [HH:MM:SS] train01: the create found no capacity (STOCKOUT in us-central1-a); deleting the cluster it left in ERROR [Ns]
    [HH:MM:SS] train01: delete request accepted [Ns]
    [HH:MM:SS] train01: delete done [Ns]
    [HH:MM:SS] train01: FAILED after [N]s: found no capacity (STOCKOUT in us-central1-a)
    Error: Replacement of cluster train01 failed: projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01: the create found no capacity (STOCKOUT in us-central1-a); the service said "The zone 'projects/253589482369/zones/us-central1-a' does not have enough resources available to fulfill the request. '(resource type:compute)'. (state:STOCKOUT)"; the replacement had deleted the cluster first, so it is now missing
      hint: the zone has no such machines now: run `clusterform apply` again later, or add a `fallback` block to the pool (another machine type, or another provisioning model such as FLEX_START or SPOT)
    Warning: train01 was deleted for the replacement and is now missing: no attempt could create it again; `clusterform apply` creates it once machines are available
    Error: 1 of 1 actions failed
      hint: fix the cause above and run `clusterform apply` again; finished clusters are not touched twice
    [exit status: 1]
    "#
    );
    assert!(env.emulator().cluster(&cluster_name("train01")).is_none());
    insta::assert_snapshot!(env.transcript(&["status", "--detailed-exitcode"]), @"
    PROJECT  REGION       ID       STATE        NODES  SLURM JOBS  SLURM NODES  IDLE SINCE
    my-proj  us-central1  train01  not created  -      -           -            -

    Needs attention:
      train01: cluster is missing: a replacement deleted it, then could not create it again (at [TIME]); `clusterform apply` creates it
    [exit status: 2]
    ");
    let status = env.run(&["status", "--json"]);
    let status: Value = serde_json::from_str(&stdout(&status)).unwrap();
    assert_eq!(status["needs_attention"], true);
    assert_eq!(
        status["clusters"][0]["recorded"]["kind"],
        "deleted_for_replacement"
    );
}

#[test]
fn the_json_summary_of_a_replacement_that_finds_no_machines_names_the_missing_cluster() {
    let env = short_of("n2-standard-32");
    apply_ok(&env, &[ClusterSpec::default()]);
    env.write_config(&config(&[ClusterSpec::default()]).replace(
        "machine_type = \"n2-standard-8\"",
        "machine_type = \"n2-standard-32\"",
    ));
    let output = env.run(&["apply", "--auto-approve", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(!text.contains("nothing was left behind"), "{text}");
    let summary: Value = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|event| event["type"] == "summary")
        .unwrap();
    assert_eq!(summary["success"], false);
    assert_eq!(summary["missing"][0]["address"]["id"], "train01");
    assert_eq!(summary["missing"][0]["reason"], "deleted_for_replacement");
    let message = summary["missing"][0]["message"].as_str().unwrap();
    assert!(message.contains("is now missing"), "{message}");
}

fn idle_node(minutes_ago: i64) -> Value {
    let last_busy = time::OffsetDateTime::now_utc().unix_timestamp() - minutes_ago * 60 - 30;
    json!({"name": "cpu-0", "state": ["IDLE", "POWERED_DOWN"],
           "last_busy": {"set": true, "infinite": false, "number": last_busy}})
}

#[test]
fn the_next_plan_says_a_cluster_was_deleted_for_being_idle() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.emulator()
        .set_slurm_nodes(&cluster_name("train01"), vec![idle_node(300)]);
    let destroyed = env.run(&["destroy", "--idle-for", "2h", "--auto-approve"]);
    assert_succeeded(&destroyed);
    assert!(env.emulator().cluster(&cluster_name("train01")).is_none());

    insta::assert_snapshot!(
        env.transcript(&["plan"]).normalized_with(created_attributes_elided).normalized_with(seconds_of_ages_hidden),
        @r#"
    clusterform will perform the following actions:

      # train01 was deleted for being idle at [TIME] (destroy --idle-for 2h); apply creates it again
      + cluster "train01" { … }
        # its Slurm then: no active job or busy node; last busy 5h[S]s ago (>= 2h)

    Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
    "#
    );
    let document = plan_json(&env);
    let reason = &document["changes"][0]["reason"];
    assert_eq!(reason["kind"], "recreate_after_idle", "{reason}");
    assert_eq!(reason["idle_for"], "2h");
    assert!(reason["evidence"].as_str().unwrap().contains("last busy"));
    insta::assert_snapshot!(env.transcript(&["status"]), @"
    PROJECT  REGION       ID       STATE        NODES  SLURM JOBS  SLURM NODES  IDLE SINCE
    my-proj  us-central1  train01  not created  -      -           -            -

    Needs attention:
      train01: cluster is not created: it was deleted for being idle at [TIME] (destroy --idle-for 2h); `clusterform apply` creates it again, or remove its block
    ");

    // The block kept, apply creates it again, and the record forgets the deletion.
    assert_succeeded(&env.run(&["apply", "--auto-approve"]));
    let record = std::fs::read_to_string(env.path().join(".clusterform/applied.json")).unwrap();
    assert!(!record.contains("deleted_idle"), "{record}");
    insta::assert_snapshot!(env.transcript(&["plan"]), @"No changes. Your clusters match the configuration.");
}

#[test]
fn a_cluster_deleted_for_being_idle_whose_block_is_removed_is_forgotten_harmlessly() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.emulator()
        .set_slurm_nodes(&cluster_name("train01"), vec![idle_node(300)]);
    assert_succeeded(&env.run(&["destroy", "--idle-for", "2h", "--auto-approve"]));
    env.write_config(&config(&[ClusterSpec::named("train02")]));
    insta::assert_snapshot!(
        env.transcript(&["plan"]).normalized_with(created_attributes_elided),
        @r#"
    clusterform will perform the following actions:

      # train02 will be created
      + cluster "train02" { … }

    Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
    "#
    );
}
