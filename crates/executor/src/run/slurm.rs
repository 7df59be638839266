//! Reading a cluster's Slurm through `callSlurmRestApi`: the jobs (`/slurm/{version}/jobs`)
//! and nodes (`/slurm/{version}/nodes`) in slurmrestd's JSON, and whether its controller
//! answers (`/slurm/{version}/ping`); the jobs active on several clusters at once, for plans.
//!
//! slurmrestd answers a REST version it does not serve with 404, and the version a cluster
//! serves follows its Slurm release, so the versions are tried from the newest down; the one
//! that answered is kept on the client for the rest of the run
//! ([`KnownSlurmVersion`](crate::transport::api::KnownSlurmVersion)) and tried first next time.
//!
//! Parsing is tolerant of what older versions send (a plain string state, plain-number
//! times) but never guesses: a field it cannot read stays `None`, and the callers treat `None`
//! as "unknown".

use clusterform_model::{
    ClusterName, Code, NODE_HOLDING_STATES, RunningJob, RunningJobs, WAITING_STATES, rest,
};
use futures::StreamExt;
use serde_json::Value;

use crate::transport::api::{ApiClient, SlurmReply};
use crate::transport::error::TransportError;

/// The slurmrestd REST versions tried, newest first. Each Slurm release serves a few of them
/// (Slurm 24.11: v0.0.40 to v0.0.42); the training-clusters docs' examples use v0.0.42 and
/// the public Slurm guide's default is v0.0.45.
pub const SLURM_API_VERSIONS: &[&str] = &[
    "v0.0.45", "v0.0.44", "v0.0.43", "v0.0.42", "v0.0.41", "v0.0.40",
];

/// Clusters asked at once.
pub(crate) const SLURM_PARALLELISM: usize = 10;

/// Base states of a job that is over.
const FINISHED_JOB_STATES: &[&str] = &[
    "COMPLETED",
    "CANCELLED",
    "FAILED",
    "TIMEOUT",
    "NODE_FAIL",
    "PREEMPTED",
    "BOOT_FAIL",
    "DEADLINE",
    "OUT_OF_MEMORY",
];

/// Node states (base states and flags) of a node doing work, or being started for it.
const BUSY_NODE_STATES: &[&str] = &["ALLOCATED", "MIXED", "COMPLETING", "POWERING_UP"];

/// Base node states of a node known to do no work (Slurm's `sinfo` "NODE STATE CODES" and
/// slurmrestd's `node.state` enum): idle, or down.
const WORKLESS_BASE_STATES: &[&str] = &["IDLE", "DOWN"];

/// Node state flags known to say nothing of work on the node: draining or failed (a base state
/// says whether it still runs jobs), not responding, powered or powering down, cloud or dynamic
/// nodes, a maintenance or advance reservation.
const NEUTRAL_NODE_FLAGS: &[&str] = &[
    "DRAIN",
    "DRAINED",
    "DRAINING",
    "FAIL",
    "NOT_RESPONDING",
    "POWERED_DOWN",
    "POWERING_DOWN",
    "POWER_DOWN",
    "CLOUD",
    "DYNAMIC_NORM",
    "MAINTENANCE",
    "RESERVED",
];

/// Node states (a base state and a flag) of a node that cannot run work: down, or not
/// answering slurmctld (which marks it down once `SlurmdTimeout` passes).
const DOWN_NODE_STATES: &[&str] = &["DOWN", "NOT_RESPONDING"];

/// Node state flags of a node whose machine is off or going off (Slurm's power saving).
const POWERED_OFF_NODE_STATES: &[&str] = &["POWERED_DOWN", "POWERING_DOWN", "POWER_DOWN"];

/// Node states of a node that takes no new work: the `DRAIN` flag (since v0.0.40; older
/// versions spelled the combined state `DRAINED` or `DRAINING`) and `FAIL`, which drains.
const DRAINED_NODE_STATES: &[&str] = &["DRAIN", "DRAINED", "DRAINING", "FAIL"];

/// Why a cluster's Slurm could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SlurmReadError {
    /// The `callSlurmRestApi` call itself failed (after retries).
    #[error("Slurm REST API unreachable: {0}")]
    Call(#[from] TransportError),
    /// Every version in [`SLURM_API_VERSIONS`] answered 404.
    #[error("slurmrestd serves none of the REST versions {}", SLURM_API_VERSIONS.join(", "))]
    NoSupportedVersion,
    /// slurmrestd answered with another error status (500 when slurmctld cannot be reached).
    #[error("slurmrestd answered HTTP {status} for {path}")]
    Status {
        /// slurmrestd's status.
        status: u16,
        /// The Slurm path asked for.
        path: String,
    },
    /// The answer did not have the documented shape.
    #[error("unreadable answer for {path}: {reason}")]
    Unreadable {
        /// The Slurm path asked for.
        path: String,
        /// What was wrong.
        reason: String,
    },
    /// The relay refused the path as "not a valid Slurm path" (`INVALID_ARGUMENT`, its
    /// documented answer) for every REST version tried: it may not relay this path at all.
    #[error(
        "the Slurm relay refuses {path} (INVALID_ARGUMENT: not a valid Slurm path) for every REST version tried"
    )]
    PathRefused {
        /// The path, with `{version}` for the version.
        path: String,
    },
    /// slurmrestd answered its ping, and no controller (slurmctld) responds.
    #[error("slurmctld does not respond: {controllers}")]
    ControllerDown {
        /// Each controller pinged and what it answered, e.g. `train01-controller (DOWN)`.
        controllers: String,
    },
}

/// One job as slurmrestd reports it, reduced to what idle detection and plans need.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SlurmJob {
    /// `job_id`.
    pub job_id: Option<i64>,
    /// `name`.
    pub name: Option<String>,
    /// `user_name`.
    pub user: Option<String>,
    /// `partition`: one, or the comma-separated candidates of a pending job.
    pub partition: Option<String>,
    /// `job_state`, e.g. `["RUNNING"]` (a list since v0.0.40).
    pub state: Vec<String>,
    /// `nodes`, e.g. `a3-[0-3]`.
    pub nodes: Option<String>,
    /// `end_time`, Unix seconds, when set (for an unfinished job: the expected end).
    pub end_time: Option<i64>,
    /// `start_time`, Unix seconds, when set.
    pub start_time: Option<i64>,
}

impl SlurmJob {
    /// Holds or waits for nodes: running, pending, suspended, configuring, completing, ….
    pub fn is_active(&self) -> bool {
        has_any(&self.state, NODE_HOLDING_STATES) || has_any(&self.state, WAITING_STATES)
    }

    /// Over, and not completing any more.
    pub fn is_finished(&self) -> bool {
        !self.is_active() && has_any(&self.state, FINISHED_JOB_STATES)
    }

    /// Waiting for nodes.
    pub fn is_pending(&self) -> bool {
        has_any(&self.state, &["PENDING"])
    }
}

/// One node as slurmrestd reports it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SlurmNode {
    /// `name`.
    pub name: Option<String>,
    /// `state`, e.g. `["IDLE", "POWERED_DOWN"]`.
    pub state: Vec<String>,
    /// `last_busy`, Unix seconds, when set.
    pub last_busy: Option<i64>,
    /// `partitions`: the partitions the node is in.
    pub partitions: Vec<String>,
    /// `reason`: why it is down or drained, as slurmctld (or whoever set it) wrote it.
    pub reason: Option<String>,
    /// `reason_changed_at`, Unix seconds, when set.
    pub reason_changed_at: Option<i64>,
}

impl SlurmNode {
    /// `ALLOCATED`, `MIXED`, `COMPLETING`, or powering up for a job.
    pub fn is_busy(&self) -> bool {
        has_any(&self.state, BUSY_NODE_STATES)
    }

    /// `DOWN`, or not responding.
    pub fn is_down(&self) -> bool {
        has_any(&self.state, DOWN_NODE_STATES)
    }

    /// Drained or draining: it takes no new jobs.
    pub fn is_drained(&self) -> bool {
        has_any(&self.state, DRAINED_NODE_STATES)
    }

    /// Whether it failed to start: `DOWN` with its power off or going off (`POWERED_DOWN`,
    /// `POWERING_DOWN`) and a reason. Slurm's power saving marks a cloud node whose resume
    /// failed `DOWN` and powers it down; the reason says why (the program that starts nodes
    /// writes the error it got). A node that was running is not powered down while down.
    pub fn failed_to_start(&self) -> bool {
        has_any(&self.state, &["DOWN"])
            && has_any(&self.state, POWERED_OFF_NODE_STATES)
            && self.reason.is_some()
    }

    /// Whether it holds no machine and none is asked for it: powered down (or going down)
    /// and not down, a dynamic node resting until a job pends.
    pub fn is_resting(&self) -> bool {
        has_any(&self.state, POWERED_OFF_NODE_STATES) && !has_any(&self.state, &["DOWN"])
    }

    /// Whether it is up: neither down, powered off nor powering up.
    pub fn is_started(&self) -> bool {
        !self.is_down()
            && !has_any(&self.state, POWERED_OFF_NODE_STATES)
            && !has_any(&self.state, &["POWERING_UP"])
    }

    /// `IDLE`.
    pub fn is_idle(&self) -> bool {
        has_any(&self.state, &["IDLE"])
    }

    /// Whether every one of its states is known to mean no work: an idle or down base state
    /// and only flags that say nothing of work. A state clusterform does not know (`UNKNOWN`,
    /// `FUTURE`, `ERROR`, an abbreviation such as `ALLOC`, a combined `MIXED+DRAIN`) or a flag
    /// that can mean work or an allocation on its way (`PLANNED`, `POWER_UP`,
    /// `REBOOT_REQUESTED`, …) is not: such a node may be working.
    pub fn is_known_workless(&self) -> bool {
        let known =
            |wanted: &[&str], state: &String| wanted.iter().any(|w| state.eq_ignore_ascii_case(w));
        let mut base = self
            .state
            .iter()
            .filter(|state| !known(NEUTRAL_NODE_FLAGS, state));
        matches!((base.next(), base.next()), (Some(state), None) if known(WORKLESS_BASE_STATES, state))
    }
}

fn has_any(states: &[String], wanted: &[&str]) -> bool {
    states.iter().any(|state| is_one_of(state, wanted))
}

/// Whether `state` is one of `wanted`, as Slurm spells states in any case.
fn is_one_of(state: &str, wanted: &[&str]) -> bool {
    wanted.iter().any(|w| state.eq_ignore_ascii_case(w))
}

/// Reads slurmrestd's `{"jobs": [...]}`.
pub fn parse_jobs(body: &Value) -> Result<Vec<SlurmJob>, String> {
    Ok(listing(body, "jobs")?.iter().map(parse_job).collect())
}

/// Reads slurmrestd's `{"nodes": [...]}`.
pub fn parse_nodes(body: &Value) -> Result<Vec<SlurmNode>, String> {
    Ok(listing(body, "nodes")?.iter().map(parse_node).collect())
}

/// The list under `field`, which slurmrestd always sends (`required` in its OpenAPI).
fn listing<'a>(body: &'a Value, field: &str) -> Result<&'a [Value], String> {
    match body.get(field) {
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(format!("`{field}` is not a list")),
        None => Err(format!("the answer has no `{field}`")),
    }
}

fn parse_job(job: &Value) -> SlurmJob {
    SlurmJob {
        job_id: job.get("job_id").and_then(Value::as_i64),
        name: text(job, "name"),
        user: text(job, "user_name"),
        partition: text(job, "partition"),
        state: states(job.get("job_state")),
        nodes: text(job, "nodes"),
        end_time: job.get("end_time").and_then(slurm_time),
        start_time: job.get("start_time").and_then(slurm_time),
    }
}

fn parse_node(node: &Value) -> SlurmNode {
    SlurmNode {
        name: text(node, "name"),
        state: states(node.get("state")),
        last_busy: node.get("last_busy").and_then(slurm_time),
        partitions: states(node.get("partitions")),
        reason: text(node, "reason"),
        reason_changed_at: node.get("reason_changed_at").and_then(slurm_time),
    }
}

fn text(object: &Value, field: &str) -> Option<String> {
    object
        .get(field)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// A list of strings (a state list, a node's partitions), or the single string older
/// versions sent.
fn states(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(states)) => states
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        Some(Value::String(state)) => vec![state.clone()],
        _ => Vec::new(),
    }
}

/// A slurmrestd number: `{"set": true, "infinite": false, "number": N}` or a plain number.
/// Unset, infinite and zero ("never" in Slurm) are all `None`.
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

/// The cluster's jobs, with the REST version that answered (see
/// [`KnownSlurmVersion`](crate::transport::api::KnownSlurmVersion)).
pub async fn read_jobs(
    client: &ApiClient,
    name: &ClusterName,
) -> Result<(&'static str, Vec<SlurmJob>), SlurmReadError> {
    let (version, path, reply) = get_served(client, name, rest::slurm_jobs_path).await?;
    Ok((version, read_answer(reply, &path, parse_jobs)?))
}

/// The cluster's nodes, through the REST `version` that answered for its jobs.
pub async fn read_nodes(
    client: &ApiClient,
    name: &ClusterName,
    version: &str,
) -> Result<Vec<SlurmNode>, SlurmReadError> {
    let path = rest::slurm_nodes_path(version);
    let reply = match client.slurm_get(name, &path).await {
        Err(error) if is_refused_path(&error) => {
            return Err(SlurmReadError::PathRefused {
                path: rest::slurm_nodes_path("{version}"),
            });
        }
        reply => reply?,
    };
    read_answer(reply, &path, parse_nodes)
}

/// Whether the cluster's Slurm controller answers: `Ok` when slurmrestd's ping finds at least
/// one slurmctld (the primary or a backup) responding, [`SlurmReadError::ControllerDown`] when
/// none does, another error when the ping itself cannot be read. Meant for after a change of
/// a Slurm configuration map, which the service applies by reconfiguring slurmctld. Uses the
/// client's retry policy; pass [`ApiClient::for_a_glance`] for a single quick look.
pub async fn ping(client: &ApiClient, name: &ClusterName) -> Result<(), SlurmReadError> {
    let (_, path, reply) = get_served(client, name, rest::slurm_ping_path).await?;
    let controllers = read_answer(reply, &path, parse_pings)?;
    if controllers.is_empty() {
        return Err(SlurmReadError::Unreadable {
            path,
            reason: "slurmrestd pinged no controller".to_owned(),
        });
    }
    if controllers.iter().any(|c| c.responding) {
        return Ok(());
    }
    let described: Vec<String> = controllers.iter().map(Controller::describe).collect();
    Err(SlurmReadError::ControllerDown {
        controllers: described.join(", "),
    })
}

/// slurmrestd's answer at the first REST version it does not refuse with 404 (nor the relay
/// with `INVALID_ARGUMENT`, its answer for a path it does not relay): the version this client
/// last got an answer from, then the others newest first. The version that answers is
/// remembered, whatever its status (a 500 from an unreachable slurmctld still proves the
/// version is served).
async fn get_served(
    client: &ApiClient,
    name: &ClusterName,
    path_at: fn(&str) -> String,
) -> Result<(&'static str, String, SlurmReply), SlurmReadError> {
    let known = client.known_slurm_version().get();
    let others = SLURM_API_VERSIONS
        .iter()
        .copied()
        .filter(|v| Some(*v) != known);
    let mut refused = false;
    for version in known.into_iter().chain(others) {
        let path = path_at(version);
        let reply = match client.slurm_get(name, &path).await {
            Err(error) if is_refused_path(&error) => {
                refused = true;
                continue;
            }
            reply => reply?,
        };
        if reply.status != Some(404) {
            client.known_slurm_version().set(version);
            return Ok((version, path, reply));
        }
    }
    if refused {
        return Err(SlurmReadError::PathRefused {
            path: path_at("{version}"),
        });
    }
    Err(SlurmReadError::NoSupportedVersion)
}

/// The relay's refusal of a path it does not relay: "The path is not a valid Slurm path, or
/// the request is too large" (`INVALID_ARGUMENT`, the Slurm Job API page).
fn is_refused_path(error: &TransportError) -> bool {
    error.api_code() == Some(Code::InvalidArgument)
}

/// The listing in a 200 answer; any other status, or a body that cannot be read, is an error.
fn read_answer<T>(
    reply: SlurmReply,
    path: &str,
    parse: fn(&Value) -> Result<T, String>,
) -> Result<T, SlurmReadError> {
    let unreadable = |reason: String| SlurmReadError::Unreadable {
        path: path.to_owned(),
        reason,
    };
    match reply.status {
        Some(200) => {}
        Some(status) => {
            return Err(SlurmReadError::Status {
                status,
                path: path.to_owned(),
            });
        }
        None => {
            return Err(unreadable(
                "the relay's answer has no readable `status` (an HTTP status number)".to_owned(),
            ));
        }
    }
    let body = reply.body.map_err(|error| unreadable(error.to_string()))?;
    if let Some(errors) = reported_errors(&body) {
        return Err(unreadable(format!("slurmrestd reports errors: {errors}")));
    }
    parse(&body).map_err(unreadable)
}

/// slurmrestd's own `errors` list, when it is not empty (or not a list): an answer that
/// reports errors is not a listing to trust, whatever its status.
fn reported_errors(body: &Value) -> Option<String> {
    match body.get("errors")? {
        Value::Array(errors) if errors.is_empty() => None,
        Value::Array(errors) => Some(
            errors
                .iter()
                .map(|error| {
                    ["description", "error"]
                        .iter()
                        .find_map(|key| error.get(key).and_then(Value::as_str))
                        .map_or_else(|| error.to_string(), str::to_owned)
                })
                .collect::<Vec<_>>()
                .join("; "),
        ),
        other => Some(format!("`errors` is not a list: {other}")),
    }
}

/// One slurmctld as slurmrestd's ping reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Controller {
    hostname: Option<String>,
    responding: bool,
}

impl Controller {
    fn describe(&self) -> String {
        let state = if self.responding { "UP" } else { "DOWN" };
        format!("{} ({state})", self.hostname.as_deref().unwrap_or("?"))
    }
}

/// Reads slurmrestd's `{"pings": [...]}`. The controller fields differ by REST version
/// (slurmrestd's OpenAPI, `*_controller_ping`, as the SlinkyProject/slurm-client copies of
/// it give them): v0.0.40 and v0.0.41 say `pinged` (`"UP"` or `"DOWN"`); v0.0.42 to v0.0.44
/// add the required boolean `responding` and deprecate `pinged`; v0.0.45 drops `pinged`. A
/// controller counts as responding only when every field it sends says so and it sends one.
fn parse_pings(body: &Value) -> Result<Vec<Controller>, String> {
    Ok(listing(body, "pings")?.iter().map(parse_ping).collect())
}

fn parse_ping(ping: &Value) -> Controller {
    let responding = ping.get("responding").map(|r| r.as_bool() == Some(true));
    let pinged = ping
        .get("pinged")
        .map(|p| p.as_str().is_some_and(|p| p.eq_ignore_ascii_case("UP")));
    Controller {
        hostname: text(ping, "hostname"),
        responding: match (responding, pinged) {
            (None, None) => false,
            (responding, pinged) => responding.unwrap_or(true) && pinged.unwrap_or(true),
        },
    }
}

/// The active jobs of each cluster (up to ten clusters at once, in the order of `clusters`),
/// each read with the usual retries of a read and a short timeout per request
/// ([`ApiClient::for_a_check`]): they decide whether an unattended run may go on. A cluster
/// whose Slurm cannot be read is [`RunningJobs::Unknown`], never an error; the disruption
/// guard counts it as possibly running jobs.
pub async fn running_jobs(client: &ApiClient, clusters: &[ClusterName]) -> Vec<RunningJobs> {
    let check = client.for_a_check();
    futures::stream::iter(clusters)
        .map(|name| running_jobs_of(&check, name))
        .buffered(SLURM_PARALLELISM)
        .collect()
        .await
}

async fn running_jobs_of(client: &ApiClient, name: &ClusterName) -> RunningJobs {
    match read_jobs(client, name).await {
        Ok((_, jobs)) => RunningJobs::Known {
            jobs: jobs
                .iter()
                .filter(|job| job.is_active())
                .map(running_job)
                .collect(),
        },
        Err(error) => RunningJobs::Unknown {
            reason: error.to_string(),
        },
    }
}

/// An active job as a plan shows it.
pub(crate) fn running_job(job: &SlurmJob) -> RunningJob {
    RunningJob {
        id: job.job_id,
        name: job.name.clone(),
        user: job.user.clone(),
        state: job.state.join(","),
        nodes: job.nodes.clone(),
        partition: job.partition.clone(),
        pools: Vec::new(),
        started_at: job.start_time,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// slurmrestd's JSON in a fixture of `callSlurmRestApi`'s answer (its `body`, a string).
    fn fixture(name: &str) -> Value {
        let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        let envelope: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        serde_json::from_str(envelope["body"].as_str().unwrap()).unwrap()
    }

    #[test]
    fn reads_a_real_shaped_job_listing() {
        let jobs = parse_jobs(&fixture("call_slurm_rest_api_jobs_v0.0.42.json")).unwrap();
        assert_eq!(jobs.len(), 3);
        assert_eq!(jobs[0].job_id, Some(17));
        assert_eq!(jobs[0].user.as_deref(), Some("alice"));
        assert_eq!(jobs[0].name.as_deref(), Some("train-llm"));
        assert_eq!(jobs[0].nodes.as_deref(), Some("a3-[0-1]"));
        assert!(jobs[0].is_active());
        assert!(jobs[1].is_active(), "pending");
        assert_eq!(jobs[1].start_time, None);
        assert!(jobs[2].is_finished());
        assert_eq!(jobs[2].end_time, Some(1_764_500_000));
    }

    fn node(states: &[&str]) -> SlurmNode {
        SlurmNode {
            name: Some("a3-0".to_owned()),
            state: states.iter().map(|s| (*s).to_owned()).collect(),
            last_busy: Some(1),
            ..SlurmNode::default()
        }
    }

    #[test]
    fn only_idle_or_down_nodes_with_neutral_flags_are_known_to_do_no_work() {
        for states in [
            &["IDLE"][..],
            &["IDLE", "POWERED_DOWN"],
            &["idle", "CLOUD"],
            &["DOWN", "NOT_RESPONDING"],
            &["IDLE", "DRAIN"],
        ] {
            assert!(node(states).is_known_workless(), "{states:?}");
        }
        for states in [
            &["UNKNOWN"][..],
            &["FUTURE"],
            &["ERROR"],
            &["ALLOC"],
            &["MIXED+DRAIN"],
            &["ALLOCATED"],
            &["IDLE", "PLANNED"],
            &["IDLE", "POWER_UP"],
            &["IDLE", "POWERING_UP"],
            &["IDLE", "COMPLETING"],
            &["IDLE", "REBOOT_REQUESTED"],
            &["IDLE", "DOWN"],
            &["POWERED_DOWN"],
            &[],
        ] {
            assert!(!node(states).is_known_workless(), "{states:?}");
        }
    }

    #[test]
    fn a_node_failed_to_start_when_it_is_down_powered_off_and_says_why() {
        let with_reason = |states: &[&str]| SlurmNode {
            reason: Some("GCP Error: STOCKOUT".to_owned()),
            ..node(states)
        };
        let failed = with_reason(&["DOWN", "CLOUD", "POWERED_DOWN"]);
        assert!(failed.failed_to_start() && !failed.is_resting() && !failed.is_started());
        assert!(with_reason(&["DOWN", "POWERING_DOWN"]).failed_to_start());
        let crashed = with_reason(&["DOWN"]);
        assert!(!crashed.failed_to_start(), "a node that ran and went down");
        assert!(
            !node(&["DOWN", "POWERED_DOWN"]).failed_to_start(),
            "no reason"
        );
        let resting = node(&["IDLE", "CLOUD", "POWERED_DOWN"]);
        assert!(resting.is_resting() && !resting.is_started());
        assert!(!node(&["IDLE", "POWERING_UP"]).is_started());
        assert!(node(&["ALLOCATED"]).is_started());
        let listed = parse_nodes(&json!({"nodes": [{
            "name": "c-gpu-0", "state": ["DOWN", "POWERED_DOWN"], "partitions": ["gpu"],
            "reason": "GCP Error: STOCKOUT",
            "reason_changed_at": {"set": true, "infinite": false, "number": 1_800_000_000},
        }]}))
        .unwrap();
        assert_eq!(listed[0].partitions, ["gpu"]);
        assert_eq!(listed[0].reason_changed_at, Some(1_800_000_000));
        assert!(listed[0].failed_to_start());
    }

    #[test]
    fn reads_a_real_shaped_node_listing() {
        let nodes = parse_nodes(&fixture("call_slurm_rest_api_nodes_v0.0.42.json")).unwrap();
        let busy: Vec<bool> = nodes.iter().map(SlurmNode::is_busy).collect();
        assert_eq!(busy, [true, true, false, false]);
        assert_eq!(nodes[3].state, ["IDLE", "POWERED_DOWN"]);
        assert_eq!(nodes[3].last_busy, Some(1_764_480_000));
    }

    #[test]
    fn older_spellings_and_unset_numbers_are_tolerated() {
        let jobs = parse_jobs(&json!({"jobs": [
            {"job_id": 1, "job_state": "COMPLETED", "end_time": 1_700_000_000},
            {"job_id": 2, "job_state": ["RUNNING"], "end_time": {"set": false, "number": 5}},
            {}
        ]}))
        .unwrap();
        assert!(jobs[0].is_finished());
        assert_eq!(jobs[0].end_time, Some(1_700_000_000));
        assert_eq!(jobs[1].end_time, None);
        assert_eq!(jobs[2], SlurmJob::default());
        assert!(!jobs[2].is_active() && !jobs[2].is_finished());
        let nodes = parse_nodes(&json!({"nodes": [
            {"name": "n0", "state": ["IDLE"], "last_busy": {"set": true, "infinite": true, "number": 9}},
            {"name": "n1", "state": ["IDLE"], "last_busy": {"set": true, "infinite": false, "number": 0}},
        ]}))
        .unwrap();
        assert_eq!(nodes[0].last_busy, None);
        assert_eq!(nodes[1].last_busy, None);
    }

    #[test]
    fn a_controller_responds_only_when_every_field_it_sends_says_so() {
        let pings = parse_pings(&json!({"pings": [
            {"hostname": "v40", "pinged": "UP", "latency": 400, "mode": "primary"},
            {"hostname": "v42", "pinged": "UP", "responding": true, "primary": true},
            {"hostname": "v45", "responding": true, "primary": true, "latency": 300},
            {"hostname": "down40", "pinged": "DOWN"},
            {"hostname": "down45", "responding": false, "primary": true},
            {"hostname": "split", "pinged": "UP", "responding": false},
            {"hostname": "odd", "pinged": 1},
            {"hostname": "silent", "latency": 10},
        ]}))
        .unwrap();
        let responding: Vec<(&str, bool)> = pings
            .iter()
            .map(|c| (c.hostname.as_deref().unwrap(), c.responding))
            .collect();
        assert_eq!(
            responding,
            [
                ("v40", true),
                ("v42", true),
                ("v45", true),
                ("down40", false),
                ("down45", false),
                ("split", false),
                ("odd", false),
                ("silent", false),
            ]
        );
        assert!(parse_pings(&json!({"meta": {}})).is_err());
    }

    #[test]
    fn a_listing_without_its_list_is_unreadable() {
        assert!(parse_jobs(&json!({"jobs": 3})).is_err());
        assert!(parse_jobs(&json!({})).is_err());
        assert!(parse_nodes(&Value::Null).is_err());
    }

    fn reply(status: Option<u16>, body: Value) -> SlurmReply {
        SlurmReply {
            status,
            body: Ok(body),
        }
    }

    #[test]
    fn an_answer_without_a_status_or_with_errors_is_unreadable_not_empty() {
        let path = "/slurm/v0.0.42/jobs";
        let empty = || json!({"jobs": [], "errors": []});
        assert_eq!(
            read_answer(reply(Some(200), empty()), path, parse_jobs).unwrap(),
            []
        );
        let no_status = read_answer(reply(None, empty()), path, parse_jobs).unwrap_err();
        assert!(
            no_status.to_string().contains("no readable `status`"),
            "{no_status}"
        );
        let with_errors = json!({"jobs": [], "errors": [{"description": "Unable to contact slurmctld", "error_number": 1007}]});
        let reported = read_answer(reply(Some(200), with_errors), path, parse_jobs).unwrap_err();
        assert_eq!(
            reported.to_string(),
            "unreadable answer for /slurm/v0.0.42/jobs: slurmrestd reports errors: Unable to contact slurmctld"
        );
        let odd = read_answer(
            reply(Some(200), json!({"jobs": [], "errors": "x"})),
            path,
            parse_jobs,
        );
        assert!(odd.is_err(), "`errors` that is not a list");
        assert!(matches!(
            read_answer(reply(Some(500), empty()), path, parse_jobs),
            Err(SlurmReadError::Status { status: 500, .. })
        ));
    }
}
