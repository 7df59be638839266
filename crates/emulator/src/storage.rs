//! The Cloud Storage JSON API subset a lock and a journal need: media upload
//! (`POST /upload/storage/v1/b/{bucket}/o?uploadType=media&name=…`), object metadata and
//! content (`GET /storage/v1/b/{bucket}/o/{object}[?alt=media]`) and delete, each with an
//! optional `ifGenerationMatch` precondition. Errors use the Storage API's own envelope
//! (`{"error":{"code","message","errors":[{"message","domain","reason",…}]}}`), not the
//! AIP-193 one of the cluster API, so the front door converts its own errors (faults,
//! authentication) for these paths too.

use std::collections::HashMap;
use std::time::Instant;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::api_error::{ApiError, Code};
use crate::clock::{now_millis, rfc3339};
use crate::emulator::{Emulator, OBJECT_MUTATION_INTERVAL, State as EmulatorState};
use crate::error::EmulatorError;
use crate::objects::{ObjectError, ObjectWrite, StoredObject};

/// The first path segment of every Storage route.
const STORAGE_PATH_PREFIXES: [&str; 2] = ["/storage/v1/", "/upload/storage/v1/"];

/// The longest object name Cloud Storage accepts, in bytes of UTF-8.
const MAX_OBJECT_NAME_BYTES: usize = 1024;

/// The content type of an upload that does not say.
const DEFAULT_CONTENT_TYPE: &str = "application/octet-stream";

const CONDITION_NOT_MET: &str = "At least one of the pre-conditions you specified did not hold.";
const NO_SUCH_BUCKET: &str = "The specified bucket does not exist.";

type BucketPath = Result<Path<String>, PathRejection>;
type ObjectPath = Result<Path<(String, String)>, PathRejection>;
type QueryParams = Result<Query<HashMap<String, String>>, QueryRejection>;

/// Whether `path` is a Cloud Storage route (its errors take the Storage envelope).
pub(crate) fn is_storage_path(path: &str) -> bool {
    STORAGE_PATH_PREFIXES
        .iter()
        .any(|prefix| path.starts_with(prefix))
}

/// An error answer of the Storage JSON API.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct StorageError {
    status: StatusCode,
    reason: &'static str,
    message: String,
    /// `locationType` and `location` of the offending part of the request.
    location: Option<(&'static str, &'static str)>,
    retry_after_seconds: Option<u64>,
}

impl StorageError {
    fn new(status: StatusCode, reason: &'static str, message: impl Into<String>) -> Self {
        StorageError {
            status,
            reason,
            message: message.into(),
            location: None,
            retry_after_seconds: None,
        }
    }

    fn invalid(message: impl Into<String>) -> Self {
        StorageError::new(StatusCode::BAD_REQUEST, "invalid", message)
    }

    fn condition_not_met() -> Self {
        StorageError {
            location: Some(("header", "If-Match")),
            ..StorageError::new(
                StatusCode::PRECONDITION_FAILED,
                "conditionNotMet",
                CONDITION_NOT_MET,
            )
        }
    }

    fn forbidden(permission: Permission) -> Self {
        let permission = permission.name();
        StorageError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            format!(
                "The caller does not have {permission} access to the Google Cloud Storage object. Permission '{permission}' denied on resource (or it may not exist)."
            ),
        )
    }

    fn of_object(error: ObjectError, bucket: &str, object: &str) -> Self {
        match error {
            ObjectError::NoSuchBucket => {
                StorageError::new(StatusCode::NOT_FOUND, "notFound", NO_SUCH_BUCKET)
            }
            ObjectError::NoSuchObject => StorageError::new(
                StatusCode::NOT_FOUND,
                "notFound",
                format!("No such object: {bucket}/{object}"),
            ),
            ObjectError::ConditionNotMet => StorageError::condition_not_met(),
        }
    }
}

impl From<ApiError> for StorageError {
    /// The front door's errors (injected faults, authentication, internal failures) in the
    /// Storage envelope, with the reasons the Storage API uses for them.
    fn from(error: ApiError) -> Self {
        let (reason, location) = match error.code {
            Code::Unauthenticated => ("required", Some(("header", "Authorization"))),
            Code::PermissionDenied => ("forbidden", None),
            Code::NotFound => ("notFound", None),
            Code::ResourceExhausted => ("rateLimitExceeded", None),
            Code::Unavailable => ("backendError", None),
            Code::Internal => ("internalError", None),
            Code::AlreadyExists | Code::Aborted => ("conflict", None),
            Code::InvalidArgument | Code::FailedPrecondition | Code::Unimplemented => {
                ("invalid", None)
            }
        };
        StorageError {
            status: error.code.http_status(),
            reason,
            message: error.message,
            location,
            retry_after_seconds: error.retry_after_seconds,
        }
    }
}

impl From<EmulatorError> for StorageError {
    fn from(error: EmulatorError) -> Self {
        StorageError::from(ApiError::from(error))
    }
}

impl IntoResponse for StorageError {
    fn into_response(self) -> Response {
        let mut detail = json!({
            "message": self.message,
            "domain": "global",
            "reason": self.reason,
        });
        if let Some((location_type, location)) = self.location {
            detail["locationType"] = Value::from(location_type);
            detail["location"] = Value::from(location);
        }
        let body = json!({
            "error": {
                "code": self.status.as_u16(),
                "message": self.message,
                "errors": [detail],
            }
        });
        let mut response = (self.status, Json(body)).into_response();
        if let Some(seconds) = self.retry_after_seconds {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// The IAM permission a route needs (named in a `403`).
#[derive(Clone, Copy, Debug)]
enum Permission {
    Create,
    Get,
    Delete,
}

impl Permission {
    fn name(self) -> &'static str {
        match self {
            Permission::Create => "storage.objects.create",
            Permission::Get => "storage.objects.get",
            Permission::Delete => "storage.objects.delete",
        }
    }
}

/// `POST /upload/storage/v1/b/{bucket}/o?uploadType=media&name=…[&ifGenerationMatch=G]`.
pub(crate) async fn upload(
    State(emulator): State<Emulator>,
    path: BucketPath,
    query: QueryParams,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<Value>, StorageError> {
    let bucket = path
        .map(|Path(bucket)| bucket)
        .map_err(|rejection| StorageError::invalid(rejection.body_text()))?;
    let params = params_of(query)?;
    match params.get("uploadType").map(String::as_str) {
        Some("media") => {}
        Some(other) => {
            return Err(StorageError::invalid(format!(
                "Upload type `{other}` is not supported by the emulator; use uploadType=media."
            )));
        }
        None => return Err(StorageError::invalid("uploadType is required.")),
    }
    let object = params
        .get("name")
        .ok_or_else(|| StorageError::new(StatusCode::BAD_REQUEST, "required", "Required"))?;
    let write = ObjectWrite {
        content: body.to_vec(),
        content_type: content_type_of(&headers),
        if_generation_match: if_generation_match(&params)?,
        now: now_millis(),
    };
    let mut state = emulator.lock();
    open_bucket(&mut state, &bucket, object, Permission::Create)?;
    check_mutation_rate(&mut state, &bucket, object)?;
    let resource = state.commit(|state| {
        state
            .store
            .storage
            .put(&bucket, object, write)
            .map(|stored| object_resource(&bucket, object, stored))
            .map_err(|error| StorageError::of_object(error, &bucket, object))
    })?;
    Ok(Json(resource))
}

/// `GET /storage/v1/b/{bucket}/o/{object}[?alt=media][&ifGenerationMatch=G]`.
pub(crate) async fn get(
    State(emulator): State<Emulator>,
    path: ObjectPath,
    query: QueryParams,
) -> Result<Response, StorageError> {
    let (bucket, object) = object_path(path)?;
    let params = params_of(query)?;
    let media = match params.get("alt").map(String::as_str) {
        None | Some("json") => false,
        Some("media") => true,
        Some(other) => {
            return Err(StorageError::invalid(format!(
                "Invalid value for alt: `{other}`; use json or media."
            )));
        }
    };
    let wanted = if_generation_match(&params)?;
    let mut state = emulator.lock();
    open_bucket(&mut state, &bucket, &object, Permission::Get)?;
    let stored = state
        .store
        .storage
        .get(&bucket, &object, wanted)
        .map_err(|error| StorageError::of_object(error, &bucket, &object))?;
    Ok(if media {
        media_response(stored)
    } else {
        Json(object_resource(&bucket, &object, stored)).into_response()
    })
}

/// `DELETE /storage/v1/b/{bucket}/o/{object}[?ifGenerationMatch=G]` → `204`.
pub(crate) async fn delete(
    State(emulator): State<Emulator>,
    path: ObjectPath,
    query: QueryParams,
) -> Result<StatusCode, StorageError> {
    let (bucket, object) = object_path(path)?;
    let params = params_of(query)?;
    let wanted = if_generation_match(&params)?;
    let mut state = emulator.lock();
    open_bucket(&mut state, &bucket, &object, Permission::Delete)?;
    check_mutation_rate(&mut state, &bucket, &object)?;
    state.commit(|state| {
        state
            .store
            .storage
            .delete(&bucket, &object, wanted)
            .map_err(|error| StorageError::of_object(error, &bucket, &object))
    })?;
    Ok(StatusCode::NO_CONTENT)
}

fn params_of(query: QueryParams) -> Result<HashMap<String, String>, StorageError> {
    query
        .map(|Query(params)| params)
        .map_err(|rejection| StorageError::invalid(rejection.body_text()))
}

fn object_path(path: ObjectPath) -> Result<(String, String), StorageError> {
    path.map(|Path(names)| names)
        .map_err(|rejection| StorageError::invalid(rejection.body_text()))
}

/// Checks the names and the caller's access, and creates the bucket when buckets are created
/// on first use; a missing bucket is left for the object store to report.
fn open_bucket(
    state: &mut EmulatorState,
    bucket: &str,
    object: &str,
    permission: Permission,
) -> Result<(), StorageError> {
    check_bucket_name(bucket)?;
    if object.is_empty() || object.len() > MAX_OBJECT_NAME_BYTES {
        return Err(StorageError::invalid(format!(
            "The object name must be 1 to {MAX_OBJECT_NAME_BYTES} bytes long."
        )));
    }
    if state.forbidden_buckets.contains(bucket) {
        return Err(StorageError::forbidden(permission));
    }
    if state.options.create_buckets_on_use && state.store.storage.create_bucket(bucket) {
        state.save()?;
    }
    Ok(())
}

/// With [`EmulatorOptions::object_mutation_limit`](crate::EmulatorOptions), refuses a mutation
/// of `bucket/object` asked within [`OBJECT_MUTATION_INTERVAL`] of the previous one; every
/// mutation that reaches the object counts, whether its precondition holds or not.
fn check_mutation_rate(
    state: &mut EmulatorState,
    bucket: &str,
    object: &str,
) -> Result<(), StorageError> {
    if !state.options.object_mutation_limit {
        return Ok(());
    }
    let now = Instant::now();
    let key = (bucket.to_owned(), object.to_owned());
    if let Some(last) = state.object_mutations.get(&key)
        && now.duration_since(*last) < OBJECT_MUTATION_INTERVAL
    {
        return Err(StorageError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rateLimitExceeded",
            format!(
                "The object {bucket}/{object} exceeded the rate limit for object mutation operations (create, update, and delete). Please reduce your request rate. See https://cloud.google.com/storage/docs/gcs429."
            ),
        ));
    }
    state.object_mutations.insert(key, now);
    Ok(())
}

/// Cloud Storage's rule: 3 to 63 characters of lowercase letters, digits, `-`, `_` and `.`,
/// starting and ending with a letter or digit. The executor's storage client checks the same
/// rule; this copy is deliberate: the emulator depends on no crate of ours, so that a mistake
/// in the client is caught by a test instead of being mirrored here.
fn check_bucket_name(bucket: &str) -> Result<(), StorageError> {
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c);
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let valid = (3..=63).contains(&bucket.len())
        && bucket.chars().all(allowed)
        && edge(bucket.chars().next())
        && edge(bucket.chars().last());
    if valid {
        Ok(())
    } else {
        Err(StorageError::invalid(format!(
            "Invalid bucket name: '{bucket}'"
        )))
    }
}

/// `ifGenerationMatch` as an int64, if given.
fn if_generation_match(params: &HashMap<String, String>) -> Result<Option<i64>, StorageError> {
    params
        .get("ifGenerationMatch")
        .map(|value| {
            value.parse::<i64>().map_err(|_| {
                StorageError::invalid(format!("Invalid value for ifGenerationMatch: '{value}'"))
            })
        })
        .transpose()
}

fn content_type_of(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .filter(|value| !value.is_empty())
        .unwrap_or(DEFAULT_CONTENT_TYPE)
        .to_owned()
}

/// The object resource (`storage#object`); int64 fields are strings, as proto3 JSON writes them.
fn object_resource(bucket: &str, name: &str, stored: &StoredObject) -> Value {
    let written = rfc3339(stored.written_at);
    json!({
        "kind": "storage#object",
        "id": format!("{bucket}/{name}/{}", stored.generation),
        "name": name,
        "bucket": bucket,
        "generation": stored.generation.to_string(),
        "metageneration": "1",
        "contentType": stored.content_type,
        "storageClass": "STANDARD",
        "size": stored.content.len().to_string(),
        "timeCreated": written,
        "updated": written,
    })
}

/// `alt=media`: the content, with the generation in `x-goog-generation`.
fn media_response(stored: &StoredObject) -> Response {
    let content_type = HeaderValue::from_str(&stored.content_type)
        .unwrap_or_else(|_| HeaderValue::from_static(DEFAULT_CONTENT_TYPE));
    let mut response = (StatusCode::OK, stored.content.clone()).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, content_type);
    headers.insert("x-goog-generation", HeaderValue::from(stored.generation));
    headers.insert("x-goog-metageneration", HeaderValue::from_static("1"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_names_follow_cloud_storage_rules() {
        for good in ["abc", "team-infra", "a.b_c-1", &"a".repeat(63)] {
            assert!(check_bucket_name(good).is_ok(), "{good}");
        }
        for bad in [
            "ab",
            "Team",
            "-abc",
            "abc-",
            "a b c",
            "ab/c",
            &"a".repeat(64),
        ] {
            assert!(check_bucket_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_storage_paths_take_the_storage_envelope() {
        assert!(is_storage_path("/storage/v1/b/x/o/y"));
        assert!(is_storage_path("/upload/storage/v1/b/x/o"));
        assert!(!is_storage_path("/v1beta1/projects/p"));
    }
}
