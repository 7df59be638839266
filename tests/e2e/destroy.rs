//! `destroy`, `prevent_destroy`, and `destroy --idle-for` with injected Slurm jobs and nodes:
//! jobs slurmctld has forgotten, powered-down nodes, nodes without `last_busy`, an older
//! slurmrestd, an unreachable one.

use serde_json::{Value, json};

use crate::support::{
    ClusterSpec, Env, apply_ok, cluster_name, destroyed_attributes_elided, idle_seconds_hidden,
    seconds_of_ages_hidden,
};

#[test]
fn destroy_deletes_declared_clusters() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    insta::assert_snapshot!(env.transcript(&["destroy", "--auto-approve"]), @r#"
    clusterform will perform the following actions:

      # train01 will be destroyed: declared in this configuration, and destroy was requested
      - cluster "train01" {
          - display_name = "Research training" -> null
          - labels       = {
              - "team" = "ml" -> null
            }
          - network {
              - network    = "projects/my-proj/global/networks/default" -> null
              - subnetwork = "projects/my-proj/regions/us-central1/subnetworks/default" -> null
            }
          - node_pool "login" {
              - machine_spec {
                  - machine_type = "n2-standard-8" -> null
                }
              - scaling_spec {
                  - min_node_count = 1 -> null
                  - max_node_count = 1 -> null
                }
              - zone              = "us-central1-a" -> null
              - enable_public_ips = true -> null
              - boot_disk {
                  - boot_disk_type    = "pd-standard" -> null
                  - boot_disk_size_gb = 120 -> null
                }
              - node_image        = "slurm-24-11-ubuntu-2204" -> null
            }
          - node_pool "cpu" {
              - machine_spec {
                  - machine_type = "n2-standard-8" -> null
                }
              - scaling_spec {
                  - min_node_count = 0 -> null
                  - max_node_count = 4 -> null
                }
              - zone       = "us-central1-a" -> null
              - boot_disk {
                  - boot_disk_type    = "pd-ssd" -> null
                  - boot_disk_size_gb = 100 -> null
                }
              - node_image = "slurm-24-11-ubuntu-2204" -> null
            }
          - orchestrator_spec {
              - slurm_spec {
                  - home_directory_storage = "projects/my-proj/locations/us-central1-a/instances/home" -> null
                  - login_node_pool_id     = "login" -> null
                  - partition "cpu" {
                      - node_pool_ids = ["cpu"] -> null
                    }
                  - prolog_bash_scripts    = [
                      - <<-EOT
                            #!/bin/bash
                            echo prolog
                        EOT,
                    ] -> null
                }
            }
          - runtime_spec {
              - service_account = "253589482369-compute@developer.gserviceaccount.com" -> null
            }
        }
        # no Slurm jobs active now

    Plan: 0 to add, 0 to change, 0 to replace, 1 to destroy.
    [stderr]
    [HH:MM:SS] train01: destroying… [Ns]
    [HH:MM:SS] train01: delete request accepted [Ns]
    [HH:MM:SS] train01: delete done [Ns]
    [HH:MM:SS] train01: destroyed [Ns]
    Destroy complete! Resources: 1 destroyed.
    "#);
    assert!(env.emulator().cluster(&cluster_name("train01")).is_none());
    insta::assert_snapshot!(env.transcript(&["destroy", "--auto-approve"]), @"No clusters to destroy.");
    // The preview of nothing to delete says it as destroy does, and so does an idle report
    // of no cluster, in one line each.
    insta::assert_snapshot!(env.transcript(&["plan", "--destroy"]), @"No clusters to destroy.");
    insta::assert_snapshot!(env.transcript(&["plan", "--destroy", "--idle-for", "2h"]), @"
    No clusters to check for idleness.
    No clusters to destroy.
    ");
}

#[test]
fn prevent_destroy_refuses() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::protected()]);
    env.emulator().clear_requests();
    insta::assert_snapshot!(env.transcript(&["destroy", "--auto-approve"]), @"
    [stderr]
    Error: cluster `train01` has lifecycle.prevent_destroy set, but this plan would destroy it
      hint: remove `prevent_destroy = true` from the cluster's lifecycle block first, if this is intended
    [exit status: 1]
    ");
    assert!(env.mutations().is_empty());
}

fn number(n: i64) -> Value {
    json!({"set": true, "infinite": false, "number": n})
}

fn minutes_ago(minutes: i64) -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp() - minutes * 60
}

/// Half a minute more than `minutes_ago(minutes)`: an age the table shows in hours and minutes
/// (`1h1m`) whichever second the run reads the clock in.
fn minutes_and_a_half_ago(minutes: i64) -> i64 {
    minutes_ago(minutes) - 30
}

fn node(name: &str, state: &[&str], last_busy: i64) -> Value {
    json!({"name": name, "state": state, "last_busy": number(last_busy)})
}

fn spec(id: &'static str) -> ClusterSpec {
    ClusterSpec {
        id,
        ..ClusterSpec::default()
    }
}

#[test]
fn idle_for_deletes_only_provably_idle_clusters() {
    let env = Env::new(100);
    apply_ok(
        &env,
        &[
            spec("train01"),
            spec("agedout"),
            spec("old01"),
            spec("nolast"),
        ],
    );
    let e = env.emulator();
    e.set_slurm_jobs(
        &cluster_name("train01"),
        vec![
            json!({"job_id": 1, "job_state": ["RUNNING"], "user_name": "alice",
                    "end_time": number(minutes_ago(-60)), "nodes": "cpu-0"}),
        ],
    );
    e.set_slurm_nodes(
        &cluster_name("train01"),
        vec![node("cpu-0", &["ALLOCATED"], minutes_and_a_half_ago(61))],
    );
    // Its last job ended 90 minutes ago: slurmctld (MinJobAge 300 s) has forgotten it, but
    // the node remembers when it last ran work.
    e.set_slurm_jobs(
        &cluster_name("agedout"),
        vec![json!({"job_id": 2, "job_state": ["COMPLETED"], "end_time": number(minutes_and_a_half_ago(90))})],
    );
    e.set_slurm_nodes(
        &cluster_name("agedout"),
        vec![node("cpu-0", &["IDLE"], minutes_and_a_half_ago(90))],
    );
    e.set_slurm_nodes(
        &cluster_name("old01"),
        vec![
            node(
                "cpu-0",
                &["IDLE", "POWERED_DOWN"],
                minutes_and_a_half_ago(300),
            ),
            node(
                "cpu-1",
                &["IDLE", "POWERED_DOWN"],
                minutes_and_a_half_ago(310),
            ),
        ],
    );
    e.set_slurm_nodes(
        &cluster_name("nolast"),
        vec![json!({"name": "cpu-0", "state": ["IDLE", "POWERED_DOWN"]})],
    );
    insta::assert_snapshot!(
        env.transcript(&["destroy", "--idle-for", "2h", "--auto-approve"])
            .normalized_with(seconds_of_ages_hidden)
            .normalized_with(destroyed_attributes_elided),
        @r#"
    PROJECT  REGION       ID       STATE    ACTIVE JOBS  BUSY NODES  LAST BUSY                         GPUS  IDLE GPU-HOURS  VERDICT                      REASON
    my-proj  us-central1  agedout  RUNNING  0            0           [TIME] (1h30m ago)  0     0.0             idle, not long enough: keep  no active job or busy node; last busy 1h30m[S]s ago, less than 2h
    my-proj  us-central1  nolast   RUNNING  0            0           ?                                 0     ?               unknown: keep                node cpu-0 reports no last_busy
    my-proj  us-central1  old01    RUNNING  0            0           [TIME] (5h ago)     0     0.0             idle: destroy                no active job or busy node; last busy 5h[S]s ago (>= 2h)
    my-proj  us-central1  train01  RUNNING  1            1           [TIME] (1h1m ago)   0     0.0             busy: keep                   1 active job, 1 busy node
    clusterform will perform the following actions:

      # old01 will be destroyed: idle (no active job or busy node; last busy 5h[S]s ago (>= 2h))
      - cluster "old01" { … }
        # no Slurm jobs active now

    Plan: 0 to add, 0 to change, 0 to replace, 1 to destroy.
    [stderr]
    [HH:MM:SS] old01: destroying… [Ns]
    [HH:MM:SS] old01: delete request accepted [Ns]
    [HH:MM:SS] old01: delete done [Ns]
    [HH:MM:SS] old01: destroyed [Ns]
    Destroy complete! Resources: 1 destroyed.
    "#);
    assert!(e.cluster(&cluster_name("old01")).is_none());
    for kept in ["train01", "agedout", "nolast"] {
        assert!(e.cluster(&cluster_name(kept)).is_some(), "{kept}");
    }
}

#[test]
fn idle_for_falls_back_to_an_older_slurm_rest_version() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    let name = cluster_name("train01");
    env.emulator().set_slurm_api_versions(&name, &["v0.0.40"]);
    env.emulator().set_slurm_nodes(
        &name,
        vec![node(
            "cpu-0",
            &["IDLE", "POWERED_DOWN"],
            minutes_and_a_half_ago(300),
        )],
    );
    insta::assert_snapshot!(env.transcript(&["destroy", "--idle-for", "2h", "--auto-approve"]).normalized_with(seconds_of_ages_hidden).normalized_with(destroyed_attributes_elided), @r#"
    PROJECT  REGION       ID       STATE    ACTIVE JOBS  BUSY NODES  LAST BUSY                      GPUS  IDLE GPU-HOURS  VERDICT        REASON
    my-proj  us-central1  train01  RUNNING  0            0           [TIME] (5h ago)  0     0.0             idle: destroy  no active job or busy node; last busy 5h[S]s ago (>= 2h)
    clusterform will perform the following actions:

      # train01 will be destroyed: idle (no active job or busy node; last busy 5h[S]s ago (>= 2h))
      - cluster "train01" { … }
        # no Slurm jobs active now

    Plan: 0 to add, 0 to change, 0 to replace, 1 to destroy.
    [stderr]
    [HH:MM:SS] train01: destroying… [Ns]
    [HH:MM:SS] train01: delete request accepted [Ns]
    [HH:MM:SS] train01: delete done [Ns]
    [HH:MM:SS] train01: destroyed [Ns]
    Destroy complete! Resources: 1 destroyed.
    "#);
    assert!(env.emulator().cluster(&name).is_none());
}

#[test]
fn an_unreachable_slurm_is_never_idle() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.emulator()
        .set_slurm_unreachable(&cluster_name("train01"), true);
    insta::assert_snapshot!(env.transcript(&["destroy", "--idle-for", "0s", "--auto-approve"]), @"
    PROJECT  REGION       ID       STATE    ACTIVE JOBS  BUSY NODES  LAST BUSY  GPUS  IDLE GPU-HOURS  VERDICT        REASON
    my-proj  us-central1  train01  RUNNING  ?            ?           ?          0     ?               unknown: keep  Slurm REST API unreachable: POST [ENDPOINT]/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01:callSlurmRestApi failed: UNAVAILABLE (503): The Slurm REST API of cluster projects/253589482369/locations/us-central1/modelDevelopmentClusters/train01 is unreachable.
    No clusters to destroy.
    [stderr]
    Warning: --idle-for 0s is shorter than 10m: a cluster between two jobs qualifies as idle
    ");
    assert!(env.emulator().cluster(&cluster_name("train01")).is_some());
}

/// One look at Slurm decides and informs: the deletion shows the (no) active jobs of the same
/// answer the verdict came from; the plan does not ask for the jobs a second time.
#[test]
fn idle_for_asks_slurm_once_per_cluster() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    let name = cluster_name("train01");
    env.emulator().set_slurm_nodes(
        &name,
        vec![node(
            "cpu-0",
            &["IDLE", "POWERED_DOWN"],
            minutes_and_a_half_ago(300),
        )],
    );
    env.emulator().clear_requests();
    insta::assert_snapshot!(env.transcript(&["destroy", "--idle-for", "2h", "--auto-approve"]).normalized_with(seconds_of_ages_hidden).normalized_with(destroyed_attributes_elided), @r#"
    PROJECT  REGION       ID       STATE    ACTIVE JOBS  BUSY NODES  LAST BUSY                      GPUS  IDLE GPU-HOURS  VERDICT        REASON
    my-proj  us-central1  train01  RUNNING  0            0           [TIME] (5h ago)  0     0.0             idle: destroy  no active job or busy node; last busy 5h[S]s ago (>= 2h)
    clusterform will perform the following actions:

      # train01 will be destroyed: idle (no active job or busy node; last busy 5h[S]s ago (>= 2h))
      - cluster "train01" { … }
        # no Slurm jobs active now

    Plan: 0 to add, 0 to change, 0 to replace, 1 to destroy.
    [stderr]
    [HH:MM:SS] train01: destroying… [Ns]
    [HH:MM:SS] train01: delete request accepted [Ns]
    [HH:MM:SS] train01: delete done [Ns]
    [HH:MM:SS] train01: destroyed [Ns]
    Destroy complete! Resources: 1 destroyed.
    "#);
    let slurm_paths: Vec<String> = env
        .emulator()
        .requests()
        .iter()
        .filter(|r| r.path.ends_with(":callSlurmRestApi"))
        .filter_map(|r| r.body.as_ref()?["path"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        slurm_paths,
        [
            "/slurm/v0.0.45/jobs",
            "/slurm/v0.0.44/jobs",
            "/slurm/v0.0.43/jobs",
            "/slurm/v0.0.42/jobs",
            "/slurm/v0.0.42/nodes"
        ],
        "the jobs once at each version until one answers, then the nodes"
    );
    assert!(env.emulator().cluster(&name).is_none());
}

/// `gpu01` as the service reports it once its `cpu` pool runs two nodes of eight H100s each.
fn with_two_gpu_nodes(env: &Env, id: &str) {
    let name = cluster_name(id);
    let mut live = env.emulator().cluster(&name).unwrap();
    live["nodePools"][1]["machineSpec"]["acceleratorType"] = json!("NVIDIA_H100_80GB");
    live["nodePools"][1]["machineSpec"]["acceleratorCount"] = json!(8);
    env.emulator().insert_cluster(&name, live);
    let node = |pool: &str, n: u32| json!({"nodePoolId": pool, "nodeState": "RUNNING", "instanceName": format!("{id}-{pool}-{n}")});
    let nodes = vec![node("login", 0), node("cpu", 0), node("cpu", 1)];
    assert!(env.emulator().set_nodes_status(&name, nodes));
}

#[test]
fn idle_for_keeps_protected_clusters_and_counts_idle_gpu_hours() {
    let env = Env::new(100);
    let protected = ClusterSpec {
        id: "keep01",
        ..ClusterSpec::protected()
    };
    apply_ok(&env, &[protected, spec("gpu01"), spec("fresh01")]);
    with_two_gpu_nodes(&env, "gpu01");
    let e = env.emulator();
    for idle in ["gpu01", "keep01"] {
        e.set_slurm_nodes(
            &cluster_name(idle),
            vec![node(
                "cpu-0",
                &["IDLE", "POWERED_DOWN"],
                minutes_and_a_half_ago(300),
            )],
        );
    }
    // A cluster that has run no job: its node's last_busy is when the node came up, at the
    // cluster's start.
    let fresh = e.cluster(&cluster_name("fresh01")).unwrap();
    let started = time::OffsetDateTime::parse(
        fresh["startTime"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    e.set_slurm_nodes(
        &cluster_name("fresh01"),
        vec![node("cpu-0", &["IDLE"], started.unix_timestamp())],
    );
    e.clear_requests();

    // The read-only report: the evidence and what destroy would delete, and nothing sent.
    insta::assert_snapshot!(
        env.transcript(&["plan", "--destroy", "--idle-for", "2h"])
            .normalized_with(seconds_of_ages_hidden)
            .normalized_with(idle_seconds_hidden)
            .normalized_with(destroyed_attributes_elided),
        @r#"
    PROJECT  REGION       ID       STATE    ACTIVE JOBS  BUSY NODES  LAST BUSY                                       GPUS  IDLE GPU-HOURS  VERDICT                      REASON
    my-proj  us-central1  fresh01  RUNNING  0            0           never (up since [TIME] ([N]s ago))  0     0.0             idle, not long enough: keep  no job has run since the cluster started; idle for [N]s, less than 2h
    my-proj  us-central1  gpu01    RUNNING  0            0           [TIME] (5h ago)                   16    80.1            idle: destroy                no active job or busy node; last busy 5h[S]s ago (>= 2h)
    my-proj  us-central1  keep01   RUNNING  0            0           [TIME] (5h ago)                   0     0.0             protected: keep              no active job or busy node; last busy 5h[S]s ago (>= 2h)
    clusterform will perform the following actions:

      # gpu01 will be destroyed: idle (no active job or busy node; last busy 5h[S]s ago (>= 2h))
      # GPUs: 0 NVIDIA_H100_80GB now (-32 at most)
      - cluster "gpu01" { … }
        # no Slurm jobs active now

    Plan: 0 to add, 0 to change, 0 to replace, 1 to destroy.
    GPUs in total: 0 NVIDIA_H100_80GB now (-32 at most)
    "#);
    assert!(env.mutations().is_empty());

    insta::assert_snapshot!(
        env.transcript(&["destroy", "--idle-for", "2h", "--auto-approve"])
            .normalized_with(seconds_of_ages_hidden)
            .normalized_with(idle_seconds_hidden)
            .normalized_with(destroyed_attributes_elided),
        @r#"
    PROJECT  REGION       ID       STATE    ACTIVE JOBS  BUSY NODES  LAST BUSY                                       GPUS  IDLE GPU-HOURS  VERDICT                      REASON
    my-proj  us-central1  fresh01  RUNNING  0            0           never (up since [TIME] ([N]s ago))  0     0.0             idle, not long enough: keep  no job has run since the cluster started; idle for [N]s, less than 2h
    my-proj  us-central1  gpu01    RUNNING  0            0           [TIME] (5h ago)                   16    80.1            idle: destroy                no active job or busy node; last busy 5h[S]s ago (>= 2h)
    my-proj  us-central1  keep01   RUNNING  0            0           [TIME] (5h ago)                   0     0.0             protected: keep              no active job or busy node; last busy 5h[S]s ago (>= 2h)
    clusterform will perform the following actions:

      # gpu01 will be destroyed: idle (no active job or busy node; last busy 5h[S]s ago (>= 2h))
      # GPUs: 0 NVIDIA_H100_80GB now (-32 at most)
      - cluster "gpu01" { … }
        # no Slurm jobs active now

    Plan: 0 to add, 0 to change, 0 to replace, 1 to destroy.
    GPUs in total: 0 NVIDIA_H100_80GB now (-32 at most)
    [stderr]
    [HH:MM:SS] gpu01: destroying… [Ns]
    [HH:MM:SS] gpu01: delete request accepted [Ns]
    [HH:MM:SS] gpu01: delete done [Ns]
    [HH:MM:SS] gpu01: destroyed [Ns]
    Destroy complete! Resources: 1 destroyed.
    "#);
    assert!(e.cluster(&cluster_name("gpu01")).is_none());
    for kept in ["keep01", "fresh01"] {
        assert!(e.cluster(&cluster_name(kept)).is_some(), "{kept}");
    }
}
