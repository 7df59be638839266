//! `clusterform status`: each cluster's state, nodes, events and Slurm, what needs attention,
//! `--detailed-exitcode`, `--target`, a Slurm that cannot be read, clusters not created yet
//! and clusters the stack owns without declaring them; and that it only reads.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::support::{
    ClusterSpec, Env, apply_ok, cluster_name, config, hand_made_cluster, seconds_of_ages_hidden,
};

fn number(n: i64) -> Value {
    json!({"set": true, "infinite": false, "number": n})
}

/// Five hours and a half minute ago: an age shown as `5h` whichever second the run reads the
/// clock in.
fn five_hours_ago() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp() - 5 * 3600 - 30
}

fn slurm_node(name: &str, state: &[&str]) -> Value {
    json!({"name": name, "state": state, "last_busy": number(five_hours_ago())})
}

/// train01 idle for five hours: nothing needs attention.
fn make_healthy(env: &Env, id: &str) {
    env.emulator().set_slurm_nodes(
        &cluster_name(id),
        vec![
            slurm_node(&format!("{id}-cpu-0"), &["IDLE"]),
            slurm_node(&format!("{id}-cpu-1"), &["IDLE", "POWERED_DOWN"]),
        ],
    );
}

/// train02 RUNNING with two nodes in ERROR, recent events (one an error) and Slurm nodes down
/// and drained beside a running and a pending job.
fn make_sick(env: &Env) {
    let name = cluster_name("train02");
    let e = env.emulator();
    assert!(e.set_nodes_status(
        &name,
        vec![
            json!({"nodePoolId": "login", "nodePoolType": "NODE_POOL_TYPE_LOGIN",
                   "nodeState": "RUNNING", "instanceName": "train02-login-0"}),
            json!({"nodePoolId": "cpu", "nodePoolType": "NODE_POOL_TYPE_COMPUTE",
                   "nodeState": "RUNNING", "instanceName": "train02-cpu-0"}),
            json!({"nodePoolId": "cpu", "nodePoolType": "NODE_POOL_TYPE_COMPUTE",
                   "nodeState": "ERROR", "instanceName": "train02-cpu-1",
                   "detail": "GPU health check failed: XID 79"}),
            json!({"nodePoolId": "cpu", "nodePoolType": "NODE_POOL_TYPE_COMPUTE",
                   "nodeState": "ERROR", "instanceId": "8812763344",
                   "detail": "boot disk could not be attached"}),
            json!({"nodePoolId": "cpu", "nodePoolType": "NODE_POOL_TYPE_COMPUTE",
                   "nodeState": "PREPARING", "instanceName": "train02-cpu-3"}),
        ],
    ));
    assert!(e.set_cluster_events(
        &name,
        vec![
            json!({"eventType": "VM_REBOOT", "eventTime": "2026-12-02T09:00:00Z",
                   "eventMessage": "train02-cpu-1 rebooted"}),
            json!({"eventType": "VM_CONTINUOUS_GPU_ERROR", "eventTime": "2026-12-02T10:00:00Z",
                   "eventMessage": "XID 79 on train02-cpu-1"}),
            json!({"eventType": "VM_SLURM_DRAIN", "eventTime": "2026-12-02T10:01:00Z",
                   "eventMessage": "train02-cpu-2 drained by the health check"}),
        ],
    ));
    e.set_slurm_jobs(
        &name,
        vec![
            json!({"job_id": 17, "name": "train-llm", "user_name": "alice",
                   "job_state": ["RUNNING"], "nodes": "train02-cpu-0"}),
            json!({"job_id": 18, "name": "eval", "user_name": "bob", "job_state": ["PENDING"]}),
        ],
    );
    e.set_slurm_nodes(
        &name,
        vec![
            slurm_node("train02-cpu-0", &["ALLOCATED"]),
            slurm_node("train02-cpu-1", &["DOWN", "NOT_RESPONDING"]),
            slurm_node("train02-cpu-2", &["IDLE", "DRAIN"]),
            slurm_node("train02-cpu-3", &["IDLE", "POWERED_DOWN"]),
        ],
    );
}

/// train01 healthy, train02 sick, train03 in ERROR.
fn fleet() -> Env {
    let env = Env::new(100);
    apply_ok(
        &env,
        &[
            ClusterSpec::named("train01"),
            ClusterSpec::named("train02"),
            ClusterSpec::named("train03"),
        ],
    );
    make_healthy(&env, "train01");
    make_sick(&env);
    assert!(env.emulator().set_cluster_status(
        &cluster_name("train03"),
        "ERROR",
        Some("node pool cpu could not be created: quota exhausted"),
    ));
    env
}

#[test]
fn a_fleet_shows_its_healthy_cluster_and_everything_that_needs_attention() {
    let env = fleet();
    insta::assert_snapshot!(env.transcript(&["status"]), @"");
    let detailed = env.run(&["status", "--detailed-exitcode"]);
    assert_eq!(detailed.status.code(), Some(2), "something needs attention");
    assert_eq!(detailed.stdout, env.run(&["status"]).stdout);
}

#[test]
fn status_json_is_one_document() {
    let env = fleet();
    let output = env.run(&["status", "--json", "--detailed-exitcode"]);
    assert_eq!(output.status.code(), Some(2));
    insta::assert_snapshot!(env.transcript_of(&output), @"");
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["needs_attention"], true);
}

#[test]
fn nothing_needs_attention_exits_0_even_with_detailed_exitcode_and_nothing_is_changed() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    make_healthy(&env, "train01");
    let state_before = state_files(env.path());
    env.emulator().clear_requests();
    insta::assert_snapshot!(env.transcript(&["status", "--detailed-exitcode"]), @"");
    let sent: Vec<(String, String)> = env
        .emulator()
        .requests()
        .into_iter()
        .map(|r| (r.method, r.path))
        .collect();
    assert!(env.mutations().is_empty(), "{sent:?}");
    assert!(
        sent.iter().all(|(method, path)| method == "GET"
            || (method == "POST" && path.ends_with(":callSlurmRestApi"))),
        "only reads: {sent:?}"
    );
    assert_eq!(
        state_files(env.path()),
        state_before,
        "no lock, no journal written"
    );
}

/// Every file of the state directory, with its content.
fn state_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let Ok(entries) = std::fs::read_dir(dir.join(".clusterform")) else {
        return BTreeMap::new();
    };
    entries
        .flatten()
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(entry.path()).unwrap_or_default())
        })
        .collect()
}

#[test]
fn target_shows_only_the_clusters_named() {
    let env = fleet();
    env.emulator().clear_requests();
    insta::assert_snapshot!(
        env.transcript(&["status", "--target", "train03", "--target", "train01"])
            .normalized_with(seconds_of_ages_hidden),
        @""
    );
    let lists = env
        .emulator()
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/modelDevelopmentClusters"))
        .count();
    assert_eq!(lists, 0, "targets are read with one Get each");
    insta::assert_snapshot!(env.transcript(&["status", "--target", "nosuch"]), @"");
}

#[test]
fn a_slurm_that_cannot_be_read_needs_attention() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.emulator()
        .set_slurm_unreachable(&cluster_name("train01"), true);
    insta::assert_snapshot!(env.transcript(&["status", "--detailed-exitcode"]), @"");
}

#[test]
fn declared_clusters_not_created_and_owned_ones_no_longer_declared_are_shown() {
    let env = Env::new(100);
    apply_ok(
        &env,
        &[ClusterSpec::named("train01"), ClusterSpec::named("old01")],
    );
    make_healthy(&env, "train01");
    make_healthy(&env, "old01");
    env.emulator()
        .insert_cluster(&cluster_name("other01"), hand_made_cluster());
    env.write_config(&config(&[
        ClusterSpec::named("train01"),
        ClusterSpec::named("new01"),
    ]));
    let output = env.run(&["status", "--detailed-exitcode"]);
    insta::assert_snapshot!(env.transcript_of(&output), @"");
    let json = env.run(&["status", "--json"]);
    let document: Value = serde_json::from_slice(&json.stdout).unwrap();
    let shown: Vec<(&str, bool, bool)> = document["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["address"]["id"].as_str().unwrap(),
                c["declared"].as_bool().unwrap(),
                c["created"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("train01", true, true),
            ("new01", true, false),
            ("old01", false, true)
        ],
        "a cluster nobody owns (other01) is not shown"
    );
}
