//! `clusterform status`: each cluster's state, nodes, events and Slurm, what needs attention,
//! `--detailed-exitcode`, `--target`, a Slurm that cannot be read, clusters not created yet
//! and clusters the stack owns without declaring them; and that it only reads.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::support::{
    ClusterSpec, Env, apply_ok, cluster_name, config, hand_made_cluster, idle_seconds_hidden,
    seconds_of_ages_hidden,
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
    insta::assert_snapshot!(env.transcript(&["status"]), @r#"
    PROJECT  REGION       ID       STATE    NODES                                                   SLURM JOBS            SLURM NODES                             IDLE SINCE
    my-proj  us-central1  train01  RUNNING  login: 1 running; cpu: 0                                0 running, 0 pending  2 idle                                  [TIME] (5h ago)
    my-proj  us-central1  train02  RUNNING  login: 1 running; cpu: 1 running, 1 preparing, 2 error  1 running, 1 pending  1 idle, 1 allocated, 1 down, 1 drained  in use
    my-proj  us-central1  train03  ERROR    login: 0; cpu: 0                                        -                     -                                       -

    Recent events:
      train02: VM_SLURM_DRAIN at [TIME]: train02-cpu-2 drained by the health check
      train02: VM_CONTINUOUS_GPU_ERROR at [TIME]: XID 79 on train02-cpu-1
      train02: VM_REBOOT at [TIME]: train02-cpu-1 rebooted

    Needs attention:
      train02: node train02-cpu-1 of pool cpu is in ERROR: GPU health check failed: XID 79
      train02: node 8812763344 of pool cpu is in ERROR: boot disk could not be attached
      train02: 1 Slurm node down or not responding: train02-cpu-1
      train02: 1 Slurm node drained or draining: train02-cpu-2
      train02: recent event VM_CONTINUOUS_GPU_ERROR at [TIME]: XID 79 on train02-cpu-1
      train03: cluster is in ERROR: node pool cpu could not be created: quota exhausted

    Fleet: 3 clusters; GPUs running: none; idle GPU-hours: 0.0
    "#);
    let detailed = env.run(&["status", "--detailed-exitcode"]);
    assert_eq!(detailed.status.code(), Some(2), "something needs attention");
    assert_eq!(detailed.stdout, env.run(&["status"]).stdout);
}

#[test]
fn status_json_is_one_document() {
    let env = fleet();
    let output = env.run(&["status", "--json", "--detailed-exitcode"]);
    assert_eq!(output.status.code(), Some(2));
    insta::assert_snapshot!(env.transcript_of(&output), @r#"
    {
      "format_version": 1,
      "needs_attention": true,
      "clusters": [
        {
          "address": {
            "project": "my-proj",
            "region": "us-central1",
            "id": "train01"
          },
          "declared": true,
          "created": true,
          "needs_attention": false,
          "state": "RUNNING",
          "detail": null,
          "error": null,
          "node_pools": [
            {
              "id": "login",
              "nodes": 1,
              "running": 1,
              "preparing": 0,
              "updating": 0,
              "error": 0,
              "repairing": 0,
              "unknown": 0
            },
            {
              "id": "cpu",
              "nodes": 0,
              "running": 0,
              "preparing": 0,
              "updating": 0,
              "error": 0,
              "repairing": 0,
              "unknown": 0
            }
          ],
          "events": [],
          "slurm": {
            "status": "read",
            "version": "v0.0.42",
            "jobs": {
              "running": 0,
              "pending": 0
            },
            "nodes": {
              "idle": 2,
              "allocated": 0,
              "down": 0,
              "drained": 0,
              "other": 0
            },
            "idle": {
              "status": "idle",
              "since": "[TIME]"
            }
          },
          "problems": [],
          "login_node": {
            "pool": "login",
            "zone": "us-central1-a",
            "public_ips": true,
            "instance": "train01-login-0",
            "state": "RUNNING",
            "command": "gcloud compute ssh train01-login-0 --zone us-central1-a --project my-proj",
            "message": "gcloud compute ssh train01-login-0 --zone us-central1-a --project my-proj"
          }
        },
        {
          "address": {
            "project": "my-proj",
            "region": "us-central1",
            "id": "train02"
          },
          "declared": true,
          "created": true,
          "needs_attention": true,
          "state": "RUNNING",
          "detail": null,
          "error": null,
          "node_pools": [
            {
              "id": "login",
              "nodes": 1,
              "running": 1,
              "preparing": 0,
              "updating": 0,
              "error": 0,
              "repairing": 0,
              "unknown": 0
            },
            {
              "id": "cpu",
              "nodes": 4,
              "running": 1,
              "preparing": 1,
              "updating": 0,
              "error": 2,
              "repairing": 0,
              "unknown": 0
            }
          ],
          "events": [
            {
              "type": "VM_SLURM_DRAIN",
              "time": "[TIME]",
              "message": "train02-cpu-2 drained by the health check"
            },
            {
              "type": "VM_CONTINUOUS_GPU_ERROR",
              "time": "[TIME]",
              "message": "XID 79 on train02-cpu-1"
            },
            {
              "type": "VM_REBOOT",
              "time": "[TIME]",
              "message": "train02-cpu-1 rebooted"
            }
          ],
          "slurm": {
            "status": "read",
            "version": "v0.0.42",
            "jobs": {
              "running": 1,
              "pending": 1
            },
            "nodes": {
              "idle": 1,
              "allocated": 1,
              "down": 1,
              "drained": 1,
              "other": 0
            },
            "idle": {
              "status": "in_use",
              "only_pending_jobs": false
            }
          },
          "problems": [
            {
              "kind": "node_error",
              "pool": "cpu",
              "node": "train02-cpu-1",
              "detail": "GPU health check failed: XID 79",
              "current": true,
              "message": "node train02-cpu-1 of pool cpu is in ERROR: GPU health check failed: XID 79"
            },
            {
              "kind": "node_error",
              "pool": "cpu",
              "node": "8812763344",
              "detail": "boot disk could not be attached",
              "current": true,
              "message": "node 8812763344 of pool cpu is in ERROR: boot disk could not be attached"
            },
            {
              "kind": "slurm_nodes_down",
              "nodes": [
                "train02-cpu-1"
              ],
              "current": true,
              "message": "1 Slurm node down or not responding: train02-cpu-1"
            },
            {
              "kind": "slurm_nodes_drained",
              "nodes": [
                "train02-cpu-2"
              ],
              "current": true,
              "message": "1 Slurm node drained or draining: train02-cpu-2"
            },
            {
              "kind": "error_event",
              "event": {
                "type": "VM_CONTINUOUS_GPU_ERROR",
                "time": "[TIME]",
                "message": "XID 79 on train02-cpu-1"
              },
              "current": false,
              "message": "recent event VM_CONTINUOUS_GPU_ERROR at [TIME]: XID 79 on train02-cpu-1"
            }
          ],
          "login_node": {
            "pool": "login",
            "zone": "us-central1-a",
            "public_ips": true,
            "instance": "train02-login-0",
            "state": "RUNNING",
            "command": "gcloud compute ssh train02-login-0 --zone us-central1-a --project my-proj",
            "message": "gcloud compute ssh train02-login-0 --zone us-central1-a --project my-proj"
          }
        },
        {
          "address": {
            "project": "my-proj",
            "region": "us-central1",
            "id": "train03"
          },
          "declared": true,
          "created": true,
          "needs_attention": true,
          "state": "ERROR",
          "detail": "node pool cpu could not be created: quota exhausted",
          "error": {
            "code": 13,
            "status": "INTERNAL",
            "message": "node pool cpu could not be created: quota exhausted"
          },
          "node_pools": [
            {
              "id": "login",
              "nodes": 0,
              "running": 0,
              "preparing": 0,
              "updating": 0,
              "error": 0,
              "repairing": 0,
              "unknown": 0
            },
            {
              "id": "cpu",
              "nodes": 0,
              "running": 0,
              "preparing": 0,
              "updating": 0,
              "error": 0,
              "repairing": 0,
              "unknown": 0
            }
          ],
          "events": [],
          "slurm": {
            "status": "not_asked"
          },
          "problems": [
            {
              "kind": "cluster_error",
              "detail": "node pool cpu could not be created: quota exhausted",
              "error": {
                "code": 13,
                "status": "INTERNAL",
                "message": "node pool cpu could not be created: quota exhausted"
              },
              "current": true,
              "message": "cluster is in ERROR: node pool cpu could not be created: quota exhausted"
            }
          ],
          "login_node": {
            "pool": "login",
            "zone": "us-central1-a",
            "public_ips": true,
            "instance": null,
            "state": null,
            "command": null,
            "message": "the service reports no node of login pool login yet: no instance name yet"
          }
        }
      ],
      "unreadable_locations": [],
      "totals": {
        "clusters": 3,
        "gpus_running": {},
        "gpus_unknown_clusters": 0,
        "idle_gpu_hours": 0.0,
        "idle_gpu_hours_unknown_clusters": 0
      }
    }
    [exit status: 2]
    "#);
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
    insta::assert_snapshot!(env.transcript(&["status", "--detailed-exitcode"]), @r#"
    PROJECT  REGION       ID       STATE    NODES                     SLURM JOBS            SLURM NODES  IDLE SINCE
    my-proj  us-central1  train01  RUNNING  login: 1 running; cpu: 0  0 running, 0 pending  2 idle       [TIME] (5h ago)

    Nothing needs attention.

    Fleet: 1 cluster; GPUs running: none; idle GPU-hours: 0.0
    "#);
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
        @r#"
    PROJECT  REGION       ID       STATE    NODES                     SLURM JOBS            SLURM NODES  IDLE SINCE
    my-proj  us-central1  train01  RUNNING  login: 1 running; cpu: 0  0 running, 0 pending  2 idle       [TIME] (5h ago)
    my-proj  us-central1  train03  ERROR    login: 0; cpu: 0          -                     -            -

    Needs attention:
      train03: cluster is in ERROR: node pool cpu could not be created: quota exhausted

    Log in:
      train01: gcloud compute ssh train01-login-0 --zone us-central1-a --project my-proj
      train03: the service reports no node of login pool login yet: no instance name yet

    Fleet: 2 clusters; GPUs running: none; idle GPU-hours: 0.0
    "#
    );
    let lists = env
        .emulator()
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/modelDevelopmentClusters"))
        .count();
    assert_eq!(lists, 0, "targets are read with one Get each");
    insta::assert_snapshot!(env.transcript(&["status", "--target", "nosuch"]), @r#"
    [stderr]
    Error: --target `nosuch` matches no declared cluster and no live cluster of this stack
      hint: use a cluster ID from the configuration (see `clusterform list`)
    [exit status: 1]
    "#);
}

/// The login node without external addresses is reached through IAP; once it stops running,
/// no command and no name is made up.
#[test]
fn status_of_a_cluster_says_how_to_reach_its_login_node() {
    let env = Env::new(100);
    let private = config(&[ClusterSpec::default()])
        .replace("enable_public_ips = true", "enable_public_ips = false");
    env.write_config(&private);
    let applied = env.run(&["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", env.transcript_of(&applied));
    make_healthy(&env, "train01");
    let login = |output: &str| output[output.find("Log in:").unwrap()..].to_owned();
    insta::assert_snapshot!(login(&env.transcript(&["status", "--target", "train01"]).to_string()), @r#"
    Log in:
      train01: gcloud compute ssh train01-login-0 --zone us-central1-a --tunnel-through-iap --project my-proj

    Fleet: 1 cluster; GPUs running: none; idle GPU-hours: 0.0
    "#);
    let json = env.run(&["status", "--json", "--target", "train01"]);
    let document: Value = serde_json::from_slice(&json.stdout).unwrap();
    insta::assert_json_snapshot!(document["clusters"][0]["login_node"], @r#"
    {
      "pool": "login",
      "zone": "us-central1-a",
      "public_ips": false,
      "instance": "train01-login-0",
      "state": "RUNNING",
      "command": "gcloud compute ssh train01-login-0 --zone us-central1-a --tunnel-through-iap --project my-proj",
      "message": "gcloud compute ssh train01-login-0 --zone us-central1-a --tunnel-through-iap --project my-proj"
    }
    "#);

    assert!(env.emulator().set_nodes_status(
        &cluster_name("train01"),
        vec![
            json!({"nodePoolId": "login", "nodePoolType": "NODE_POOL_TYPE_LOGIN",
                    "nodeState": "PREPARING"})
        ],
    ));
    insta::assert_snapshot!(login(&env.transcript(&["status", "--target", "train01"]).to_string()), @r#"
    Log in:
      train01: the login node of pool login is PREPARING, not running yet; no instance name yet

    Fleet: 1 cluster; GPUs running: none; idle GPU-hours: 0.0
    "#);
}

#[test]
fn a_slurm_that_cannot_be_read_needs_attention() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.emulator()
        .set_slurm_unreachable(&cluster_name("train01"), true);
    insta::assert_snapshot!(env.transcript(&["status", "--detailed-exitcode"]), @r#"
    PROJECT  REGION       ID       STATE    NODES                     SLURM JOBS  SLURM NODES  IDLE SINCE
    my-proj  us-central1  train01  RUNNING  login: 1 running; cpu: 0  unknown     unknown      unknown

    Needs attention:
      train01: Slurm could not be read: Slurm REST API unreachable: POST [ENDPOINT]/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01:callSlurmRestApi failed: UNAVAILABLE (503): The Slurm REST API of cluster projects/253589482369/locations/us-central1/modelDevelopmentClusters/train01 is unreachable.

    Fleet: 1 cluster; GPUs running: none; idle GPU-hours: 0.0
    [exit status: 2]
    "#);
}

#[test]
fn declared_clusters_not_created_and_owned_ones_no_longer_declared_are_shown() {
    let env = Env::new(100);
    apply_ok(
        &env,
        &[
            ClusterSpec::named("train01"),
            ClusterSpec::named("old01"),
            ClusterSpec::named("kept01"),
        ],
    );
    for id in ["train01", "old01", "kept01"] {
        make_healthy(&env, id);
    }
    env.emulator()
        .insert_cluster(&cluster_name("other01"), hand_made_cluster());
    let declared = config(&[ClusterSpec::named("train01"), ClusterSpec::named("new01")]);
    env.write_config(&format!(
        "{declared}\nremoved {{\n  cluster = \"kept01\"\n}}\n"
    ));
    let output = env.run(&["status", "--detailed-exitcode"]);
    insta::assert_snapshot!(env.transcript_of(&output), @r#"
    PROJECT  REGION       ID       STATE        NODES                     SLURM JOBS            SLURM NODES  IDLE SINCE
    my-proj  us-central1  kept01   RUNNING      login: 1 running; cpu: 0  0 running, 0 pending  2 idle       [TIME] (5h ago)
    my-proj  us-central1  new01    not created  -                         -                     -            -
    my-proj  us-central1  old01    RUNNING      login: 1 running; cpu: 0  0 running, 0 pending  2 idle       [TIME] (5h ago)
    my-proj  us-central1  train01  RUNNING      login: 1 running; cpu: 0  0 running, 0 pending  2 idle       [TIME] (5h ago)

    Needs attention:
      old01: undeclared: the next apply destroys it (it carries this stack's label, but no cluster block declares it; a removed block releases it instead)

    Fleet: 3 clusters; GPUs running: none; idle GPU-hours: 0.0
    [exit status: 2]
    "#);
    let json = env.run(&["status", "--json"]);
    let document: Value = serde_json::from_slice(&json.stdout).unwrap();
    let shown: Vec<(&str, bool, bool, &Value)> = document["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["address"]["id"].as_str().unwrap(),
                c["declared"].as_bool().unwrap(),
                c["created"].as_bool().unwrap(),
                &c["next_apply"]["action"],
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("kept01", false, true, &json!("release")),
            ("new01", true, false, &Value::Null),
            ("old01", false, true, &json!("delete")),
            ("train01", true, true, &Value::Null),
        ],
        "a cluster nobody owns (other01) is not shown"
    );
    assert_eq!(document["needs_attention"], true);
}

/// A shortage on day two: the `cpu` pool starts empty, so its create got no machines; then
/// its dynamic nodes cannot be had, and three jobs wait for them.
fn short_of_cpu_nodes_on_day_two(env: &Env) {
    apply_ok(env, &[ClusterSpec::default()]);
    env.emulator()
        .set_start_failures(vec!["n2-standard-8@us-central1-a".parse().unwrap()]);
    let pending = |id: i64| json!({"job_id": id, "job_state": ["PENDING"], "partition": "cpu"});
    env.emulator().set_slurm_jobs(
        &cluster_name("train01"),
        vec![pending(11), pending(12), pending(13)],
    );
}

#[test]
fn nodes_that_do_not_start_on_day_two_need_attention_per_pool() {
    let env = Env::new(100);
    short_of_cpu_nodes_on_day_two(&env);
    insta::assert_snapshot!(env.transcript(&["status", "--detailed-exitcode"]), @r#"
    PROJECT  REGION       ID       STATE    NODES                     SLURM JOBS            SLURM NODES  IDLE SINCE
    my-proj  us-central1  train01  RUNNING  login: 1 running; cpu: 0  0 running, 3 pending  4 down       3 pending jobs

    Recent events:
      train01: VM_SLURM_POWER_DOWN at [TIME]: Nodes of pool cpu could not be started and were powered down: The zone 'projects/253589482369/zones/us-central1-a' does not have enough resources available to fulfill the request. '(resource type:compute)'. (state:STOCKOUT)

    Needs attention:
      train01: pool cpu: 0 of 4 nodes started; 3 jobs pending; STOCKOUT in us-central1-a

    Fleet: 1 cluster; GPUs running: none; idle GPU-hours: 0.0
    [exit status: 2]
    "#);
}

#[test]
fn status_json_tells_the_nodes_that_do_not_start() {
    let env = Env::new(100);
    short_of_cpu_nodes_on_day_two(&env);
    let output = env.run(&["status", "--json", "--detailed-exitcode"]);
    assert_eq!(output.status.code(), Some(2));
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    let cluster = &document["clusters"][0];
    let problem = &cluster["problems"][0];
    assert_eq!(problem["kind"], "nodes_not_starting");
    assert_eq!(
        (
            &problem["pool"],
            &problem["started"],
            &problem["wanted"],
            &problem["pending_jobs"]
        ),
        (&json!("cpu"), &json!(0), &json!(4), &json!(3))
    );
    assert_eq!(problem["current"], true);
    assert_eq!(problem["last_failure"]["node"], "train01-cpu-3");
    let reason = problem["last_failure"]["reason"].as_str().unwrap();
    assert!(
        reason.ends_with("(state:STOCKOUT)"),
        "the whole text: {reason}"
    );
    assert!(problem["last_failure"]["at"].is_string(), "{problem}");
    assert_eq!(
        problem["message"],
        "pool cpu: 0 of 4 nodes started; 3 jobs pending; STOCKOUT in us-central1-a"
    );
    assert_eq!(cluster["events"][0]["type"], "VM_SLURM_POWER_DOWN");
    assert_eq!(cluster["slurm"]["nodes"]["down"], 4);
    assert_eq!(
        cluster["problems"].as_array().unwrap().len(),
        1,
        "{cluster}"
    );
}

#[test]
fn list_s_health_column_shows_the_nodes_that_do_not_start() {
    let env = Env::new(100);
    short_of_cpu_nodes_on_day_two(&env);
    let output = env.run(&["list"]);
    assert!(output.status.success(), "{output:?}");
    let table = String::from_utf8(output.stdout).unwrap();
    let header = table.lines().next().unwrap();
    assert!(
        header.starts_with("PROJECT  REGION       ID       STATE    HEALTH"),
        "{table}"
    );
    assert!(
        table.contains("RUNNING  cpu: 0/4 started, 3 pending, STOCKOUT in us-central1-a  "),
        "{table}"
    );
    let json = env.run(&["list", "--json"]);
    let document: Value = serde_json::from_slice(&json.stdout).unwrap();
    let health = &document["clusters"][0]["health"];
    assert_eq!(health["needs_attention"], true, "{health}");
    assert_eq!(health["problems"][0]["kind"], "nodes_not_starting");
    assert_eq!(health["problems"][0]["pending_jobs"], 3);
    assert_eq!(health["slurm"]["status"], "read");
}

/// A cluster an operation is changing shows what the service says of it: the state alone
/// does not say how far it got.
#[test]
fn status_shows_what_the_service_says_of_an_updating_cluster() {
    let env = Env::new(0);
    apply_ok(&env, &[ClusterSpec::named("train01")]);
    assert!(env.emulator().set_cluster_status(
        &cluster_name("train01"),
        "UPDATING",
        Some("Resizing node pool cpu (2 of 4 nodes)."),
    ));
    let status = env.run(&["status"]);
    let text = crate::support::stdout(&status);
    assert!(
        text.contains(
            "In progress:\n  train01: UPDATING: Resizing node pool cpu (2 of 4 nodes).\n"
        ),
        "{text}"
    );
}

/// `status --watch` on a terminal: a report, then another after the interval headed by what
/// changed in between, until Ctrl-C, which ends it with exit 0.
#[cfg(unix)]
#[test]
fn status_watch_redraws_on_a_terminal_marking_what_changed_until_ctrl_c() {
    let env = Env::new(0);
    apply_ok(&env, &[ClusterSpec::named("train01")]);
    let mut session = crate::support::on_terminal(&env, "status --watch=10s");
    session
        .exp_string("Every 10s, read at ")
        .expect("a first report");
    session.exp_string("Nothing needs attention.").unwrap();
    assert!(env.emulator().set_cluster_status(
        &cluster_name("train01"),
        "UPDATING",
        Some("Resizing node pool cpu."),
    ));
    session
        .exp_string("Changed since ")
        .expect("a second report, after the interval");
    session.exp_string(": train01.").unwrap();
    session
        .exp_string("train01: UPDATING: Resizing node pool cpu.")
        .unwrap();
    session.send_control('c').unwrap();
    let rest = crate::support::terminal_output(&mut session);
    assert!(!rest.contains("Every 10s"), "no third report: {rest:?}");
    let status = format!("{:?}", session.process().wait().unwrap());
    assert!(
        status.starts_with("Exited(") && status.ends_with(", 0)"),
        "{status}"
    );
}

/// On a terminal, a reading that fails clears nothing: its error shows below the last good
/// report until a reading succeeds, whose report replaces both and names the failure.
#[cfg(unix)]
#[test]
fn status_watch_on_a_terminal_keeps_the_last_report_while_readings_fail() {
    const CLEAR_SCREEN: &str = "\x1b[2J";
    let env = Env::new(0);
    apply_ok(&env, &[ClusterSpec::named("train01")]);
    let mut session = crate::support::on_terminal(&env, "status --watch=10s");
    session.exp_string("Nothing needs attention.").unwrap();
    env.emulator().set_faults("401=1".parse().unwrap());
    let before_error = session
        .exp_string("Error:")
        .expect("the failed reading's error");
    assert!(
        !before_error.contains(CLEAR_SCREEN),
        "the report stays: {before_error:?}"
    );
    env.emulator().set_faults(Default::default());
    let before_report = session
        .exp_string("1 reading failed since ")
        .expect("a report after the interval, naming the failure");
    assert!(before_report.contains(CLEAR_SCREEN), "{before_report:?}");
    session.exp_string("UNAUTHENTICATED").unwrap();
    session.send_control('c').unwrap();
    crate::support::terminal_output(&mut session);
}

/// In a pipe, one report follows another, each after its header line.
#[cfg(unix)]
#[test]
fn status_watch_in_a_pipe_prints_one_report_per_interval() {
    let env = Env::new(0);
    apply_ok(&env, &[ClusterSpec::named("train01")]);
    let mut watching = env.spawn(&["status", "--watch=10s"], &[]);
    let started = std::time::Instant::now();
    let mut stdout = std::io::BufReader::new(watching.stdout.take().unwrap());
    let mut headers = 0;
    let mut line = String::new();
    while headers < 2 && started.elapsed() < std::time::Duration::from_secs(40) {
        line.clear();
        if std::io::BufRead::read_line(&mut stdout, &mut line).unwrap() == 0 {
            break;
        }
        if line.starts_with("Every 10s, read at ") {
            headers += 1;
        }
    }
    std::process::Command::new("kill")
        .args(["-INT", &watching.id().to_string()])
        .status()
        .unwrap();
    let status = watching.wait().unwrap();
    assert_eq!(headers, 2, "two reports");
    assert_eq!(status.code(), Some(0));
}

/// A reading that fails is printed on stderr when it happens, and the report after it says so
/// in its header — the only trace of it left on a terminal, whose screen the report clears.
#[cfg(unix)]
#[test]
fn status_watch_names_a_failed_reading_in_the_next_reports_header() {
    use std::io::BufRead;
    use std::time::{Duration, Instant};

    let env = Env::new(0);
    apply_ok(&env, &[ClusterSpec::named("train01")]);
    let mut watching = env.spawn(&["status", "--watch=10s"], &[]);
    let deadline = Instant::now() + Duration::from_secs(60);
    let (stderr_lines, errors) = std::sync::mpsc::channel();
    let stderr = std::io::BufReader::new(watching.stderr.take().unwrap());
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            if stderr_lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut stdout = std::io::BufReader::new(watching.stdout.take().unwrap()).lines();
    let mut next_header = || {
        while Instant::now() < deadline {
            let line = stdout.next()?.ok()?;
            if line.starts_with("Every 10s, read at ") {
                return Some((line, stdout.next()?.ok()?));
            }
        }
        None
    };
    let (first, _) = next_header().expect("a first report");
    let read_at = &first["Every 10s, read at ".len()..][..8];

    // The credential is refused (it expired): the next reading fails.
    env.emulator().set_faults("401=1".parse().unwrap());
    let error = std::iter::from_fn(|| {
        errors
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .ok()
    })
    .find(|line| line.starts_with("Error:"))
    .expect("the failed reading's error on stderr, when it happens");
    env.emulator().set_faults(Default::default());

    let (header, after_header) = next_header().expect("a report after the failed reading");
    std::process::Command::new("kill")
        .args(["-INT", &watching.id().to_string()])
        .status()
        .unwrap();
    assert_eq!(watching.wait().unwrap().code(), Some(0));
    assert!(
        header.ends_with(&format!("Nothing changed since {read_at}.")),
        "{header}"
    );
    let message = error.trim_start_matches("Error: ");
    assert_eq!(
        after_header,
        format!("1 reading failed since {read_at}: {message}")
    );
}

#[test]
fn status_watch_refuses_a_short_interval_json_and_exit_codes() {
    let env = Env::new(0);
    for (args, needle) in [
        (&["status", "--watch=5s"][..], "at least 10s"),
        (&["status", "--watch", "--json"], "--watch and --json"),
        (
            &["status", "--watch", "--detailed-exitcode"],
            "--watch and --detailed-exitcode",
        ),
    ] {
        let output = env.run(args);
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let err = crate::support::stderr(&output);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// A cluster whose only Slurm job waits for nodes: nothing runs on it.
fn waiting_for_nodes(env: &Env) {
    apply_ok(env, &[ClusterSpec::default()]);
    env.emulator().set_slurm_jobs(
        &cluster_name("train01"),
        vec![json!({"job_id": 11, "name": "eval", "user_name": "bob",
                    "job_state": ["PENDING"], "partition": "cpu"})],
    );
}

#[test]
fn a_lone_pending_job_reads_as_one_pending_job_not_in_use() {
    let env = Env::new(100);
    waiting_for_nodes(&env);
    insta::assert_snapshot!(env.transcript(&["status"]), @"
    PROJECT  REGION       ID       STATE    NODES                     SLURM JOBS            SLURM NODES  IDLE SINCE
    my-proj  us-central1  train01  RUNNING  login: 1 running; cpu: 0  0 running, 1 pending  4 idle       1 pending job

    Nothing needs attention.

    Fleet: 1 cluster; GPUs running: none; idle GPU-hours: 0.0
    ");
    let output = env.run(&["status", "--json"]);
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        document["clusters"][0]["slurm"]["idle"],
        json!({"status": "in_use", "only_pending_jobs": true})
    );
    let idle_report = env
        .transcript(&["plan", "--destroy", "--idle-for", "1h"])
        .normalized_with(idle_seconds_hidden);
    insta::assert_snapshot!(idle_report, @"
    PROJECT  REGION       ID       STATE    ACTIVE JOBS  BUSY NODES  LAST BUSY                                       GPUS  IDLE GPU-HOURS  VERDICT             REASON
    my-proj  us-central1  train01  RUNNING  1            0           never (up since [TIME] ([N]s ago))  0     0.0             jobs pending: keep  1 pending job
    No clusters to destroy.
    ");
}
