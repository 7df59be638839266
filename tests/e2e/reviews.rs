//! What reviewers and budget owners read: the GPUs a plan adds or removes, and the fleet
//! totals `status` and `list` end with (clusters, GPUs running by type, idle GPU-hours), GPUs
//! counted from the catalogue's built-in accelerators.

use serde_json::{Value, json};

use crate::support::gpu_fleet::{
    self, Accelerators, fleet_with_idle_gpus, idle_hours_rounded, with_gpu_pool,
};
use crate::support::{
    ClusterSpec, Env, PROVIDER, assert_succeeded, cluster_hcl, cluster_name,
    created_attributes_elided, stdout,
};

#[test]
fn status_and_list_end_with_the_fleets_gpus_by_type_and_its_idle_gpu_hours() {
    let env = fleet_with_idle_gpus();
    for command in ["status", "list"] {
        let shown = stdout(&env.run(&[command]));
        assert_eq!(
            shown.lines().last().map(idle_hours_rounded).as_deref(),
            Some("Fleet: 2 clusters; GPUs running: 16 NVIDIA_B200; idle GPU-hours: 80.0"),
            "{command}: {shown}"
        );
    }
    for command in ["status", "list"] {
        let output = env.run(&[command, "--json"]);
        let document: Value = serde_json::from_slice(&output.stdout).unwrap();
        let totals = &document["totals"];
        assert_eq!(totals["clusters"], 2, "{command}: {totals}");
        assert_eq!(totals["gpus_running"], json!({"NVIDIA_B200": 16}));
        let hours = totals["idle_gpu_hours"].as_f64().unwrap();
        assert!((80.0..80.5).contains(&hours), "{command}: {totals}");
        assert_eq!(totals["idle_gpu_hours_unknown_clusters"], 0);
    }
}

/// The fleet change of [`gpu_fleet::fleet_change`] (B200s built in), `train01` gaining a GPU
/// pool (an update) and `train02` running a job its replacement stops.
fn fleet_change(env: &Env) {
    let train01 = with_gpu_pool(
        &cluster_hcl(&ClusterSpec::default()),
        0,
        2,
        Accelerators::BuiltIn,
    );
    gpu_fleet::fleet_change(env, PROVIDER, &train01, Accelerators::BuiltIn);
    env.emulator().set_slurm_jobs(
        &cluster_name("train02"),
        vec![
            json!({"job_id": 17, "name": "train-llm", "user_name": "alice",
                    "job_state": ["RUNNING"], "partition": "cpu", "nodes": "cpu-0"}),
        ],
    );
}

#[test]
fn plan_summary_gives_one_line_per_cluster_with_its_jobs_and_gpus_then_the_totals() {
    let env = Env::new(100);
    fleet_change(&env);
    insta::assert_snapshot!(env.transcript(&["plan", "--summary", "--out", "review.plan"]), @r#"
    CLUSTER  ACTION           CHANGES                                    IMPACT            RUNNING JOBS  GPUS
    train01  update in place  node_pools                                 adds pool gpu     -             0 NVIDIA_B200 now (+16 at most)
    train02  replace          node_pools[cpu].machine_spec.machine_type  replaces cluster  1 job         -
    train03  create           -                                          -                 -             +16 NVIDIA_B200 now (+32 at most)

    Plan: 1 to add, 1 to change, 1 to replace, 0 to destroy.
    GPUs in total: +16 NVIDIA_B200 now (+48 at most)
    Running jobs stopped: 1
    [stderr]
    Warning: pool `gpu`: `a4-highgpu-8g` comes with 8 × NVIDIA_B200, but accelerator_type is not set
      at main.hcl:46:22
      hint: set accelerator_type = "NVIDIA_B200" and accelerator_count = 8
    Warning: pool `gpu`: `a4-highgpu-8g` comes with 8 × NVIDIA_B200, but accelerator_type is not set
      at main.hcl:154:22
      hint: set accelerator_type = "NVIDIA_B200" and accelerator_count = 8

    Saved the plan to review.plan. To perform exactly these actions, run:
      clusterform apply review.plan
    "#);
}

#[test]
fn show_format_markdown_writes_a_pull_request_comment_with_the_whole_plan_folded() {
    let env = Env::new(100);
    fleet_change(&env);
    assert_succeeded(&env.run(&["plan", "--out", "review.plan"]));
    insta::assert_snapshot!(
        env.transcript(&["show", "review.plan", "--format", "markdown"])
            .normalized_with(created_attributes_elided),
        @r#"
    ### clusterform plan: 1 to add, 1 to change, 1 to replace, 0 to destroy.

    | Cluster | Action | Changes | Impact | Running jobs | GPUs |
    |---|---|---|---|---|---|
    | `train01` | update in place | `node_pools` | adds pool gpu | - | 0 NVIDIA_B200 now (+16 at most) |
    | `train02` | replace | `node_pools[cpu].machine_spec.machine_type` | replaces cluster | unknown | - |
    | `train03` | create | - | - | - | +16 NVIDIA_B200 now (+32 at most) |

    GPUs in total: +16 NVIDIA_B200 now (+48 at most)  
    Running jobs stopped: 0, and unknown on 1 cluster  

    <details><summary>Full plan</summary>

    ```text
    Made with: clusterform plan

    clusterform will perform the following actions:

      # train01 will be updated in place
      # GPUs: 0 NVIDIA_B200 now (+16 at most)
      ~ cluster "train01" {
          + node_pool "gpu" {
              + machine_spec {
                  + machine_type = "a4-highgpu-8g"
                }
              + scaling_spec {
                  + min_node_count = 0
                  + max_node_count = 2
                }
              + zone               = "us-central1-a"
              + provisioning_model = "SPOT"
            }
            # (2 unchanged attributes hidden)
            # (4 unchanged blocks hidden)
        }
        update mask: node_pools
        update mode: USER_AND_SERVICE (the service may also refresh the startup, prolog and epilog scripts it manages; no node is recreated unless it refreshes a pool's startup script)
        impact: adds pool gpu
        Warning: this node_pools update sends back what the service filled in where the configuration sets nothing, which may pin it (an unset node_image follows the default image, a set one stays): node_pools[login].node_image = "slurm-24-11-ubuntu-2204", node_pools[cpu].boot_disk.boot_disk_type = "pd-ssd", node_pools[cpu].boot_disk.boot_disk_size_gb = 100, node_pools[cpu].node_image = "slurm-24-11-ubuntu-2204"

      # train02 must be replaced
    -/+ cluster "train02" {
          ~ node_pool "cpu" {
              ~ machine_spec {
                  ~ machine_type = "n2-standard-8" -> "n2-standard-16" # forces replacement
                }
                # (1 unchanged attribute hidden)
                # (1 unchanged block hidden)
            }
            # (2 unchanged attributes hidden)
            # (3 unchanged blocks hidden)
        }
        impact: replaces cluster
        # the live cluster is deleted first: its machines are not held for the new one, so if the create finds no machines, train02 is gone

      # train03 will be created
      # GPUs: +16 NVIDIA_B200 now (+32 at most)
      + cluster "train03" { … }

    Plan: 1 to add, 1 to change, 1 to replace, 0 to destroy.
    GPUs in total: +16 NVIDIA_B200 now (+48 at most)
    ```

    </details>
    [stderr]
    The plan file holds no Slurm jobs: `clusterform apply review.plan` reads them again when it runs, on the 1 cluster it takes nodes from, and refuses to stop running jobs unless --allow-disruption is given.
    "#
    );
    let summary = env.run(&["show", "review.plan", "--format", "markdown", "--summary"]);
    assert!(
        !stdout(&summary).contains("<details>"),
        "{}",
        stdout(&summary)
    );
    assert!(!stdout(&summary).contains('\u{1b}'), "no ANSI in a comment");
}
