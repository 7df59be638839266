//! What reviewers and budget owners read: the GPUs a plan adds or removes, and the fleet
//! totals `status` and `list` end with (clusters, GPUs running by type, idle GPU-hours), GPUs
//! counted from the catalogue's built-in accelerators.

use serde_json::{Value, json};

use crate::support::{ClusterSpec, Env, apply_ok, cluster_name, stdout};

/// `id`'s `cpu` pool as the service reports it once it runs on `a4-highgpu-8g` machines (8
/// built-in NVIDIA_B200 each, no accelerators named), with two nodes up.
fn running_two_b200_nodes(env: &Env, id: &str) {
    let name = cluster_name(id);
    let mut live = env.emulator().cluster(&name).unwrap();
    live["nodePools"][1]["machineSpec"] = json!({"machineType": "a4-highgpu-8g"});
    env.emulator().insert_cluster(&name, live);
    let node = |pool: &str, n: u32| {
        json!({"nodePoolId": pool, "nodeState": "RUNNING", "instanceName": format!("{id}-{pool}-{n}")})
    };
    let nodes = vec![node("login", 0), node("cpu", 0), node("cpu", 1)];
    assert!(env.emulator().set_nodes_status(&name, nodes));
}

/// A Slurm whose one node has been idle for five hours.
fn idle_for_five_hours(env: &Env, id: &str) {
    let five_hours_ago = time::OffsetDateTime::now_utc().unix_timestamp() - 5 * 3600;
    let node = json!({"name": "cpu-0", "state": ["IDLE"],
                      "last_busy": {"set": true, "infinite": false, "number": five_hours_ago}});
    env.emulator().set_slurm_nodes(&cluster_name(id), vec![node]);
}

/// `train01` runs 16 built-in B200s idle for five hours; `train02` runs no GPU.
fn fleet_with_idle_gpus() -> Env {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default(), ClusterSpec::named("train02")]);
    running_two_b200_nodes(&env, "train01");
    idle_for_five_hours(&env, "train01");
    env
}

/// Five hours and a few seconds of 16 GPUs: the seconds a run takes are rounded away.
fn idle_hours_rounded(text: &str) -> String {
    text.replace("idle GPU-hours: 80.1", "idle GPU-hours: 80.0")
}

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
