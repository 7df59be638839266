//! The Slurm jobs a plan shows under a disruptive change (node recreation, a destroy), none
//! for a harmless one, and "unknown" without failing when Slurm cannot be reached.

use serde_json::{Value, json};

use crate::support::{
    ClusterSpec, Env, apply_ok, cluster_name, config, destroyed_attributes_elided, stdout,
};

/// The default cluster with a startup script on the `cpu` pool: its nodes are recreated.
fn with_startup_script() -> String {
    config(&[ClusterSpec::default()]).replace(
        "    zone = \"us-central1-a\"\n",
        "    zone = \"us-central1-a\"\n    startup_script = \"#!/bin/bash\\necho hi\"\n",
    )
}

/// A running job in partition `cpu`, whose nodes are pool `cpu`'s; and a pending one that may
/// start in a partition the cluster does not have.
fn training_jobs() -> Vec<Value> {
    vec![
        json!({"job_id": 17, "name": "train-llm", "user_name": "alice", "job_state": ["RUNNING"],
               "partition": "cpu", "nodes": "cpu-[0-1]",
               "end_time": {"set": true, "infinite": false, "number": 4_000_000_000_i64}}),
        json!({"job_id": 18, "name": "eval", "user_name": "bob", "job_state": ["PENDING"],
               "partition": "gone"}),
    ]
}

fn slurm_calls(env: &Env) -> usize {
    env.emulator()
        .requests()
        .iter()
        .filter(|r| r.path.ends_with(":callSlurmRestApi"))
        .count()
}

/// The emulator serves Slurm's REST v0.0.40 to v0.0.42: a run asks v0.0.45, v0.0.44 and
/// v0.0.43 first.
const VERSIONS_NOT_SERVED: usize = 3;

#[test]
fn a_plan_shows_the_jobs_a_disruptive_change_would_hit() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.emulator()
        .set_slurm_jobs(&cluster_name("train01"), training_jobs());
    env.write_config(&with_startup_script());
    env.emulator().clear_requests();
    let plan = env.run(&["plan", "--out", "saved.plan"]);
    insta::assert_snapshot!(env.transcript_of(&plan), @r#"
    clusterform will perform the following actions:

      # train01 will be updated in place
      ~ cluster "train01" {
          ~ node_pool "cpu" {
              + startup_script = <<-EOT
                    #!/bin/bash
                    echo hi
                EOT
                # (1 unchanged attribute hidden)
                # (2 unchanged blocks hidden)
            }
            # (2 unchanged attributes hidden)
            # (3 unchanged blocks hidden)
        }
        update mask: node_pools
        update mode: USER_AND_SERVICE (the service may also refresh the startup, prolog and epilog scripts it manages; a refreshed startup script recreates the pool's nodes)
        impact: recreates nodes of pool cpu
        Warning: this node_pools update sends back what the service filled in where the configuration sets nothing, which may pin it (an unset node_image follows the default image, a set one stays): node_pools[login].node_image = "slurm-24-11-ubuntu-2204", node_pools[cpu].boot_disk.boot_disk_type = "pd-ssd", node_pools[cpu].boot_disk.boot_disk_size_gb = 100, node_pools[cpu].node_image = "slurm-24-11-ubuntu-2204"
        # 2 Slurm jobs active now: 1 RUNNING, 1 PENDING
        # on pool cpu, whose nodes are recreated:
        #   17 train-llm (alice, RUNNING on cpu-[0-1])
        # on pools not known (no partition that names a pool), so perhaps hit:
        #   18 eval (bob, PENDING)

    Plan: 0 to add, 1 to change, 0 to replace, 0 to destroy.
    [stderr]

    Saved the plan to saved.plan. To perform exactly these actions, run:
      clusterform apply saved.plan
    "#);
    assert_eq!(
        slurm_calls(&env),
        VERSIONS_NOT_SERVED + 1,
        "one look per disruptive cluster, once its REST version is found"
    );
    let without_jobs: String = stdout(&plan)
        .lines()
        .filter(|line| !line.starts_with("    # "))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(
        env.transcript(&["show", "saved.plan"]).to_string(),
        format!(
            "Made with: clusterform plan\n\n{without_jobs}[stderr]\nThe plan file holds no Slurm jobs: `clusterform apply \
             saved.plan` reads them again when it runs, on the 1 cluster it takes nodes from, and \
             refuses to stop running jobs unless --allow-disruption is given.\n"
        ),
        "a plan file does not keep what was running, and show says apply reads them"
    );

    let json = env.run(&["plan", "--json"]);
    let document: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        document["changes"][0]["running_jobs"]["status"], "known",
        "{document}"
    );
    assert_eq!(document["changes"][0]["running_jobs"]["jobs"][0]["id"], 17);
    assert_eq!(
        document["changes"][0]["running_jobs"]["jobs"][0]["pools"],
        serde_json::json!(["cpu"]),
        "the pools of its partition in the live cluster"
    );

    insta::assert_snapshot!(env.transcript(&["destroy", "--auto-approve", "--allow-disruption"]).normalized_with(destroyed_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train01 will be destroyed: declared in this configuration, and destroy was requested
      - cluster "train01" { … }
        # 2 Slurm jobs active now: 1 RUNNING, 1 PENDING
        # all of them stop with the cluster:
        #   17 train-llm (alice, RUNNING on cpu-[0-1])
        #   18 eval (bob, PENDING)

    Plan: 0 to add, 0 to change, 0 to replace, 1 to destroy.
    [stderr]
    Warning: going ahead (--allow-disruption): destroying cluster train01 would stop 1 Slurm job that holds nodes: 17 train-llm (alice, RUNNING)
    [HH:MM:SS] train01: destroying… [Ns]
    [HH:MM:SS] train01: delete request accepted [Ns]
    [HH:MM:SS] train01: delete done [Ns]
    [HH:MM:SS] train01: destroyed [Ns]
    Destroy complete! Resources: 1 destroyed.
    "#);
}

#[test]
fn a_smaller_pool_shows_the_jobs_it_may_stop() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.emulator()
        .set_slurm_jobs(&cluster_name("train01"), training_jobs());
    env.write_config(&config(&[ClusterSpec {
        max_nodes: 2,
        ..ClusterSpec::default()
    }]));
    insta::assert_snapshot!(env.transcript(&["plan"]), @r#"
    clusterform will perform the following actions:

      # train01 will be updated in place
      ~ cluster "train01" {
          ~ node_pool "cpu" {
              ~ scaling_spec {
                  ~ max_node_count = 4 -> 2
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
        Warning: max_node_count of pool cpu goes from 4 to 2: the cluster reports 0 nodes in the pool, none above the new maximum, so none is removed now
        Warning: this node_pools update sends back what the service filled in where the configuration sets nothing, which may pin it (an unset node_image follows the default image, a set one stays): node_pools[login].node_image = "slurm-24-11-ubuntu-2204", node_pools[cpu].boot_disk.boot_disk_type = "pd-ssd", node_pools[cpu].boot_disk.boot_disk_size_gb = 100, node_pools[cpu].node_image = "slurm-24-11-ubuntu-2204"
        # 2 Slurm jobs active now: 1 RUNNING, 1 PENDING
        # on pool cpu, which shrinks from 4 to 2 nodes (2 go; the service picks which):
        #   17 train-llm (alice, RUNNING on cpu-[0-1])
        # on pools not known (no partition that names a pool), so perhaps hit:
        #   18 eval (bob, PENDING)

    Plan: 0 to add, 1 to change, 0 to replace, 0 to destroy.
    "#);
}

#[test]
fn a_labels_only_change_asks_slurm_nothing() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.emulator()
        .set_slurm_jobs(&cluster_name("train01"), training_jobs());
    env.write_config(&config(&[ClusterSpec {
        labels: r#"{ team = "research" }"#,
        ..ClusterSpec::default()
    }]));
    env.emulator().clear_requests();
    insta::assert_snapshot!(env.transcript(&["plan"]), @r#"
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
    assert_eq!(slurm_calls(&env), 0);
}

#[test]
fn an_unreachable_slurm_is_unknown_and_changes_no_exit_code() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.emulator()
        .set_slurm_unreachable(&cluster_name("train01"), true);
    env.write_config(&with_startup_script());
    env.emulator().clear_requests();
    insta::assert_snapshot!(env.transcript(&["plan", "--detailed-exitcode"]), @r#"
    clusterform will perform the following actions:

      # train01 will be updated in place
      ~ cluster "train01" {
          ~ node_pool "cpu" {
              + startup_script = <<-EOT
                    #!/bin/bash
                    echo hi
                EOT
                # (1 unchanged attribute hidden)
                # (2 unchanged blocks hidden)
            }
            # (2 unchanged attributes hidden)
            # (3 unchanged blocks hidden)
        }
        update mask: node_pools
        update mode: USER_AND_SERVICE (the service may also refresh the startup, prolog and epilog scripts it manages; a refreshed startup script recreates the pool's nodes)
        impact: recreates nodes of pool cpu
        Warning: this node_pools update sends back what the service filled in where the configuration sets nothing, which may pin it (an unset node_image follows the default image, a set one stays): node_pools[login].node_image = "slurm-24-11-ubuntu-2204", node_pools[cpu].boot_disk.boot_disk_type = "pd-ssd", node_pools[cpu].boot_disk.boot_disk_size_gb = 100, node_pools[cpu].node_image = "slurm-24-11-ubuntu-2204"
        # Slurm jobs active now: unknown (Slurm REST API unreachable: POST [ENDPOINT]/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01:callSlurmRestApi failed: UNAVAILABLE (503): The Slurm REST API of cluster projects/253589482369/locations/us-central1/modelDevelopmentClusters/train01 is unreachable.)

    Plan: 0 to add, 1 to change, 0 to replace, 0 to destroy.
    [exit status: 2]
    "#);
    assert!(
        slurm_calls(&env) > 1,
        "the jobs decide whether work may stop: their read is retried as reads are"
    );
    assert!(env.run(&["plan"]).status.success());
}
