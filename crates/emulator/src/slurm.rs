//! `POST …/modelDevelopmentClusters/{id}:callSlurmRestApi`: a proxy to the
//! cluster's slurmrestd. The emulator serves `GET /slurm/{version}/jobs` and
//! `GET /slurm/{version}/nodes` from jobs and nodes injected by tests, in
//! slurmrestd's answer shape (`meta`, `errors`, `warnings`, `last_update`).
//! Like slurmctld with `MinJobAge`, it forgets a finished job once it ended
//! longer ago than [`EmulatorOptions::min_job_age`](crate::EmulatorOptions),
//! while the nodes keep their `last_busy`. Until a test sets a cluster's nodes,
//! `/nodes` lists the nodes of its compute pools as Slurm configures them (every
//! node a pool may have; those beyond its minimum powered down), none busy since
//! the cluster started. A version the cluster does not serve
//! (v0.0.40 to v0.0.42 unless a test says otherwise) and any other path answer
//! 404 as slurmrestd does.

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
use crate::resource::Parent;
use crate::routes::{json_object_body, path_params, split_custom_method};
use crate::store::SlurmState;

const GET_METHOD: &str = "HTTP_METHOD_GET";

/// The REST versions a cluster serves unless a test sets others.
const DEFAULT_API_VERSIONS: &[&str] = &["v0.0.40", "v0.0.41", "v0.0.42"];

/// slurmrestd's text for a path it has no handler for (its `_resolve_path`), which is also
/// what an unsupported version in the path gets.
const NOT_FOUND_TEXT: &str =
    "Unable find requested URL. Please view /openapi/v3 for API reference.";

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
    let name = Parent { project, location }.cluster_name(cluster_id);
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
    let daemon = Slurmrestd {
        slurm: &slurm,
        cluster: cluster.resource(),
        cluster_id,
        now_secs: now_millis() / 1000,
        min_job_age: state.options.min_job_age,
    };
    Ok(Json(daemon.answer(method, slurm_path)))
}

/// Nodes listed per pool, at most: enough to look real, bounded in size.
const MAX_NODES_PER_POOL: u64 = 64;

/// Every node the compute pools may have, as Slurm lists cloud nodes: up to a pool's minimum
/// `IDLE`, beyond it `IDLE` and `POWERED_DOWN`, and `last_busy` the cluster's `startTime`
/// (no job has run on them).
fn configured_nodes(cluster: &Value, cluster_id: &str) -> Vec<Value> {
    let login = cluster
        .pointer("/orchestratorSpec/slurmSpec/loginNodePoolId")
        .and_then(Value::as_str);
    let started = cluster
        .get("startTime")
        .and_then(Value::as_str)
        .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok())
        .map(OffsetDateTime::unix_timestamp);
    let count = |pool: &Value, field: &str| {
        pool.pointer(&format!("/scalingSpec/{field}"))
            .and_then(|n| n.as_u64().or_else(|| n.as_str()?.parse().ok()))
            .unwrap_or(0)
            .min(MAX_NODES_PER_POOL)
    };
    let pools = cluster.get("nodePools").and_then(Value::as_array);
    let mut nodes = Vec::new();
    for pool in pools.into_iter().flatten() {
        let pool_id = pool.get("id").and_then(Value::as_str).unwrap_or_default();
        if Some(pool_id) == login {
            continue;
        }
        let minimum = count(pool, "minNodeCount");
        for index in 0..count(pool, "maxNodeCount").max(minimum) {
            let state: &[&str] = if index < minimum {
                &["IDLE"]
            } else {
                &["IDLE", "POWERED_DOWN"]
            };
            let last_busy = started.map_or_else(
                || json!({"set": false, "infinite": false, "number": 0}),
                slurm_number,
            );
            nodes.push(json!({
                "name": format!("{cluster_id}-{pool_id}-{index}"),
                "state": state,
                "partitions": [pool_id],
                "last_busy": last_busy,
            }));
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

/// What the two served listings are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Listing {
    Jobs,
    Nodes,
}

/// `/slurm/{version}/jobs` or `/slurm/{version}/nodes` (a trailing `/` and a query allowed).
fn parse_listing(path: &str) -> Option<(&str, Listing)> {
    let path_only = path.split('?').next().unwrap_or(path);
    let rest = path_only.strip_prefix("/slurm/")?;
    let (version, leaf) = rest.split_once('/')?;
    let listing = match leaf.trim_end_matches('/') {
        "jobs" => Listing::Jobs,
        "nodes" => Listing::Nodes,
        _ => return None,
    };
    Some((version, listing))
}

/// One cluster's emulated slurmrestd at one moment.
struct Slurmrestd<'a> {
    slurm: &'a SlurmState,
    cluster: &'a Value,
    cluster_id: &'a str,
    now_secs: i64,
    min_job_age: Duration,
}

impl Slurmrestd<'_> {
    /// What slurmrestd answers, wrapped as `{"status", "structuredBody"}`.
    fn answer(&self, method: &str, path: &str) -> Value {
        let Some((version, listing)) = parse_listing(path).filter(|(v, _)| self.serves(v)) else {
            return slurm_error(404, NOT_FOUND_TEXT);
        };
        if method != GET_METHOD {
            return slurm_error(
                405,
                "Requested REST method is not defined at URL. Please view /openapi/v3 for API reference.",
            );
        }
        let mut body = json!({
            "meta": self.meta(version),
            "errors": [],
            "warnings": [],
            "last_update": slurm_number(self.now_secs),
        });
        match listing {
            Listing::Jobs => {
                body["jobs"] = Value::from(self.remembered_jobs());
                body["last_backfill"] = slurm_number(self.now_secs);
            }
            Listing::Nodes => body["nodes"] = Value::from(self.nodes()),
        }
        json!({"status": 200, "structuredBody": body})
    }

    /// The nodes a test set, else the nodes Slurm configures for the compute pools.
    fn nodes(&self) -> Vec<Value> {
        match &self.slurm.nodes {
            Some(nodes) => nodes.clone(),
            None => configured_nodes(self.cluster, self.cluster_id),
        }
    }

    fn serves(&self, version: &str) -> bool {
        match &self.slurm.api_versions {
            Some(versions) => versions.iter().any(|v| v == version),
            None => DEFAULT_API_VERSIONS.contains(&version),
        }
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

fn slurm_error(status: u16, description: &str) -> Value {
    json!({
        "status": status,
        "structuredBody": {"errors": [{"description": description, "error": description}]}
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000;

    fn daemon(slurm: &SlurmState) -> Slurmrestd<'_> {
        Slurmrestd {
            slurm,
            cluster: &Value::Null,
            cluster_id: "train01",
            now_secs: NOW,
            min_job_age: Duration::from_secs(300),
        }
    }

    #[test]
    fn jobs_and_nodes_are_served_in_every_default_version() {
        let slurm = SlurmState {
            jobs: vec![json!({"job_id": 1, "job_state": ["RUNNING"]})],
            nodes: Some(vec![json!({"name": "a3-0", "state": ["IDLE"]})]),
            ..SlurmState::default()
        };
        for version in DEFAULT_API_VERSIONS {
            let jobs = daemon(&slurm).answer(GET_METHOD, &format!("/slurm/{version}/jobs?x=1"));
            assert_eq!(jobs["structuredBody"]["jobs"], json!(slurm.jobs));
            assert_eq!(jobs["structuredBody"]["last_backfill"]["number"], NOW);
            let nodes = daemon(&slurm).answer(GET_METHOD, &format!("/slurm/{version}/nodes/"));
            assert_eq!(
                nodes["structuredBody"]["nodes"],
                json!(slurm.nodes.clone().unwrap())
            );
            assert_eq!(
                nodes["structuredBody"]["meta"]["plugin"]["data_parser"],
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
        for path in [
            "/slurm/v0.0.42/jobs",
            "/slurm/v0.0.40/diag",
            "/slurmdb/v0.0.40/jobs",
        ] {
            let answer = daemon(&slurm).answer(GET_METHOD, path);
            assert_eq!(answer["status"], 404, "{path}");
            assert_eq!(
                answer["structuredBody"]["errors"][0]["description"],
                NOT_FOUND_TEXT
            );
        }
        assert_eq!(
            daemon(&slurm).answer(GET_METHOD, "/slurm/v0.0.40/nodes")["status"],
            200
        );
        assert_eq!(
            daemon(&slurm).answer("HTTP_METHOD_POST", "/slurm/v0.0.40/jobs")["status"],
            405
        );
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
        let answer = daemon(&slurm).answer(GET_METHOD, "/slurm/v0.0.42/jobs");
        let ids: Vec<&Value> = answer["structuredBody"]["jobs"]
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
        let nodes = configured_nodes(&cluster, "train01");
        let summary: Vec<(&str, &Value)> = nodes
            .iter()
            .map(|n| (n["name"].as_str().unwrap(), &n["state"]))
            .collect();
        assert_eq!(
            summary,
            [
                ("train01-cpu-0", &json!(["IDLE"])),
                ("train01-cpu-1", &json!(["IDLE", "POWERED_DOWN"])),
                ("train01-cpu-2", &json!(["IDLE", "POWERED_DOWN"])),
            ]
        );
        assert_eq!(nodes[0]["last_busy"], slurm_number(1_800_000_000));
        assert_eq!(configured_nodes(&json!({}), "x"), Vec::<Value>::new());
    }
}
