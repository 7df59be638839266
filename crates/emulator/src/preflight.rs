//! The reads of preflight, in minimal documented shapes, each API under its own path prefix
//! (so that one server can stand in for all of them and for the cluster API):
//!
//! - Service Usage `services.get` under `/serviceusage/v1/`: `{name, parent, state}`;
//! - Compute Engine `networks.get` and `subnetworks.get` under `/compute/v1/` (Compute
//!   Engine's own path): `{kind, name, selfLink}` and `{…, network, region,
//!   privateIpGoogleAccess}` with references as URLs, as Compute Engine writes them;
//! - Filestore `instances.get` under `/file/v1/`: `{name, state, networks[{network}]}`.
//!
//! What exists is the [`PreflightWorld`]: by default every service is enabled, and every
//! project has the quick start's world — the network `default`, a subnetwork `default` in every
//! region on it with Private Google Access on, and a Filestore instance `home` in every zone,
//! READY, on it. The admin API (`PUT /emulator/v1/preflight`) and the flags replace it. These
//! reads are never faulted and never refused by location: a test chooses their answers here.

use axum::Json;
use axum::Router;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::routing::get;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::api_error::{ApiError, Code};
use crate::emulator::Emulator;
use crate::routes::path_params;

const SERVICE: &str = "/serviceusage/v1/projects/{project}/services/{service}";
const NETWORK: &str = "/compute/v1/projects/{project}/global/networks/{network}";
const SUBNETWORK: &str = "/compute/v1/projects/{project}/regions/{region}/subnetworks/{subnetwork}";
const INSTANCE: &str = "/file/v1/projects/{project}/locations/{zone}/instances/{instance}";

/// How Compute Engine writes references.
const COMPUTE_URL: &str = "https://www.googleapis.com/compute/v1";

/// The path prefixes of the preflight APIs, as [`PreflightWorld::forbidden_apis`] names them.
const APIS: [(&str, &str); 3] = [
    ("serviceusage", "/serviceusage/v1/"),
    ("compute", "/compute/v1/"),
    ("file", "/file/v1/"),
];

/// Whether `path` is one of the preflight reads' (never faulted, never refused by location).
pub(crate) fn is_preflight_path(path: &str) -> bool {
    APIS.iter().any(|(_, prefix)| path.starts_with(prefix))
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
    /// APIs whose every read answers `403 PERMISSION_DENIED`: `serviceusage`, `compute`,
    /// `file`.
    #[serde(default)]
    pub forbidden_apis: Vec<String>,
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

/// A Filestore instance of the [`PreflightWorld`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeededInstance {
    /// `projects/{P}/locations/{ZONE}/instances/{ID}`.
    pub name: String,
    /// e.g. `READY`, `CREATING`.
    pub state: String,
    /// The network, as Filestore writes it (a name, or a full resource name).
    pub network: String,
}

impl PreflightWorld {
    /// Refuses a world with an API it does not know.
    pub(crate) fn check(&self) -> Result<(), ApiError> {
        match self
            .forbidden_apis
            .iter()
            .find(|api| !APIS.iter().any(|(known, _)| known == api))
        {
            Some(unknown) => Err(ApiError::invalid_argument(format!(
                "`{unknown}` is not a preflight API: serviceusage, compute or file."
            ))),
            None => Ok(()),
        }
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
        assert!(!is_preflight_path("/storage/v1/b/x/o/y"));
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
