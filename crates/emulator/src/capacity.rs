//! Capacity failures: creates that the service accepts and whose operation then fails for
//! want of machines, as a stockout does. Real answers (a public team's recorded runs) show a
//! create's operation failing about 20 s after the POST with code 8 `RESOURCE_EXHAUSTED` and
//! Compute Engine's stockout text, and the cluster left registered in `ERROR`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::api_error::Code;
use crate::resource::Parent;

/// Creates whose node pool uses `machine_type` (in `zone`, when given) fail for lack of
/// capacity. Written `MACHINE_TYPE` or `MACHINE_TYPE@ZONE` (`a4-highgpu-8g@us-central1-b`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CapacityFailure {
    /// The machine type that has no capacity, e.g. `a4-highgpu-8g`.
    pub machine_type: String,
    /// Only pools in this zone fail; `None`: every zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
}

/// A capacity failure that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad capacity failure `{text}`: write MACHINE_TYPE or MACHINE_TYPE@ZONE")]
pub struct CapacityFailureError {
    text: String,
}

impl FromStr for CapacityFailure {
    type Err = CapacityFailureError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || CapacityFailureError {
            text: text.to_owned(),
        };
        let (machine_type, zone) = match text.split_once('@') {
            Some((machine_type, zone)) => (machine_type, Some(zone)),
            None => (text, None),
        };
        let well_formed = |part: &str| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        };
        if !well_formed(machine_type) || zone.is_some_and(|zone| !well_formed(zone)) {
            return Err(bad());
        }
        Ok(CapacityFailure {
            machine_type: machine_type.to_owned(),
            zone: zone.map(str::to_owned),
        })
    }
}

impl fmt::Display for CapacityFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.zone {
            Some(zone) => write!(f, "{}@{zone}", self.machine_type),
            None => f.write_str(&self.machine_type),
        }
    }
}

/// The operation error of a create of `cluster` under `parent` that one of `failures`
/// matches: the first pool (in request order) whose machine type, and zone if the failure
/// names one, match.
pub(crate) fn stockout(
    failures: &[CapacityFailure],
    cluster: &Value,
    parent: &Parent,
) -> Option<Value> {
    let pools = cluster.get("nodePools").and_then(Value::as_array)?;
    pools.iter().find_map(|pool| {
        let machine_type = pool
            .pointer("/machineSpec/machineType")
            .and_then(Value::as_str)?;
        let pool_zone = pool.get("zone").and_then(Value::as_str);
        let failure = failures.iter().find(|failure| {
            failure.machine_type == machine_type
                && failure
                    .zone
                    .as_deref()
                    .is_none_or(|zone| Some(zone) == pool_zone)
        })?;
        let zone = pool_zone.or(failure.zone.as_deref());
        Some(json!({
            "code": Code::ResourceExhausted.rpc_number(),
            "message": stockout_message(parent, zone),
            "details": [],
        }))
    })
}

/// Compute Engine's stockout text for `zone`; for a pool that names no zone (the service
/// picks one) the same sentence about the region.
fn stockout_message(parent: &Parent, zone: Option<&str>) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parent() -> Parent {
        Parent {
            project: "proj".to_owned(),
            location: "us-central1".to_owned(),
        }
    }

    fn cluster(pools: Value) -> Value {
        let mut cluster = json!({});
        cluster["nodePools"] = pools;
        cluster
    }

    #[test]
    fn capacity_failures_are_written_machine_at_zone() {
        let any_zone: CapacityFailure = "a4-highgpu-8g".parse().unwrap();
        assert_eq!(any_zone.zone, None);
        let one_zone: CapacityFailure = "a4-highgpu-8g@us-central1-b".parse().unwrap();
        assert_eq!(one_zone.zone.as_deref(), Some("us-central1-b"));
        assert_eq!(one_zone.to_string(), "a4-highgpu-8g@us-central1-b");
        for bad in ["", "@us-central1-b", "a4-highgpu-8g@", "A4 HIGHGPU"] {
            assert!(bad.parse::<CapacityFailure>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_pool_of_the_machine_type_in_the_zone_gets_a_stockout() {
        let failures = ["a4-highgpu-8g@us-central1-b".parse().unwrap()];
        let gpu = |zone: &str| json!({"id": "gpu", "zone": zone, "machineSpec": {"machineType": "a4-highgpu-8g"}});
        let cpu = json!({"id": "cpu", "machineSpec": {"machineType": "n2-standard-8"}});
        let error = stockout(
            &failures,
            &cluster(json!([cpu, gpu("us-central1-b")])),
            &parent(),
        )
        .unwrap();
        assert_eq!(error["code"], 8);
        assert_eq!(
            error["message"],
            "The zone 'projects/proj/zones/us-central1-b' does not have enough resources \
             available to fulfill the request. '(resource type:compute)'. (state:STOCKOUT)"
        );
        assert_eq!(
            stockout(
                &failures,
                &cluster(json!([gpu("us-central1-a")])),
                &parent()
            ),
            None
        );
        assert_eq!(stockout(&failures, &cluster(json!([cpu])), &parent()), None);
    }

    #[test]
    fn without_a_zone_every_zone_fails() {
        let failures = ["a4-highgpu-8g".parse().unwrap()];
        let unzoned = json!([{"id": "gpu", "machineSpec": {"machineType": "a4-highgpu-8g"}}]);
        let error = stockout(&failures, &cluster(unzoned), &parent()).unwrap();
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .starts_with("The region 'projects/proj/regions/us-central1' does not have"),
            "{error}"
        );
    }
}
