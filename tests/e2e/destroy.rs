//! `destroy`, `prevent_destroy`, and `destroy --idle-for` with injected Slurm jobs and nodes:
//! jobs slurmctld has forgotten, powered-down nodes, nodes without `last_busy`, an older
//! slurmrestd, an unreachable one.

use serde_json::{Value, json};

use crate::support::{ClusterSpec, Env, apply_ok, cluster_name, stderr, stdout};

#[test]
fn destroy_deletes_declared_clusters() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    let output = env.run(&["destroy", "--auto-approve"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("Destroy complete! Resources: 1 destroyed."),
        "{}",
        stderr(&output)
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
    apply_ok(&env, &[ClusterSpec::protected()]);
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

fn number(n: i64) -> Value {
    json!({"set": true, "infinite": false, "number": n})
}

fn minutes_ago(minutes: i64) -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp() - minutes * 60
}

fn node(name: &str, state: &[&str], last_busy: i64) -> Value {
    json!({"name": name, "state": state, "last_busy": number(last_busy)})
}

/// The table line of cluster `id`.
fn row<'a>(out: &'a str, id: &str) -> &'a str {
    out.lines()
        .find(|line| line.starts_with(&format!("{id} ")))
        .unwrap_or_else(|| panic!("no row for {id}:\n{out}"))
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
        vec![node("cpu-0", &["ALLOCATED"], minutes_ago(0))],
    );
    // Its last job ended ten minutes ago: slurmctld (MinJobAge 300 s) has forgotten it, but
    // the node remembers when it last ran work.
    e.set_slurm_jobs(
        &cluster_name("agedout"),
        vec![json!({"job_id": 2, "job_state": ["COMPLETED"], "end_time": number(minutes_ago(10))})],
    );
    e.set_slurm_nodes(
        &cluster_name("agedout"),
        vec![node("cpu-0", &["IDLE"], minutes_ago(10))],
    );
    e.set_slurm_nodes(
        &cluster_name("old01"),
        vec![
            node("cpu-0", &["IDLE", "POWERED_DOWN"], minutes_ago(300)),
            node("cpu-1", &["IDLE", "POWERED_DOWN"], minutes_ago(310)),
        ],
    );
    e.set_slurm_nodes(
        &cluster_name("nolast"),
        vec![json!({"name": "cpu-0", "state": ["IDLE", "POWERED_DOWN"]})],
    );
    let output = env.run(&["destroy", "--idle-for", "2h", "--auto-approve"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let out = stdout(&output);
    for column in [
        "ACTIVE JOBS",
        "BUSY NODES",
        "LAST BUSY",
        "VERDICT",
        "REASON",
    ] {
        assert!(out.contains(column), "{out}");
    }
    assert!(row(&out, "train01").contains("busy: keep"), "{out}");
    assert!(
        row(&out, "train01").contains("1 active job, 1 busy node"),
        "{out}"
    );
    let aged_out = row(&out, "agedout");
    assert!(aged_out.contains("busy: keep"), "{out}");
    // Seconds pass between setting the node and the run: `(10m ago)` or `(10m1s ago)`.
    assert!(
        aged_out.contains("(10m ago)")
            || aged_out.contains("(10m1s ago)")
            || aged_out.contains("(10m2s ago)"),
        "{out}"
    );
    assert!(aged_out.contains("last busy 10m"), "{out}");
    let old = row(&out, "old01");
    assert!(old.contains("idle: destroy"), "{out}");
    assert!(
        old.contains("no active job or busy node; last busy 5h"),
        "{out}"
    );
    assert!(row(&out, "nolast").contains("unknown: keep"), "{out}");
    assert!(
        row(&out, "nolast").contains("node cpu-0 reports no last_busy"),
        "{out}"
    );
    assert!(e.cluster(&cluster_name("old01")).is_none(), "{out}");
    for kept in ["train01", "agedout", "nolast"] {
        assert!(e.cluster(&cluster_name(kept)).is_some(), "{kept}: {out}");
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
        vec![node("cpu-0", &["IDLE", "POWERED_DOWN"], minutes_ago(300))],
    );
    let output = env.run(&["destroy", "--idle-for", "2h", "--auto-approve"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        row(&stdout(&output), "train01").contains("idle: destroy"),
        "{}",
        stdout(&output)
    );
    assert!(env.emulator().cluster(&name).is_none());
}

#[test]
fn an_unreachable_slurm_is_never_idle() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.emulator()
        .set_slurm_unreachable(&cluster_name("train01"), true);
    let output = env.run(&["destroy", "--idle-for", "0s", "--auto-approve"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        row(&stdout(&output), "train01").contains("unknown: keep"),
        "{}",
        stdout(&output)
    );
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
        vec![node("cpu-0", &["IDLE", "POWERED_DOWN"], minutes_ago(300))],
    );
    env.emulator().clear_requests();
    let output = env.run(&["destroy", "--idle-for", "2h", "--auto-approve"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(row(&out, "train01").contains("idle: destroy"), "{out}");
    assert!(out.contains("# no Slurm jobs active now"), "{out}");
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
