//! Handlers for long-running operations: `GET /v1/{name}` and the long poll
//! `POST /v1/{name}:wait?timeout=…`, which blocks until the operation is done
//! or the (capped) timeout passes, and can be switched to `501 UNIMPLEMENTED`.

use std::collections::HashMap;
use std::time::Duration;

use axum::Json;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use serde_json::Value;
use tokio::time::Instant;

use crate::api_error::{ApiError, Code};
use crate::clock::now_millis;
use crate::emulator::Emulator;
use crate::routes::{path_params, query_params, split_custom_method};

/// The longest a `:wait` blocks, whatever timeout it asks for.
const MAX_WAIT: Duration = Duration::from_secs(30);
/// `:wait` sleeps until the operation's finish time or its deadline, so a
/// few rounds always suffice; the bound only guards against clock oddities.
const MAX_WAIT_ROUNDS: usize = 64;

type OperationPath = Result<Path<(String, String, String)>, PathRejection>;

fn operation_name(project: &str, location: &str, operation_id: &str) -> String {
    format!("projects/{project}/locations/{location}/operations/{operation_id}")
}

pub(crate) async fn get(
    State(emulator): State<Emulator>,
    path: OperationPath,
) -> Result<Json<Value>, ApiError> {
    let (project, location, operation_id) = path_params(path)?;
    let name = operation_name(&project, &location, &operation_id);
    current_operation(&emulator, &name).map(|(operation, _)| Json(operation))
}

/// `POST /v1/{name}:VERB`; only `wait` exists.
pub(crate) async fn operation_method(
    State(emulator): State<Emulator>,
    path: OperationPath,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let (project, location, segment) = path_params(path)?;
    let (operation_id, verb) = split_custom_method(&segment);
    let name = operation_name(&project, &location, operation_id);
    if verb != Some("wait") {
        return Err(ApiError::new(
            Code::NotFound,
            format!("Unknown method on operation {segment}."),
        ));
    }
    if emulator.lock().options.wait_unimplemented {
        return Err(ApiError::new(
            Code::Unimplemented,
            "Method not implemented: operations.wait.",
        ));
    }
    let params = query_params(query)?;
    let timeout = wait_timeout(params.get("timeout").map(String::as_str))?;
    wait(&emulator, &name, timeout).await.map(Json)
}

/// The operation as it is now, and how long until it is due to finish (zero when done).
fn current_operation(emulator: &Emulator, name: &str) -> Result<(Value, Duration), ApiError> {
    let state = emulator.lock();
    let now = now_millis();
    let operation = state
        .store
        .operations
        .get(name)
        .ok_or_else(|| ApiError::not_found(&format!("Operation {name}")))?;
    let remaining = if operation.is_done() {
        Duration::ZERO
    } else {
        Duration::from_millis(
            u64::try_from(operation.finishes_at - now)
                .unwrap_or(0)
                .max(1),
        )
    };
    Ok((operation.render(now), remaining))
}

async fn wait(emulator: &Emulator, name: &str, timeout: Duration) -> Result<Value, ApiError> {
    let deadline = Instant::now() + timeout;
    let mut latest = Value::Null;
    for _ in 0..MAX_WAIT_ROUNDS {
        let (operation, remaining) = current_operation(emulator, name)?;
        let left = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() || left.is_zero() {
            return Ok(operation);
        }
        latest = operation;
        tokio::time::sleep(remaining.min(left)).await;
    }
    Ok(latest)
}

/// Parses a protobuf duration such as `30s` or `0.5s`, capped at [`MAX_WAIT`];
/// absent means the cap.
fn wait_timeout(timeout: Option<&str>) -> Result<Duration, ApiError> {
    let Some(text) = timeout else {
        return Ok(MAX_WAIT);
    };
    let seconds = text
        .strip_suffix('s')
        .filter(|number| {
            !number.is_empty() && number.chars().all(|c| c.is_ascii_digit() || c == '.')
        })
        .and_then(|number| number.parse::<f64>().ok())
        .filter(|seconds| seconds.is_finite())
        .ok_or_else(|| {
            ApiError::invalid_argument(format!(
                "Invalid timeout `{text}`: expected seconds such as `30s` or `0.5s`."
            ))
        })?;
    Ok(Duration::from_secs_f64(seconds.min(MAX_WAIT.as_secs_f64())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_timeouts_are_parsed_and_capped() {
        assert_eq!(
            wait_timeout(Some("0.5s")).unwrap(),
            Duration::from_millis(500)
        );
        assert_eq!(wait_timeout(Some("3s")).unwrap(), Duration::from_secs(3));
        assert_eq!(wait_timeout(Some("3600s")).unwrap(), MAX_WAIT);
        assert_eq!(wait_timeout(None).unwrap(), MAX_WAIT);
        for bad in ["30", "s", "-1s", "1ms", "1e3s"] {
            assert!(wait_timeout(Some(bad)).is_err(), "{bad}");
        }
    }
}
