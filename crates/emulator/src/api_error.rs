//! Google's error model as the emulator answers it: the canonical codes it
//! uses, and `ApiError`, which renders as the AIP-193 JSON envelope
//! `{"error":{"code","message","status","details"}}` with the matching HTTP status;
//! a refused request body also carries a `google.rpc.BadRequest` detail listing
//! each field at fault, and an exceeded quota a `google.rpc.QuotaFailure` detail.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The canonical `google.rpc.Code` values the emulator produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Code {
    InvalidArgument,
    FailedPrecondition,
    Unauthenticated,
    PermissionDenied,
    NotFound,
    AlreadyExists,
    Aborted,
    ResourceExhausted,
    Internal,
    Unimplemented,
    Unavailable,
}

impl Code {
    /// The HTTP status Google maps this code to.
    pub(crate) fn http_status(self) -> StatusCode {
        match self {
            Code::InvalidArgument | Code::FailedPrecondition => StatusCode::BAD_REQUEST,
            Code::Unauthenticated => StatusCode::UNAUTHORIZED,
            Code::PermissionDenied => StatusCode::FORBIDDEN,
            Code::NotFound => StatusCode::NOT_FOUND,
            Code::AlreadyExists | Code::Aborted => StatusCode::CONFLICT,
            Code::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
            Code::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            Code::Unimplemented => StatusCode::NOT_IMPLEMENTED,
            Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The canonical name written in the envelope's `status`.
    pub(crate) fn canonical_name(self) -> &'static str {
        match self {
            Code::InvalidArgument => "INVALID_ARGUMENT",
            Code::FailedPrecondition => "FAILED_PRECONDITION",
            Code::Unauthenticated => "UNAUTHENTICATED",
            Code::PermissionDenied => "PERMISSION_DENIED",
            Code::NotFound => "NOT_FOUND",
            Code::AlreadyExists => "ALREADY_EXISTS",
            Code::Aborted => "ABORTED",
            Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Code::Internal => "INTERNAL",
            Code::Unimplemented => "UNIMPLEMENTED",
            Code::Unavailable => "UNAVAILABLE",
        }
    }

    /// The `google.rpc.Code` number, used in a failed operation's `error.code`.
    pub(crate) fn rpc_number(self) -> u16 {
        match self {
            Code::InvalidArgument => 3,
            Code::FailedPrecondition => 9,
            Code::Unauthenticated => 16,
            Code::PermissionDenied => 7,
            Code::NotFound => 5,
            Code::AlreadyExists => 6,
            Code::Aborted => 10,
            Code::ResourceExhausted => 8,
            Code::Internal => 13,
            Code::Unimplemented => 12,
            Code::Unavailable => 14,
        }
    }

    /// The code Google uses for an HTTP status the fault injector can produce.
    pub(crate) fn for_fault_status(status: u16) -> Option<Code> {
        match status {
            401 => Some(Code::Unauthenticated),
            429 => Some(Code::ResourceExhausted),
            500 => Some(Code::Internal),
            503 => Some(Code::Unavailable),
            _ => None,
        }
    }
}

/// The `@type` of the detail that lists the fields a request got wrong.
const BAD_REQUEST_TYPE: &str = "type.googleapis.com/google.rpc.BadRequest";

/// The `@type` of the detail that names the quota a request exceeded.
const QUOTA_FAILURE_TYPE: &str = "type.googleapis.com/google.rpc.QuotaFailure";

/// One `violations` entry of a `google.rpc.QuotaFailure` detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct QuotaViolation {
    /// On what the quota check failed, e.g. `project:my-proj`.
    pub(crate) subject: String,
    pub(crate) description: String,
}

/// One `fieldViolations` entry of a `google.rpc.BadRequest` detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FieldViolation {
    /// The request field in proto form, e.g.
    /// `model_development_cluster.node_pools[1].boot_disk.boot_disk_type`.
    pub(crate) field: String,
    pub(crate) description: String,
}

/// An error answer of the emulated API.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ApiError {
    pub(crate) code: Code,
    pub(crate) message: String,
    pub(crate) retry_after_seconds: Option<u64>,
    /// Rendered as a `google.rpc.BadRequest` detail when not empty.
    pub(crate) field_violations: Vec<FieldViolation>,
    /// Rendered as a `google.rpc.QuotaFailure` detail when not empty.
    pub(crate) quota_violations: Vec<QuotaViolation>,
}

impl ApiError {
    pub(crate) fn new(code: Code, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
            retry_after_seconds: None,
            field_violations: Vec::new(),
            quota_violations: Vec::new(),
        }
    }

    pub(crate) fn invalid_argument(message: impl Into<String>) -> Self {
        ApiError::new(Code::InvalidArgument, message)
    }

    /// `INVALID_ARGUMENT` for a request with `violations`, worded as the service words a
    /// synchronous refusal: `List of found errors:\t1.Field: F; Message: D\t2.Field: …\t`.
    pub(crate) fn field_violations(violations: Vec<FieldViolation>) -> Self {
        let listed: String = violations
            .iter()
            .enumerate()
            .map(|(index, violation)| {
                format!(
                    "{}.Field: {}; Message: {}\t",
                    index + 1,
                    violation.field,
                    violation.description
                )
            })
            .collect();
        ApiError {
            field_violations: violations,
            ..ApiError::invalid_argument(format!("List of found errors:\t{listed}"))
        }
    }

    /// `RESOURCE_EXHAUSTED` for a request that would exceed a quota, `violation` naming it.
    pub(crate) fn quota_failure(message: impl Into<String>, violation: QuotaViolation) -> Self {
        ApiError {
            quota_violations: vec![violation],
            ..ApiError::new(Code::ResourceExhausted, message)
        }
    }

    /// The same error with `prefix` before its message; the field violations are kept.
    pub(crate) fn with_message_prefix(mut self, prefix: &str) -> Self {
        self.message = format!("{prefix}{}", self.message);
        self
    }

    pub(crate) fn not_found(what: &str) -> Self {
        ApiError::new(Code::NotFound, format!("{what} not found."))
    }

    pub(crate) fn with_retry_after(mut self, seconds: u64) -> Self {
        self.retry_after_seconds = Some(seconds);
        self
    }

    /// The envelope's `details`: a detail for each kind of violation the error lists.
    fn details(&self) -> Vec<Value> {
        let mut details = Vec::new();
        if !self.field_violations.is_empty() {
            let violations: Vec<_> = self
                .field_violations
                .iter()
                .map(|v| json!({"field": v.field, "description": v.description}))
                .collect();
            details.push(json!({"@type": BAD_REQUEST_TYPE, "fieldViolations": violations}));
        }
        if !self.quota_violations.is_empty() {
            let violations: Vec<_> = self
                .quota_violations
                .iter()
                .map(|v| json!({"subject": v.subject, "description": v.description}))
                .collect();
            details.push(json!({"@type": QUOTA_FAILURE_TYPE, "violations": violations}));
        }
        details
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.code.http_status();
        let details = self.details();
        let body = json!({
            "error": {
                "code": status.as_u16(),
                "message": self.message,
                "status": self.code.canonical_name(),
                "details": details,
            }
        });
        let mut response = (status, axum::Json(body)).into_response();
        if let Some(seconds) = self.retry_after_seconds {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}
