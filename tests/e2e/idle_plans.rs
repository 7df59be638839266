//! Idle destroys that can be reviewed and are never applied on stale evidence: a saved idle
//! destroy (`plan --destroy --idle-for D --out FILE`) whose `apply FILE` asks Slurm again, the
//! look after a terminal's approval, the hint without a terminal, and the warning of a
//! threshold so short that any cluster between two jobs qualifies.

use serde_json::{Value, json};

use crate::support::{ClusterSpec, Env, apply_ok, cluster_name, stderr};

fn number(n: i64) -> Value {
    json!({"set": true, "infinite": false, "number": n})
}

fn hours_ago(hours: i64) -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp() - hours * 3600
}

fn spec(id: &'static str) -> ClusterSpec {
    ClusterSpec {
        id,
        ..ClusterSpec::default()
    }
}

/// `idle1` and `idle2`, each with one node idle for five hours.
fn two_idle_clusters() -> Env {
    let env = Env::new(100);
    apply_ok(&env, &[spec("idle1"), spec("idle2")]);
    for id in ["idle1", "idle2"] {
        env.emulator().set_slurm_nodes(
            &cluster_name(id),
            vec![json!({"name": "cpu-0", "state": ["IDLE"], "last_busy": number(hours_ago(5))})],
        );
    }
    env.emulator().clear_requests();
    env
}

/// `id` starts a job on its node.
fn starts_a_job(env: &Env, id: &str) {
    let name = cluster_name(id);
    env.emulator().set_slurm_jobs(
        &name,
        vec![json!({"job_id": 7, "name": "train", "user_name": "alice",
                    "job_state": ["RUNNING"], "nodes": "cpu-0"})],
    );
    env.emulator().set_slurm_nodes(
        &name,
        vec![json!({"name": "cpu-0", "state": ["ALLOCATED"], "last_busy": number(hours_ago(0))})],
    );
}

fn deletes(env: &Env) -> Vec<String> {
    env.mutations()
        .into_iter()
        .filter(|r| r.method == "DELETE")
        .map(|r| r.path.rsplit('/').next().unwrap().to_owned())
        .collect()
}

#[test]
fn a_saved_idle_destroy_deletes_only_the_clusters_still_idle_when_it_is_applied() {
    let env = two_idle_clusters();
    let plan = env.run(&[
        "plan",
        "--destroy",
        "--idle-for",
        "2h",
        "--out",
        "idle.plan",
    ]);
    assert!(plan.status.success(), "{plan:?}");
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(env.path().join("idle.plan")).unwrap())
            .unwrap();
    assert_eq!(saved["flags"]["idle_for_seconds"], 7200);
    assert_eq!(saved["summary"]["destroy"], 2);
    assert!(env.mutations().is_empty(), "plan sends nothing");

    starts_a_job(&env, "idle2");
    let applied = env.run(&["apply", "idle.plan"]);
    assert!(applied.status.success(), "{applied:?}");
    let log = stderr(&applied);
    assert!(
        log.contains(
            "Warning: idle2 is no longer idle since the plan was made: kept (1 active job, 1 busy node)"
        ),
        "{log}"
    );
    assert!(
        log.contains("Destroy complete! Resources: 1 destroyed."),
        "{log}"
    );
    assert_eq!(deletes(&env), ["idle1"]);
    assert!(env.emulator().cluster(&cluster_name("idle2")).is_some());
}

#[test]
fn a_saved_idle_destroy_whose_clusters_all_became_busy_deletes_nothing() {
    let env = two_idle_clusters();
    assert!(
        env.run(&[
            "plan",
            "--destroy",
            "--idle-for",
            "2h",
            "--out",
            "idle.plan"
        ])
        .status
        .success()
    );
    starts_a_job(&env, "idle1");
    starts_a_job(&env, "idle2");
    let applied = env.run(&["apply", "idle.plan"]);
    assert!(applied.status.success(), "{applied:?}");
    assert!(
        stderr(&applied)
            .contains("No cluster of the saved idle destroy is still idle: nothing to destroy."),
        "{}",
        stderr(&applied)
    );
    assert!(env.mutations().is_empty());
}

#[test]
fn an_idle_destroy_without_a_terminal_suggests_the_same_idle_destroy_saved() {
    let env = two_idle_clusters();
    let output = env.cmd(&["destroy", "--idle-for", "2h"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let log = stderr(&output);
    assert!(
        log.contains(
            "hint: run with --auto-approve, or review the idle destroy first: `clusterform plan \
             --destroy --idle-for 2h --out FILE`, then `clusterform apply FILE` (which deletes \
             only the clusters still idle then)"
        ),
        "{log}"
    );
    assert!(
        !log.contains("plan --destroy --out"),
        "never a wider scope: {log}"
    );
    assert!(env.mutations().is_empty());
}

#[test]
fn a_threshold_under_ten_minutes_is_accepted_with_a_warning() {
    let env = two_idle_clusters();
    let output = env.run(&["plan", "--destroy", "--idle-for", "5m"]);
    assert!(output.status.success(), "{output:?}");
    assert!(
        stderr(&output).contains(
            "Warning: --idle-for 5m is shorter than 10m: a cluster between two jobs qualifies as idle"
        ),
        "{}",
        stderr(&output)
    );
}

#[test]
#[cfg(unix)]
fn a_cluster_that_starts_a_job_while_the_question_waits_is_kept() {
    let env = two_idle_clusters();
    let mut session = crate::support::on_terminal(&env, "destroy --idle-for 2h");
    session.exp_string("Only 'yes' will be accepted").unwrap();
    starts_a_job(&env, "idle2");
    session.send_line("yes").unwrap();
    session
        .exp_string("idle2 became busy while waiting for approval: kept")
        .unwrap();
    session.exp_string("Destroy complete!").unwrap();
    session.exp_eof().unwrap();
    assert_eq!(deletes(&env), ["idle1"]);
    assert!(env.emulator().cluster(&cluster_name("idle2")).is_some());
}
