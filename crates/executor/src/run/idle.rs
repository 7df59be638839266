//! Idle detection for `destroy --idle-for`: deciding from a cluster's Slurm jobs **and** nodes
//! whether it has provably done nothing for long enough to be deleted.
//!
//! slurmctld forgets finished jobs after `MinJobAge` (300 s by default), so an empty job list
//! proves nothing; the nodes remember when they last ran work (`last_busy`), powered-down
//! ones included. A cluster is idle for D only when it is `RUNNING`, no job is active, no node
//! is busy, and the newest node `last_busy` (and finished job `end_time`) is older than D.
//! Anything unknown keeps the cluster: a Slurm that cannot be read, a job or node whose state
//! cannot be read, a node without `last_busy`, and a Slurm that lists no nodes at all (every
//! Slurm cluster has nodes, powered-down ones included, so an empty list means the answer
//! cannot be trusted to say when work last ran).

use std::time::Duration;

use clusterform_model::duration::Seconds;
use clusterform_model::{Cluster, ClusterName, ClusterState, LiveCluster, RunningJobs};
use futures::StreamExt;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::run::error::ExecError;
use crate::run::slurm::{
    SLURM_PARALLELISM, SlurmJob, SlurmNode, SlurmReadError, read_jobs, read_nodes, running_job,
};
use crate::transport::api::ApiClient;

/// The decision for one cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleVerdict {
    /// Provably idle for at least the threshold: may be deleted.
    Idle,
    /// Provably idle, but for less than the threshold.
    NotLongEnough,
    /// In use: active jobs or busy nodes.
    Busy,
    /// Could not tell: never deleted.
    Unknown,
}

/// How near a cluster's start its nodes' `last_busy` may be and still be the time they came
/// up rather than work: Slurm sets `last_busy` when a node registers, so a cluster that
/// never ran a job shows its nodes' start-up there.
const NODE_START_WINDOW: time::Duration = time::Duration::minutes(10);

/// What Slurm told about one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmEvidence {
    /// The REST version that answered, e.g. `v0.0.42`.
    pub version: String,
    /// Every job slurmctld still remembers.
    pub jobs: Vec<SlurmJob>,
    /// Every node.
    pub nodes: Vec<SlurmNode>,
}

/// What was found for one cluster, for the table `destroy --idle-for` prints.
#[derive(Debug, Clone, PartialEq)]
pub struct IdleReport {
    /// The cluster.
    pub name: ClusterName,
    /// `clusterStatus.state`.
    pub state: Option<String>,
    /// Jobs running, pending, suspended, configuring or completing; `None` when unknown.
    pub active_jobs: Option<usize>,
    /// Nodes `ALLOCATED`, `MIXED`, `COMPLETING` or powering up; `None` when unknown.
    pub busy_nodes: Option<usize>,
    /// When the cluster last ran work (newest node `last_busy` or finished job `end_time`).
    pub last_busy: Option<OffsetDateTime>,
    /// No job is known to have run since the cluster started: no finished job is remembered
    /// and `last_busy` is when its nodes came up (within [`NODE_START_WINDOW`] of its start;
    /// a time far before the start is not the nodes' start-up, and is shown as it is).
    pub never_busy: bool,
    /// How long it has been idle, when no job is active, no node busy, and `last_busy` known.
    pub idle_for: Option<Duration>,
    /// The accelerators it holds now ([`Cluster::gpus`]), when known.
    pub gpus: Option<u64>,
    /// The slurmrestd REST version used, when Slurm answered.
    pub slurm_version: Option<String>,
    /// The decision.
    pub verdict: IdleVerdict,
    /// Why, in a few words.
    pub reason: String,
    /// The active jobs from the same answer, for the plan (whose own look at the jobs
    /// `destroy --idle-for` skips, so that one answer decides and informs).
    pub running_jobs: RunningJobs,
}

impl IdleReport {
    /// Whether the cluster's only work is jobs waiting for nodes: active jobs, none of which
    /// holds a node, and no busy node. It is kept all the same (the jobs start once nodes
    /// come), but it is not busy.
    pub fn only_pending_jobs(&self) -> bool {
        let RunningJobs::Known { jobs } = &self.running_jobs else {
            return false;
        };
        self.busy_nodes == Some(0) && !jobs.is_empty() && !jobs.iter().any(|j| j.holds_nodes())
    }

    /// The accelerator-hours spent idle: the GPUs it holds times the hours it has been idle,
    /// when both are known (0 hours while it is busy).
    pub fn idle_gpu_hours(&self) -> Option<f64> {
        let gpus = self.gpus?;
        Some(f64::from(u32::try_from(gpus).unwrap_or(u32::MAX)) * self.idle_hours()?)
    }

    /// The hours it has been idle, when known (0 while it is busy).
    pub fn idle_hours(&self) -> Option<f64> {
        match self.verdict {
            IdleVerdict::Busy => Some(0.0),
            _ => Some(self.idle_for?.as_secs_f64() / 3600.0),
        }
    }

    /// A cluster about which nothing beyond its state is known.
    fn unknown(name: ClusterName, cluster: &Cluster, reason: String) -> Self {
        Self {
            name,
            state: cluster.state().map(str::to_owned),
            active_jobs: None,
            busy_nodes: None,
            last_busy: None,
            never_busy: false,
            idle_for: None,
            gpus: cluster.gpus(),
            slurm_version: None,
            verdict: IdleVerdict::Unknown,
            running_jobs: RunningJobs::Unknown {
                reason: reason.clone(),
            },
            reason,
        }
    }
}

/// Decides whether `cluster` has been idle for `threshold` at `now`, given what its Slurm said.
pub fn idle_verdict(
    name: &ClusterName,
    cluster: &Cluster,
    slurm: &SlurmEvidence,
    now: OffsetDateTime,
    threshold: Duration,
) -> IdleReport {
    let active_jobs = slurm.jobs.iter().filter(|j| j.is_active()).count();
    let busy_nodes = slurm.nodes.iter().filter(|n| n.is_busy()).count();
    let finished_job_ends = slurm
        .jobs
        .iter()
        .filter(|j| j.is_finished())
        .filter_map(|j| j.end_time);
    let node_busy_times = slurm.nodes.iter().filter_map(|n| n.last_busy);
    let no_finished_job = finished_job_ends.clone().next().is_none();
    let last_busy = node_busy_times
        .chain(finished_job_ends)
        .max()
        .and_then(|t| OffsetDateTime::from_unix_timestamp(t).ok());
    let started = cluster
        .start_time
        .as_deref()
        .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok());
    let never_busy = no_finished_job
        && matches!((last_busy, started), (Some(busy), Some(started))
            if (busy - started).abs() <= NODE_START_WINDOW);
    let idle_for = last_busy
        .filter(|_| active_jobs == 0 && busy_nodes == 0)
        .map(|busy| Duration::try_from(now - busy).unwrap_or(Duration::ZERO));
    let mut report = IdleReport {
        name: name.clone(),
        state: cluster.state().map(str::to_owned),
        active_jobs: Some(active_jobs),
        busy_nodes: Some(busy_nodes),
        last_busy,
        never_busy,
        idle_for,
        gpus: cluster.gpus(),
        slurm_version: Some(slurm.version.clone()),
        verdict: IdleVerdict::Unknown,
        reason: String::new(),
        running_jobs: RunningJobs::Known {
            jobs: slurm
                .jobs
                .iter()
                .filter(|j| j.is_active())
                .map(running_job)
                .collect(),
        },
    };
    (report.verdict, report.reason) = decide(&report, slurm, threshold);
    report
}

fn decide(
    report: &IdleReport,
    slurm: &SlurmEvidence,
    threshold: Duration,
) -> (IdleVerdict, String) {
    use IdleVerdict::{Busy, Idle, NotLongEnough, Unknown};
    if let Some(reason) = not_running(report.state.as_deref()) {
        return (Unknown, reason);
    }
    let (active, busy) = (
        report.active_jobs.unwrap_or(0),
        report.busy_nodes.unwrap_or(0),
    );
    if report.only_pending_jobs() {
        return (Busy, format!("{active} pending {}", plural(active, "job")));
    }
    if active > 0 || busy > 0 {
        return (
            Busy,
            format!(
                "{active} active {}, {busy} busy {}",
                plural(active, "job"),
                plural(busy, "node")
            ),
        );
    }
    if let Some(reason) = unreadable(slurm) {
        return (Unknown, reason);
    }
    let Some(idle_for) = report.idle_for else {
        return (Unknown, "no time of last work".to_owned());
    };
    let since = if report.never_busy {
        format!(
            "no job has run since the cluster started; idle for {}",
            Seconds::from(idle_for)
        )
    } else {
        format!(
            "no active job or busy node; last busy {} ago",
            Seconds::from(idle_for)
        )
    };
    let threshold_text = Seconds::from(threshold);
    if idle_for >= threshold {
        (Idle, format!("{since} (>= {threshold_text})"))
    } else {
        (
            NotLongEnough,
            format!("{since}, less than {threshold_text}"),
        )
    }
}

fn not_running(state: Option<&str>) -> Option<String> {
    match state {
        Some(state) if ClusterState::of(state) == ClusterState::Running => None,
        Some(other) => Some(format!("cluster is {other}, not RUNNING")),
        None => Some("cluster reports no state".to_owned()),
    }
}

/// Why the jobs and nodes cannot prove idleness, if they cannot.
fn unreadable(slurm: &SlurmEvidence) -> Option<String> {
    if let Some(job) = slurm
        .jobs
        .iter()
        .find(|j| !j.is_active() && !j.is_finished())
    {
        return Some(format!(
            "job {} has an unrecognised state [{}]",
            job.job_id
                .map_or_else(|| "?".to_owned(), |id| id.to_string()),
            job.state.join(",")
        ));
    }
    if slurm.nodes.is_empty() {
        return Some("Slurm lists no nodes".to_owned());
    }
    let node_name = |n: &SlurmNode| n.name.clone().unwrap_or_else(|| "?".to_owned());
    if let Some(node) = slurm.nodes.iter().find(|n| n.state.is_empty()) {
        return Some(format!("node {} reports no state", node_name(node)));
    }
    if let Some(node) = slurm.nodes.iter().find(|n| !n.is_known_workless()) {
        return Some(format!(
            "node {} is [{}], a state not known to mean no work",
            node_name(node),
            node.state.join(",")
        ));
    }
    if let Some(node) = slurm.nodes.iter().find(|n| n.last_busy.is_none()) {
        return Some(format!("node {} reports no last_busy", node_name(node)));
    }
    None
}

fn plural(count: usize, word: &str) -> String {
    if count == 1 {
        word.to_owned()
    } else {
        format!("{word}s")
    }
}

/// Asks every cluster's Slurm for its jobs and nodes (up to ten clusters at once) and decides
/// for each; the reports come in the order of `clusters`. A cluster whose Slurm cannot be read
/// is `Unknown`. Calls are addressed by where each cluster was read, never by its `name`
/// string. Fails only when an address is not a valid cluster name.
pub async fn inspect_idle(
    client: &ApiClient,
    clusters: &[LiveCluster],
    threshold: Duration,
    now: OffsetDateTime,
) -> Result<Vec<IdleReport>, ExecError> {
    Ok(futures::stream::iter(clusters)
        .map(|live| inspect_one(client, live.address.clone(), &live.cluster, threshold, now))
        .buffered(SLURM_PARALLELISM)
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
    // Slurm of a cluster that is not RUNNING cannot be asked; say why without a call.
    if let Some(reason) = not_running(cluster.state()) {
        return IdleReport::unknown(name, cluster, reason);
    }
    match read_evidence(client, &name).await {
        Ok(slurm) => idle_verdict(&name, cluster, &slurm, now, threshold),
        Err(error) => IdleReport::unknown(name, cluster, error.to_string()),
    }
}

/// One cluster's jobs, then its nodes through the REST version that answered for the jobs.
pub(crate) async fn read_evidence(
    client: &ApiClient,
    name: &ClusterName,
) -> Result<SlurmEvidence, SlurmReadError> {
    let (version, jobs) = read_jobs(client, name).await?;
    let nodes = read_nodes(client, name, version).await?;
    Ok(SlurmEvidence {
        version: version.to_owned(),
        jobs,
        nodes,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};
    use time::macros::datetime;

    use super::*;
    use crate::run::slurm::{parse_jobs, parse_nodes};

    const NOW: OffsetDateTime = datetime!(2026-11-10 12:00 UTC);
    const TWO_HOURS: Duration = Duration::from_secs(2 * 3600);

    fn name() -> ClusterName {
        ClusterName::new("proj-one", "us-central1", "train01").unwrap()
    }

    fn cluster(state: &str) -> Cluster {
        serde_json::from_value(json!({
            "name": name().to_string(),
            "clusterStatus": {"state": state},
            "startTime": "2026-11-01T00:00:00Z",
        }))
        .unwrap()
    }

    fn ago(minutes: i64) -> i64 {
        (NOW - time::Duration::minutes(minutes)).unix_timestamp()
    }

    fn number(n: i64) -> Value {
        json!({"set": true, "infinite": false, "number": n})
    }

    fn node(state: &[&str], last_busy: Value) -> Value {
        let mut node = json!({"name": "a3-0", "state": state});
        node["last_busy"] = last_busy;
        node
    }

    fn evidence(jobs: Vec<Value>, nodes: Vec<Value>) -> SlurmEvidence {
        SlurmEvidence {
            version: "v0.0.42".to_owned(),
            jobs: parse_jobs(&json!({ "jobs": Value::from(jobs) })).unwrap(),
            nodes: parse_nodes(&json!({ "nodes": Value::from(nodes) })).unwrap(),
        }
    }

    fn verdict(slurm: &SlurmEvidence) -> IdleReport {
        idle_verdict(&name(), &cluster("RUNNING"), slurm, NOW, TWO_HOURS)
    }

    #[test]
    fn nodes_that_were_busy_recently_keep_a_cluster_whose_jobs_aged_out() {
        let report = verdict(&evidence(vec![], vec![node(&["IDLE"], number(ago(10)))]));
        assert_eq!(report.verdict, IdleVerdict::NotLongEnough);
        assert_eq!(
            report.reason,
            "no active job or busy node; last busy 10m ago, less than 2h"
        );
        assert_eq!(report.last_busy.map(|t| t.unix_timestamp()), Some(ago(10)));
    }

    #[test]
    fn powered_down_nodes_busy_long_ago_make_a_cluster_idle() {
        let report = verdict(&evidence(
            vec![],
            vec![
                node(&["IDLE", "POWERED_DOWN"], number(ago(300))),
                node(&["IDLE", "POWERED_DOWN"], number(ago(200))),
            ],
        ));
        assert_eq!(report.verdict, IdleVerdict::Idle, "{report:?}");
        assert_eq!(
            report.reason,
            "no active job or busy node; last busy 3h20m ago (>= 2h)"
        );
        assert_eq!(report.active_jobs, Some(0));
        assert_eq!(report.busy_nodes, Some(0));
        assert_eq!(report.slurm_version.as_deref(), Some("v0.0.42"));
    }

    #[test]
    fn a_recently_finished_job_counts_as_work() {
        let job = json!({"job_id": 3, "job_state": ["FAILED"], "end_time": number(ago(30))});
        let report = verdict(&evidence(
            vec![job],
            vec![node(&["IDLE"], number(ago(300)))],
        ));
        assert_eq!(report.verdict, IdleVerdict::NotLongEnough);
        assert!(!report.never_busy);
        assert_eq!(report.last_busy.map(|t| t.unix_timestamp()), Some(ago(30)));
    }

    #[test]
    fn the_expected_end_of_a_running_job_is_not_work_done() {
        let old_node = node(&["IDLE"], number(ago(300)));
        let job = json!({"job_id": 4, "job_state": ["RUNNING"], "end_time": number(ago(-60))});
        let report = verdict(&evidence(vec![job], vec![old_node]));
        assert_eq!(report.verdict, IdleVerdict::Busy);
        assert_eq!(report.reason, "1 active job, 0 busy nodes");
        let RunningJobs::Known { jobs } = &report.running_jobs else {
            panic!("{report:?}");
        };
        assert_eq!(jobs.iter().map(|j| j.id).collect::<Vec<_>>(), [Some(4)]);
        assert_eq!(report.last_busy.map(|t| t.unix_timestamp()), Some(ago(300)));
    }

    /// A cluster that came up `minutes` ago with one GPU node of 8 accelerators.
    fn started(minutes: i64) -> Cluster {
        let start = NOW - time::Duration::minutes(minutes);
        serde_json::from_value(json!({
            "name": name().to_string(),
            "clusterStatus": {"state": "RUNNING", "nodesStatus": [{"nodePoolId": "gpu"}]},
            "startTime": start.format(&Rfc3339).unwrap(),
            "nodePools": [{"id": "gpu", "machineSpec": {"acceleratorType": "NVIDIA_B200", "acceleratorCount": 8}}],
        }))
        .unwrap()
    }

    #[test]
    fn a_cluster_that_never_ran_a_job_is_idle_since_its_nodes_came_up_not_busy() {
        // Slurm sets `last_busy` when the node registers, a little after the cluster started.
        let nodes = vec![node(&["IDLE"], number(ago(55)))];
        let young = idle_verdict(
            &name(),
            &started(60),
            &evidence(vec![], nodes),
            NOW,
            TWO_HOURS,
        );
        assert_eq!(young.verdict, IdleVerdict::NotLongEnough);
        assert!(young.never_busy);
        assert_eq!(
            young.reason,
            "no job has run since the cluster started; idle for 55m, less than 2h"
        );
        let nodes = vec![node(&["IDLE"], number(ago(175)))];
        let old = idle_verdict(
            &name(),
            &started(180),
            &evidence(vec![], nodes),
            NOW,
            TWO_HOURS,
        );
        assert_eq!(old.verdict, IdleVerdict::Idle);
        assert_eq!(
            old.reason,
            "no job has run since the cluster started; idle for 2h55m (>= 2h)"
        );
        assert_eq!(old.gpus, Some(8));
        let hours = old.idle_gpu_hours().unwrap();
        assert!((hours - 8.0 * 175.0 / 60.0).abs() < 1e-9, "{hours}");
    }

    #[test]
    fn nodes_busy_after_the_start_window_ran_work() {
        let nodes = vec![node(&["IDLE"], number(ago(150)))];
        let report = idle_verdict(
            &name(),
            &started(180),
            &evidence(vec![], nodes),
            NOW,
            TWO_HOURS,
        );
        assert!(!report.never_busy);
        assert_eq!(report.verdict, IdleVerdict::Idle);
        assert_eq!(
            report.reason,
            "no active job or busy node; last busy 2h30m ago (>= 2h)"
        );
    }

    #[test]
    fn a_busy_cluster_spends_no_idle_gpu_hours_and_an_unknown_one_unknown() {
        let job = json!({"job_id": 1, "job_state": ["RUNNING"]});
        let nodes = vec![node(&["ALLOCATED"], number(ago(300)))];
        let busy = idle_verdict(
            &name(),
            &started(600),
            &evidence(vec![job], nodes),
            NOW,
            TWO_HOURS,
        );
        assert_eq!(busy.verdict, IdleVerdict::Busy);
        assert_eq!(busy.idle_gpu_hours(), Some(0.0));
        assert_eq!(busy.idle_hours(), Some(0.0));
        let unknown = IdleReport::unknown(name(), &started(600), "no Slurm".to_owned());
        assert_eq!(unknown.idle_gpu_hours(), None);
        assert_eq!(unknown.idle_hours(), None);
    }

    #[test]
    fn active_jobs_or_busy_nodes_make_a_cluster_busy() {
        let old = || node(&["IDLE"], number(ago(300)));
        for state in [
            "RUNNING",
            "PENDING",
            "SUSPENDED",
            "CONFIGURING",
            "COMPLETING",
        ] {
            let job = json!({"job_id": 1, "job_state": [state]});
            let report = verdict(&evidence(vec![job], vec![old()]));
            assert_eq!(report.verdict, IdleVerdict::Busy, "{state}");
        }
        for state in ["ALLOCATED", "MIXED", "COMPLETING"] {
            let report = verdict(&evidence(
                vec![],
                vec![old(), node(&[state], number(ago(300)))],
            ));
            assert_eq!(report.verdict, IdleVerdict::Busy, "{state}");
            assert_eq!(report.reason, "0 active jobs, 1 busy node");
        }
    }

    #[test]
    fn a_lone_pending_job_keeps_a_cluster_saying_it_is_pending_not_busy() {
        let old = || node(&["IDLE"], number(ago(300)));
        let pending = json!({"job_id": 1, "job_state": ["PENDING"]});
        let report = verdict(&evidence(vec![pending.clone()], vec![old()]));
        assert_eq!(report.verdict, IdleVerdict::Busy);
        assert!(report.only_pending_jobs());
        assert_eq!(report.reason, "1 pending job");
        let running = json!({"job_id": 2, "job_state": ["RUNNING"]});
        let report = verdict(&evidence(vec![pending, running], vec![old()]));
        assert!(!report.only_pending_jobs());
        assert_eq!(report.reason, "2 active jobs, 0 busy nodes");
    }

    #[test]
    fn anything_unknown_keeps_a_cluster() {
        let old = || node(&["IDLE"], number(ago(300)));
        let cases = [
            (evidence(vec![], vec![]), "Slurm lists no nodes"),
            (
                evidence(
                    vec![],
                    vec![
                        old(),
                        node(
                            &["IDLE"],
                            json!({"set": false, "infinite": false, "number": 0}),
                        ),
                    ],
                ),
                "node a3-0 reports no last_busy",
            ),
            (
                evidence(vec![], vec![json!({"name": "a3-0", "state": ["IDLE"]})]),
                "node a3-0 reports no last_busy",
            ),
            (
                evidence(vec![], vec![node(&[], number(ago(300)))]),
                "node a3-0 reports no state",
            ),
            (
                evidence(vec![json!({"job_id": 9, "job_state": []})], vec![old()]),
                "job 9 has an unrecognised state []",
            ),
            (
                evidence(vec![], vec![old(), node(&["UNKNOWN"], number(ago(300)))]),
                "node a3-0 is [UNKNOWN], a state not known to mean no work",
            ),
            (
                evidence(vec![], vec![node(&["IDLE", "PLANNED"], number(ago(300)))]),
                "node a3-0 is [IDLE,PLANNED], a state not known to mean no work",
            ),
            (
                evidence(vec![], vec![node(&["MIXED+DRAIN"], number(ago(300)))]),
                "node a3-0 is [MIXED+DRAIN], a state not known to mean no work",
            ),
        ];
        for (slurm, reason) in cases {
            let report = verdict(&slurm);
            assert_eq!(report.verdict, IdleVerdict::Unknown, "{reason}");
            assert_eq!(report.reason, reason);
        }
        let provisioning = idle_verdict(
            &name(),
            &cluster("PROVISIONING"),
            &evidence(vec![], vec![old()]),
            NOW,
            TWO_HOURS,
        );
        assert_eq!(provisioning.verdict, IdleVerdict::Unknown);
        assert_eq!(provisioning.reason, "cluster is PROVISIONING, not RUNNING");
    }
}
