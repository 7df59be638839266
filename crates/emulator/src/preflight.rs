//! The reads of preflight, in minimal documented shapes, each API under its own path prefix
//! (so that one server can stand in for all of them and for the cluster API):
//!
//! - Service Usage `services.get` under `/serviceusage/v1/`: `{name, parent, state}`;
//! - Compute Engine under `/compute/v1/` (Compute Engine's own path), references as URLs, as
//!   Compute Engine writes them: `networks.get` `{kind, name, selfLink}`, `subnetworks.get`
//!   `{…, network, region, privateIpGoogleAccess}`, `reservations.get` `{…, zone,
//!   specificReservationRequired, specificReservation{count, inUseCount,
//!   instanceProperties{machineType}}}` (counts as strings, as `int64`s are written) and
//!   `regions.get` `{…, quotas[{metric, limit, usage}]}`;
//! - Filestore `instances.get` under `/file/v1/`: `{name, state, networks[{network}]}`;
//! - Managed Lustre `instances.get` under `/lustre/v1/`: `{name, state, network}`;
//! - Cloud Storage `buckets.get` at its own `/storage/v1/b/{BUCKET}`: `{kind, name, id}`;
//! - Resource Manager `projects.testIamPermissions` under `/cloudresourcemanager/v1/`, and IAM
//!   `serviceAccounts.get` and `serviceAccounts.testIamPermissions` under `/iam/v1/`:
//!   `{permissions: [granted]}` (left out when none is), `{name, email, projectId}`.
//!
//! What exists is the [`PreflightWorld`]: by default every service is enabled, every
//! permission granted, every bucket, service account and reservation exists (a reservation in
//! its name's zone with 64 machines free), every region lists 1024 of each GPU quota, and every
//! project has the quick start's world — the network `default`, a subnetwork `default` in
//! every region on it with Private Google Access on, a Filestore instance `home` and a Managed
//! Lustre instance `scratch` in every zone, READY and ACTIVE, on it. The admin API
//! (`PUT /emulator/v1/preflight`) and the flags replace it. These reads are never faulted and
//! never refused by location: a test chooses their answers here.

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::api_error::{ApiError, Code};
use crate::emulator::Emulator;
use crate::error::EmulatorError;
use crate::routes::path_params;

const SERVICE: &str = "/serviceusage/v1/projects/{project}/services/{service}";
const NETWORK: &str = "/compute/v1/projects/{project}/global/networks/{network}";
const SUBNETWORK: &str = "/compute/v1/projects/{project}/regions/{region}/subnetworks/{subnetwork}";
const INSTANCE: &str = "/file/v1/projects/{project}/locations/{zone}/instances/{instance}";
const LUSTRE: &str = "/lustre/v1/projects/{project}/locations/{zone}/instances/{instance}";
const BUCKET: &str = "/storage/v1/b/{bucket}";
const RESERVATION: &str = "/compute/v1/projects/{project}/zones/{zone}/reservations/{reservation}";
const REGION: &str = "/compute/v1/projects/{project}/regions/{region}";
/// `{project}` is `P:testIamPermissions`: the method is part of the last segment.
const PROJECT: &str = "/cloudresourcemanager/v1/projects/{project}";
/// `{account}` is an email, or `EMAIL:testIamPermissions` for a POST.
const SERVICE_ACCOUNT: &str = "/iam/v1/projects/{project}/serviceAccounts/{account}";

/// The GPU quota metrics a region lists by default, each also `PREEMPTIBLE_`.
const GPU_METRICS: [&str; 5] = [
    "NVIDIA_H100_GPUS",
    "NVIDIA_H100_MEGA_GPUS",
    "NVIDIA_H200_GPUS",
    "NVIDIA_B200_GPUS",
    "NVIDIA_GB200_GPUS",
];

/// How Compute Engine writes references.
const COMPUTE_URL: &str = "https://www.googleapis.com/compute/v1";

/// The path prefixes of the preflight APIs, as [`PreflightWorld::forbidden_apis`] names them.
const APIS: [(&str, &str); 7] = [
    ("serviceusage", "/serviceusage/v1/"),
    ("compute", "/compute/v1/"),
    ("file", "/file/v1/"),
    ("lustre", "/lustre/v1/"),
    ("cloudresourcemanager", "/cloudresourcemanager/v1/"),
    ("iam", "/iam/v1/"),
    ("storage", "/storage/v1/b/"),
];

/// Whether `path` is one of the preflight reads' (never faulted, never refused by location).
/// Cloud Storage's is a bucket's own path: its objects are the lock's.
pub(crate) fn is_preflight_path(path: &str) -> bool {
    APIS.iter().any(|(api, prefix)| {
        path.strip_prefix(prefix)
            .is_some_and(|rest| *api != "storage" || !rest.contains('/'))
    })
}

/// What the preflight reads find. A list left out (`null`) keeps the default world for it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PreflightWorld {
    /// Services answered `DISABLED`, as `projects/{P}/services/{NAME}`; every other is enabled.
    #[serde(default)]
    pub disabled_services: Vec<String>,
    /// The networks that exist, as `projects/{P}/global/networks/{N}`; `None`: the `default`
    /// network of every project.
    #[serde(default)]
    pub networks: Option<Vec<String>>,
    /// The subnetworks that exist; `None`: the `default` subnetwork of every region of every
    /// project, on its `default` network, with Private Google Access on.
    #[serde(default)]
    pub subnetworks: Option<Vec<SeededSubnetwork>>,
    /// The Filestore instances that exist; `None`: an instance `home` in every zone of every
    /// project, READY, on its `default` network.
    #[serde(default)]
    pub filestore_instances: Option<Vec<SeededInstance>>,
    /// The Managed Lustre instances that exist; `None`: an instance `scratch` in every zone of
    /// every project, ACTIVE, on its `default` network.
    #[serde(default)]
    pub lustre_instances: Option<Vec<SeededInstance>>,
    /// The buckets that exist, by name; `None`: every bucket.
    #[serde(default)]
    pub buckets: Option<Vec<String>>,
    /// The reservations that exist; `None`: every reservation, in its name's zone, with 64
    /// machines none of which is in use, for any machine type (no `machineType`).
    #[serde(default)]
    pub reservations: Option<Vec<SeededReservation>>,
    /// The quotas regions list; `None`: 1024 of each GPU metric (and its `PREEMPTIBLE_` one),
    /// none in use, in every region.
    #[serde(default)]
    pub quotas: Option<Vec<SeededQuota>>,
    /// The service accounts that exist, by email; `None`: every one.
    #[serde(default)]
    pub service_accounts: Option<Vec<String>>,
    /// Permissions `testIamPermissions` never grants (on projects and service accounts), e.g.
    /// `aiplatform.modelDevelopmentClusters.create`, `iam.serviceAccounts.actAs`; every other
    /// asked for is granted.
    #[serde(default)]
    pub denied_permissions: Vec<String>,
    /// APIs whose every read answers `403 PERMISSION_DENIED`: `serviceusage`, `compute`,
    /// `file`, `lustre`, `cloudresourcemanager`, `iam`, `storage`.
    #[serde(default)]
    pub forbidden_apis: Vec<String>,
}

/// A reservation of the [`PreflightWorld`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeededReservation {
    /// `projects/{P}/zones/{Z}/reservations/{R}`.
    pub name: String,
    /// The machine type it reserves, e.g. `a3-megagpu-8g`.
    pub machine_type: String,
    /// Machines reserved.
    pub count: u64,
    /// Of them, in use.
    #[serde(default)]
    pub in_use_count: u64,
}

/// A quota of the [`PreflightWorld`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeededQuota {
    /// `projects/{P}/regions/{R}`.
    pub region: String,
    /// e.g. `NVIDIA_H100_GPUS`.
    pub metric: String,
    /// The limit.
    pub limit: f64,
    /// What is in use.
    #[serde(default)]
    pub usage: f64,
}

/// A subnetwork of the [`PreflightWorld`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeededSubnetwork {
    /// `projects/{P}/regions/{R}/subnetworks/{S}`.
    pub name: String,
    /// `projects/{P}/global/networks/{N}`.
    pub network: String,
    /// Private Google Access.
    #[serde(default)]
    pub private_ip_google_access: bool,
}

/// A Filestore or Managed Lustre instance of the [`PreflightWorld`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeededInstance {
    /// `projects/{P}/locations/{ZONE}/instances/{ID}`.
    pub name: String,
    /// e.g. `READY` (Filestore), `ACTIVE` (Managed Lustre), `CREATING`.
    pub state: String,
    /// The network, as the API writes it (Filestore: a name, or a full resource name; Managed
    /// Lustre: a full resource name).
    pub network: String,
}

impl PreflightWorld {
    /// A world from the JSON `PUT /emulator/v1/preflight` takes.
    pub fn from_json(text: &str) -> Result<Self, EmulatorError> {
        let invalid = |reason: String| EmulatorError::PreflightWorld { reason };
        let world: Self = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
        match world.unknown_api() {
            Some(reason) => Err(invalid(reason)),
            None => Ok(world),
        }
    }

    /// Refuses a world with an API it does not know.
    pub(crate) fn check(&self) -> Result<(), ApiError> {
        match self.unknown_api() {
            Some(message) => Err(ApiError::invalid_argument(message)),
            None => Ok(()),
        }
    }

    /// What is wrong with a forbidden API it names that is not a preflight API.
    fn unknown_api(&self) -> Option<String> {
        let unknown = self
            .forbidden_apis
            .iter()
            .find(|api| !APIS.iter().any(|(known, _)| known == api))?;
        Some(format!(
            "`{unknown}` is not a preflight API: serviceusage, compute, file, lustre, cloudresourcemanager, iam or storage."
        ))
    }

    fn forbids(&self, api: &str) -> Result<(), ApiError> {
        if self.forbidden_apis.iter().any(|forbidden| forbidden == api) {
            return Err(ApiError::new(
                Code::PermissionDenied,
                "The caller does not have permission",
            ));
        }
        Ok(())
    }
}

/// The preflight routes, to merge into the API router.
pub(crate) fn routes() -> Router<Emulator> {
    Router::new()
        .route(SERVICE, get(service))
        .route(NETWORK, get(network))
        .route(SUBNETWORK, get(subnetwork))
        .route(INSTANCE, get(instance))
        .route(LUSTRE, get(lustre))
        .route(BUCKET, get(bucket))
        .route(RESERVATION, get(reservation))
        .route(REGION, get(region))
        .route(PROJECT, post(project_permissions))
        .route(
            SERVICE_ACCOUNT,
            get(service_account).post(service_account_permissions),
        )
}

fn not_found(name: &str) -> ApiError {
    ApiError::new(
        Code::NotFound,
        format!("The resource '{name}' was not found"),
    )
}

async fn service(
    State(emulator): State<Emulator>,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let (project, service) = path_params(path)?;
    let world = emulator.preflight_world();
    world.forbids("serviceusage")?;
    let name = format!("projects/{project}/services/{service}");
    let enabled = !world.disabled_services.contains(&name);
    Ok(Json(json!({
        "name": name,
        "parent": format!("projects/{project}"),
        "state": if enabled { "ENABLED" } else { "DISABLED" },
    })))
}

async fn network(
    State(emulator): State<Emulator>,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let (project, network) = path_params(path)?;
    let world = emulator.preflight_world();
    world.forbids("compute")?;
    let name = format!("projects/{project}/global/networks/{network}");
    let exists = match &world.networks {
        Some(networks) => networks.contains(&name),
        None => network == "default",
    };
    if !exists {
        return Err(not_found(&name));
    }
    Ok(Json(json!({
        "kind": "compute#network",
        "name": network,
        "selfLink": format!("{COMPUTE_URL}/{name}"),
    })))
}

async fn subnetwork(
    State(emulator): State<Emulator>,
    path: Result<Path<(String, String, String)>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let (project, region, subnetwork) = path_params(path)?;
    let world = emulator.preflight_world();
    world.forbids("compute")?;
    let name = format!("projects/{project}/regions/{region}/subnetworks/{subnetwork}");
    let found = match &world.subnetworks {
        Some(seeded) => seeded.iter().find(|s| s.name == name).cloned(),
        None => (subnetwork == "default").then(|| SeededSubnetwork {
            name: name.clone(),
            network: format!("projects/{project}/global/networks/default"),
            private_ip_google_access: true,
        }),
    };
    let Some(found) = found else {
        return Err(not_found(&name));
    };
    Ok(Json(json!({
        "kind": "compute#subnetwork",
        "name": subnetwork,
        "selfLink": format!("{COMPUTE_URL}/{name}"),
        "network": format!("{COMPUTE_URL}/{}", found.network),
        "region": format!("{COMPUTE_URL}/projects/{project}/regions/{region}"),
        "privateIpGoogleAccess": found.private_ip_google_access,
    })))
}

async fn instance(
    State(emulator): State<Emulator>,
    path: Result<Path<(String, String, String)>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let (project, zone, instance) = path_params(path)?;
    let world = emulator.preflight_world();
    world.forbids("file")?;
    let name = format!("projects/{project}/locations/{zone}/instances/{instance}");
    let found = match &world.filestore_instances {
        Some(seeded) => seeded.iter().find(|i| i.name == name).cloned(),
        None => (instance == "home").then(|| SeededInstance {
            name: name.clone(),
            state: "READY".to_owned(),
            network: "default".to_owned(),
        }),
    };
    let Some(found) = found else {
        return Err(not_found(&name));
    };
    Ok(Json(json!({
        "name": name,
        "state": found.state,
        "tier": "BASIC_HDD",
        "networks": [{"network": found.network}],
    })))
}

async fn lustre(
    State(emulator): State<Emulator>,
    path: Result<Path<(String, String, String)>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let (project, zone, instance) = path_params(path)?;
    let world = emulator.preflight_world();
    world.forbids("lustre")?;
    let name = format!("projects/{project}/locations/{zone}/instances/{instance}");
    let found = match &world.lustre_instances {
        Some(seeded) => seeded.iter().find(|i| i.name == name).cloned(),
        None => (instance == "scratch").then(|| SeededInstance {
            name: name.clone(),
            state: "ACTIVE".to_owned(),
            network: format!("projects/{project}/global/networks/default"),
        }),
    };
    let Some(found) = found else {
        return Err(not_found(&name));
    };
    Ok(Json(json!({
        "name": name,
        "state": found.state,
        "network": found.network,
        "capacityGib": "18000",
    })))
}

async fn bucket(
    State(emulator): State<Emulator>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let bucket = path_params(path)?;
    let world = emulator.preflight_world();
    world.forbids("storage")?;
    let exists = world
        .buckets
        .as_ref()
        .is_none_or(|buckets| buckets.contains(&bucket));
    if !exists {
        return Err(not_found(&bucket));
    }
    Ok(Json(json!({
        "kind": "storage#bucket",
        "name": bucket,
        "id": bucket,
    })))
}

async fn reservation(
    State(emulator): State<Emulator>,
    path: Result<Path<(String, String, String)>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let (project, zone, reservation) = path_params(path)?;
    let world = emulator.preflight_world();
    world.forbids("compute")?;
    let name = format!("projects/{project}/zones/{zone}/reservations/{reservation}");
    let (machine_type, count, in_use) = match &world.reservations {
        Some(seeded) => {
            let Some(found) = seeded.iter().find(|r| r.name == name) else {
                return Err(not_found(&name));
            };
            (
                Some(found.machine_type.clone()),
                found.count,
                found.in_use_count,
            )
        }
        None => (None, 64, 0),
    };
    let mut properties = json!({});
    if let Some(machine_type) = machine_type {
        properties["machineType"] = json!(machine_type);
    }
    Ok(Json(json!({
        "kind": "compute#reservation",
        "name": reservation,
        "selfLink": format!("{COMPUTE_URL}/{name}"),
        "zone": format!("{COMPUTE_URL}/projects/{project}/zones/{zone}"),
        "status": "READY",
        "specificReservationRequired": true,
        "specificReservation": {
            "count": count.to_string(),
            "inUseCount": in_use.to_string(),
            "instanceProperties": properties,
        },
    })))
}

async fn region(
    State(emulator): State<Emulator>,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let (project, region) = path_params(path)?;
    let world = emulator.preflight_world();
    world.forbids("compute")?;
    let name = format!("projects/{project}/regions/{region}");
    let quotas: Vec<Value> = match &world.quotas {
        Some(seeded) => seeded
            .iter()
            .filter(|quota| quota.region == name)
            .map(
                |quota| json!({"metric": quota.metric, "limit": quota.limit, "usage": quota.usage}),
            )
            .collect(),
        None => GPU_METRICS
            .iter()
            .flat_map(|metric| [(*metric).to_owned(), format!("PREEMPTIBLE_{metric}")])
            .map(|metric| json!({"metric": metric, "limit": 1024.0, "usage": 0.0}))
            .collect(),
    };
    Ok(Json(json!({
        "kind": "compute#region",
        "name": region,
        "selfLink": format!("{COMPUTE_URL}/{name}"),
        "status": "UP",
        "quotas": quotas,
    })))
}

/// `P:testIamPermissions` as `P`; any other method is not served.
fn permissions_target(segment: &str) -> Result<&str, ApiError> {
    segment
        .strip_suffix(":testIamPermissions")
        .ok_or_else(|| not_found(segment))
}

/// The answer of `testIamPermissions`: the permissions asked for that are granted, the list
/// left out when none is.
fn granted(world: &PreflightWorld, bytes: &Bytes) -> Result<Json<Value>, ApiError> {
    let body: Value = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::invalid_argument(format!("Invalid JSON payload: {e}")))?;
    let asked = body
        .get("permissions")
        .and_then(Value::as_array)
        .ok_or_else(|| ApiError::invalid_argument("`permissions` is required."))?;
    let granted: Vec<&Value> = asked
        .iter()
        .filter(|permission| {
            permission
                .as_str()
                .is_some_and(|p| !world.denied_permissions.iter().any(|d| d == p))
        })
        .collect();
    Ok(Json(if granted.is_empty() {
        json!({})
    } else {
        json!({ "permissions": granted })
    }))
}

async fn project_permissions(
    State(emulator): State<Emulator>,
    path: Result<Path<String>, PathRejection>,
    bytes: Bytes,
) -> Result<Json<Value>, ApiError> {
    let segment = path_params(path)?;
    permissions_target(&segment)?;
    let world = emulator.preflight_world();
    world.forbids("cloudresourcemanager")?;
    granted(&world, &bytes)
}

/// Whether the service account `email` exists in `world`.
fn account_exists(world: &PreflightWorld, email: &str) -> bool {
    world
        .service_accounts
        .as_ref()
        .is_none_or(|accounts| accounts.iter().any(|a| a == email))
}

async fn service_account(
    State(emulator): State<Emulator>,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let (project, email) = path_params(path)?;
    let world = emulator.preflight_world();
    world.forbids("iam")?;
    if !account_exists(&world, &email) {
        return Err(not_found(&email));
    }
    let project_id = email
        .split_once('@')
        .and_then(|(_, domain)| domain.split('.').next())
        .unwrap_or_default();
    Ok(Json(json!({
        "name": format!("projects/{project}/serviceAccounts/{email}"),
        "email": email,
        "projectId": project_id,
    })))
}

async fn service_account_permissions(
    State(emulator): State<Emulator>,
    path: Result<Path<(String, String)>, PathRejection>,
    bytes: Bytes,
) -> Result<Json<Value>, ApiError> {
    let (_, segment) = path_params(path)?;
    let email = permissions_target(&segment)?;
    let world = emulator.preflight_world();
    world.forbids("iam")?;
    if !account_exists(&world, email) {
        return Err(not_found(email));
    }
    granted(&world, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preflight_paths_are_told_apart_from_the_cluster_apis() {
        assert!(is_preflight_path(
            "/compute/v1/projects/p/global/networks/n"
        ));
        assert!(is_preflight_path(
            "/file/v1/projects/p/locations/z/instances/i"
        ));
        assert!(!is_preflight_path(
            "/v1beta1/projects/p/locations/r/modelDevelopmentClusters"
        ));
        assert!(is_preflight_path("/storage/v1/b/x"));
        assert!(!is_preflight_path("/storage/v1/b/x/o/y"));
        assert!(is_preflight_path(
            "/cloudresourcemanager/v1/projects/p:testIamPermissions"
        ));
    }

    #[test]
    fn a_world_names_only_known_apis() {
        let world = PreflightWorld {
            forbidden_apis: vec!["dns".to_owned()],
            ..PreflightWorld::default()
        };
        assert!(world.check().is_err());
    }
}
