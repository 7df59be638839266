//! The HTTP surface: the router with every API route, the front-door
//! middleware on top, and the small request-parsing helpers shared by the
//! handlers (path and query extraction, JSON bodies) that turn every
//! malformed request into a Google-style `INVALID_ARGUMENT`.

use std::collections::HashMap;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query};
use axum::http::{Method, Uri};
use axum::middleware::from_fn_with_state;
use axum::routing::{get, post};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tower::ServiceExt;

use crate::api_error::{ApiError, Code};
use crate::emulator::Emulator;
use crate::project::number_request_path;
use crate::{admin, clusters, operations, preflight, request_middleware, slurm, storage};

const CLUSTERS: &str = "/v1beta1/projects/{project}/locations/{location}/modelDevelopmentClusters";
const CLUSTER: &str =
    "/v1beta1/projects/{project}/locations/{location}/modelDevelopmentClusters/{cluster}";
const OPERATION: &str = "/v1/projects/{project}/locations/{location}/operations/{operation}";
const UPLOAD: &str = "/upload/storage/v1/b/{bucket}/o";
/// The object name is one path segment: its `/` are sent as `%2F`.
const OBJECT: &str = "/storage/v1/b/{bucket}/o/{object}";

impl Emulator {
    /// The API as an axum router. Serving it with anything but
    /// [`Emulator::serve`] works, except that injected connection drops then
    /// become `503 UNAVAILABLE` answers.
    pub fn router(&self) -> Router {
        let api = self.api_routes();
        let project_numbers = self.lock().options.project_numbers;
        // Routing must see the rewritten path, so the rewrite wraps the whole
        // API router and the request middleware (which logs the path as sent) wraps both.
        let routed = if project_numbers {
            Router::new().fallback_service(api.map_request(number_request_path))
        } else {
            api
        };
        routed.layer(from_fn_with_state(
            self.clone(),
            request_middleware::every_request,
        ))
    }

    fn api_routes(&self) -> Router {
        Router::new()
            .route(CLUSTERS, get(clusters::list).post(clusters::create))
            .route(
                CLUSTER,
                get(clusters::get)
                    .patch(clusters::update)
                    .delete(clusters::delete)
                    .post(slurm::cluster_method),
            )
            .route(
                OPERATION,
                get(operations::get).post(operations::operation_method),
            )
            .route(UPLOAD, post(storage::upload))
            .route(OBJECT, get(storage::get).delete(storage::delete))
            .merge(preflight::routes())
            .merge(admin::routes())
            .fallback(unknown_route)
            .method_not_allowed_fallback(unknown_route)
            .with_state(self.clone())
    }
}

async fn unknown_route(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        Code::NotFound,
        format!(
            "The requested URL {} {} was not found on this server.",
            method,
            uri.path()
        ),
    )
}

/// The path parameters, or `INVALID_ARGUMENT`.
pub(crate) fn path_params<T>(params: Result<Path<T>, PathRejection>) -> Result<T, ApiError> {
    params
        .map(|Path(params)| params)
        .map_err(|rejection| ApiError::invalid_argument(rejection.body_text()))
}

/// The query parameters, or `INVALID_ARGUMENT`.
pub(crate) fn query_params(
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<HashMap<String, String>, ApiError> {
    query
        .map(|Query(params)| params)
        .map_err(|rejection| ApiError::invalid_argument(rejection.body_text()))
}

/// A query parameter under its lowerCamelCase or snake_case name.
pub(crate) fn query_param<'a>(
    params: &'a HashMap<String, String>,
    camel: &str,
    snake: &str,
) -> Option<&'a str> {
    params
        .get(camel)
        .or_else(|| params.get(snake))
        .map(String::as_str)
}

/// The request body as JSON, or `INVALID_ARGUMENT` with serde's message.
pub(crate) fn json_body<T: DeserializeOwned>(body: &Bytes) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|error| {
        ApiError::invalid_argument(format!("Invalid JSON payload received: {error}."))
    })
}

/// The request body as a JSON object.
pub(crate) fn json_object_body(body: &Bytes) -> Result<Value, ApiError> {
    let value: Value = json_body(body)?;
    if value.is_object() {
        Ok(value)
    } else {
        Err(ApiError::invalid_argument(
            "The request body must be a JSON object.",
        ))
    }
}

/// `id:verb` → `(id, Some(verb))`; a plain `id` → `(id, None)`.
pub(crate) fn split_custom_method(segment: &str) -> (&str, Option<&str>) {
    match segment.split_once(':') {
        Some((id, verb)) => (id, Some(verb)),
        None => (segment, None),
    }
}
