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
    /// The canonical code name: `status` when present (as the service spells it), else the
    /// name of the `google.rpc.Code` number.
    pub fn code_name(&self) -> &str {
        match &self.status {
            Some(name) => name,
            None => Code::of_number(self.code).as_str(),
        }
    }

    /// The canonical code: `status` when present, else the `google.rpc.Code` number.
    pub fn canonical_code(&self) -> Code {
        match &self.status {
            Some(name) => Code::of_name(name),
            None => Code::of_number(self.code),
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

/// Why the service found no machines for a create (or for a pool an update adds): what a
/// node pool's `fallback` alternatives are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Shortage {
    /// The zone or region has no such machines now (a stockout, exhausted reserved
    /// capacity); another time or another machine may work.
    Capacity,
    /// A quota is exhausted; waiting does not raise it.
    Quota,
    /// The machine type is not allowed for VMs there ("machine type … is not allowed for
    /// VM"): a refusal of the configuration, which waiting never changes; another alternative
    /// may still be allowed.
    NotAllowed,
}

impl Shortage {
    /// What an attempt that met it did: `found no capacity`, `found no quota`, `was not allowed`.
    pub fn outcome(self) -> &'static str {
        match self {
            Self::Capacity => "found no capacity",
            Self::Quota => "found no quota",
            Self::NotAllowed => "was not allowed",
        }
    }
}

impl fmt::Display for Shortage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Capacity => "capacity",
            Self::Quota => "quota",
            Self::NotAllowed => "not allowed",
        })
    }
}

/// The texts of capacity failures in the public record (a failed create's operation error):
/// Compute Engine's stockout and exhausted-pool answers, reservations and regions without
/// capacity.
const CAPACITY_TEXTS: &[&str] = &[
    "(state:stockout)",
    "does not have enough resources available",
    "zone_resource_pool_exhausted",
    "insufficient reserved capacity",
    "resources are insufficient in region",
];

/// The text of a machine type the zone does not allow for VMs.
const NOT_ALLOWED_TEXT: &str = "is not allowed for vm";

/// A shortage's service text in a few words, for lines that name several attempts (the whole
/// text is said once elsewhere): `STOCKOUT in us-central1-a`, `quota
/// aiplatform.googleapis.com/custom_model_training_nvidia_h100_gpus exceeded`, `a3-highgpu-8g
/// not allowed for VM`; any other text cut at its first sentence (at most 80 characters).
pub fn shortage_brief(message: &str) -> String {
    let lower = message.to_lowercase();
    let place = quoted_after(message, "zones/").or_else(|| quoted_after(message, "regions/"));
    let at = |what: &str| match &place {
        Some(place) => format!("{what} in {place}"),
        None => what.to_owned(),
    };
    if lower.contains("(state:stockout)") || lower.contains("does not have enough resources") {
        return at("STOCKOUT");
    }
    if lower.contains("zone_resource_pool_exhausted") {
        return at("ZONE_RESOURCE_POOL_EXHAUSTED");
    }
    if let Some(rest) = lower
        .find("exceed quota limits:")
        .map(|i| &message[i + 20..])
    {
        let metric = rest
            .trim()
            .split([' ', ',', ';'])
            .next()
            .unwrap_or_default();
        return format!("quota {} exceeded", metric.trim_end_matches('.'));
    }
    if let Some(quota) = quoted_after(message, "Quota '") {
        return format!("quota {quota} exceeded");
    }
    if let Some(end) = lower.find(NOT_ALLOWED_TEXT) {
        let machine = message[..end].trim().rsplit(' ').next().unwrap_or_default();
        return format!("{machine} not allowed for VM");
    }
    let sentence = message.split(". ").next().unwrap_or(message).trim();
    match sentence.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &sentence[..cut]),
        None => sentence.trim_end_matches('.').to_owned(),
    }
}

/// The text after `start` up to the next quote, slash-free (`zones/us-central1-a'` gives
/// `us-central1-a`).
fn quoted_after<'m>(message: &'m str, start: &str) -> Option<&'m str> {
    let from = message.find(start)? + start.len();
    let rest = &message[from..];
    let end = rest.find(['\'', '"', ' ']).unwrap_or(rest.len());
    Some(&rest[..end]).filter(|found| !found.is_empty() && !found.contains('/'))
}

impl Status {
    /// Whether this refusal is a quota's: a `google.rpc.QuotaFailure` detail, or the quota
    /// message ("Quota 'GPUS_PER_GPU_FAMILY' exceeded. Limit: 0.0 in region …"). A 429
    /// without either is a rate limit, which waiting does fix; so is a quota of requests per
    /// minute or second ("Quota exceeded for quota metric 'Read requests' and limit 'Read
    /// requests per minute'").
    pub fn is_quota_failure(&self) -> bool {
        let has_detail = self.details.iter().any(|detail| {
            detail
                .get("@type")
                .and_then(Value::as_str)
                .is_some_and(|kind| kind.ends_with("google.rpc.QuotaFailure"))
        });
        let message = self.message.to_lowercase();
        // Compute Engine's "Quota 'X' exceeded", and Vertex AI's "The following quota metrics
        // exceed quota limits: aiplatform.googleapis.com/…", often without a detail.
        let names_quota = message.contains("quota") && message.contains("exceed");
        let per_time = message.contains("per minute") || message.contains("per second");
        (has_detail || names_quota) && !per_time
    }

    /// The shortage a failed create's (or update's) operation reports: `RESOURCE_EXHAUSTED`
    /// or a capacity text is capacity, unless it names a quota.
    pub fn operation_shortage(&self) -> Option<Shortage> {
        if self.is_quota_failure() {
            return Some(Shortage::Quota);
        }
        let message = self.message.to_lowercase();
        if message.contains(NOT_ALLOWED_TEXT) {
            return Some(Shortage::NotAllowed);
        }
        let capacity = self.canonical_code() == Code::ResourceExhausted
            || CAPACITY_TEXTS.iter().any(|text| message.contains(text));
        capacity.then_some(Shortage::Capacity)
    }

    /// The shortage a synchronous refusal of a create (or update) reports: a quota failure, or
    /// a capacity text. A bare `RESOURCE_EXHAUSTED` answered at once is a rate limit, not a
    /// shortage.
    pub fn refusal_shortage(&self) -> Option<Shortage> {
        if self.is_quota_failure() {
            return Some(Shortage::Quota);
        }
        let message = self.message.to_lowercase();
        if message.contains(NOT_ALLOWED_TEXT) {
            return Some(Shortage::NotAllowed);
        }
        CAPACITY_TEXTS
            .iter()
            .any(|text| message.contains(text))
            .then_some(Shortage::Capacity)
    }
}

/// A canonical error code (`google.rpc.Code`), as a status names it or numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// 0
    Ok,
    /// 1
    Cancelled,
    /// 2, and any name or number this version does not know.
    Unknown,
    /// 3
    InvalidArgument,
    /// 4
    DeadlineExceeded,
    /// 5
    NotFound,
    /// 6
    AlreadyExists,
    /// 7
    PermissionDenied,
    /// 8
    ResourceExhausted,
    /// 9
    FailedPrecondition,
    /// 10
    Aborted,
    /// 11
    OutOfRange,
    /// 12
    Unimplemented,
    /// 13
    Internal,
    /// 14
    Unavailable,
    /// 15
    DataLoss,
    /// 16
    Unauthenticated,
}

impl Code {
    /// Every code, in number order (the position is the number).
    const ALL: [Self; 17] = [
        Self::Ok,
        Self::Cancelled,
        Self::Unknown,
        Self::InvalidArgument,
        Self::DeadlineExceeded,
        Self::NotFound,
        Self::AlreadyExists,
        Self::PermissionDenied,
        Self::ResourceExhausted,
        Self::FailedPrecondition,
        Self::Aborted,
        Self::OutOfRange,
        Self::Unimplemented,
        Self::Internal,
        Self::Unavailable,
        Self::DataLoss,
        Self::Unauthenticated,
    ];

    /// The code of a `google.rpc.Code` number.
    pub fn of_number(number: i64) -> Self {
        usize::try_from(number)
            .ok()
            .and_then(|n| Self::ALL.get(n).copied())
            .unwrap_or(Self::Unknown)
    }

    /// The code a canonical name (`NOT_FOUND`) spells.
    pub fn of_name(name: &str) -> Self {
        Self::ALL
            .into_iter()
            .find(|code| code.as_str() == name)
            .unwrap_or(Self::Unknown)
    }

    /// The code Google maps an HTTP status to (AIP-193), for answers without a status body.
    pub fn of_http(http_status: u16) -> Self {
        match http_status {
            400 => Self::InvalidArgument,
            401 => Self::Unauthenticated,
            403 => Self::PermissionDenied,
            404 => Self::NotFound,
            409 => Self::Aborted,
            429 => Self::ResourceExhausted,
            499 => Self::Cancelled,
            501 => Self::Unimplemented,
            503 => Self::Unavailable,
            504 => Self::DeadlineExceeded,
            500..=599 => Self::Internal,
            _ => Self::Unknown,
        }
    }

    /// The canonical name, e.g. `NOT_FOUND`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "OK",
            Self::Cancelled => "CANCELLED",
            Self::Unknown => "UNKNOWN",
            Self::InvalidArgument => "INVALID_ARGUMENT",
            Self::DeadlineExceeded => "DEADLINE_EXCEEDED",
            Self::NotFound => "NOT_FOUND",
            Self::AlreadyExists => "ALREADY_EXISTS",
            Self::PermissionDenied => "PERMISSION_DENIED",
            Self::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Self::FailedPrecondition => "FAILED_PRECONDITION",
            Self::Aborted => "ABORTED",
            Self::OutOfRange => "OUT_OF_RANGE",
            Self::Unimplemented => "UNIMPLEMENTED",
            Self::Internal => "INTERNAL",
            Self::Unavailable => "UNAVAILABLE",
            Self::DataLoss => "DATA_LOSS",
            Self::Unauthenticated => "UNAUTHENTICATED",
        }
    }
}

/// The body of an error response: `{"error": {...}}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorEnvelope {
    /// The status.
    pub error: Status,
}

#[cfg(test)]
mod code_tests {
    use super::*;

    #[test]
    fn codes_read_from_numbers_names_and_http_statuses() {
        assert_eq!(Code::of_number(5), Code::NotFound);
        assert_eq!(Code::of_number(16), Code::Unauthenticated);
        assert_eq!(Code::of_number(99), Code::Unknown);
        assert_eq!(Code::of_name("ABORTED"), Code::Aborted);
        assert_eq!(Code::of_name("NOT_A_CODE"), Code::Unknown);
        assert_eq!(Code::of_http(429), Code::ResourceExhausted);
        assert_eq!(Code::of_http(502), Code::Internal);
        for (number, code) in Code::ALL.iter().enumerate() {
            assert_eq!(Code::of_name(code.as_str()), *code);
            assert_eq!(Code::of_number(number as i64), *code);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn status(value: Value) -> Status {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_quota_refusal_is_told_from_a_rate_limit() {
        let quota = status(json!({
            "code": 429, "status": "RESOURCE_EXHAUSTED",
            "message": "Quota 'GPUS_PER_GPU_FAMILY' exceeded. Limit: 0.0 in region us-central1.",
            "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure",
                         "violations": [{"subject": "GPUS_PER_GPU_FAMILY", "description": "…"}]}]
        }));
        let detail_only = status(json!({
            "code": 429, "status": "RESOURCE_EXHAUSTED", "message": "Request refused.",
            "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure"}]
        }));
        let rate_limit = status(json!({
            "code": 429, "status": "RESOURCE_EXHAUSTED", "message": "Too many requests."
        }));
        assert_eq!(quota.refusal_shortage(), Some(Shortage::Quota));
        assert_eq!(detail_only.refusal_shortage(), Some(Shortage::Quota));
        assert_eq!(rate_limit.refusal_shortage(), None);
        assert!(!rate_limit.is_quota_failure());
        let per_minute = status(json!({
            "code": 429, "status": "RESOURCE_EXHAUSTED",
            "message": "Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute' of service 'aiplatform.googleapis.com'.",
            "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure"}]
        }));
        assert!(!per_minute.is_quota_failure());
    }

    #[test]
    fn vertex_ai_s_own_quota_wording_is_a_quota_with_or_without_a_detail() {
        let text = "The following quota metrics exceed quota limits: aiplatform.googleapis.com/custom_model_training_nvidia_h100_gpus";
        let refusal = status(json!({"code": 429, "status": "RESOURCE_EXHAUSTED", "message": text}));
        assert!(refusal.is_quota_failure());
        assert_eq!(refusal.refusal_shortage(), Some(Shortage::Quota));
        let operation = status(json!({"code": 8, "message": text}));
        assert_eq!(operation.operation_shortage(), Some(Shortage::Quota));
        assert_eq!(
            shortage_brief(text),
            "quota aiplatform.googleapis.com/custom_model_training_nvidia_h100_gpus exceeded"
        );
    }

    #[test]
    fn a_shortage_is_told_briefly() {
        assert_eq!(
            shortage_brief(
                "The zone 'projects/253589482369/zones/us-central1-a' does not have enough resources available to fulfill the request. '(resource type:compute)'. (state:STOCKOUT)"
            ),
            "STOCKOUT in us-central1-a"
        );
        assert_eq!(
            shortage_brief(
                "Quota 'GPUS_PER_GPU_FAMILY' exceeded. Limit: 0.0 in region us-central1."
            ),
            "quota GPUS_PER_GPU_FAMILY exceeded"
        );
        assert_eq!(
            shortage_brief("machine type a3-highgpu-8g is not allowed for VM"),
            "a3-highgpu-8g not allowed for VM"
        );
        assert_eq!(shortage_brief("no machines."), "no machines");
        let long = "x".repeat(200);
        assert_eq!(shortage_brief(&long).chars().count(), 81);
    }

    #[test]
    fn a_failed_operation_reports_capacity_by_code_or_by_text() {
        let by_code = status(json!({"code": 8, "message": "no machines"}));
        let stockout = status(json!({"code": 13, "message":
            "The zone 'projects/p/zones/us-central1-b' does not have enough resources available to fulfill the request. '(resource type:compute)'. (state:STOCKOUT)"}));
        let not_allowed = status(
            json!({"code": 3, "message": "machine type a3-highgpu-8g is not allowed for VM"}),
        );
        let bad_request = status(json!({"code": 3, "message": "boot disk too small"}));
        let quota = status(json!({"code": 8, "message": "Quota 'CPUS' exceeded. Limit: 8.0"}));
        assert_eq!(by_code.operation_shortage(), Some(Shortage::Capacity));
        assert_eq!(stockout.operation_shortage(), Some(Shortage::Capacity));
        assert_eq!(not_allowed.operation_shortage(), Some(Shortage::NotAllowed));
        assert_eq!(bad_request.operation_shortage(), None);
        assert_eq!(quota.operation_shortage(), Some(Shortage::Quota));
        assert_eq!(by_code.refusal_shortage(), None);
    }
}
