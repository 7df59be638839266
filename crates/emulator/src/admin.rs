//! The emulator's own admin HTTP API, under `/emulator/v1/` (a prefix no Google API uses):
//! what the test-control methods do, for a user of `clusterform emulator` rehearsing idle
//! teardown, a stockout, nodes that do not start on day two, an ID that stays taken after its delete or a refused location without
//! editing the state file. Requests are logged and need the
//! bearer token like any other, and are never faulted. Every answer is JSON; errors use
//! AIP-193's envelope.

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::routing::put;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::api_error::ApiError;
use crate::capacity::CapacityFailure;
use crate::clusters::cluster_not_found;
use crate::emulator::Emulator;
use crate::preflight::PreflightWorld;
use crate::refusals::RefusedLocation;
use crate::resource::Parent;
use crate::routes::{json_body, path_params};
use crate::start_failures::StartFailure;

/// Every admin path starts with this.
pub(crate) const ADMIN_PREFIX: &str = "/emulator/";

const CLUSTER: &str =
    "/emulator/v1/projects/{project}/locations/{location}/modelDevelopmentClusters/{cluster}";

type ClusterPath = Result<Path<(String, String, String)>, PathRejection>;

/// The admin routes, to merge into the API router.
pub(crate) fn routes() -> Router<Emulator> {
    let at = |leaf: &str| format!("{CLUSTER}/{leaf}");
    Router::new()
        .route(&at("slurm/jobs"), put(set_slurm_jobs))
        .route(&at("slurm/nodes"), put(set_slurm_nodes))
        .route(&at("slurm/controller"), put(set_slurm_controller))
        .route(&at("slurm/refusedPaths"), put(set_slurm_refused_paths))
        .route(&at("status"), put(set_status))
        .route(&at("nodesStatus"), put(set_nodes_status))
        .route(&at("clusterEvents"), put(set_cluster_events))
        .route(
            "/emulator/v1/capacityFailures",
            put(set_capacity_failures).get(capacity_failures),
        )
        .route(
            "/emulator/v1/startFailures",
            put(set_start_failures).get(start_failures),
        )
        .route(
            "/emulator/v1/idBlockedAfterDelete",
            put(set_id_blocked_after_delete).get(id_blocked_after_delete),
        )
        .route(
            "/emulator/v1/preflight",
            put(set_preflight_world).get(preflight_world),
        )
        .route(
            "/emulator/v1/refusedLocations",
            put(set_refused_locations).get(refused_locations),
        )
}

/// The full name of the stored cluster the path names, or `NOT_FOUND`.
fn existing_cluster(emulator: &Emulator, path: ClusterPath) -> Result<String, ApiError> {
    let (project, location, cluster_id) = path_params(path)?;
    let name = Parent { project, location }.cluster_name(&cluster_id);
    if emulator.has_cluster(&name) {
        Ok(name)
    } else {
        Err(cluster_not_found(&name))
    }
}

fn empty() -> Json<Value> {
    Json(json!({}))
}

/// A body of one field, no other.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Jobs {
    jobs: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Nodes {
    nodes: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Controller {
    up: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RefusedPaths {
    refused_paths: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Status {
    state: String,
    #[serde(default)]
    detail: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NodesStatus {
    nodes_status: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ClusterEvents {
    cluster_events: Vec<ClusterEvent>,
}

/// One of `clusterEvents[]` in its documented shape: a misspelt key (`message` for
/// `eventMessage`) is refused, not stored as an event without text.
#[derive(Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ClusterEvent {
    event_type: String,
    event_time: String,
    event_message: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CapacityFailures {
    capacity_failures: Vec<CapacityFailure>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct StartFailures {
    start_failures: Vec<StartFailure>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RefusedLocations {
    refused_locations: Vec<RefusedLocation>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct BlockedSeconds {
    seconds: f64,
}

async fn set_slurm_jobs(
    State(emulator): State<Emulator>,
    path: ClusterPath,
    bytes: Bytes,
) -> Result<Json<Value>, ApiError> {
    let name = existing_cluster(&emulator, path)?;
    let Jobs { jobs } = json_body(&bytes)?;
    emulator.set_slurm_jobs(&name, jobs);
    Ok(empty())
}

async fn set_slurm_nodes(
    State(emulator): State<Emulator>,
    path: ClusterPath,
    bytes: Bytes,
) -> Result<Json<Value>, ApiError> {
    let name = existing_cluster(&emulator, path)?;
    let Nodes { nodes } = json_body(&bytes)?;
    emulator.set_slurm_nodes(&name, nodes);
    Ok(empty())
}

async fn set_slurm_controller(
    State(emulator): State<Emulator>,
    path: ClusterPath,
    bytes: Bytes,
) -> Result<Json<Value>, ApiError> {
    let name = existing_cluster(&emulator, path)?;
    let Controller { up } = json_body(&bytes)?;
    emulator.set_slurm_controller_down(&name, !up);
    Ok(empty())
}

async fn set_slurm_refused_paths(
    State(emulator): State<Emulator>,
    path: ClusterPath,
    bytes: Bytes,
) -> Result<Json<Value>, ApiError> {
    let name = existing_cluster(&emulator, path)?;
    let RefusedPaths { refused_paths } = json_body(&bytes)?;
    emulator.set_slurm_refused_paths(&name, refused_paths);
    Ok(empty())
}

async fn set_status(
    State(emulator): State<Emulator>,
    path: ClusterPath,
    bytes: Bytes,
) -> Result<Json<Value>, ApiError> {
    let name = existing_cluster(&emulator, path)?;
    let Status { state, detail } = json_body(&bytes)?;
    if state.is_empty() {
        return Err(ApiError::invalid_argument("`state` must not be empty."));
    }
    emulator.set_cluster_status(&name, &state, detail.as_deref());
    Ok(empty())
}

async fn set_nodes_status(
    State(emulator): State<Emulator>,
    path: ClusterPath,
    bytes: Bytes,
) -> Result<Json<Value>, ApiError> {
    let name = existing_cluster(&emulator, path)?;
    let NodesStatus { nodes_status } = json_body(&bytes)?;
    emulator.set_nodes_status(&name, nodes_status);
    Ok(empty())
}

async fn set_cluster_events(
    State(emulator): State<Emulator>,
    path: ClusterPath,
    bytes: Bytes,
) -> Result<Json<Value>, ApiError> {
    let name = existing_cluster(&emulator, path)?;
    let ClusterEvents { cluster_events } = json_body(&bytes)?;
    let events = cluster_events
        .iter()
        .map(|event| serde_json::to_value(event).unwrap_or_default())
        .collect();
    emulator.set_cluster_events(&name, events);
    Ok(empty())
}

async fn set_capacity_failures(
    State(emulator): State<Emulator>,
    bytes: Bytes,
) -> Result<Json<Value>, ApiError> {
    let CapacityFailures { capacity_failures } = json_body(&bytes)?;
    if capacity_failures.iter().any(|f| f.machine_type.is_empty()) {
        return Err(ApiError::invalid_argument(
            "`machineType` must not be empty.",
        ));
    }
    if capacity_failures.iter().any(|f| f.times == Some(0)) {
        return Err(ApiError::invalid_argument(
            "`times` must be at least 1 (leave it out for every time).",
        ));
    }
    emulator.set_capacity_failures(capacity_failures);
    Ok(capacity_failures_answer(&emulator))
}

async fn capacity_failures(State(emulator): State<Emulator>) -> Json<Value> {
    capacity_failures_answer(&emulator)
}

fn capacity_failures_answer(emulator: &Emulator) -> Json<Value> {
    Json(json!({ "capacityFailures": emulator.capacity_failures() }))
}

async fn set_start_failures(
    State(emulator): State<Emulator>,
    bytes: Bytes,
) -> Result<Json<Value>, ApiError> {
    let StartFailures { start_failures } = json_body(&bytes)?;
    // An entry is well formed when its command-line spelling reads back as the same entry.
    if let Some(bad) = start_failures
        .iter()
        .find(|entry| entry.to_string().parse::<StartFailure>().ok().as_ref() != Some(*entry))
    {
        return Err(ApiError::invalid_argument(format!(
            "`{bad}` is not a start failure: `machineType` and `zone` are lowercase letters, digits and hyphens."
        )));
    }
    emulator.set_start_failures(start_failures);
    Ok(start_failures_answer(&emulator))
}

async fn start_failures(State(emulator): State<Emulator>) -> Json<Value> {
    start_failures_answer(&emulator)
}

fn start_failures_answer(emulator: &Emulator) -> Json<Value> {
    Json(json!({ "startFailures": emulator.start_failures() }))
}

async fn set_id_blocked_after_delete(
    State(emulator): State<Emulator>,
    bytes: Bytes,
) -> Result<Json<Value>, ApiError> {
    let BlockedSeconds { seconds } = json_body(&bytes)?;
    let blocked_for = Duration::try_from_secs_f64(seconds)
        .map_err(|_| ApiError::invalid_argument("`seconds` must be a non-negative number."))?;
    emulator.set_id_blocked_after_delete(blocked_for);
    Ok(id_blocked_after_delete_answer(&emulator))
}

async fn id_blocked_after_delete(State(emulator): State<Emulator>) -> Json<Value> {
    id_blocked_after_delete_answer(&emulator)
}

fn id_blocked_after_delete_answer(emulator: &Emulator) -> Json<Value> {
    Json(json!({ "seconds": emulator.id_blocked_after_delete().as_secs_f64() }))
}

async fn set_refused_locations(
    State(emulator): State<Emulator>,
    bytes: Bytes,
) -> Result<Json<Value>, ApiError> {
    let RefusedLocations { refused_locations } = json_body(&bytes)?;
    // An entry is well formed when its command-line spelling reads back as the same entry.
    if let Some(bad) = refused_locations
        .iter()
        .find(|entry| entry.to_string().parse::<RefusedLocation>().ok().as_ref() != Some(*entry))
    {
        return Err(ApiError::invalid_argument(format!(
            "`{}` is not a refused location: `location` and `project` are lowercase letters, digits and hyphens.",
            bad.location
        )));
    }
    emulator.set_refused_locations(refused_locations);
    Ok(refused_locations_answer(&emulator))
}

async fn refused_locations(State(emulator): State<Emulator>) -> Json<Value> {
    refused_locations_answer(&emulator)
}

fn refused_locations_answer(emulator: &Emulator) -> Json<Value> {
    Json(json!({ "refusedLocations": emulator.refused_locations() }))
}

async fn set_preflight_world(
    State(emulator): State<Emulator>,
    bytes: Bytes,
) -> Result<Json<PreflightWorld>, ApiError> {
    let world: PreflightWorld = json_body(&bytes)?;
    world.check()?;
    emulator.set_preflight_world(world);
    Ok(Json(emulator.preflight_world()))
}

async fn preflight_world(State(emulator): State<Emulator>) -> Json<PreflightWorld> {
    Json(emulator.preflight_world())
}
