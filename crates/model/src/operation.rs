//! Long-running operations (AIP-151) and Google's error status (AIP-193).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A long-running operation returned by Create, Update and Delete.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Operation {
    /// `projects/{NUMBER}/locations/{R}/operations/{ID}`: always used verbatim.
    #[serde(default)]
    pub name: String,
    /// Operation metadata (`genericMetadata`, `progressMessage`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// Absent means not done.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub done: bool,
    /// Set when the operation failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Status>,
    /// Set when the operation succeeded: the cluster, or `google.protobuf.Empty` for a delete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

impl Operation {
    /// The human-readable progress the service reports, if any.
    pub fn progress_message(&self) -> Option<&str> {
        self.metadata.as_ref()?.get("progressMessage")?.as_str()
    }

    /// The finished operation's response read as a cluster, if it is one.
    pub fn response_cluster(&self) -> Option<crate::Cluster> {
        let response = self.response.as_ref()?;
        let kind = response.get("@type").and_then(Value::as_str).unwrap_or("");
        if kind.ends_with(".Empty") {
            return None;
        }
        let mut body = response.clone();
        if let Value::Object(map) = &mut body {
            map.remove("@type");
        }
        serde_json::from_value(body).ok()
    }
}

/// `google.rpc.Status`, as found in an operation's `error` and in error responses.
///
/// In an error response `code` is the HTTP status and `status` the canonical name; in an
/// operation `code` is the `google.rpc.Code` number and `status` is usually absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// HTTP status or `google.rpc.Code` number.
    #[serde(default, deserialize_with = "crate::int::required")]
    pub code: i64,
    /// Developer-facing message.
    #[serde(default)]
    pub message: String,
    /// Canonical code name such as `ALREADY_EXISTS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Typed details.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<Value>,
}

impl Status {
    /// The canonical code name: `status` when present, else derived from a `google.rpc.Code`.
    pub fn code_name(&self) -> &str {
        match &self.status {
            Some(name) => name,
            None => rpc_code_name(self.code),
        }
    }
}

/// One `google.rpc.BadRequest.FieldViolation` of a status's details: the field a request got
/// wrong (`model_development_cluster.node_pools[1].boot_disk.boot_disk_type`, snake_case with
/// request-order indexes) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldViolation {
    /// The field's path in the request.
    pub field: String,
    /// What is wrong with it.
    pub description: String,
}

impl Status {
    /// The field violations of every `google.rpc.BadRequest` detail, in order.
    pub fn field_violations(&self) -> Vec<FieldViolation> {
        self.details
            .iter()
            .filter(|detail| {
                detail
                    .get("@type")
                    .and_then(Value::as_str)
                    .is_some_and(|kind| kind.ends_with("google.rpc.BadRequest"))
            })
            .filter_map(|detail| detail.get("fieldViolations")?.as_array())
            .flatten()
            .filter_map(|violation| {
                Some(FieldViolation {
                    field: violation.get("field")?.as_str()?.to_owned(),
                    description: violation
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                })
            })
            .collect()
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.code_name(), self.code, self.message)
    }
}

/// The name of a `google.rpc.Code` number.
pub fn rpc_code_name(code: i64) -> &'static str {
    match code {
        0 => "OK",
        1 => "CANCELLED",
        2 => "UNKNOWN",
        3 => "INVALID_ARGUMENT",
        4 => "DEADLINE_EXCEEDED",
        5 => "NOT_FOUND",
        6 => "ALREADY_EXISTS",
        7 => "PERMISSION_DENIED",
        8 => "RESOURCE_EXHAUSTED",
        9 => "FAILED_PRECONDITION",
        10 => "ABORTED",
        11 => "OUT_OF_RANGE",
        12 => "UNIMPLEMENTED",
        13 => "INTERNAL",
        14 => "UNAVAILABLE",
        15 => "DATA_LOSS",
        16 => "UNAUTHENTICATED",
        _ => "UNKNOWN",
    }
}

/// The body of an error response: `{"error": {...}}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorEnvelope {
    /// The status.
    pub error: Status,
}
