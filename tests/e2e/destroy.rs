//! `destroy`, `prevent_destroy`, and `destroy --idle-for` with injected Slurm jobs.

use serde_json::json;

use crate::support::{ClusterSpec, Env, apply_ok, cluster_name, stderr, stdout};

#[test]
fn destroy_deletes_declared_clusters() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    let output = env.run(&["destroy", "--auto-approve"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("Destroy complete! Resources: 1 destroyed."),
        "{}",
        stdout(&output)
    );
    assert!(env.emulator().cluster(&cluster_name("train01")).is_none());
    let again = env.run(&["destroy", "--auto-approve"]);
    assert!(again.status.success());
    assert!(
        stdout(&again).contains("No clusters to destroy."),
        "{}",
        stdout(&again)
    );
}

#[test]
fn prevent_destroy_refuses() {
    let env = Env::new(100);
    let protected = ClusterSpec {
        extra_cluster_settings: "  lifecycle {\n    prevent_destroy = true\n  }\n",
        ..ClusterSpec::default()
    };
    apply_ok(&env, &[protected]);
    env.emulator().clear_requests();
    let output = env.run(&["destroy", "--auto-approve"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("prevent_destroy"),
        "{}",
        stderr(&output)
    );
    assert!(env.mutations().is_empty());
}

#[test]
fn idle_for_deletes_only_idle_clusters() {
    let env = Env::new(100);
    let busy = ClusterSpec::default();
    let idle = ClusterSpec {
        id: "idle01",
        ..ClusterSpec::default()
    };
    let old = ClusterSpec {
        id: "old01",
        ..ClusterSpec::default()
    };
    apply_ok(&env, &[busy, idle, old]);
    let long_ago = time::OffsetDateTime::now_utc().unix_timestamp() - 5 * 3600;
    let recently = time::OffsetDateTime::now_utc().unix_timestamp() - 600;
    env.emulator().set_slurm_jobs(
        &cluster_name("train01"),
        vec![
            json!({"job_id": 1, "job_state": ["RUNNING"], "end_time": {"set": false, "number": 0}}),
        ],
    );
    env.emulator().set_slurm_jobs(
        &cluster_name("old01"),
        vec![json!({"job_id": 2, "job_state": ["COMPLETED"], "end_time": {"set": true, "number": long_ago}})],
    );
    env.emulator().set_slurm_jobs(
        &cluster_name("idle01"),
        vec![json!({"job_id": 3, "job_state": ["COMPLETED"], "end_time": {"set": true, "number": recently}})],
    );
    let output = env.run(&["destroy", "--idle-for", "2h", "--auto-approve"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(out.contains("VERDICT"), "{out}");
    assert!(out.contains("busy"), "{out}");
    assert!(
        env.emulator().cluster(&cluster_name("old01")).is_none(),
        "{out}"
    );
    assert!(env.emulator().cluster(&cluster_name("train01")).is_some());
    assert!(env.emulator().cluster(&cluster_name("idle01")).is_some());
}

#[test]
fn an_unreachable_slurm_is_never_idle() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.emulator()
        .set_slurm_unreachable(&cluster_name("train01"), true);
    let output = env.run(&["destroy", "--idle-for", "0s", "--auto-approve"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("unknown"), "{}", stdout(&output));
    assert!(env.emulator().cluster(&cluster_name("train01")).is_some());
}
