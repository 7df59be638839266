//! Idle detection, the running jobs of plans and the controller ping, through the emulator's
//! Slurm REST API with realistic slurmrestd jobs and nodes (`tests/fixtures`: answers of
//! `callSlurmRestApi` as the Slurm Job API page documents them, slurmrestd's JSON as a string
//! in `body`), aged-out jobs, powered-down nodes, clusters that only serve an older REST
//! version, and a controller that is down; and, through a scripted server, relays whose
//! answers are not the documented shape.

use std::time::Duration;

use clusterform_executor::{
    IdleReport, IdleVerdict, SlurmReadError, inspect_idle, ping, read_jobs, read_nodes,
    running_jobs,
};
use clusterform_model::{ClusterName, RunningJobs};
use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::scripted::{Scripted, Seen, json as json_answer};
use crate::support::*;

const TWO_HOURS: Duration = Duration::from_secs(2 * 3600);

/// A fixture file: one answer of `callSlurmRestApi`.
fn fixture(file: &str) -> Value {
    let path = format!("{}/tests/fixtures/{file}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The list under `field` of the slurmrestd JSON a fixture file carries in its `body`.
fn fixture_list(file: &str, field: &str) -> Vec<Value> {
    let body: Value = serde_json::from_str(fixture(file)["body"].as_str().unwrap()).unwrap();
    body[field].as_array().unwrap().clone()
}

const JOBS_FIXTURE: &str = "call_slurm_rest_api_jobs_v0.0.42.json";
const NODES_FIXTURE: &str = "call_slurm_rest_api_nodes_v0.0.42.json";

/// The Slurm paths asked, in order.
fn slurm_paths(h: &Harness) -> Vec<String> {
    h.emulator
        .requests()
        .iter()
        .filter_map(|r| r.body.as_ref()?.get("path")?.as_str().map(str::to_owned))
        .collect()
}

fn name(id: &str) -> ClusterName {
    ClusterName::new(PROJECT, REGION, id).unwrap()
}

fn number(n: i64) -> Value {
    json!({"set": true, "infinite": false, "number": n})
}

fn node(name: &str, state: &[&str], last_busy: i64) -> Value {
    json!({"name": name, "state": state, "last_busy": number(last_busy)})
}

fn report<'a>(reports: &'a [IdleReport], id: &str) -> &'a IdleReport {
    reports.iter().find(|r| r.name.id() == id).unwrap()
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
    e.set_slurm_jobs(&cluster_name("busy"), fixture_list(JOBS_FIXTURE, "jobs"));
    e.set_slurm_nodes(&cluster_name("busy"), fixture_list(NODES_FIXTURE, "nodes"));
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

    let locations = clusterform_model::RefreshLocations::named([location()]);
    let clusters = clusterform_executor::refresh(&h.client, &locations, &[])
        .await
        .unwrap()
        .live;
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
    assert_eq!(aged_out.verdict, IdleVerdict::NotLongEnough, "{aged_out:?}");
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
            "slurmrestd serves none of the REST versions v0.0.45, v0.0.44, v0.0.43, v0.0.42, \
             v0.0.41, v0.0.40",
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
    assert_eq!(
        slurm_paths(&h),
        [
            "/slurm/v0.0.45/jobs",
            "/slurm/v0.0.44/jobs",
            "/slurm/v0.0.43/jobs",
            "/slurm/v0.0.42/jobs",
            "/slurm/v0.0.41/jobs",
            "/slurm/v0.0.40/jobs"
        ]
    );
}

#[tokio::test]
async fn the_version_that_answered_is_asked_first_for_the_rest_of_the_run() {
    let h = Harness::start(Duration::from_millis(50)).await;
    for id in ["first", "second", "newer"] {
        h.insert(id);
    }
    h.emulator
        .set_slurm_api_versions(&cluster_name("first"), &["v0.0.43"]);
    h.emulator
        .set_slurm_api_versions(&cluster_name("second"), &["v0.0.43"]);
    h.emulator
        .set_slurm_api_versions(&cluster_name("newer"), &["v0.0.44"]);
    let glance = h.client.for_a_glance();
    running_jobs(&h.client, &[name("first")]).await;
    h.emulator.clear_requests();
    // A clone of the client (as plans use) shares what the first cluster taught.
    assert_eq!(
        running_jobs(&glance, &[name("second")]).await,
        [RunningJobs::Known { jobs: Vec::new() }]
    );
    assert_eq!(slurm_paths(&h), ["/slurm/v0.0.43/jobs"]);
    h.emulator.clear_requests();
    let (version, _) = read_jobs(&h.client, &name("newer")).await.unwrap();
    assert_eq!(version, "v0.0.44");
    assert_eq!(
        slurm_paths(&h),
        [
            "/slurm/v0.0.43/jobs",
            "/slurm/v0.0.45/jobs",
            "/slurm/v0.0.44/jobs"
        ],
        "a 404 at the known version walks the list"
    );
    h.emulator.clear_requests();
    ping(&h.client, &name("newer")).await.unwrap();
    assert_eq!(slurm_paths(&h), ["/slurm/v0.0.44/ping"]);
}

#[tokio::test]
async fn the_ping_tells_a_responding_controller_from_a_down_one() {
    let h = Harness::start(Duration::from_millis(50)).await;
    for id in ["up", "down", "old40", "unreach"] {
        h.insert(id);
    }
    ping(&h.client, &name("up")).await.unwrap();
    h.emulator
        .set_slurm_controller_down(&cluster_name("down"), true);
    let error = ping(&h.client, &name("down")).await.unwrap_err();
    assert!(
        matches!(&error, SlurmReadError::ControllerDown { controllers } if controllers == "down-controller (DOWN)"),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        "slurmctld does not respond: down-controller (DOWN)"
    );
    // v0.0.40 reports `pinged` only.
    h.emulator
        .set_slurm_api_versions(&cluster_name("old40"), &["v0.0.40"]);
    ping(&h.client, &name("old40")).await.unwrap();
    h.emulator
        .set_slurm_controller_down(&cluster_name("old40"), true);
    assert!(matches!(
        ping(&h.client, &name("old40")).await,
        Err(SlurmReadError::ControllerDown { .. })
    ));
    h.emulator
        .set_slurm_unreachable(&cluster_name("unreach"), true);
    assert!(matches!(
        ping(&h.client.for_a_glance(), &name("unreach")).await,
        Err(SlurmReadError::Call(_))
    ));
}

#[tokio::test]
async fn a_cluster_whose_controller_is_down_is_never_idle() {
    let h = Harness::start(Duration::from_millis(50)).await;
    h.insert("down");
    h.emulator.set_slurm_nodes(
        &cluster_name("down"),
        vec![node("cpu-0", &["IDLE"], 1_700_000_000)],
    );
    h.emulator
        .set_slurm_controller_down(&cluster_name("down"), true);
    let reports = idle_reports(&h).await;
    let down = report(&reports, "down");
    assert_eq!(down.verdict, IdleVerdict::Unknown);
    assert_eq!(
        down.reason,
        "slurmrestd answered HTTP 500 for /slurm/v0.0.42/jobs"
    );
}

#[tokio::test]
async fn a_version_the_relay_refuses_as_not_a_slurm_path_is_probed_past() {
    let h = Harness::start(Duration::from_millis(50)).await;
    h.insert("relayed");
    let cluster = cluster_name("relayed");
    h.emulator
        .set_slurm_api_versions(&cluster, &["v0.0.45", "v0.0.42"]);
    h.emulator
        .set_slurm_refused_paths(&cluster, vec!["/slurm/v0.0.45/".to_owned()]);
    h.emulator.clear_requests();
    let names = [ClusterName::new(PROJECT, REGION, "relayed").unwrap()];
    let jobs = running_jobs(&h.client, &names).await;
    assert_eq!(jobs, [RunningJobs::Known { jobs: Vec::new() }]);
    assert_eq!(
        slurm_paths(&h),
        [
            "/slurm/v0.0.45/jobs",
            "/slurm/v0.0.44/jobs",
            "/slurm/v0.0.43/jobs",
            "/slurm/v0.0.42/jobs"
        ],
        "the refusal is the next version's cue, as a 404 is"
    );
}

#[tokio::test]
async fn nodes_the_relay_does_not_relay_leave_idleness_unknown_and_say_so() {
    let h = Harness::start(Duration::from_millis(50)).await;
    h.insert("jobsonly");
    h.emulator.set_slurm_refused_paths(
        &cluster_name("jobsonly"),
        vec!["/slurm/v0.0.42/nodes".to_owned()],
    );
    let reports = idle_reports(&h).await;
    let refused = report(&reports, "jobsonly");
    assert_eq!(refused.verdict, IdleVerdict::Unknown);
    assert_eq!(
        refused.reason,
        "the Slurm relay refuses /slurm/{version}/nodes (INVALID_ARGUMENT: not a valid Slurm path) for every REST version tried"
    );
}

/// The idle reports of every cluster of the harness's location, threshold two hours.
async fn idle_reports(h: &Harness) -> Vec<IdleReport> {
    let locations = clusterform_model::RefreshLocations::named([location()]);
    let clusters = clusterform_executor::refresh(&h.client, &locations, &[])
        .await
        .unwrap()
        .live;
    inspect_idle(&h.client, &clusters, TWO_HOURS, OffsetDateTime::now_utc())
        .await
        .unwrap()
}

/// A relay answering each Slurm path with `answer(path)`.
async fn relay(answer: impl Fn(&str) -> Value + Send + Sync + 'static) -> Scripted {
    Scripted::start(move |seen: &Seen, _| {
        let path = seen
            .body
            .as_ref()
            .and_then(|body| body["path"].as_str())
            .unwrap_or_default();
        json_answer(answer(path))
    })
    .await
}

fn relay_client(server: &Scripted) -> clusterform_executor::ApiClient {
    client_for(server.base_url(), fast_retry())
}

#[tokio::test]
async fn the_documented_answers_are_read_from_the_fixtures() {
    let server = relay(|path| {
        if path.ends_with("/jobs") {
            fixture(JOBS_FIXTURE)
        } else {
            fixture(NODES_FIXTURE)
        }
    })
    .await;
    let client = relay_client(&server);
    let (version, jobs) = read_jobs(&client, &name("train01")).await.unwrap();
    assert_eq!(version, "v0.0.45", "the relay answers every version");
    assert_eq!(jobs.iter().filter(|j| j.is_active()).count(), 2);
    let nodes = read_nodes(&client, &name("train01"), version)
        .await
        .unwrap();
    assert_eq!(nodes.iter().filter(|n| n.is_busy()).count(), 2);
    assert_eq!(nodes[3].last_busy, Some(1_764_480_000));
}

#[tokio::test]
async fn the_older_structured_body_is_read_when_body_is_absent() {
    let server = relay(|_| {
        json!({"status": 200, "structuredBody": {"jobs": [{"job_id": 3, "job_state": ["RUNNING"]}]}})
    })
    .await;
    let jobs = running_jobs(&relay_client(&server), &[name("train01")]).await;
    let RunningJobs::Known { jobs } = &jobs[0] else {
        panic!("{jobs:?}");
    };
    assert_eq!(jobs[0].id, Some(3));
}

#[tokio::test]
async fn an_answer_that_cannot_be_read_is_unknown_never_empty() {
    let empty = json!({"jobs": []}).to_string();
    let busy = json!({"jobs": [{"job_id": 1, "job_state": ["RUNNING"]}]});
    for (answer, reason) in [
        (
            json!({"status": 200, "body": "<html>Bad gateway</html>"}),
            "`body` is not JSON",
        ),
        (json!({"status": 200, "body": 7}), "`body` is a number"),
        (json!({"status": 200}), "the answer carries no `body`"),
        (
            json!({"status": 200, "body": empty, "structuredBody": busy}),
            "`body` and `structuredBody` disagree",
        ),
    ] {
        let served = answer.clone();
        let server = relay(move |_| served.clone()).await;
        let jobs = running_jobs(&relay_client(&server), &[name("train01")]).await;
        assert!(
            matches!(&jobs[0], RunningJobs::Unknown { reason: why } if why.contains(reason)),
            "{answer}: {jobs:?}"
        );
    }
}

#[tokio::test]
async fn running_jobs_are_read_per_cluster_with_retries_and_unknown_when_unreachable() {
    let h = Harness::start(Duration::from_millis(50)).await;
    for id in ["busy", "unreach"] {
        h.insert(id);
    }
    h.emulator
        .set_slurm_jobs(&cluster_name("busy"), fixture_list(JOBS_FIXTURE, "jobs"));
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
    assert!(
        h.count("POST", "unreach:callSlurmRestApi") > 1,
        "the jobs decide whether work may stop: their read is retried as reads are"
    );
}
