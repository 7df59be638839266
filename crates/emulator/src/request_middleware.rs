//! What happens to every request before a handler sees it, in order: it is
//! logged, the configured latency and the fault spec's jitter are added, the
//! fault dice (when the spec applies to the request's location) decide whether it is answered with an injected error or dropped,
//! the bearer token is checked, and a request for a refused location is refused. The answered status is written back into
//! the log. Errors answered here take the envelope of the API the path belongs
//! to (Cloud Storage's for its routes, AIP-193 for the cluster API).

use std::time::{Duration, Instant};

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::admin::ADMIN_PREFIX;
use crate::api_error::{ApiError, Code};
use crate::emulator::{Emulator, RecordedRequest};
use crate::faults::RequestFault;
use crate::preflight::is_preflight_path;
use crate::refusals;
use crate::storage::{StorageError, is_storage_path};

/// Request bodies above this size are refused.
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// Marks a response whose connection must be closed without sending it;
/// `Emulator::serve` turns it into a dropped connection.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DropConnection;

/// How early tokio's timer is asked to wake [`wait`]: it counts whole milliseconds and wakes
/// up to about two of them late.
const TIMER_SLACK: Duration = Duration::from_millis(2);

/// Waits `latency`, to a fraction of a millisecond. tokio's timer alone answers a 50 ms wait
/// after about 51.7 ms, which a benchmark against the emulator would count against the
/// client; so it wakes a little early and the OS's sleep, on a blocking thread, waits the rest
/// (never more than the slack, so a cancelled request holds no thread for long).
async fn wait(latency: Duration) {
    let deadline = Instant::now() + latency;
    if let Some(coarse) = latency.checked_sub(TIMER_SLACK) {
        tokio::time::sleep(coarse).await;
    }
    let rest = deadline.saturating_duration_since(Instant::now());
    if !rest.is_zero() {
        // The sleep cannot fail; a runtime shutting down just stops waiting.
        let _ = tokio::task::spawn_blocking(move || std::thread::sleep(rest)).await;
    }
}

pub(crate) async fn every_request(
    State(emulator): State<Emulator>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let storage = is_storage_path(parts.uri.path());
    let body = to_bytes(body, MAX_BODY_BYTES).await;
    let recorded = RecordedRequest {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().unwrap_or_default().to_owned(),
        body: body
            .as_ref()
            .ok()
            .and_then(|bytes| serde_json::from_slice(bytes).ok()),
        status: 0,
    };
    // The admin API controls the emulator; like the test-control methods, it is never faulted.
    // Preflight's reads are chosen by the test through the preflight world, not by dice.
    let preflight = is_preflight_path(parts.uri.path());
    let faulted = !parts.uri.path().starts_with(ADMIN_PREFIX)
        && !preflight
        && emulator
            .lock()
            .dice
            .spec()
            .applies_to_path(parts.uri.path());
    let (number, latency) = {
        let mut state = emulator.lock();
        let jitter = if faulted {
            state.dice.roll_jitter()
        } else {
            Duration::ZERO
        };
        (
            state.record_request(recorded),
            state.options.latency + jitter,
        )
    };
    if !latency.is_zero() {
        wait(latency).await;
    }
    let fault = if faulted {
        emulator.lock().dice.roll_request()
    } else {
        None
    };
    let response = match (fault, body) {
        (Some(RequestFault::Drop), _) => dropped_connection(),
        (Some(RequestFault::Error(error)), _) => error_response(error, storage),
        (None, Err(error)) => error_response(
            ApiError::invalid_argument(format!("Cannot read the request body: {error}.")),
            storage,
        ),
        (None, Ok(bytes)) => match authenticate(&parts.headers, &emulator).and_then(|()| {
            if preflight {
                Ok(())
            } else {
                refused_location(&emulator, parts.method.as_str(), parts.uri.path())
            }
        }) {
            Err(error) => error_response(error, storage),
            Ok(()) => {
                next.run(Request::from_parts(parts, Body::from(bytes)))
                    .await
            }
        },
    };
    if response.extensions().get::<DropConnection>().is_none() {
        emulator
            .lock()
            .record_status(number, response.status().as_u16());
    }
    response
}

/// `Err` with the refusal when the request is for one of the refused locations.
fn refused_location(emulator: &Emulator, method: &str, path: &str) -> Result<(), ApiError> {
    let state = emulator.lock();
    match refusals::refusal(&state.options.refused_locations, method, path) {
        Some(refusal) => Err(refusal),
        None => Ok(()),
    }
}

/// An error in the envelope of the API the request was for.
fn error_response(error: ApiError, storage: bool) -> Response {
    if storage {
        StorageError::from(error).into_response()
    } else {
        error.into_response()
    }
}

/// The answer standing in for a dropped connection when the router is served
/// by something other than `Emulator::serve`.
fn dropped_connection() -> Response {
    let mut response = ApiError::new(
        Code::Unavailable,
        "The connection was dropped (injected fault).",
    )
    .into_response();
    response.extensions_mut().insert(DropConnection);
    response
}

/// Requires `Authorization: Bearer TOKEN`, with the configured token if there is one.
fn authenticate(headers: &HeaderMap, emulator: &Emulator) -> Result<(), ApiError> {
    let unauthenticated = |detail: &str| {
        ApiError::new(
            Code::Unauthenticated,
            format!(
                "Request had invalid authentication credentials: {detail}. Expected an OAuth 2 access token."
            ),
        )
    };
    let value = headers
        .get(header::AUTHORIZATION)
        .ok_or_else(|| unauthenticated("the Authorization header is missing"))?
        .to_str()
        .map_err(|_| unauthenticated("the Authorization header is not text"))?;
    let token = value
        .split_once(' ')
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
        .filter(|token| !token.is_empty())
        .ok_or_else(|| unauthenticated("the Authorization header is not `Bearer TOKEN`"))?;
    match &emulator.lock().options.required_token {
        Some(required) if required != token => {
            Err(unauthenticated("the bearer token is not the expected one"))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The latency is a floor the emulator promises: waking early, on tokio's timer, must not
    /// make a request answer before it.
    #[tokio::test]
    async fn the_wait_lasts_at_least_the_latency() {
        for millis in [1, 2, 3, 25] {
            let latency = Duration::from_millis(millis);
            let started = Instant::now();
            wait(latency).await;
            assert!(started.elapsed() >= latency, "{millis} ms");
        }
    }
}
