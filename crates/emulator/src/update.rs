//! What an update (PATCH) may change, beyond applying the mask: the mask a
//! request implies when it gives none (AIP-134: every field populated in the
//! body), the refusal of populated non-updatable fields whose value differs
//! from the cluster's, and the refusal of changes to the immutable fields of a
//! node pool that already exists (matched by `id`). Values are compared as
//! proto3 sees them: an unset field equals its zero value, and an integer
//! equals its decimal string.

use serde_json::{Map, Value};

use crate::api_error::ApiError;
use crate::casing::snake_to_camel;
use crate::mask::ALLOWED_PATHS;
use crate::schema::{CLUSTER, Field, Kind, camel_to_snake, find_field};

/// The node pool fields that can never change once the pool exists, as JSON
/// pointers below the pool and as mask-style paths for messages.
const IMMUTABLE_POOL_FIELDS: [(&str, &str); 6] = [
    ("/machineSpec/machineType", "machine_spec.machine_type"),
    (
        "/machineSpec/acceleratorType",
        "machine_spec.accelerator_type",
    ),
    (
        "/machineSpec/acceleratorCount",
        "machine_spec.accelerator_count",
    ),
    (
        "/machineSpec/reservationAffinity",
        "machine_spec.reservation_affinity",
    ),
    ("/provisioningModel", "provisioning_model"),
    (
        "/confidentialInstanceConfig",
        "confidential_instance_config",
    ),
];

/// The mask implied by a body sent without `updateMask`: the allowed paths it
/// populates. A populated field that cannot be updated is refused when its
/// value differs from the cluster's (and ignored when it is the same, so a
/// body echoing Get is fine); output-only fields are ignored.
pub(crate) fn implied_mask(live: &Value, body: &Value) -> Result<Vec<&'static str>, ApiError> {
    let mut populated = Vec::new();
    if let Value::Object(object) = body {
        populated_paths(object, CLUSTER, "", &mut populated);
    }
    let mut mask = Vec::new();
    let mut refused = Vec::new();
    for (path, value) in populated {
        if let Some(allowed) = ALLOWED_PATHS.iter().find(|allowed| **allowed == path) {
            mask.push(*allowed);
        } else if normalized(value) != normalized(value_at(live, &path).unwrap_or(&Value::Null)) {
            refused.push(path);
        }
    }
    if refused.is_empty() {
        Ok(mask)
    } else {
        Err(ApiError::invalid_argument(format!(
            "The request has no updateMask, so every field it populates is to be updated, but {} \
             cannot be updated and differs from the cluster's value. Updatable fields are {}.",
            refused.join(", "),
            ALLOWED_PATHS.join(", ")
        )))
    }
}

/// Collects `(snake_case path, value)` for every populated field of a body,
/// descending into singular messages; repeated and map fields are leaves.
fn populated_paths<'a>(
    object: &'a Map<String, Value>,
    fields: &[Field],
    prefix: &str,
    found: &mut Vec<(String, &'a Value)>,
) {
    for (key, value) in object {
        let Some(field) = find_field(fields, key) else {
            continue;
        };
        let path = if prefix.is_empty() {
            camel_to_snake(field.name)
        } else {
            format!("{prefix}.{}", camel_to_snake(field.name))
        };
        match (&field.kind, value) {
            (Kind::OutputOnly, _) => {}
            (Kind::Message(children), Value::Object(child)) => {
                populated_paths(child, children, &path, found);
            }
            _ if normalized(value).is_some() => found.push((path, value)),
            _ => {}
        }
    }
}

/// The value at a snake_case path of a stored (camelCase) cluster.
fn value_at<'a>(cluster: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(cluster, |current, segment| {
        current.get(snake_to_camel(segment))
    })
}

/// Refuses an updated cluster that changes an immutable field of a node pool
/// the live cluster already has.
pub(crate) fn check_immutable_pool_fields(live: &Value, updated: &Value) -> Result<(), ApiError> {
    let live_pools = pools_by_id(live);
    let mut changes = Vec::new();
    for (id, pool) in pools_by_id(updated) {
        let Some((_, before)) = live_pools.iter().find(|(live_id, _)| *live_id == id) else {
            continue;
        };
        for (pointer, name) in IMMUTABLE_POOL_FIELDS {
            let old = normalized(before.pointer(pointer).unwrap_or(&Value::Null));
            let new = normalized(pool.pointer(pointer).unwrap_or(&Value::Null));
            if old != new {
                changes.push(format!(
                    "node pool `{id}`: {name} cannot be changed ({} → {})",
                    shown(old.as_ref()),
                    shown(new.as_ref())
                ));
            }
        }
    }
    if changes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid_argument(format!(
            "Immutable node pool fields cannot be updated; replace the node pool (new id) instead: {}.",
            changes.join("; ")
        )))
    }
}

/// The node pools of `updated` that `live` has not got (no pool of the same `id`): those an
/// update adds.
pub(crate) fn added_pools(live: &Value, updated: &Value) -> Vec<Value> {
    let live_pools = pools_by_id(live);
    pools_by_id(updated)
        .into_iter()
        .filter(|(id, _)| live_pools.iter().all(|(live_id, _)| live_id != id))
        .map(|(_, pool)| pool.clone())
        .collect()
}

fn pools_by_id(cluster: &Value) -> Vec<(&str, &Value)> {
    cluster
        .get("nodePools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|pool| Some((pool.get("id")?.as_str()?, pool)))
        .collect()
}

fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "unset".to_owned(), Value::to_string)
}

/// The value as proto3 sees it: `None` for unset or a zero value (null, `""`,
/// 0, false, an `…_UNSPECIFIED` enum, empty lists and maps, messages with only
/// zero fields); integers given as decimal strings become numbers.
fn normalized(value: &Value) -> Option<Value> {
    match value {
        Value::Null | Value::Bool(false) => None,
        Value::Bool(true) => Some(value.clone()),
        Value::Number(number) if number.as_i64() == Some(0) => None,
        Value::Number(_) => Some(value.clone()),
        Value::String(text) => {
            if text.is_empty() || text.ends_with("_UNSPECIFIED") {
                None
            } else if let Ok(integer) = text.parse::<i64>() {
                normalized(&Value::from(integer))
            } else {
                Some(value.clone())
            }
        }
        Value::Array(items) => {
            let items: Vec<Value> = items
                .iter()
                .map(|item| normalized(item).unwrap_or(Value::Null))
                .collect();
            (!items.is_empty()).then_some(Value::Array(items))
        }
        Value::Object(object) => {
            let fields: Map<String, Value> = object
                .iter()
                .filter_map(|(key, field)| Some((snake_to_camel(key), normalized(field)?)))
                .collect();
            (!fields.is_empty()).then_some(Value::Object(fields))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn live() -> Value {
        json!({
            "name": "projects/p/locations/r/modelDevelopmentClusters/c",
            "displayName": "Research",
            "labels": {"team": "ml"},
            "network": {"network": "n", "subnetwork": "s"},
            "nodePools": [{"id": "gpu", "machineSpec": {"machineType": "a3", "acceleratorCount": 8},
                           "provisioningModel": "SPOT"}],
            "orchestratorSpec": {"slurmSpec": {"homeDirectoryStorage": "h", "loginNodePoolId": "gpu"}},
            "clusterStatus": {"state": "RUNNING"}
        })
    }

    #[test]
    fn a_body_echoing_the_cluster_implies_only_updatable_paths() {
        let mut body = live();
        body["labels"] = json!({"team": "infra"});
        body["createTime"] = json!("2026-01-01T00:00:00Z");
        assert_eq!(
            implied_mask(&live(), &body).unwrap(),
            [
                "display_name",
                "labels",
                "node_pools",
                "orchestrator_spec.slurm_spec.login_node_pool_id"
            ]
        );
    }

    #[test]
    fn unset_and_zero_values_populate_nothing() {
        let body = json!({"labels": {}, "displayName": "", "network": {"subnetwork": null}});
        assert!(implied_mask(&live(), &body).unwrap().is_empty());
    }

    #[test]
    fn a_differing_non_updatable_field_is_named() {
        let body = json!({"runtimeSpec": {"serviceAccount": "other"}, "network": {"network": "n"},
                          "orchestrator_spec": {"slurm_spec": {"home_directory_storage": "x"}}});
        let message = implied_mask(&live(), &body).unwrap_err().message;
        assert!(
            message.contains(
                "but runtime_spec.service_account, orchestrator_spec.slurm_spec.home_directory_storage cannot be updated"
            ),
            "{message}"
        );
    }

    #[test]
    fn immutable_pool_fields_are_compared_as_proto3_values() {
        let mut same = live();
        same["nodePools"][0]["machineSpec"]["acceleratorCount"] = json!("8");
        same["nodePools"][0]["machineSpec"]["acceleratorType"] =
            json!("ACCELERATOR_TYPE_UNSPECIFIED");
        same["nodePools"][0]["scalingSpec"] = json!({"maxNodeCount": "4"});
        check_immutable_pool_fields(&live(), &same).unwrap();

        let mut changed = live();
        changed["nodePools"][0]["machineSpec"]["machineType"] = json!("a4");
        changed["nodePools"][0]
            .as_object_mut()
            .unwrap()
            .remove("provisioningModel");
        insta::assert_snapshot!(check_immutable_pool_fields(&live(), &changed).unwrap_err().message, @r#"Immutable node pool fields cannot be updated; replace the node pool (new id) instead: node pool `gpu`: machine_spec.machine_type cannot be changed ("a3" → "a4"); node pool `gpu`: provisioning_model cannot be changed ("SPOT" → unset)."#);
    }

    #[test]
    fn new_pools_may_have_any_machine() {
        let mut updated = live();
        updated["nodePools"][0]["id"] = json!("gpu2");
        updated["nodePools"][0]["machineSpec"]["machineType"] = json!("a4");
        check_immutable_pool_fields(&live(), &updated).unwrap();
    }
}
