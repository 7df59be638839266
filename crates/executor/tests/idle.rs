//! Idle detection and the running jobs of plans, through the emulator's Slurm REST API with
//! realistic slurmrestd jobs and nodes (`tests/fixtures`), aged-out jobs, powered-down nodes
//! and clusters that only serve an older REST version.

use std::time::Duration;

use clusterform_executor::{IdleReport, IdleVerdict, inspect_idle, running_jobs};
use clusterform_model::ClusterName;
use clusterform_planner::RunningJobs;
use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::support::*;

const TWO_HOURS: Duration = Duration::from_secs(2 * 3600);

/// The list under `field` of a fixture file.
fn fixture_list(file: &str, field: &str) -> Vec<Value> {
    let path = format!("{}/tests/fixtures/{file}", env!("CARGO_MANIFEST_DIR"));
    let body: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    body[field].as_array().unwrap().clone()
}

fn number(n: i64) -> Value {
    json!({"set": true, "infinite": false, "number": n})
}

fn node(name: &str, state: &[&str], last_busy: i64) -> Value {
    json!({"name": name, "state": state, "last_busy": number(last_busy)})
}

fn report<'a>(reports: &'a [IdleReport], id: &str) -> &'a IdleReport {
    reports.iter().find(|r| r.name.cluster_id == id).unwrap()
}

#[tokio::test]
async fn every_kind_of_cluster_gets_the_right_verdict() {
    let h = Harness::start(Duration::from_millis(50)).await;
    let now = OffsetDateTime::now_utc();
    let minutes_ago = |m: i64| (now - time::Duration::minutes(m)).unix_timestamp();
    let ids = [
        "busy", "agedout", "powered", "nolast", "old40", "ancient", "unreach", "nonodes",
    ];
    for id in ids {
        h.insert(id);
    }
    let e = &h.emulator;
    e.set_slurm_jobs(
        &cluster_name("busy"),
        fixture_list("slurm_jobs_v0.0.42.json", "jobs"),
    );
    e.set_slurm_nodes(
        &cluster_name("busy"),
        fixture_list("slurm_nodes_v0.0.42.json", "nodes"),
    );
    // The job ended ten minutes ago: slurmctld has forgotten it, its node has not.
    e.set_slurm_jobs(
        &cluster_name("agedout"),
        vec![json!({"job_id": 5, "job_state": ["COMPLETED"], "end_time": number(minutes_ago(10))})],
    );
    e.set_slurm_nodes(
        &cluster_name("agedout"),
        vec![node("a3-0", &["IDLE"], minutes_ago(10))],
    );
    let powered_down = vec![
        node("cpu-0", &["IDLE", "POWERED_DOWN"], minutes_ago(300)),
        node("cpu-1", &["IDLE", "POWERED_DOWN"], minutes_ago(320)),
    ];
    e.set_slurm_nodes(&cluster_name("powered"), powered_down.clone());
    e.set_slurm_nodes(
        &cluster_name("nolast"),
        vec![json!({"name": "cpu-0", "state": ["IDLE"]})],
    );
    e.set_slurm_nodes(&cluster_name("old40"), powered_down.clone());
    e.set_slurm_api_versions(&cluster_name("old40"), &["v0.0.40"]);
    e.set_slurm_nodes(&cluster_name("ancient"), powered_down);
    e.set_slurm_api_versions(&cluster_name("ancient"), &["v0.0.39"]);
    e.set_slurm_unreachable(&cluster_name("unreach"), true);
    e.set_slurm_nodes(&cluster_name("nonodes"), Vec::new());

    let locations = std::collections::BTreeSet::from([(PROJECT.to_owned(), REGION.to_owned())]);
    let clusters = clusterform_executor::refresh(&h.client, &locations, &[])
        .await
        .unwrap();
    let reports = inspect_idle(&h.client, &clusters, TWO_HOURS, now)
        .await
        .unwrap();

    let busy = report(&reports, "busy");
    assert_eq!(busy.verdict, IdleVerdict::Busy);
    assert_eq!(
        (busy.active_jobs, busy.busy_nodes),
        (Some(2), Some(2)),
        "{busy:?}"
    );
    let aged_out = report(&reports, "agedout");
    assert_eq!(aged_out.verdict, IdleVerdict::Busy, "{aged_out:?}");
    assert_eq!(aged_out.active_jobs, Some(0));
    assert_eq!(
        aged_out.last_busy.map(|t| t.unix_timestamp()),
        Some(minutes_ago(10))
    );
    let powered = report(&reports, "powered");
    assert_eq!(powered.verdict, IdleVerdict::Idle, "{powered:?}");
    assert_eq!(powered.slurm_version.as_deref(), Some("v0.0.42"));
    assert_eq!(
        powered.last_busy.map(|t| t.unix_timestamp()),
        Some(minutes_ago(300))
    );
    let old = report(&reports, "old40");
    assert_eq!(old.verdict, IdleVerdict::Idle, "{old:?}");
    assert_eq!(old.slurm_version.as_deref(), Some("v0.0.40"));
    for (id, reason) in [
        ("nolast", "node cpu-0 reports no last_busy"),
        (
            "ancient",
            "slurmrestd serves none of the REST versions v0.0.42, v0.0.41, v0.0.40",
        ),
        ("nonodes", "Slurm lists no nodes"),
    ] {
        let unknown = report(&reports, id);
        assert_eq!(unknown.verdict, IdleVerdict::Unknown, "{id}");
        assert_eq!(unknown.reason, reason, "{id}");
    }
    let unreachable = report(&reports, "unreach");
    assert_eq!(unreachable.verdict, IdleVerdict::Unknown);
    assert!(
        unreachable.reason.starts_with("Slurm REST API unreachable"),
        "{unreachable:?}"
    );
}

#[tokio::test]
async fn version_fallback_asks_older_versions_only_after_a_404() {
    let h = Harness::start(Duration::from_millis(50)).await;
    h.insert("old40");
    h.emulator
        .set_slurm_api_versions(&cluster_name("old40"), &["v0.0.40"]);
    h.emulator.clear_requests();
    let names = [ClusterName::new(PROJECT, REGION, "old40").unwrap()];
    let jobs = running_jobs(&h.client, &names).await;
    assert_eq!(jobs, [RunningJobs::Known { jobs: Vec::new() }]);
    let asked: Vec<String> = h
        .emulator
        .requests()
        .iter()
        .filter_map(|r| r.body.as_ref()?.get("path")?.as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        asked,
        [
            "/slurm/v0.0.42/jobs",
            "/slurm/v0.0.41/jobs",
            "/slurm/v0.0.40/jobs"
        ]
    );
}

#[tokio::test]
async fn running_jobs_are_read_once_per_cluster_and_unknown_when_unreachable() {
    let h = Harness::start(Duration::from_millis(50)).await;
    for id in ["busy", "unreach"] {
        h.insert(id);
    }
    h.emulator.set_slurm_jobs(
        &cluster_name("busy"),
        fixture_list("slurm_jobs_v0.0.42.json", "jobs"),
    );
    h.emulator
        .set_slurm_unreachable(&cluster_name("unreach"), true);
    h.emulator.clear_requests();
    let names: Vec<ClusterName> = ["busy", "unreach"]
        .iter()
        .map(|id| ClusterName::new(PROJECT, REGION, id).unwrap())
        .collect();
    let jobs = running_jobs(&h.client, &names).await;
    let RunningJobs::Known { jobs: active } = &jobs[0] else {
        panic!("{jobs:?}");
    };
    let summary: Vec<(Option<i64>, Option<&str>, &str)> = active
        .iter()
        .map(|j| (j.id, j.user.as_deref(), j.state.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            (Some(17), Some("alice"), "RUNNING"),
            (Some(18), Some("bob"), "PENDING")
        ]
    );
    assert_eq!(active[0].nodes.as_deref(), Some("a3-[0-1]"));
    assert!(
        matches!(&jobs[1], RunningJobs::Unknown { reason } if reason.contains("unreachable")),
        "{jobs:?}"
    );
    assert_eq!(h.count("POST", "unreach:callSlurmRestApi"), 1, "no retries");
}
