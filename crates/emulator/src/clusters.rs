//! Handlers for the cluster collection: List (paged), Get, Create, Update
//! (PATCH with an update mask) and Delete. Create, Update and Delete answer
//! with a long-running operation and leave the cluster in the operation's
//! transitional state until it finishes.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

use crate::api_error::{ApiError, Code};
use crate::clock::{now_millis, rfc3339};
use crate::emulator::{Emulator, State as EmulatorState};
use crate::mask::{apply_update_mask, check_paths};
use crate::page_token;
use crate::resource::{
    Parent, check_cluster, check_cluster_id, cluster_from_request, complete_cluster, has_slurm_spec,
};
use crate::routes::{json_body, json_object_body, path_params, query_param, query_params};
use crate::schema::check_request_body;
use crate::slurm_keys::fold_config_keys;
use crate::store::{OperationKind, StoredCluster};
use crate::update::{added_pools, check_immutable_pool_fields, implied_mask};

/// Cluster states in which a change is under way.
const TRANSITIONAL_STATES: [&str; 3] = ["PROVISIONING", "UPDATING", "STOPPING"];

/// The update modes the API knows.
const UPDATE_MODES: [&str; 3] = ["UPDATE_MODE_UNSPECIFIED", "USER_ONLY", "USER_AND_SERVICE"];

type ParentPath = Result<Path<(String, String)>, PathRejection>;
type ClusterPath = Result<Path<(String, String, String)>, PathRejection>;
type QueryParams = Result<Query<HashMap<String, String>>, QueryRejection>;

fn parent_of(path: ParentPath) -> Result<Parent, ApiError> {
    let (project, location) = path_params(path)?;
    Ok(Parent { project, location })
}

fn cluster_of(path: ClusterPath) -> Result<(Parent, String), ApiError> {
    let (project, location, cluster_id) = path_params(path)?;
    let parent = Parent { project, location };
    let name = parent.cluster_name(&cluster_id);
    Ok((parent, name))
}

pub(crate) async fn list(
    State(emulator): State<Emulator>,
    path: ParentPath,
    query: QueryParams,
) -> Result<Response, ApiError> {
    let parent = parent_of(path)?;
    let params = query_params(query)?;
    let state = emulator.lock();
    let page_size = page_size(query_param(&params, "pageSize", "page_size"), &state)?;
    let prefix = parent.collection_prefix();
    let after = match query_param(&params, "pageToken", "page_token") {
        None | Some("") => None,
        Some(token) => Some(page_token::decode(token, &prefix)?),
    };
    let start = match &after {
        Some(name) => Bound::Excluded(name.as_str()),
        None => Bound::Included(prefix.as_str()),
    };
    let mut in_collection = state
        .store
        .clusters
        .range::<str, _>((start, Bound::Unbounded))
        .take_while(|(name, _)| name.starts_with(&prefix));
    let page: Vec<(&String, &StoredCluster)> = in_collection.by_ref().take(page_size).collect();
    let more = in_collection.next().is_some();
    let next_page_token = page
        .last()
        .filter(|_| more)
        .map(|(last_name, _)| page_token::encode(last_name));
    let body = list_answer(
        page.iter().map(|(_, cluster)| cluster.encoded()),
        next_page_token,
    );
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// A List answer, written from the clusters' JSON texts. proto3 JSON omits an empty repeated
/// field, so an empty page is `{}`, and the last page has no `nextPageToken`.
fn list_answer<'a>(
    clusters: impl ExactSizeIterator<Item = &'a str>,
    next_page_token: Option<String>,
) -> String {
    let mut fields = Vec::new();
    if clusters.len() > 0 {
        let clusters: Vec<&str> = clusters.collect();
        fields.push(format!(
            "\"modelDevelopmentClusters\":[{}]",
            clusters.join(",")
        ));
    }
    if let Some(token) = next_page_token {
        fields.push(format!("\"nextPageToken\":{}", Value::String(token)));
    }
    format!("{{{}}}", fields.join(","))
}

/// The page size asked for, defaulted and capped.
fn page_size(requested: Option<&str>, state: &EmulatorState) -> Result<usize, ApiError> {
    let options = &state.options;
    let requested = match requested {
        None | Some("") => 0,
        Some(text) => text.parse::<i64>().map_err(|_| {
            ApiError::invalid_argument(format!("Invalid pageSize `{text}`: not an integer."))
        })?,
    };
    match usize::try_from(requested) {
        Err(_) => Err(ApiError::invalid_argument(format!(
            "Invalid pageSize {requested}: it must not be negative."
        ))),
        Ok(0) => Ok(options
            .default_page_size
            .clamp(1, options.max_page_size.max(1))),
        Ok(size) => Ok(size.min(options.max_page_size.max(1))),
    }
}

pub(crate) async fn get(
    State(emulator): State<Emulator>,
    path: ClusterPath,
) -> Result<Json<Value>, ApiError> {
    let (_, name) = cluster_of(path)?;
    let state = emulator.lock();
    let cluster = state
        .store
        .clusters
        .get(&name)
        .ok_or_else(|| cluster_not_found(&name))?;
    Ok(Json(cluster.resource().clone()))
}

pub(crate) async fn create(
    State(emulator): State<Emulator>,
    path: ParentPath,
    query: QueryParams,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let parent = parent_of(path)?;
    let params = query_params(query)?;
    let cluster_id = query_param(
        &params,
        "modelDevelopmentClusterId",
        "model_development_cluster_id",
    )
    .ok_or_else(|| {
        ApiError::invalid_argument("The query parameter modelDevelopmentClusterId is required.")
    })?;
    let request: Value = json_body(&body)?;
    check_request_body(&request)?;
    let mut cluster = cluster_from_request(&request)?;
    check_cluster_id(cluster_id, has_slurm_spec(&cluster))?;
    check_cluster(&cluster)?;
    let name = parent.cluster_name(cluster_id);
    let mut state = emulator.lock();
    let now = now_millis();
    if state.cluster_id_taken(&name, now) {
        return Err(id_already_exists(cluster_id));
    }
    let project_number = state.project_number(&parent);
    complete_cluster(&mut cluster, Some(&parent), &project_number);
    if state.options.fold_slurm_config_keys {
        fold_config_keys(&mut cluster);
    }
    let resource = new_resource(&name, cluster, &rfc3339(now));
    let operation = state.commit(|state| {
        let failure = state.take_capacity_failure(node_pools(&resource), &parent)?;
        state.store.deletions.remove(&name);
        state
            .store
            .clusters
            .insert(name.clone(), StoredCluster::new(resource));
        Ok::<_, ApiError>(state.start_operation(
            OperationKind::Create,
            &name,
            &parent,
            None,
            failure,
            now,
        ))
    })?;
    Ok(Json(operation.render(now)))
}

/// The service's answer to a create of an ID that a cluster holds, as it words it; a cluster
/// whose delete has not finished still holds its ID.
fn id_already_exists(cluster_id: &str) -> ApiError {
    ApiError::new(
        Code::AlreadyExists,
        format!(
            "There is an existing ModelDevelopmentCluster with the same ID \"{cluster_id}\". \
             Please delete the existing cluster and try again or use a different ID."
        ),
    )
}

fn node_pools(cluster: &Value) -> impl Iterator<Item = &Value> {
    cluster
        .get("nodePools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The stored form of a new cluster: `name` first, then its fields, then the timestamps.
fn new_resource(name: &str, cluster: Value, now: &str) -> Value {
    let mut resource = Map::new();
    resource.insert("name".to_owned(), Value::from(name));
    if let Value::Object(fields) = cluster {
        resource.extend(fields);
    }
    resource.insert("createTime".to_owned(), Value::from(now));
    resource.insert("updateTime".to_owned(), Value::from(now));
    Value::Object(resource)
}

pub(crate) async fn update(
    State(emulator): State<Emulator>,
    path: ClusterPath,
    query: QueryParams,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let (parent, name) = cluster_of(path)?;
    let params = query_params(query)?;
    let given_mask = update_mask(query_param(&params, "updateMask", "update_mask"))?;
    let update_mode = update_mode(query_param(&params, "updateMode", "update_mode"))?;
    let patch = json_object_body(&body)?;
    check_request_body(&patch)?;
    let mut state = emulator.lock();
    refuse_paths(&state.options.refused_update_paths, given_mask.as_deref())?;
    let live = idle_cluster(&state.store.clusters, &name)?;
    let mask = match given_mask {
        Some(mask) => mask,
        None => implied_mask(live.resource(), &patch)?,
    };
    let mut updated = apply_update_mask(live.resource(), &patch, &mask)
        .map_err(|error| ApiError::invalid_argument(format!("{error}.")))?;
    check_immutable_pool_fields(live.resource(), &updated)?;
    check_cluster(&cluster_from_request(&updated)?).map_err(|error| {
        error.with_message_prefix("The update was rejected and the cluster is unchanged. ")
    })?;
    let project_number = state.project_number(&parent);
    complete_cluster(&mut updated, Some(&parent), &project_number);
    if state.options.fold_slurm_config_keys {
        fold_config_keys(&mut updated);
    }
    let added = added_pools(live.resource(), &updated);
    let now = now_millis();
    let operation = state.commit(|state| {
        // Only a pool the update adds needs machines the cluster has not got yet.
        let failure = state.take_capacity_failure(&added, &parent)?;
        Ok::<_, ApiError>(state.start_operation(
            OperationKind::Update,
            &name,
            &parent,
            Some((update_mode, updated)),
            failure,
            now,
        ))
    })?;
    Ok(Json(operation.render(now)))
}

/// Refuses a mask naming a path the options refuse, as the service would refuse a path it
/// does not support: `INVALID_ARGUMENT` naming the path.
fn refuse_paths(refused: &[String], mask: Option<&[&str]>) -> Result<(), ApiError> {
    let Some(path) = mask
        .into_iter()
        .flatten()
        .find(|path| refused.iter().any(|r| r == *path))
    else {
        return Ok(());
    };
    Err(ApiError::invalid_argument(format!(
        "Invalid update mask path `{path}`: the field cannot be updated in place."
    )))
}

/// The comma-separated mask, whose paths must be allowed; `None` when the
/// request gives none (or an empty one), which means the mask the body implies.
fn update_mask(mask: Option<&str>) -> Result<Option<Vec<&str>>, ApiError> {
    let Some(mask) = mask.filter(|mask| !mask.trim().is_empty()) else {
        return Ok(None);
    };
    let paths: Vec<&str> = mask.split(',').map(str::trim).collect();
    if paths.iter().any(|path| path.is_empty()) {
        return Err(ApiError::invalid_argument(format!(
            "Invalid updateMask `{mask}`: empty path."
        )));
    }
    check_paths(&paths).map_err(|error| ApiError::invalid_argument(format!("{error}.")))?;
    Ok(Some(paths))
}

fn update_mode(mode: Option<&str>) -> Result<Option<String>, ApiError> {
    match mode {
        None => Ok(None),
        Some(mode) if UPDATE_MODES.contains(&mode) => Ok(Some(mode.to_owned())),
        Some(mode) => Err(ApiError::invalid_argument(format!(
            "Invalid updateMode `{mode}`; expected one of {}.",
            UPDATE_MODES.join(", ")
        ))),
    }
}

pub(crate) async fn delete(
    State(emulator): State<Emulator>,
    path: ClusterPath,
) -> Result<Json<Value>, ApiError> {
    let (parent, name) = cluster_of(path)?;
    let mut state = emulator.lock();
    idle_cluster(&state.store.clusters, &name)?;
    let now = now_millis();
    let operation = state.commit(|state| {
        Ok::<_, ApiError>(state.start_operation(
            OperationKind::Delete,
            &name,
            &parent,
            None,
            None,
            now,
        ))
    })?;
    Ok(Json(operation.render(now)))
}

/// The stored cluster, which must exist and have no operation running (else NOT_FOUND or
/// ABORTED).
fn idle_cluster<'a>(
    clusters: &'a BTreeMap<String, StoredCluster>,
    name: &str,
) -> Result<&'a StoredCluster, ApiError> {
    let live = clusters.get(name).ok_or_else(|| cluster_not_found(name))?;
    refuse_if_busy(live, name)?;
    Ok(live)
}

/// A cluster that an operation holds, or that is in a transitional state (as a
/// test can set without an operation), refuses update and delete
/// with `ABORTED`, as Google answers concurrent changes (AIP-151).
fn refuse_if_busy(cluster: &StoredCluster, name: &str) -> Result<(), ApiError> {
    let state = cluster
        .resource()
        .pointer("/clusterStatus/state")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match &cluster.active_operation {
        Some(operation) => Err(ApiError::new(
            Code::Aborted,
            format!(
                "Cluster {name} has an operation in progress ({operation}); retry when it is done."
            ),
        )),
        None if TRANSITIONAL_STATES.contains(&state) => Err(ApiError::new(
            Code::Aborted,
            format!("Cluster {name} is {state}; retry when it is done."),
        )),
        None => Ok(()),
    }
}

pub(crate) fn cluster_not_found(name: &str) -> ApiError {
    ApiError::not_found(&format!("Cluster {name}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn update_masks_are_optional_but_must_be_allowed() {
        assert_eq!(
            update_mask(Some("labels, node_pools")).unwrap(),
            Some(vec!["labels", "node_pools"])
        );
        assert_eq!(update_mask(None).unwrap(), None);
        assert_eq!(update_mask(Some(" ")).unwrap(), None);
        assert_eq!(
            update_mask(Some("labels,,node_pools")).unwrap_err().message,
            "Invalid updateMask `labels,,node_pools`: empty path."
        );
        assert!(
            update_mask(Some("network"))
                .unwrap_err()
                .message
                .starts_with("update mask path `network` is not updatable")
        );
    }

    #[test]
    fn list_answers_are_written_from_the_clusters_json_texts() {
        let clusters = [r#"{"name":"a"}"#, r#"{"name":"b"}"#];
        let page = list_answer(clusters.into_iter(), Some("t\"1".to_owned()));
        assert_eq!(
            serde_json::from_str::<Value>(&page).unwrap(),
            json!({"modelDevelopmentClusters": [{"name": "a"}, {"name": "b"}], "nextPageToken": "t\"1"})
        );
        assert_eq!(
            list_answer(clusters[..1].iter().copied(), None),
            r#"{"modelDevelopmentClusters":[{"name":"a"}]}"#
        );
        assert_eq!(list_answer(std::iter::empty(), None), "{}");
    }

    #[test]
    fn update_modes_are_checked() {
        assert_eq!(
            update_mode(Some("USER_ONLY")).unwrap().as_deref(),
            Some("USER_ONLY")
        );
        assert_eq!(update_mode(None).unwrap(), None);
        assert!(update_mode(Some("ALL")).is_err());
    }

    #[test]
    fn the_json_of_a_new_cluster_starts_with_its_name() {
        let resource = new_resource("n", json!({"labels": {}}), "t");
        assert_eq!(
            resource.to_string(),
            r#"{"name":"n","labels":{},"createTime":"t","updateTime":"t"}"#
        );
    }
}
