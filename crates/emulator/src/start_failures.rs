//! Shortages on day two: a create asks only for each pool's static nodes (`minNodeCount`);
//! the nodes above it are dynamic, made when a job pends (the *Flex Start* and *Cluster
//! resiliency* pages), and the machines may not be there then. Pools of a machine type named
//! here (in a zone, when given) cannot start their dynamic nodes: Slurm lists those nodes
//! `DOWN` and powered down with Compute Engine's stockout text as their reason, as Slurm's
//! power saving leaves a cloud node whose resume failed, and the cluster records a
//! `VM_SLURM_POWER_DOWN` event saying so, once per pool. Pending jobs keep waiting.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::capacity::{CapacityFailure, CapacityFailureKind, stockout_message};
use crate::resource::{Parent, node_count};

/// The event type the cluster records: Slurm powers a node whose start failed down. (No
/// documented type names a start failure; this is the one that tells what Slurm did.)
pub(crate) const START_FAILURE_EVENT_TYPE: &str = "VM_SLURM_POWER_DOWN";

/// Pools of `machine_type` (in `zone`, when given) whose dynamic nodes do not start. Written
/// `MACHINE_TYPE[@ZONE]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StartFailure {
    /// The machine type that cannot be had, e.g. `a4-highgpu-8g`.
    pub machine_type: String,
    /// Only pools in this zone; `None`: every zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
}

/// A start failure that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad start failure `{text}`: write MACHINE_TYPE[@ZONE]")]
pub struct StartFailureError {
    text: String,
}

impl FromStr for StartFailure {
    type Err = StartFailureError;

    /// Read as a capacity failure's `MACHINE_TYPE[@ZONE]`, without a kind or times.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.parse::<CapacityFailure>() {
            Ok(CapacityFailure {
                machine_type,
                zone,
                kind: CapacityFailureKind::Stockout,
                times: None,
            }) if !text.contains(':') => Ok(StartFailure { machine_type, zone }),
            _ => Err(StartFailureError {
                text: text.to_owned(),
            }),
        }
    }
}

impl fmt::Display for StartFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.machine_type)?;
        match &self.zone {
            Some(zone) => write!(f, "@{zone}"),
            None => Ok(()),
        }
    }
}

impl StartFailure {
    /// Whether `pool` is of its machine type and zone.
    fn matches(&self, pool: &Value) -> bool {
        let machine_type = pool
            .pointer("/machineSpec/machineType")
            .and_then(Value::as_str);
        let pool_zone = pool.get("zone").and_then(Value::as_str);
        machine_type == Some(self.machine_type.as_str())
            && self
                .zone
                .as_deref()
                .is_none_or(|zone| Some(zone) == pool_zone)
    }
}

/// Why the dynamic nodes of `pool` (of a cluster under `parent`) do not start, if one of
/// `failures` matches it: Compute Engine's stockout text for its zone. A pool without
/// dynamic nodes (`maxNodeCount` not above `minNodeCount`) starts nothing after its create.
pub(crate) fn start_failure_reason(
    failures: &[StartFailure],
    pool: &Value,
    parent: &Parent,
) -> Option<String> {
    let failure = failures.iter().find(|failure| failure.matches(pool))?;
    if node_count(pool, "maxNodeCount") <= node_count(pool, "minNodeCount") {
        return None;
    }
    let zone = pool
        .get("zone")
        .and_then(Value::as_str)
        .or(failure.zone.as_deref());
    Some(stockout_message(parent, zone))
}

/// The message of the event recorded for pool `pool_id`.
pub(crate) fn start_failure_message(pool_id: &str, reason: &str) -> String {
    format!("Nodes of pool {pool_id} could not be started and were powered down: {reason}")
}

/// The event recorded at `time` (RFC 3339) for pool `pool_id`.
pub(crate) fn start_failure_event(pool_id: &str, reason: &str, time: &str) -> Value {
    json!({
        "eventType": START_FAILURE_EVENT_TYPE,
        "eventTime": time,
        "eventMessage": start_failure_message(pool_id, reason),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent() -> Parent {
        Parent::of_tests()
    }

    #[test]
    fn start_failures_are_written_machine_at_zone() {
        let failure: StartFailure = "a4-highgpu-8g@us-central1-a".parse().unwrap();
        assert_eq!(failure.zone.as_deref(), Some("us-central1-a"));
        assert_eq!(failure.to_string(), "a4-highgpu-8g@us-central1-a");
        for bad in [
            "",
            "quota:a4-highgpu-8g",
            "stockout:a4",
            "a4-highgpu-8g/1",
            "A4",
        ] {
            assert!(bad.parse::<StartFailure>().is_err(), "{bad}");
        }
    }

    #[test]
    fn only_a_matching_pool_with_dynamic_nodes_fails_to_start_them() {
        let failures = vec!["a4-highgpu-8g".parse().unwrap()];
        let pool = |min: u64, max: u64| {
            json!({"id": "gpu", "zone": "us-central1-a",
                   "machineSpec": {"machineType": "a4-highgpu-8g"},
                   "scalingSpec": {"minNodeCount": min, "maxNodeCount": max.to_string()}})
        };
        let reason = start_failure_reason(&failures, &pool(0, 4), &parent()).unwrap();
        assert!(
            reason.starts_with("The zone 'projects/proj/zones/us-central1-a' does not have"),
            "{reason}"
        );
        assert!(reason.ends_with("(state:STOCKOUT)"), "{reason}");
        assert_eq!(
            start_failure_reason(&failures, &pool(2, 2), &parent()),
            None
        );
        let other = json!({"id": "cpu", "machineSpec": {"machineType": "n2-standard-8"},
                           "scalingSpec": {"maxNodeCount": 4}});
        assert_eq!(start_failure_reason(&failures, &other, &parent()), None);
    }
}
