//! The Slurm jobs a plan shows under a disruptive change (node recreation, a destroy), none
//! for a harmless one, and "unknown" without failing when Slurm cannot be reached.

use serde_json::{Value, json};

use crate::support::{ClusterSpec, Env, apply_ok, cluster_name, config, stderr, stdout};

/// The default cluster with a startup script on the `cpu` pool: its nodes are recreated.
fn with_startup_script() -> String {
    config(&[ClusterSpec::default()]).replace(
        "    zone = \"us-central1-a\"\n",
        "    zone = \"us-central1-a\"\n    startup_script = \"#!/bin/bash\\necho hi\"\n",
    )
}

fn training_job() -> Value {
    json!({"job_id": 17, "name": "train-llm", "user_name": "alice", "job_state": ["RUNNING"],
           "nodes": "cpu-[0-1]", "end_time": {"set": true, "infinite": false, "number": 4_000_000_000_i64}})
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
        .set_slurm_jobs(&cluster_name("train01"), vec![training_job()]);
    env.write_config(&with_startup_script());
    env.emulator().clear_requests();
    let output = env.run(&["plan", "--out", "saved.plan"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(out.contains("recreates nodes of pool cpu"), "{out}");
    assert!(
        out.contains("    # 1 Slurm job active now: 17 train-llm (alice, RUNNING on cpu-[0-1])\n"),
        "{out}"
    );
    assert_eq!(
        slurm_calls(&env),
        VERSIONS_NOT_SERVED + 1,
        "one look per disruptive cluster, once its REST version is found"
    );
    let shown = env.run(&["show", "saved.plan"]);
    assert!(
        !stdout(&shown).contains("Slurm job"),
        "a plan file does not keep what was running: {}",
        stdout(&shown)
    );

    let json = env.run(&["plan", "--json"]);
    let document: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        document["changes"][0]["running_jobs"]["status"], "known",
        "{document}"
    );
    assert_eq!(document["changes"][0]["running_jobs"]["jobs"][0]["id"], 17);

    let destroy = env.run(&["destroy", "--auto-approve"]);
    assert!(destroy.status.success(), "{}", stderr(&destroy));
    assert!(
        stdout(&destroy).contains("# 1 Slurm job active now: 17 train-llm"),
        "{}",
        stdout(&destroy)
    );
}

#[test]
fn a_smaller_pool_shows_the_jobs_it_may_stop() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.emulator()
        .set_slurm_jobs(&cluster_name("train01"), vec![training_job()]);
    env.write_config(&config(&[ClusterSpec {
        max_nodes: 2,
        ..ClusterSpec::default()
    }]));
    let output = env.run(&["plan"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(
        out.contains(
            "max_node_count of pool cpu goes from 4 to 2: the cluster reports 0 nodes in the pool, none above the new maximum, so none is removed now"
        ),
        "{out}"
    );
    assert!(
        out.contains("# 1 Slurm job active now: 17 train-llm"),
        "{out}"
    );
}

#[test]
fn a_labels_only_change_asks_slurm_nothing() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.emulator()
        .set_slurm_jobs(&cluster_name("train01"), vec![training_job()]);
    env.write_config(&config(&[ClusterSpec {
        labels: r#"{ team = "research" }"#,
        ..ClusterSpec::default()
    }]));
    env.emulator().clear_requests();
    let output = env.run(&["plan"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("labels"), "{}", stdout(&output));
    assert!(
        !stdout(&output).contains("Slurm job"),
        "{}",
        stdout(&output)
    );
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
    let output = env.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stdout(&output)
            .contains("    # Slurm jobs active now: unknown (Slurm REST API unreachable"),
        "{}",
        stdout(&output)
    );
    assert_eq!(slurm_calls(&env), 1, "a glance is not retried");
    assert!(env.run(&["plan"]).status.success());
}
