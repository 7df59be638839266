//! Capacity failures: creates, and updates adding a node pool, that the service answers as it
//! does when a machine type cannot be had. Real answers (a public team's recorded runs) come in
//! three kinds: a create's operation failing about 20 s after the POST with code 8
//! `RESOURCE_EXHAUSTED` and Compute Engine's stockout text, the cluster left registered in
//! `ERROR`; a create refused at once with `429 RESOURCE_EXHAUSTED`, nothing registered — in
//! Vertex AI's words ("The following quota metrics exceed quota limits: …", no detail, as public
//! Vertex AI reports show it) or in Compute Engine's with a `google.rpc.QuotaFailure` detail;
//! and an operation failing with code 3 "machine type M is not allowed for VM", the cluster
//! again left in `ERROR`. A create asks only for each pool's static nodes (`minNodeCount`; the
//! *Flex Start* and *Cluster resiliency* pages), so a stockout or a quota fails it only through a
//! pool that asks for some.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::api_error::{ApiError, Code, QuotaViolation};
use crate::resource::{Parent, has_static_nodes};

/// How a matched request fails.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapacityFailureKind {
    /// Accepted; the operation fails with code 8 and the stockout text.
    #[default]
    Stockout,
    /// Refused at once: `429 RESOURCE_EXHAUSTED` in Vertex AI's words, without a detail.
    Quota,
    /// Refused at once: `429 RESOURCE_EXHAUSTED` in Compute Engine's words ("Quota '…'
    /// exceeded"), with a `google.rpc.QuotaFailure` detail.
    ComputeQuota,
    /// Accepted; the operation fails with code 3 "machine type M is not allowed for VM".
    NotAllowed,
}

impl CapacityFailureKind {
    const ALL: [CapacityFailureKind; 4] = [
        CapacityFailureKind::Stockout,
        CapacityFailureKind::Quota,
        CapacityFailureKind::ComputeQuota,
        CapacityFailureKind::NotAllowed,
    ];

    /// The name written in JSON and on the command line.
    fn name(self) -> &'static str {
        match self {
            CapacityFailureKind::Stockout => "stockout",
            CapacityFailureKind::Quota => "quota",
            CapacityFailureKind::ComputeQuota => "compute-quota",
            CapacityFailureKind::NotAllowed => "not-allowed",
        }
    }

    fn is_stockout(&self) -> bool {
        *self == CapacityFailureKind::Stockout
    }
}

/// Creates whose node pool uses `machine_type` (in `zone`, when given), and updates adding
/// such a pool, fail as `kind` says; with `times`, only that many of them, after which the
/// entry is gone. Written `[KIND:]MACHINE_TYPE[@ZONE][/TIMES]`
/// (`quota:a4-highgpu-8g@us-central1-b/1`); the JSON `{"machineType", "zone"}` without a kind
/// is a stockout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CapacityFailure {
    /// The machine type that cannot be had, e.g. `a4-highgpu-8g`.
    pub machine_type: String,
    /// Only pools in this zone fail; `None`: every zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// How the request fails; omitted in answers when it is a stockout.
    #[serde(default, skip_serializing_if = "CapacityFailureKind::is_stockout")]
    pub kind: CapacityFailureKind,
    /// How many more matching requests fail; `None`: every one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
}

/// A capacity failure that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "bad capacity failure `{text}`: write [KIND:]MACHINE_TYPE[@ZONE][/TIMES], KIND one of \
     stockout, quota, compute-quota, not-allowed, TIMES at least 1"
)]
pub struct CapacityFailureError {
    text: String,
}

impl FromStr for CapacityFailureKind {
    type Err = ();

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.name() == text)
            .ok_or(())
    }
}

impl FromStr for CapacityFailure {
    type Err = CapacityFailureError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || CapacityFailureError {
            text: text.to_owned(),
        };
        let (kind, rest) = match text.split_once(':') {
            Some((kind, rest)) => (kind.parse().map_err(|()| bad())?, rest),
            None => (CapacityFailureKind::Stockout, text),
        };
        let (place, times) = match rest.split_once('/') {
            Some((place, times)) => (place, Some(times.parse::<u32>().map_err(|_| bad())?)),
            None => (rest, None),
        };
        let (machine_type, zone) = match place.split_once('@') {
            Some((machine_type, zone)) => (machine_type, Some(zone)),
            None => (place, None),
        };
        let well_formed = |part: &str| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        };
        if !well_formed(machine_type)
            || zone.is_some_and(|zone| !well_formed(zone))
            || times == Some(0)
        {
            return Err(bad());
        }
        Ok(CapacityFailure {
            machine_type: machine_type.to_owned(),
            zone: zone.map(str::to_owned),
            kind,
            times,
        })
    }
}

impl fmt::Display for CapacityFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.kind.is_stockout() {
            write!(f, "{}:", self.kind.name())?;
        }
        f.write_str(&self.machine_type)?;
        if let Some(zone) = &self.zone {
            write!(f, "@{zone}")?;
        }
        if let Some(times) = self.times {
            write!(f, "/{times}")?;
        }
        Ok(())
    }
}

impl CapacityFailure {
    /// Whether a pool of `machine_type` in `pool_zone` fails, `asks_for_machines` when the
    /// create asks for machines for it (static nodes); an entry with no times left matches
    /// nothing. A stockout or a quota needs machines asked for: a pool that starts empty gets
    /// none at create, so it cannot run short then (its dynamic nodes are made when jobs pend).
    /// A machine type not allowed is a refusal of the configuration, whatever the counts.
    fn matches(
        &self,
        machine_type: &str,
        pool_zone: Option<&str>,
        asks_for_machines: bool,
    ) -> bool {
        self.times != Some(0)
            && (asks_for_machines || self.kind == CapacityFailureKind::NotAllowed)
            && self.machine_type == machine_type
            && self
                .zone
                .as_deref()
                .is_none_or(|zone| Some(zone) == pool_zone)
    }
}

/// What the first of `pools` (in request order) that one of `failures` matches does to its
/// create or update under `parent`: `Err` refuses the request at once (quota), `Ok(Some)` is
/// the error its operation will fail with, `Ok(None)` no failure. The matched entry uses up
/// one of its `times`, and goes when none is left.
pub(crate) fn take_capacity_failure<'a>(
    failures: &mut Vec<CapacityFailure>,
    pools: impl IntoIterator<Item = &'a Value>,
    parent: &Parent,
) -> Result<Option<Value>, ApiError> {
    let Some((index, machine_type, pool_zone)) = pools.into_iter().find_map(|pool| {
        let machine_type = pool
            .pointer("/machineSpec/machineType")
            .and_then(Value::as_str)?;
        let pool_zone = pool.get("zone").and_then(Value::as_str);
        let asks_for_machines = has_static_nodes(pool);
        let index = failures
            .iter()
            .position(|failure| failure.matches(machine_type, pool_zone, asks_for_machines))?;
        Some((index, machine_type, pool_zone))
    }) else {
        return Ok(None);
    };
    let failure = use_once(failures, index);
    let zone = pool_zone.or(failure.zone.as_deref());
    match failure.kind {
        CapacityFailureKind::Stockout => Ok(Some(operation_error(
            Code::ResourceExhausted,
            &stockout_message(parent, zone),
        ))),
        CapacityFailureKind::NotAllowed => Ok(Some(operation_error(
            Code::InvalidArgument,
            &format!("machine type {machine_type} is not allowed for VM"),
        ))),
        CapacityFailureKind::Quota => {
            Err(ApiError::new(Code::ResourceExhausted, VERTEX_QUOTA_MESSAGE))
        }
        CapacityFailureKind::ComputeQuota => Err(quota_exceeded(parent)),
    }
}

/// The entry at `index`, with one of its `times` used up; removed from `failures` when that
/// was its last.
fn use_once(failures: &mut Vec<CapacityFailure>, index: usize) -> CapacityFailure {
    let entry = &mut failures[index];
    let used = entry.clone();
    match &mut entry.times {
        Some(1) => {
            failures.remove(index);
        }
        Some(times) => *times -= 1,
        None => {}
    }
    used
}

fn operation_error(code: Code, message: &str) -> Value {
    json!({"code": code.rpc_number(), "message": message, "details": []})
}

/// Compute Engine's stockout text for `zone`; for a pool that names no zone (the service
/// picks one) the same sentence about the region.
pub(crate) fn stockout_message(parent: &Parent, zone: Option<&str>) -> String {
    let project = &parent.project;
    let place = match zone {
        Some(zone) => format!("zone 'projects/{project}/zones/{zone}'"),
        None => format!("region 'projects/{project}/regions/{}'", parent.location),
    };
    format!(
        "The {place} does not have enough resources available to fulfill the request. \
         '(resource type:compute)'. (state:STOCKOUT)"
    )
}

/// Vertex AI's refusal of a create for quota, as public Vertex AI reports quote it (without a
/// `QuotaFailure` detail).
const VERTEX_QUOTA_MESSAGE: &str = "The following quota metrics exceed quota limits: aiplatform.googleapis.com/custom_model_training_nvidia_h100_gpus";

/// Compute Engine's synchronous refusal of a request the project has no GPU quota for: the quota is
/// named in the message and in the `google.rpc.QuotaFailure` detail, whose subject is the
/// project (the detail's documented `project:ID` form).
fn quota_exceeded(parent: &Parent) -> ApiError {
    let message = format!(
        "Quota 'GPUS_PER_GPU_FAMILY' exceeded. Limit: 0.0 in region {}.",
        parent.location
    );
    ApiError::quota_failure(
        message.clone(),
        QuotaViolation {
            subject: format!("project:{}", parent.project),
            description: message,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent() -> Parent {
        Parent::of_tests()
    }

    fn failures(texts: &[&str]) -> Vec<CapacityFailure> {
        texts.iter().map(|text| text.parse().unwrap()).collect()
    }

    /// A pool with one static node.
    fn gpu(zone: &str) -> Value {
        json!({"id": "gpu", "zone": zone, "machineSpec": {"machineType": "a4-highgpu-8g"},
               "scalingSpec": {"minNodeCount": "1", "maxNodeCount": "2"}})
    }

    fn cpu() -> Value {
        json!({"id": "cpu", "machineSpec": {"machineType": "n2-standard-8"},
               "scalingSpec": {"minNodeCount": 1, "maxNodeCount": 1}})
    }

    #[test]
    fn capacity_failures_are_written_kind_machine_at_zone_and_times() {
        let any_zone: CapacityFailure = "a4-highgpu-8g".parse().unwrap();
        assert_eq!(
            (any_zone.zone, any_zone.kind, any_zone.times),
            (None, CapacityFailureKind::Stockout, None)
        );
        let one_zone: CapacityFailure = "a4-highgpu-8g@us-central1-b".parse().unwrap();
        assert_eq!(one_zone.zone.as_deref(), Some("us-central1-b"));
        assert_eq!(one_zone.to_string(), "a4-highgpu-8g@us-central1-b");
        let quota: CapacityFailure = "quota:a4-highgpu-8g@us-central1-b/2".parse().unwrap();
        assert_eq!(
            (quota.kind, quota.times),
            (CapacityFailureKind::Quota, Some(2))
        );
        assert_eq!(quota.to_string(), "quota:a4-highgpu-8g@us-central1-b/2");
        for text in ["not-allowed:a3-highgpu-8g", "stockout:a4-highgpu-8g/1"] {
            let parsed: CapacityFailure = text.parse().unwrap();
            assert_eq!(parsed.to_string(), text.trim_start_matches("stockout:"));
        }
        for bad in [
            "",
            "@us-central1-b",
            "a4-highgpu-8g@",
            "A4 HIGHGPU",
            "full:a4-highgpu-8g",
            ":a4-highgpu-8g",
            "a4-highgpu-8g/0",
            "a4-highgpu-8g/",
            "a4-highgpu-8g/-1",
        ] {
            assert!(bad.parse::<CapacityFailure>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_json_without_a_kind_is_a_stockout_and_answers_omit_it() {
        let old: CapacityFailure =
            serde_json::from_value(json!({"machineType": "a4-highgpu-8g", "zone": "z"})).unwrap();
        assert_eq!(old, "a4-highgpu-8g@z".parse().unwrap());
        assert_eq!(
            serde_json::to_value(&old).unwrap(),
            json!({"machineType": "a4-highgpu-8g", "zone": "z"})
        );
        let quota: CapacityFailure =
            serde_json::from_value(json!({"machineType": "m", "kind": "quota", "times": 1}))
                .unwrap();
        assert_eq!(quota, "quota:m/1".parse().unwrap());
        assert_eq!(
            serde_json::to_value(&quota).unwrap(),
            json!({"machineType": "m", "kind": "quota", "times": 1})
        );
        let not_allowed: CapacityFailure =
            serde_json::from_value(json!({"machineType": "m", "kind": "not-allowed"})).unwrap();
        assert_eq!(not_allowed.kind, CapacityFailureKind::NotAllowed);
    }

    #[test]
    fn a_pool_of_the_machine_type_in_the_zone_gets_a_stockout() {
        let mut failures = failures(&["a4-highgpu-8g@us-central1-b"]);
        let error = take_capacity_failure(&mut failures, &[cpu(), gpu("us-central1-b")], &parent())
            .unwrap()
            .unwrap();
        assert_eq!(error["code"], 8);
        assert_eq!(
            error["message"],
            "The zone 'projects/proj/zones/us-central1-b' does not have enough resources \
             available to fulfill the request. '(resource type:compute)'. (state:STOCKOUT)"
        );
        let other_zone = take_capacity_failure(&mut failures, &[gpu("us-central1-a")], &parent());
        assert_eq!(other_zone.unwrap(), None);
        assert_eq!(
            take_capacity_failure(&mut failures, &[cpu()], &parent()).unwrap(),
            None
        );
        assert_eq!(failures.len(), 1, "an entry without times stays");
    }

    #[test]
    fn without_a_zone_every_zone_fails() {
        let mut failures = failures(&["a4-highgpu-8g"]);
        let mut unzoned = gpu("");
        unzoned.as_object_mut().unwrap().remove("zone");
        let error = take_capacity_failure(&mut failures, &[unzoned], &parent())
            .unwrap()
            .unwrap();
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .starts_with("The region 'projects/proj/regions/us-central1' does not have"),
            "{error}"
        );
    }

    #[test]
    fn a_machine_type_not_allowed_fails_with_invalid_argument() {
        let mut failures = failures(&["not-allowed:a4-highgpu-8g"]);
        let error = take_capacity_failure(&mut failures, &[gpu("us-central1-b")], &parent());
        assert_eq!(
            error.unwrap().unwrap(),
            json!({"code": 3, "message": "machine type a4-highgpu-8g is not allowed for VM",
                   "details": []})
        );
    }

    #[test]
    fn a_quota_failure_refuses_at_once_naming_the_region() {
        let mut vertex = failures(&["quota:a4-highgpu-8g"]);
        let error =
            take_capacity_failure(&mut vertex, &[gpu("us-central1-b")], &parent()).unwrap_err();
        assert_eq!(error.code, Code::ResourceExhausted);
        assert_eq!(error.message, VERTEX_QUOTA_MESSAGE);
        assert!(
            error.quota_violations.is_empty(),
            "Vertex AI's words come without a detail"
        );
        let mut failures = failures(&["compute-quota:a4-highgpu-8g"]);
        let error =
            take_capacity_failure(&mut failures, &[gpu("us-central1-b")], &parent()).unwrap_err();
        assert_eq!(error.code, Code::ResourceExhausted);
        let message = "Quota 'GPUS_PER_GPU_FAMILY' exceeded. Limit: 0.0 in region us-central1.";
        assert_eq!(error.message, message);
        assert_eq!(
            error.quota_violations,
            [QuotaViolation {
                subject: "project:proj".to_owned(),
                description: message.to_owned(),
            }]
        );
    }

    #[test]
    fn an_entry_with_times_fails_that_many_requests_then_goes() {
        let mut failures = failures(&["a4-highgpu-8g/2", "not-allowed:a4-highgpu-8g"]);
        let pools = [gpu("us-central1-b")];
        let first = take_capacity_failure(&mut failures, &pools, &parent());
        assert_eq!(first.unwrap().unwrap()["code"], 8);
        assert_eq!(failures[0].times, Some(1));
        let second = take_capacity_failure(&mut failures, &pools, &parent());
        assert_eq!(second.unwrap().unwrap()["code"], 8);
        assert_eq!(failures, self::failures(&["not-allowed:a4-highgpu-8g"]));
        let third = take_capacity_failure(&mut failures, &pools, &parent());
        assert_eq!(third.unwrap().unwrap()["code"], 3, "the next entry decides");
    }

    #[test]
    fn a_pool_that_starts_empty_runs_short_of_nothing_at_create_but_is_still_not_allowed() {
        let mut failures = failures(&["a4-highgpu-8g", "quota:a4-highgpu-8g"]);
        let mut empty = gpu("us-central1-b");
        empty["scalingSpec"] = json!({"maxNodeCount": "4"});
        assert_eq!(
            take_capacity_failure(&mut failures, &[empty.clone()], &parent()),
            Ok(None)
        );
        empty["scalingSpec"]["minNodeCount"] = json!("0");
        assert_eq!(
            take_capacity_failure(&mut failures, &[empty.clone()], &parent()),
            Ok(None)
        );
        let mut not_allowed = self::failures(&["not-allowed:a4-highgpu-8g"]);
        let refused = take_capacity_failure(&mut not_allowed, &[empty], &parent());
        assert_eq!(refused.unwrap().unwrap()["code"], 3);
    }
}
