//! Idle detection for `destroy --idle-for`: reading a cluster's Slurm jobs and deciding
//! whether it has been doing nothing for long enough to be deleted.
//!
//! The rule errs on the side of keeping clusters: a cluster is idle only when it is `RUNNING`,
//! none of its jobs is active, and the last job ended (or, with no jobs, the cluster started)
//! longer ago than the threshold. A cluster whose Slurm API cannot be reached, or whose times
//! are unknown, is never called idle.

use std::time::Duration;

use clusterform_model::{Cluster, ClusterName, state};
use clusterform_planner::LiveCluster;
use futures::StreamExt;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::client::ApiClient;
use crate::error::ExecError;

/// Clusters inspected at once.
const INSPECT_PARALLELISM: usize = 10;

/// Job states that mean a job is running or about to free its nodes.
const RUNNING_STATES: &[&str] = &[
    "RUNNING",
    "COMPLETING",
    "CONFIGURING",
    "SUSPENDED",
    "STAGE_OUT",
    "RESIZING",
    "SIGNALING",
];

/// Job states that mean a job is waiting to run.
const PENDING_STATES: &[&str] = &[
    "PENDING",
    "REQUEUED",
    "REQUEUE_HOLD",
    "REQUEUE_FED",
    "RESV_DEL_HOLD",
];

/// One job as slurmrestd v0.0.42 reports it, reduced to what idle detection needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmJob {
    /// `job_id`.
    pub job_id: Option<i64>,
    /// `job_state`, e.g. `["RUNNING"]` (a list since v0.0.40).
    pub state: Vec<String>,
    /// `end_time`, Unix seconds, when set.
    pub end_time: Option<i64>,
    /// `start_time`, Unix seconds, when set.
    pub start_time: Option<i64>,
}

impl SlurmJob {
    fn has_state(&self, states: &[&str]) -> bool {
        self.state
            .iter()
            .any(|s| states.iter().any(|wanted| s.eq_ignore_ascii_case(wanted)))
    }
}

/// Reads slurmrestd's `{"jobs": [...]}`, tolerating missing fields and older spellings
/// (a plain string state, plain-number times).
pub fn parse_jobs(body: &Value) -> Result<Vec<SlurmJob>, String> {
    let jobs = match body.get("jobs") {
        Some(Value::Array(jobs)) => jobs,
        Some(Value::Null) | None => return Ok(Vec::new()),
        Some(_) => return Err("`jobs` is not a list".to_owned()),
    };
    Ok(jobs.iter().map(parse_job).collect())
}

fn parse_job(job: &Value) -> SlurmJob {
    let state = match job.get("job_state") {
        Some(Value::Array(states)) => states
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        Some(Value::String(state)) => vec![state.clone()],
        _ => Vec::new(),
    };
    SlurmJob {
        job_id: job.get("job_id").and_then(Value::as_i64),
        state,
        end_time: job.get("end_time").and_then(slurm_time),
        start_time: job.get("start_time").and_then(slurm_time),
    }
}

/// A slurmrestd number: `{"set": true, "infinite": false, "number": N}` or a plain number.
/// Zero means "not yet" in Slurm.
fn slurm_time(value: &Value) -> Option<i64> {
    let number = match value {
        Value::Number(n) => n.as_i64(),
        Value::Object(fields) => {
            let set = fields.get("set").and_then(Value::as_bool).unwrap_or(true);
            let infinite = fields
                .get("infinite")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if !set || infinite {
                return None;
            }
            fields.get("number").and_then(Value::as_i64)
        }
        _ => None,
    }?;
    (number > 0).then_some(number)
}

/// The decision for one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdleVerdict {
    /// Idle for at least the threshold: may be deleted.
    Idle,
    /// In use, or not idle for long enough.
    Busy(String),
    /// Could not tell: never deleted.
    Unknown(String),
}

/// What was found for one cluster, for the table `destroy --idle-for` prints.
#[derive(Debug, Clone, PartialEq)]
pub struct IdleReport {
    /// The cluster.
    pub name: ClusterName,
    /// `clusterStatus.state`.
    pub state: Option<String>,
    /// Jobs running (or completing, configuring, suspended).
    pub running: usize,
    /// Jobs waiting to run.
    pub pending: usize,
    /// When the last job ended.
    pub last_job_end: Option<OffsetDateTime>,
    /// How long the cluster has had nothing to do, when known.
    pub idle_for: Option<Duration>,
    /// The decision.
    pub verdict: IdleVerdict,
}

/// Decides whether `cluster` has been idle for `threshold` at `now`, given its jobs.
pub fn idle_verdict(
    name: &ClusterName,
    cluster: &Cluster,
    jobs: &[SlurmJob],
    now: OffsetDateTime,
    threshold: Duration,
) -> IdleReport {
    let running = jobs.iter().filter(|j| j.has_state(RUNNING_STATES)).count();
    let pending = jobs.iter().filter(|j| j.has_state(PENDING_STATES)).count();
    let last_job_end = jobs
        .iter()
        .filter_map(|j| j.end_time)
        .max()
        .and_then(|t| OffsetDateTime::from_unix_timestamp(t).ok());
    let mut report = IdleReport {
        name: name.clone(),
        state: cluster.state().map(str::to_owned),
        running,
        pending,
        last_job_end,
        idle_for: None,
        verdict: IdleVerdict::Idle,
    };
    report.verdict = decide(&mut report, cluster, jobs.is_empty(), now, threshold);
    report
}

fn decide(
    report: &mut IdleReport,
    cluster: &Cluster,
    no_jobs: bool,
    now: OffsetDateTime,
    threshold: Duration,
) -> IdleVerdict {
    match report.state.as_deref() {
        Some(state::RUNNING) => {}
        Some(other) => return IdleVerdict::Unknown(format!("cluster is {other}, not RUNNING")),
        None => return IdleVerdict::Unknown("cluster reports no state".to_owned()),
    }
    if report.running > 0 || report.pending > 0 {
        return IdleVerdict::Busy(format!(
            "{} running, {} pending",
            report.running, report.pending
        ));
    }
    let since = match (report.last_job_end, no_jobs) {
        (Some(end), _) => end,
        (None, true) => match cluster
            .start_time
            .as_deref()
            .map(|t| OffsetDateTime::parse(t, &Rfc3339))
        {
            Some(Ok(start)) => start,
            Some(Err(_)) => {
                return IdleVerdict::Unknown("cluster start time is unreadable".to_owned());
            }
            None => return IdleVerdict::Unknown("no jobs and no start time".to_owned()),
        },
        (None, false) => return IdleVerdict::Unknown("jobs report no end time".to_owned()),
    };
    let idle_for = Duration::try_from(now - since).unwrap_or(Duration::ZERO);
    report.idle_for = Some(idle_for);
    if idle_for >= threshold {
        IdleVerdict::Idle
    } else {
        IdleVerdict::Busy(format!(
            "idle for {}, less than {}",
            humantime::format_duration(round_to_seconds(idle_for)),
            humantime::format_duration(threshold)
        ))
    }
}

fn round_to_seconds(duration: Duration) -> Duration {
    Duration::from_secs(duration.as_secs())
}

/// Asks every cluster's Slurm API for its jobs (up to ten at once) and decides for each; the
/// reports come in the order of `clusters`. A cluster whose jobs cannot be read is `Unknown`.
/// Calls are addressed by where each cluster was read, never by its `name` string. Fails only
/// when an address is not a valid cluster name.
pub async fn inspect_idle(
    client: &ApiClient,
    clusters: &[LiveCluster],
    threshold: Duration,
    now: OffsetDateTime,
) -> Result<Vec<IdleReport>, ExecError> {
    let names = clusters
        .iter()
        .map(|live| {
            let address = &live.address;
            ClusterName::new(&address.project, &address.region, &address.id)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(futures::stream::iter(names.into_iter().zip(clusters))
        .map(|(name, live)| inspect_one(client, name, &live.cluster, threshold, now))
        .buffered(INSPECT_PARALLELISM)
        .collect()
        .await)
}

async fn inspect_one(
    client: &ApiClient,
    name: ClusterName,
    cluster: &Cluster,
    threshold: Duration,
    now: OffsetDateTime,
) -> IdleReport {
    match client.slurm_jobs(&name).await {
        Ok(jobs) => idle_verdict(&name, cluster, &jobs, now, threshold),
        Err(error) => IdleReport {
            state: cluster.state().map(str::to_owned),
            name,
            running: 0,
            pending: 0,
            last_job_end: None,
            idle_for: None,
            verdict: IdleVerdict::Unknown(format!("Slurm API unreachable: {error}")),
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use time::macros::datetime;

    use super::*;

    const NOW: OffsetDateTime = datetime!(2026-11-10 12:00 UTC);
    const TWO_HOURS: Duration = Duration::from_secs(2 * 3600);

    fn name() -> ClusterName {
        ClusterName::new("proj-one", "us-central1", "train01").unwrap()
    }

    fn running_cluster(start: &str) -> Cluster {
        serde_json::from_value(json!({
            "name": name().to_string(),
            "clusterStatus": {"state": "RUNNING"},
            "startTime": start,
        }))
        .unwrap()
    }

    fn jobs(body: &Value) -> Vec<SlurmJob> {
        parse_jobs(body).unwrap()
    }

    #[test]
    fn parses_slurmrestd_jobs_tolerantly() {
        let parsed = jobs(&json!({"jobs": [
            {"job_id": 1, "job_state": ["RUNNING"], "end_time": {"set": true, "infinite": false, "number": 0}},
            {"job_id": 2, "job_state": "COMPLETED", "end_time": 1700000000, "start_time": {"set": false, "number": 5}},
            {}
        ]}));
        assert_eq!(parsed[0].state, vec!["RUNNING"]);
        assert_eq!(parsed[0].end_time, None);
        assert_eq!(parsed[1].end_time, Some(1_700_000_000));
        assert_eq!(parsed[1].start_time, None);
        assert_eq!(
            parsed[2],
            SlurmJob {
                job_id: None,
                state: vec![],
                end_time: None,
                start_time: None
            }
        );
        assert!(parse_jobs(&json!({"jobs": 3})).is_err());
        assert!(parse_jobs(&json!({})).unwrap().is_empty());
    }

    #[test]
    fn running_or_pending_jobs_make_a_cluster_busy() {
        let cluster = running_cluster("2026-11-01T00:00:00Z");
        for state in [
            "RUNNING",
            "PENDING",
            "SUSPENDED",
            "CONFIGURING",
            "COMPLETING",
        ] {
            let list = jobs(&json!({"jobs": [{"job_id": 1, "job_state": [state]}]}));
            let report = idle_verdict(&name(), &cluster, &list, NOW, TWO_HOURS);
            assert!(
                matches!(report.verdict, IdleVerdict::Busy(_)),
                "{state}: {report:?}"
            );
        }
    }

    #[test]
    fn old_completed_jobs_make_a_cluster_idle() {
        let cluster = running_cluster("2026-11-01T00:00:00Z");
        let ended = (NOW - time::Duration::hours(3)).unix_timestamp();
        let list = jobs(
            &json!({"jobs": [{"job_id": 1, "job_state": ["COMPLETED"], "end_time": {"set": true, "number": ended}}]}),
        );
        let report = idle_verdict(&name(), &cluster, &list, NOW, TWO_HOURS);
        assert_eq!(report.verdict, IdleVerdict::Idle);
        assert_eq!(report.idle_for, Some(Duration::from_secs(3 * 3600)));
    }

    #[test]
    fn a_recent_job_keeps_a_cluster() {
        let cluster = running_cluster("2026-11-01T00:00:00Z");
        let ended = (NOW - time::Duration::minutes(30)).unix_timestamp();
        let list =
            jobs(&json!({"jobs": [{"job_id": 1, "job_state": ["FAILED"], "end_time": ended}]}));
        let report = idle_verdict(&name(), &cluster, &list, NOW, TWO_HOURS);
        assert_eq!(
            report.verdict,
            IdleVerdict::Busy("idle for 30m, less than 2h".to_owned())
        );
    }

    #[test]
    fn without_jobs_the_start_time_counts() {
        let old = running_cluster("2026-11-10T09:00:00Z");
        assert_eq!(
            idle_verdict(&name(), &old, &[], NOW, TWO_HOURS).verdict,
            IdleVerdict::Idle
        );
        let young = running_cluster("2026-11-10T11:00:00Z");
        assert!(matches!(
            idle_verdict(&name(), &young, &[], NOW, TWO_HOURS).verdict,
            IdleVerdict::Busy(_)
        ));
    }

    #[test]
    fn unknown_times_and_states_are_never_idle() {
        let mut cluster = running_cluster("2026-11-01T00:00:00Z");
        cluster.start_time = None;
        assert!(matches!(
            idle_verdict(&name(), &cluster, &[], NOW, TWO_HOURS).verdict,
            IdleVerdict::Unknown(_)
        ));
        let provisioning: Cluster =
            serde_json::from_value(json!({"clusterStatus": {"state": "PROVISIONING"}})).unwrap();
        assert!(matches!(
            idle_verdict(&name(), &provisioning, &[], NOW, TWO_HOURS).verdict,
            IdleVerdict::Unknown(_)
        ));
    }
}
