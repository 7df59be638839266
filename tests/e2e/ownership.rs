//! What is not provably ours is never touched: `removed` releases a cluster without deleting
//! it, a destroy interrupted at any point is finished by a re-run without a second DELETE, and
//! a broken cluster is replaced (or, protected, stops the plan) instead of passing as healthy.

use std::path::Path;
use std::time::{Duration, Instant};

use clusterform_emulator::FaultSpec;

use crate::support::{
    ClusterSpec, Env, PROVIDER, apply_ok, assert_succeeded, cluster_hcl, cluster_name,
    created_attributes_elided, destroyed_attributes_elided, stdout,
};

/// How many mutating requests of `method` (POST: creates) the API received.
fn sent(env: &Env, method: &str) -> usize {
    env.mutations()
        .iter()
        .filter(|r| r.method == method)
        .count()
}

fn deletes(env: &Env) -> usize {
    sent(env, "DELETE")
}

#[test]
fn a_removed_block_releases_the_cluster_without_deleting_it() {
    let env = Env::new(100);
    let kept = ClusterSpec::default();
    let released = ClusterSpec {
        id: "old01",
        ..ClusterSpec::default()
    };
    apply_ok(&env, &[kept.clone(), released]);
    env.write_config(&format!(
        "{PROVIDER}{}\nremoved {{\n  cluster = \"old01\"\n}}\n",
        cluster_hcl(&kept)
    ));

    let plan = env.run(&["plan"]);
    assert_succeeded(&plan);

    let apply = env.run(&["apply", "--auto-approve"]);
    assert_eq!(stdout(&apply), stdout(&plan), "apply prints the plan");
    insta::assert_snapshot!(env.transcript_of(&apply), @r#"
    clusterform will perform the following actions:

      # old01 will no longer be managed (not destroyed)
      . cluster "old01" {
        }
        update mask: labels
        update mode: USER_ONLY (only the fields you set; the service does not refresh its managed fields)

    Plan: 0 to add, 0 to change, 0 to replace, 0 to destroy, 1 to release.
    [stderr]
    [HH:MM:SS] old01: releasing… [Ns]
    [HH:MM:SS] old01: update request accepted [Ns]
    [HH:MM:SS] old01: update done [Ns]
    [HH:MM:SS] old01: released [Ns]
    Apply complete! Resources: 0 added, 0 changed, 0 replaced, 0 destroyed, 1 released.
    "#);
    assert_eq!(deletes(&env), 0);
    let old = env
        .emulator()
        .cluster(&cluster_name("old01"))
        .expect("still there");
    assert_eq!(
        old["labels"],
        serde_json::json!({"team": "ml"}),
        "only the ownership label went"
    );

    insta::assert_snapshot!(env.transcript(&["plan"]), @"
    No changes. Your clusters match the configuration.
    [stderr]
    Warning: the removed block for old01 (main.hcl:56) names a cluster that no stack owns (it has no clusterform-stack label): nothing to release; the block can go
    ");

    env.write_config(&format!(
        "{PROVIDER}{}\nremoved {{\n  cluster = \"old02\"\n}}\n",
        cluster_hcl(&kept)
    ));
    insta::assert_snapshot!(env.transcript(&["plan"]), @"
    No changes. Your clusters match the configuration.
    [stderr]
    Warning: the removed block for old02 (main.hcl:56) matches no cluster in my-proj/us-central1: nothing to release. Check its ID, project and region; once a release is done the block can go
    ");

    env.write_config(&format!("{PROVIDER}{}", cluster_hcl(&kept)));
    insta::assert_snapshot!(env.transcript(&["plan"]), @"No changes. Your clusters match the configuration.");
}

/// A `removed` block in the wrong region releases nothing, and its warning says where the
/// stack's cluster of that ID is and that the same plan destroys it there.
#[test]
fn a_removed_block_in_another_region_says_where_its_cluster_is_and_that_the_plan_destroys_it() {
    let env = Env::new(100);
    let kept = ClusterSpec::default();
    let misplaced = ClusterSpec {
        id: "old01",
        ..ClusterSpec::default()
    };
    apply_ok(&env, &[kept.clone(), misplaced]);
    env.write_config(&format!(
        "{PROVIDER}{}\nremoved {{\n  cluster = \"old01\"\n  region  = \"europe-west4\"\n}}\n",
        cluster_hcl(&kept)
    ));
    let plan = env
        .transcript(&["plan"])
        .normalized_with(destroyed_attributes_elided);
    insta::assert_snapshot!(plan, @r#"
    clusterform will perform the following actions:

      # old01 will be destroyed: owned by stack "research" and no longer in the configuration
      - cluster "old01" { … }
        # no Slurm jobs active now

    Plan: 0 to add, 0 to change, 0 to replace, 1 to destroy.
    [stderr]
    Warning: the removed block for old01 (main.hcl:56) names my-proj/europe-west4, where no cluster old01 lives, so it releases nothing; this stack's old01 lives in my-proj/us-central1 (this plan destroys it there). To release it instead, give the block that project and region
    "#);
}

/// Runs the binary with `args` and kills it (SIGKILL, as a crash would) once it has journaled
/// an operation.
#[cfg(unix)]
fn crash_once_journaled(env: &Env, args: &[&str]) {
    let journal = env.journal_path();
    let mut child = env.spawn(args, &[]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !journal_mentions_an_operation(&journal) {
        assert!(Instant::now() < deadline, "no operation was ever journaled");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[cfg(unix)]
fn crash_a_destroy(env: &Env) {
    crash_once_journaled(env, &["destroy", "--auto-approve"]);
    assert_eq!(deletes(env), 1);
}

fn journal_mentions_an_operation(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|text| text.contains("/operations/"))
}

#[test]
#[cfg(unix)]
fn a_crashed_destroy_is_finished_by_a_rerun_without_a_second_delete() {
    let env = Env::new(2_000);
    apply_ok(&env, &[ClusterSpec::default()]);
    crash_a_destroy(&env);

    let rerun = env.run(&["destroy", "--auto-approve"]);
    assert_succeeded(&rerun);
    assert_eq!(
        deletes(&env),
        1,
        "the journaled delete was awaited, not sent again"
    );
    assert!(env.emulator().cluster(&cluster_name("train01")).is_none());
}

#[test]
#[cfg(unix)]
fn a_deletion_the_journal_lost_is_named_by_plan_and_awaited_by_destroy() {
    let env = Env::new(3_000);
    apply_ok(&env, &[ClusterSpec::default()]);
    crash_a_destroy(&env);
    // The crash came before the journal reached the disk: nothing records the operation.
    std::fs::remove_file(env.journal_path()).unwrap();

    insta::assert_snapshot!(env.transcript(&["plan"]).normalized_with(created_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train01 is being deleted; it will be created again once it is gone
      + cluster "train01" { … }
        Warning: the cluster is being deleted right now (STOPPING): apply waits until it is gone, then creates it again

    Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
    "#);

    insta::assert_snapshot!(env.transcript(&["destroy", "--auto-approve"]).normalized_with(destroyed_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train01 is being deleted already; clusterform waits until it is gone
      - cluster "train01" { … }
        # Slurm is not asked while the cluster is STOPPING

    Plan: 0 to add, 0 to change, 0 to replace, 1 to destroy.
    [stderr]
    [HH:MM:SS] train01: destroying… [Ns]
    [HH:MM:SS] train01: waiting for the cluster to leave STOPPING… [Ns]
    [HH:MM:SS] train01: destroyed [Ns]
    Destroy complete! Resources: 1 destroyed.
    "#);
    assert_eq!(deletes(&env), 1, "no second DELETE");
    assert!(env.emulator().cluster(&cluster_name("train01")).is_none());
}

fn creates(env: &Env) -> usize {
    sent(env, "POST")
}

#[test]
fn a_cluster_our_failed_create_left_in_error_is_replaced() {
    let env = Env::new(100);
    env.emulator().set_faults(FaultSpec {
        operation_failure_rate: 1.0,
        ..FaultSpec::default()
    });
    env.write_config(&crate::support::config(&[ClusterSpec::default()]));
    let failed = env.run(&["apply", "--auto-approve"]);
    assert_eq!(failed.status.code(), Some(1), "{}", stdout(&failed));
    env.emulator().set_faults(FaultSpec::default());

    insta::assert_snapshot!(env.transcript(&["plan", "--detailed-exitcode"]), @r#"
    clusterform will perform the following actions:

      # train01 is in ERROR (Cluster creation failed; the cluster cannot be used and should be deleted; INTERNAL: The operation failed (injected by the emulator's opfail fault)); it will be replaced
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

    let apply = env.run(&["apply", "--auto-approve"]);
    assert_succeeded(&apply);
    assert_eq!((creates(&env), deletes(&env)), (2, 1));
    let live = env.emulator().cluster(&cluster_name("train01")).unwrap();
    assert_eq!(live["clusterStatus"]["state"], "RUNNING");
    insta::assert_snapshot!(env.transcript(&["plan"]), @"No changes. Your clusters match the configuration.");
}

/// A protected cluster that ran, then went into ERROR, is not tainted: the plan leaves it (and
/// says so) instead of stopping at prevent_destroy. (A tainted one under prevent_destroy stops
/// the plan: `remembered.rs`.)
#[test]
fn a_protected_cluster_that_went_into_error_is_left_as_it_is() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::protected()]);
    let broken = env.emulator().set_cluster_status(
        &cluster_name("train01"),
        "ERROR",
        Some("boot disk corrupted"),
    );
    assert!(broken);
    insta::assert_snapshot!(env.transcript(&["plan"]), @"
    No changes. Your clusters match the configuration.
    Note: train01: the cluster is in ERROR since [TIME] (INTERNAL: boot disk corrupted); it is left as it is, since no create of clusterform's failed there: `clusterform apply --replace train01` replaces it
    ");
    let apply = env.run(&["apply", "--auto-approve"]);
    assert_succeeded(&apply);
    assert_eq!(deletes(&env), 0);
}

#[test]
fn plan_names_a_journal_entry_it_cannot_use() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.write_unusable_journal_entry();

    insta::assert_snapshot!(env.transcript(&["plan"]), @"
    No changes. Your clusters match the configuration.
    [stderr]
    Warning: entry 1 of ./.clusterform/journal.json cannot be used (`../../elsewhere` is not an operation name: expected `projects/{P}/locations/{R}/operations/{ID}`); apply refuses to act on cluster train01 until it is fixed or removed
    ");
}

#[test]
#[cfg(unix)]
fn an_update_whose_journal_entry_was_lost_is_not_sent_twice() {
    let env = Env::new(2_500);
    apply_ok(&env, &[ClusterSpec::default()]);
    let bigger = ClusterSpec {
        max_nodes: 6,
        ..ClusterSpec::default()
    };
    env.write_config(&crate::support::config(&[bigger]));
    crash_once_journaled(&env, &["apply", "--auto-approve"]);
    // The crash came before the journal reached the disk.
    std::fs::remove_file(env.journal_path()).unwrap();
    assert_eq!(sent(&env, "PATCH"), 1);

    insta::assert_snapshot!(env.transcript(&["apply", "--auto-approve"]), @"
    No changes. Your clusters match the configuration.
    [stderr]
    Waiting for clusters with an operation in flight (started by another run), to plan them again once it ends…
    [HH:MM:SS] train01: checking… [Ns]
    [HH:MM:SS] train01: waiting for the cluster to leave UPDATING… [Ns]
    [HH:MM:SS] train01: ready [Ns]
    ");
    assert_eq!(
        sent(&env, "PATCH"),
        1,
        "the PATCH in flight was waited for, not sent again"
    );
    let live = env.emulator().cluster(&cluster_name("train01")).unwrap();
    let cpu = live["nodePools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "cpu")
        .unwrap()
        .clone();
    assert_eq!(
        cpu["scalingSpec"]["maxNodeCount"]
            .to_string()
            .trim_matches('"'),
        "6"
    );
}
