//! The GPU fleet that the tests of what reviewers read (`reviews.rs`) and of prices
//! (`prices.rs`) share: a change that adds B200 pools, and a fleet whose B200s sit idle.

use serde_json::json;

use super::{ClusterSpec, Env, apply_ok, cluster_hcl, cluster_name, edited};

/// How a GPU pool's `machine_spec` gives its accelerators.
#[derive(Debug, Clone, Copy)]
pub enum Accelerators {
    /// The machine type alone: the catalogue counts its 8 built-in NVIDIA_B200 (and the
    /// configuration warns that `accelerator_type` is not set).
    BuiltIn,
    /// `accelerator_type = "NVIDIA_B200"` and `accelerator_count = 8` written out.
    Named,
}

/// `cluster_block` with a pool `gpu` of spot `a4-highgpu-8g` machines (8 NVIDIA_B200 each),
/// `min` to `max` nodes, before its Slurm settings.
pub fn with_gpu_pool(
    cluster_block: &str,
    min: u32,
    max: u32,
    accelerators: Accelerators,
) -> String {
    let machine_spec = match accelerators {
        Accelerators::BuiltIn => "      machine_type = \"a4-highgpu-8g\"\n",
        Accelerators::Named => {
            "      machine_type      = \"a4-highgpu-8g\"\n      \
             accelerator_type  = \"NVIDIA_B200\"\n      accelerator_count = 8\n"
        }
    };
    let pool = format!(
        "  node_pool \"gpu\" {{\n    machine_spec {{\n{machine_spec}    }}\n    \
         scaling_spec {{\n      min_node_count = {min}\n      max_node_count = {max}\n    }}\n    \
         provisioning_model = \"SPOT\"\n    zone               = \"us-central1-a\"\n  }}\n\n  \
         orchestrator_spec {{"
    );
    edited(cluster_block, "  orchestrator_spec {", &pool)
}

/// A fleet change for review: `train01` and `train02` applied, then a configuration headed by
/// `provider` with `train01` as `train01_block` says, `train02`'s `cpu` pool on bigger machines
/// (`n2-standard-16`: a replacement) and `train03` new with 2 to 4 B200 nodes (a create).
pub fn fleet_change(env: &Env, provider: &str, train01_block: &str, accelerators: Accelerators) {
    apply_ok(
        env,
        &[ClusterSpec::default(), ClusterSpec::named("train02")],
    );
    let train02 = edited(
        &cluster_hcl(&ClusterSpec::named("train02")),
        "\"n2-standard-8\"\n    }\n    scaling_spec {\n      min_node_count = 0",
        "\"n2-standard-16\"\n    }\n    scaling_spec {\n      min_node_count = 0",
    );
    let train03 = with_gpu_pool(
        &cluster_hcl(&ClusterSpec::named("train03")),
        2,
        4,
        accelerators,
    );
    env.write_config(&format!("{provider}{train01_block}{train02}{train03}"));
}

/// `train01` runs 16 built-in B200s (its `cpu` pool on two `a4-highgpu-8g` nodes, no
/// accelerators named) and its login node, idle for five hours; `train02` runs its login node
/// and no GPU.
pub fn fleet_with_idle_gpus() -> Env {
    let env = Env::new(100);
    apply_ok(
        &env,
        &[ClusterSpec::default(), ClusterSpec::named("train02")],
    );
    running_two_b200_nodes(&env, "train01");
    idle_for_five_hours(&env, "train01");
    env
}

/// `id`'s `cpu` pool as the service reports it once it runs on `a4-highgpu-8g` machines, with
/// two nodes up.
fn running_two_b200_nodes(env: &Env, id: &str) {
    let name = cluster_name(id);
    let mut live = env.emulator().cluster(&name).unwrap();
    live["nodePools"][1]["machineSpec"] = json!({"machineType": "a4-highgpu-8g"});
    env.emulator().insert_cluster(&name, live);
    let node = |pool: &str, n: u32| {
        json!({"nodePoolId": pool, "nodeState": "RUNNING",
               "instanceName": format!("{id}-{pool}-{n}")})
    };
    let nodes = vec![node("login", 0), node("cpu", 0), node("cpu", 1)];
    assert!(env.emulator().set_nodes_status(&name, nodes));
}

/// A Slurm whose one node has been idle for five hours.
fn idle_for_five_hours(env: &Env, id: &str) {
    let five_hours_ago = time::OffsetDateTime::now_utc().unix_timestamp() - 5 * 3600;
    let node = json!({"name": "cpu-0", "state": ["IDLE"],
                      "last_busy": {"set": true, "infinite": false, "number": five_hours_ago}});
    env.emulator()
        .set_slurm_nodes(&cluster_name(id), vec![node]);
}

/// Five hours and a few seconds of 16 GPUs: the seconds a run takes are rounded away.
pub fn idle_hours_rounded(text: &str) -> String {
    text.replace("idle GPU-hours: 80.1", "idle GPU-hours: 80.0")
}
