//! `POST …/modelDevelopmentClusters/{id}:callSlurmRestApi`: a proxy to the
//! cluster's slurmrestd, answering as the Slurm Job API page of the training-clusters docs
//! shows: `{"status": N, "body": "<slurmrestd's answer as a string>"}`. The emulator serves
//! `GET /slurm/{version}/jobs`, `…/nodes` and `…/ping` (each with or without a trailing `/`)
//! in slurmrestd's answer shape (`meta`, `errors`, `warnings`, `last_update`), from jobs and
//! nodes injected by tests or the admin API.
//! Like slurmctld with `MinJobAge`, it forgets a finished job once it ended
//! longer ago than [`EmulatorOptions::min_job_age`](crate::EmulatorOptions),
//! while the nodes keep their `last_busy`. Until a test sets a cluster's nodes,
//! `/nodes` lists the nodes of its compute pools as Slurm configures them (every
//! node a pool may have; those beyond its minimum powered down), none busy since
//! the cluster started. A version the cluster does not serve
//! ([`EmulatorOptions::slurm_api_versions`](crate::EmulatorOptions) unless a test says
//! otherwise) and any other path answer 404 as slurmrestd does; a path a test makes the relay
//! refuse answers `400 INVALID_ARGUMENT` "The path is not a valid Slurm path", the relay's
//! documented refusal, before slurmrestd sees it. With the controller down,
//! the ping says so and the listings answer 500, as slurmrestd does when it cannot reach
//! slurmctld.

use std::time::Duration;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::api_error::{ApiError, Code};
use crate::clock::now_millis;
use crate::clusters::cluster_not_found;
use crate::emulator::Emulator;
use crate::resource::{Parent, node_count};
use crate::routes::{json_object_body, path_params, split_custom_method};
use crate::start_failures::{StartFailure, start_failure_message, start_failure_reason};
use crate::store::SlurmState;

const GET_METHOD: &str = "HTTP_METHOD_GET";

/// The REST versions served unless the options or a test say otherwise: those of
/// [`SLURM_RELEASE`] (Slurm 24.11 ships the data parsers v0.0.40 to v0.0.42), the release of
/// the default node image (`slurm-24-11-ubuntu-2204`).
pub(crate) const DEFAULT_API_VERSIONS: &[&str] = &["v0.0.40", "v0.0.41", "v0.0.42"];

/// slurm_strerror(SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR): what slurmrestd reports when
/// slurmctld does not answer.
const CONTROLLER_UNREACHABLE_TEXT: &str = "Unable to contact slurm controller (connect failure)";

/// SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR.
const CONTROLLER_UNREACHABLE_ERRNO: i64 = 1001;

/// slurmrestd's text for a path it has no handler for (its `_resolve_path`), which is also
/// what an unsupported version in the path gets.
const NOT_FOUND_TEXT: &str =
    "Unable find requested URL. Please view /openapi/v3 for API reference.";

/// The relay's documented refusal of a path it does not relay (the Slurm Job API page:
/// `INVALID_ARGUMENT`).
const NOT_A_SLURM_PATH: &str = "The path is not a valid Slurm path, or the request is too large.";

/// Job states after which slurmctld purges a job once `MinJobAge` has passed. The executor's
/// Slurm reader lists the same states; this copy is deliberate (the emulator depends on no
/// crate of ours).
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

/// The Slurm release the emulated slurmrestd reports in `meta`.
const SLURM_RELEASE: (&str, &str, &str) = ("24", "11", "5");

/// `POST /v1beta1/{cluster}:VERB`; only `callSlurmRestApi` exists.
pub(crate) async fn cluster_method(
    State(emulator): State<Emulator>,
    path: Result<Path<(String, String, String)>, PathRejection>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let (project, location, segment) = path_params(path)?;
    let (cluster_id, verb) = split_custom_method(&segment);
    if verb != Some("callSlurmRestApi") {
        return Err(ApiError::new(
            Code::NotFound,
            format!("Unknown method on cluster {segment}."),
        ));
    }
    let parent = Parent { project, location };
    let name = parent.cluster_name(cluster_id);
    let request = json_object_body(&body)?;
    let method = required_string(&request, "method")?;
    let slurm_path = required_string(&request, "path")?;
    let state = emulator.lock();
    let cluster = state
        .store
        .clusters
        .get(&name)
        .ok_or_else(|| cluster_not_found(&name))?;
    let cluster_state = cluster
        .resource()
        .pointer("/clusterStatus/state")
        .and_then(Value::as_str)
        .unwrap_or("STATE_UNSPECIFIED");
    if cluster_state != "RUNNING" {
        return Err(ApiError::new(
            Code::FailedPrecondition,
            format!(
                "Cluster {name} is {cluster_state}; the Slurm REST API needs a RUNNING cluster."
            ),
        ));
    }
    let slurm = state.store.slurm.get(&name).cloned().unwrap_or_default();
    if slurm.unreachable {
        return Err(ApiError::new(
            Code::Unavailable,
            format!("The Slurm REST API of cluster {name} is unreachable."),
        ));
    }
    if slurm
        .refused_paths
        .iter()
        .any(|refused| slurm_path.starts_with(refused.as_str()))
    {
        return Err(ApiError::invalid_argument(NOT_A_SLURM_PATH));
    }
    let daemon = Slurmrestd {
        slurm: &slurm,
        default_versions: &state.options.slurm_api_versions,
        cluster: cluster.resource(),
        cluster_id,
        parent: &parent,
        start_failures: &state.options.start_failures,
        now_secs: now_millis() / 1000,
        min_job_age: state.options.min_job_age,
    };
    Ok(Json(daemon.answer(method, slurm_path)))
}

/// Nodes listed per pool, at most: enough to look real, bounded in size.
const MAX_NODES_PER_POOL: u64 = 64;

/// The node pools of `cluster` that Slurm runs jobs on: all but the login pool.
pub(crate) fn compute_pools(cluster: &Value) -> impl Iterator<Item = &Value> {
    let login = cluster
        .pointer("/orchestratorSpec/slurmSpec/loginNodePoolId")
        .and_then(Value::as_str);
    cluster
        .get("nodePools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(move |pool| pool.get("id").and_then(Value::as_str) != login)
}

/// The IDs of the partitions of `cluster` that hold pool `pool_id`.
fn partitions_of(cluster: &Value, pool_id: &str) -> Vec<Value> {
    let partitions = cluster
        .pointer("/orchestratorSpec/slurmSpec/partitions")
        .and_then(Value::as_array);
    partitions
        .into_iter()
        .flatten()
        .filter(|partition| {
            partition
                .get("nodePoolIds")
                .and_then(Value::as_array)
                .is_some_and(|pools| pools.iter().any(|pool| pool == pool_id))
        })
        .filter_map(|partition| partition.get("id").cloned())
        .collect()
}

/// When the cluster recorded the event `message`, as a slurmrestd number (else `fallback`).
fn event_time(cluster: &Value, message: &str, fallback: &Value) -> Value {
    cluster
        .get("clusterEvents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|event| event.get("eventMessage").and_then(Value::as_str) == Some(message))
        .and_then(|event| event.get("eventTime")?.as_str())
        .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok())
        .map_or_else(|| fallback.clone(), |t| slurm_number(t.unix_timestamp()))
}

/// Every node the compute pools may have, as Slurm lists cloud nodes in the partitions that
/// hold their pool: up to a pool's minimum `IDLE`, beyond it `IDLE` and `POWERED_DOWN`, and
/// `last_busy` the cluster's `startTime` (no job has run on them). The nodes beyond the
/// minimum of a pool that `start_failures` match are `DOWN` and powered down instead, with
/// the stockout text as their `reason`, changed when the cluster recorded it.
fn configured_nodes(
    cluster: &Value,
    cluster_id: &str,
    start_failures: &[StartFailure],
    parent: &Parent,
) -> Vec<Value> {
    let started = cluster
        .get("startTime")
        .and_then(Value::as_str)
        .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok())
        .map(OffsetDateTime::unix_timestamp);
    let count = |pool: &Value, field: &str| node_count(pool, field).min(MAX_NODES_PER_POOL);
    let last_busy = started.map_or_else(
        || json!({"set": false, "infinite": false, "number": 0}),
        slurm_number,
    );
    let mut nodes = Vec::new();
    for pool in compute_pools(cluster) {
        let pool_id = pool.get("id").and_then(Value::as_str).unwrap_or_default();
        let partitions = partitions_of(cluster, pool_id);
        let failure = start_failure_reason(start_failures, pool, parent);
        let minimum = count(pool, "minNodeCount");
        for index in 0..count(pool, "maxNodeCount").max(minimum) {
            let mut node = json!({
                "name": format!("{cluster_id}-{pool_id}-{index}"),
                "state": ["IDLE"],
                "partitions": partitions,
                "last_busy": last_busy,
            });
            match (&failure, index < minimum) {
                (_, true) => {}
                (None, false) => node["state"] = json!(["IDLE", "CLOUD", "POWERED_DOWN"]),
                (Some(reason), false) => {
                    let message = start_failure_message(pool_id, reason);
                    node["state"] = json!(["DOWN", "CLOUD", "POWERED_DOWN"]);
                    node["reason"] = Value::from(reason.as_str());
                    node["reason_changed_at"] = event_time(cluster, &message, &last_busy);
                }
            }
            nodes.push(node);
        }
    }
    nodes
}

fn required_string<'a>(request: &'a Value, field: &str) -> Result<&'a str, ApiError> {
    request
        .get(field)
        .and_then(Value::as_str)
        .filter(|value| !value.is_empty())
        .ok_or_else(|| {
            ApiError::invalid_argument(format!(
                "The request field `{field}` is required and must be a string."
            ))
        })
}

/// What is served under `/slurm/{version}/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Endpoint {
    Listing(Listing),
    Ping,
}

/// The two listings, which need slurmctld.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Listing {
    Jobs,
    Nodes,
}

/// `/slurm/{version}/jobs`, `…/nodes` or `…/ping` (a trailing `/` and a query allowed: the
/// docs spell the jobs path `/slurm/v0.0.42/jobs/`, slurmrestd binds `…/jobs/`).
fn parse_endpoint(path: &str) -> Option<(&str, Endpoint)> {
    let path_only = path.split('?').next().unwrap_or(path);
    let rest = path_only.strip_prefix("/slurm/")?;
    let (version, leaf) = rest.split_once('/')?;
    let endpoint = match leaf.strip_suffix('/').unwrap_or(leaf) {
        "jobs" => Endpoint::Listing(Listing::Jobs),
        "nodes" => Endpoint::Listing(Listing::Nodes),
        "ping" => Endpoint::Ping,
        _ => return None,
    };
    Some((version, endpoint))
}

/// The `N` of a REST version `v0.0.N`, to shape what differs between versions.
fn version_number(version: &str) -> Option<u32> {
    version.strip_prefix("v0.0.")?.parse().ok()
}

/// One cluster's emulated slurmrestd at one moment.
struct Slurmrestd<'a> {
    slurm: &'a SlurmState,
    /// The versions served when the cluster's own `api_versions` are unset.
    default_versions: &'a [String],
    cluster: &'a Value,
    cluster_id: &'a str,
    /// Where the cluster is: its project names the zones of a start failure's reason.
    parent: &'a Parent,
    start_failures: &'a [StartFailure],
    now_secs: i64,
    min_job_age: Duration,
}

impl Slurmrestd<'_> {
    /// What slurmrestd answers, wrapped as `{"status", "body"}` with the body as a string.
    fn answer(&self, method: &str, path: &str) -> Value {
        let Some((version, endpoint)) = parse_endpoint(path).filter(|(v, _)| self.serves(v)) else {
            // slurmrestd's own 404 is plain text, not JSON.
            return relayed(404, NOT_FOUND_TEXT.to_owned());
        };
        if method != GET_METHOD {
            return relayed(
                405,
                "Requested REST method is not defined at URL. Please view /openapi/v3 for API reference."
                    .to_owned(),
            );
        }
        let mut body = json!({
            "meta": self.meta(version),
            "errors": [],
            "warnings": [],
        });
        match endpoint {
            Endpoint::Ping => {
                body["pings"] = json!([self.ping(version)]);
                relayed(200, body.to_string())
            }
            Endpoint::Listing(listing) if self.slurm.controller_down => {
                body["errors"] = json!([controller_unreachable(listing)]);
                relayed(500, body.to_string())
            }
            Endpoint::Listing(listing) => {
                self.fill_listing(listing, &mut body);
                relayed(200, body.to_string())
            }
        }
    }

    fn fill_listing(&self, listing: Listing, body: &mut Value) {
        body["last_update"] = slurm_number(self.now_secs);
        match listing {
            Listing::Jobs => {
                body["jobs"] = Value::from(self.remembered_jobs());
                body["last_backfill"] = slurm_number(self.now_secs);
            }
            Listing::Nodes => body["nodes"] = Value::from(self.nodes()),
        }
    }

    /// The one controller, in the fields of `version` (see the executor's ping reader):
    /// `pinged` and `mode` up to v0.0.44, `responding` and `primary` from v0.0.42.
    fn ping(&self, version: &str) -> Value {
        let up = !self.slurm.controller_down;
        let number = version_number(version).unwrap_or(u32::MAX);
        let mut ping = json!({
            "hostname": format!("{}-controller", self.cluster_id),
            // Microseconds; a ping that gets no answer waits out its timeout.
            "latency": if up { 412 } else { 10_000_000 },
        });
        if number <= 44 {
            ping["pinged"] = Value::from(if up { "UP" } else { "DOWN" });
            ping["mode"] = Value::from("primary");
        }
        if number >= 42 {
            ping["responding"] = Value::from(up);
            ping["primary"] = Value::from(true);
        }
        ping
    }

    /// The nodes a test set, else the nodes Slurm configures for the compute pools.
    fn nodes(&self) -> Vec<Value> {
        match &self.slurm.nodes {
            Some(nodes) => nodes.clone(),
            None => configured_nodes(
                self.cluster,
                self.cluster_id,
                self.start_failures,
                self.parent,
            ),
        }
    }

    fn serves(&self, version: &str) -> bool {
        let versions = self.slurm.api_versions.as_deref();
        versions
            .unwrap_or(self.default_versions)
            .iter()
            .any(|v| v == version)
    }

    /// The injected jobs minus the finished ones `MinJobAge` has purged.
    fn remembered_jobs(&self) -> Vec<Value> {
        let age = i64::try_from(self.min_job_age.as_secs()).unwrap_or(i64::MAX);
        let oldest_kept_end = self.now_secs.saturating_sub(age);
        self.slurm
            .jobs
            .iter()
            .filter(|job| !is_finished(job) || end_time(job).is_none_or(|e| e > oldest_kept_end))
            .cloned()
            .collect()
    }

    fn meta(&self, version: &str) -> Value {
        let (major, minor, micro) = SLURM_RELEASE;
        json!({
            "plugin": {
                "type": "openapi/slurmctld",
                "name": "Slurm OpenAPI slurmctld",
                "data_parser": format!("data_parser/{version}"),
                "accounting_storage": "",
            },
            "client": {"source": "callSlurmRestApi", "user": "root", "group": "root"},
            "slurm": {
                "version": {"major": major, "minor": minor, "micro": micro},
                "release": format!("{major}.{minor}.{micro}"),
                "cluster": self.cluster_id,
            },
        })
    }
}

/// A job whose `job_state` holds a final state and no `COMPLETING` flag.
fn is_finished(job: &Value) -> bool {
    let states: Vec<&str> = match job.get("job_state") {
        Some(Value::Array(states)) => states.iter().filter_map(Value::as_str).collect(),
        Some(Value::String(state)) => vec![state.as_str()],
        _ => Vec::new(),
    };
    states.iter().any(|s| FINISHED_JOB_STATES.contains(s)) && !states.contains(&"COMPLETING")
}

/// `end_time` as `{"set", "infinite", "number"}` or a plain number.
fn end_time(job: &Value) -> Option<i64> {
    match job.get("end_time")? {
        Value::Object(fields) if fields.get("set").and_then(Value::as_bool) != Some(false) => {
            fields.get("number").and_then(Value::as_i64)
        }
        other => other.as_i64(),
    }
}

/// slurmrestd's `uint64_no_val_struct`.
fn slurm_number(number: i64) -> Value {
    json!({"set": true, "infinite": false, "number": number})
}

/// The error slurmrestd reports for a listing when slurmctld does not answer (its
/// `resp_error`: `description`, `source`, `error_number`, `error`), with HTTP 500, its status
/// for a handler error it has no specific status for.
fn controller_unreachable(listing: Listing) -> Value {
    let (description, source) = match listing {
        Listing::Jobs => ("Unable to query jobs", "slurm_load_jobs()"),
        Listing::Nodes => ("Unable to query nodes", "slurm_load_node()"),
    };
    json!({
        "description": description,
        "source": source,
        "error_number": CONTROLLER_UNREACHABLE_ERRNO,
        "error": CONTROLLER_UNREACHABLE_TEXT,
    })
}

/// What `callSlurmRestApi` answers for slurmrestd's `status` and response text.
fn relayed(status: u16, body: String) -> Value {
    json!({"status": status, "body": Value::String(body)})
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000;

    fn default_versions() -> Vec<String> {
        DEFAULT_API_VERSIONS
            .iter()
            .map(|v| (*v).to_owned())
            .collect()
    }

    fn parent() -> Parent {
        Parent::of_tests()
    }

    fn daemon<'a>(slurm: &'a SlurmState, versions: &'a [String]) -> Slurmrestd<'a> {
        static PARENT: std::sync::LazyLock<Parent> = std::sync::LazyLock::new(parent);
        Slurmrestd {
            slurm,
            default_versions: versions,
            cluster: &Value::Null,
            cluster_id: "train01",
            parent: &PARENT,
            start_failures: &[],
            now_secs: NOW,
            min_job_age: Duration::from_secs(300),
        }
    }

    /// The answer's status and its body parsed as JSON (`Null` when it is not JSON).
    fn ask(slurm: &SlurmState, versions: &[String], path: &str) -> (Value, Value) {
        let answer = daemon(slurm, versions).answer(GET_METHOD, path);
        let text = answer["body"].as_str().expect("the body is a string");
        (
            answer["status"].clone(),
            serde_json::from_str(text).unwrap_or(Value::Null),
        )
    }

    #[test]
    fn jobs_and_nodes_are_served_in_every_default_version_as_a_string_body() {
        let slurm = SlurmState {
            jobs: vec![json!({"job_id": 1, "job_state": ["RUNNING"]})],
            nodes: Some(vec![json!({"name": "a3-0", "state": ["IDLE"]})]),
            ..SlurmState::default()
        };
        let versions = default_versions();
        for version in DEFAULT_API_VERSIONS {
            for path in [
                format!("/slurm/{version}/jobs"),
                format!("/slurm/{version}/jobs/?x=1"),
            ] {
                let (status, jobs) = ask(&slurm, &versions, &path);
                assert_eq!(status, 200, "{path}");
                assert_eq!(jobs["jobs"], json!(slurm.jobs), "{path}");
                assert_eq!(jobs["last_backfill"]["number"], NOW);
            }
            let (_, nodes) = ask(&slurm, &versions, &format!("/slurm/{version}/nodes/"));
            assert_eq!(nodes["nodes"], json!(slurm.nodes.clone().unwrap()));
            assert_eq!(
                nodes["meta"]["plugin"]["data_parser"],
                format!("data_parser/{version}")
            );
        }
    }

    #[test]
    fn other_paths_versions_and_methods_are_refused() {
        let slurm = SlurmState {
            api_versions: Some(vec!["v0.0.40".to_owned()]),
            ..SlurmState::default()
        };
        let versions = default_versions();
        for path in [
            "/slurm/v0.0.42/jobs",
            "/slurm/v0.0.40/diag",
            "/slurmdb/v0.0.40/jobs",
        ] {
            let answer = daemon(&slurm, &versions).answer(GET_METHOD, path);
            assert_eq!(answer["status"], 404, "{path}");
            assert_eq!(answer["body"], NOT_FOUND_TEXT);
        }
        assert_eq!(ask(&slurm, &versions, "/slurm/v0.0.40/nodes").0, 200);
        assert_eq!(
            daemon(&slurm, &versions).answer("HTTP_METHOD_POST", "/slurm/v0.0.40/jobs")["status"],
            405
        );
    }

    #[test]
    fn the_options_choose_the_versions_of_clusters_without_their_own() {
        let slurm = SlurmState::default();
        let versions = vec!["v0.0.44".to_owned(), "v0.0.43".to_owned()];
        assert_eq!(ask(&slurm, &versions, "/slurm/v0.0.44/jobs").0, 200);
        assert_eq!(ask(&slurm, &versions, "/slurm/v0.0.42/jobs").0, 404);
    }

    #[test]
    fn the_ping_has_the_fields_of_its_version_and_follows_the_controller() {
        let versions: Vec<String> = ["v0.0.40", "v0.0.42", "v0.0.45"]
            .map(str::to_owned)
            .to_vec();
        let up = SlurmState::default();
        let (status, v40) = ask(&up, &versions, "/slurm/v0.0.40/ping/");
        assert_eq!(status, 200);
        assert_eq!(v40["pings"][0]["pinged"], "UP");
        assert!(v40["pings"][0].get("responding").is_none());
        let (_, v42) = ask(&up, &versions, "/slurm/v0.0.42/ping");
        assert_eq!(
            (&v42["pings"][0]["pinged"], &v42["pings"][0]["responding"]),
            (&json!("UP"), &json!(true))
        );
        let (_, v45) = ask(&up, &versions, "/slurm/v0.0.45/ping");
        assert!(v45["pings"][0].get("pinged").is_none());
        assert_eq!(v45["pings"][0]["hostname"], "train01-controller");

        let down = SlurmState {
            controller_down: true,
            ..SlurmState::default()
        };
        let (status, ping) = ask(&down, &versions, "/slurm/v0.0.42/ping");
        assert_eq!(status, 200, "slurmrestd itself answers");
        assert_eq!(
            (&ping["pings"][0]["pinged"], &ping["pings"][0]["responding"]),
            (&json!("DOWN"), &json!(false))
        );
        for (path, description) in [
            ("/slurm/v0.0.42/jobs", "Unable to query jobs"),
            ("/slurm/v0.0.42/nodes", "Unable to query nodes"),
        ] {
            let (status, body) = ask(&down, &versions, path);
            assert_eq!(status, 500, "{path}");
            assert_eq!(body["errors"][0]["description"], description);
            assert_eq!(body["errors"][0]["error"], CONTROLLER_UNREACHABLE_TEXT);
            assert!(body.get("jobs").is_none() && body.get("nodes").is_none());
        }
    }

    #[test]
    fn finished_jobs_are_forgotten_after_min_job_age() {
        let ended = |state: &str, seconds_ago: i64| {
            json!({"job_id": seconds_ago, "job_state": [state],
                   "end_time": {"set": true, "infinite": false, "number": NOW - seconds_ago}})
        };
        let slurm = SlurmState {
            jobs: vec![
                ended("COMPLETED", 299),
                ended("COMPLETED", 301),
                ended("FAILED", 3600),
                ended("RUNNING", 3600),
                json!({"job_id": 5, "job_state": ["COMPLETED", "COMPLETING"], "end_time": NOW - 3600}),
            ],
            ..SlurmState::default()
        };
        let (_, answer) = ask(&slurm, &default_versions(), "/slurm/v0.0.42/jobs");
        let ids: Vec<&Value> = answer["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|job| &job["job_id"])
            .collect();
        assert_eq!(ids, [&json!(299), &json!(3600), &json!(5)]);
    }

    #[test]
    fn without_injected_nodes_the_compute_pools_are_listed_idle_since_the_start() {
        let cluster = json!({
            "startTime": "2027-01-15T08:00:00Z",
            "nodePools": [
                {"id": "login", "scalingSpec": {"minNodeCount": 1, "maxNodeCount": 1}},
                {"id": "cpu", "scalingSpec": {"minNodeCount": "1", "maxNodeCount": "3"}}
            ],
            "orchestratorSpec": {"slurmSpec": {"loginNodePoolId": "login"}}
        });
        let nodes = configured_nodes(&cluster, "train01", &[], &parent());
        let summary: Vec<(&str, &Value)> = nodes
            .iter()
            .map(|n| (n["name"].as_str().unwrap(), &n["state"]))
            .collect();
        assert_eq!(
            summary,
            [
                ("train01-cpu-0", &json!(["IDLE"])),
                ("train01-cpu-1", &json!(["IDLE", "CLOUD", "POWERED_DOWN"])),
                ("train01-cpu-2", &json!(["IDLE", "CLOUD", "POWERED_DOWN"])),
            ]
        );
        assert_eq!(nodes[0]["last_busy"], slurm_number(1_800_000_000));
        assert_eq!(
            configured_nodes(&json!({}), "x", &[], &parent()),
            Vec::<Value>::new()
        );
    }

    #[test]
    fn a_start_failure_leaves_the_dynamic_nodes_down_with_the_reason_since_its_event() {
        let cluster = json!({
            "startTime": "2027-01-15T08:00:00Z",
            "nodePools": [{"id": "gpu", "zone": "us-central1-a",
                           "machineSpec": {"machineType": "a4-highgpu-8g"},
                           "scalingSpec": {"minNodeCount": 1, "maxNodeCount": 3}}],
            "orchestratorSpec": {"slurmSpec": {"partitions": [
                {"id": "gpu", "nodePoolIds": ["gpu"]}, {"id": "all", "nodePoolIds": ["gpu"]}
            ]}},
            "clusterEvents": [{"eventType": "VM_SLURM_POWER_DOWN",
                               "eventTime": "2027-01-15T09:00:00Z",
                               "eventMessage": "Nodes of pool gpu could not be started and were powered down: The zone 'projects/proj/zones/us-central1-a' does not have enough resources available to fulfill the request. '(resource type:compute)'. (state:STOCKOUT)"}]
        });
        let failures = vec!["a4-highgpu-8g".parse().unwrap()];
        let nodes = configured_nodes(&cluster, "train01", &failures, &parent());
        assert_eq!(nodes[0]["state"], json!(["IDLE"]), "the static node runs");
        assert!(nodes[0].get("reason").is_none());
        for node in &nodes[1..] {
            assert_eq!(node["state"], json!(["DOWN", "CLOUD", "POWERED_DOWN"]));
            assert!(
                node["reason"]
                    .as_str()
                    .unwrap()
                    .ends_with("(state:STOCKOUT)")
            );
            assert_eq!(node["reason_changed_at"], slurm_number(1_800_003_600));
            assert_eq!(node["partitions"], json!(["gpu", "all"]));
        }
    }
}
