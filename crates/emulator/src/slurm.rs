//! `POST …/modelDevelopmentClusters/{id}:callSlurmRestApi`: a proxy to the
//! cluster's slurmrestd. The emulator serves `GET /slurm/v0.0.42/jobs` from
//! jobs injected by tests and answers other Slurm paths as slurmrestd does, with 404.

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use serde_json::{Value, json};

use crate::api_error::{ApiError, Code};
use crate::clusters::cluster_not_found;
use crate::emulator::Emulator;
use crate::resource::Parent;
use crate::routes::{json_object_body, path_params, split_custom_method};

const JOBS_PATH: &str = "/slurm/v0.0.42/jobs";
const GET_METHOD: &str = "HTTP_METHOD_GET";

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
        .resource
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
    Ok(Json(slurm_answer(method, slurm_path, &slurm.jobs)))
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

/// What slurmrestd answers, wrapped as `{"status", "structuredBody"}`.
fn slurm_answer(method: &str, slurm_path: &str, jobs: &[Value]) -> Value {
    let path_only = slurm_path.split('?').next().unwrap_or(slurm_path);
    match (method, path_only) {
        (GET_METHOD, JOBS_PATH) => json!({"status": 200, "structuredBody": {"jobs": jobs}}),
        (GET_METHOD, _) => slurm_error(404, &format!("Unable to find a handler for {path_only}")),
        _ => slurm_error(
            405,
            &format!("Method {method} is not supported on {path_only}"),
        ),
    }
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

    #[test]
    fn only_the_jobs_listing_is_served() {
        let jobs = vec![json!({"job_id": 1})];
        assert_eq!(
            slurm_answer(GET_METHOD, "/slurm/v0.0.42/jobs?update_time=0", &jobs)["structuredBody"]
                ["jobs"],
            json!(jobs)
        );
        assert_eq!(
            slurm_answer(GET_METHOD, "/slurm/v0.0.42/nodes", &[])["status"],
            404
        );
        assert_eq!(
            slurm_answer("HTTP_METHOD_POST", JOBS_PATH, &[])["status"],
            405
        );
    }
}
