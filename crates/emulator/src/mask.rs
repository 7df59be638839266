//! Update masks as the service applies them: only the allowed paths can
//! be updated, and each masked field is replaced whole by the request body's
//! value (a field absent from the body is cleared). This is the emulator's own
//! list, deliberately independent of `clusterform-model`'s field table.

use serde_json::{Map, Value};

use crate::casing::{DuplicateField, camel_case_field, join_path, snake_to_camel};

/// The update-mask paths the service accepts (snake_case, as sent in `updateMask`): the
/// product pages' six, the three Slurm configuration maps' paths of the *Create cluster* page,
/// and the four more the public Terraform provider sends.
pub const ALLOWED_PATHS: [&str; 13] = [
    "display_name",
    "labels",
    "node_pools",
    "orchestrator_spec.slurm_spec.partitions",
    "orchestrator_spec.slurm_spec.login_node_pool_id",
    "orchestrator_spec.slurm_spec.prolog_bash_scripts",
    "orchestrator_spec.slurm_spec.epilog_bash_scripts",
    "orchestrator_spec.slurm_spec.default_partition_id",
    "orchestrator_spec.slurm_spec.config",
    "orchestrator_spec.slurm_spec.node_sets",
    "orchestrator_spec.slurm_spec.accounting",
    "orchestrator_spec.slurm_spec.scheduling",
    "lustre_export_config",
];

/// Why an update mask could not be applied, and the mask path concerned.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("update mask path `{path}` {problem}")]
pub struct MaskError {
    /// The mask path as it was given.
    pub path: String,
    /// What is wrong with it.
    pub problem: MaskProblem,
}

/// The ways an update-mask path can fail.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MaskProblem {
    /// The path is not one of [`ALLOWED_PATHS`].
    #[error("is not updatable; allowed paths are {}", ALLOWED_PATHS.join(", "))]
    NotAllowed,
    /// A field on the way to the masked field holds something other than an object.
    #[error("cannot be applied: `{0}` is not a JSON object")]
    NotAnObject(String),
    /// The patch spells one field both in snake_case and in lowerCamelCase.
    #[error("cannot be applied: field `{0}` is given twice, in snake_case and in lowerCamelCase")]
    DuplicateField(String),
}

/// Checks that every path of `mask` is one of [`ALLOWED_PATHS`].
pub fn check_paths(mask: &[&str]) -> Result<(), MaskError> {
    match mask.iter().find(|path| !ALLOWED_PATHS.contains(path)) {
        Some(path) => Err(MaskError {
            path: (*path).to_owned(),
            problem: MaskProblem::NotAllowed,
        }),
        None => Ok(()),
    }
}

/// Applies a PATCH body to a live cluster as the service does: only masked
/// paths change, each replaced whole by the body's value (absent or `null` in
/// the body = cleared). `patch` may use camelCase or snake_case keys; the
/// result uses lowerCamelCase, and keys inside map fields (labels, config maps)
/// are kept as they are. Fields outside the mask are never touched, so
/// output-only fields of `live` survive.
pub fn apply_update_mask(live: &Value, patch: &Value, mask: &[&str]) -> Result<Value, MaskError> {
    check_paths(mask)?;
    let mut updated = live.clone();
    for path in mask {
        let segments: Vec<String> = path.split('.').map(snake_to_camel).collect();
        let replacement = masked_value(patch, &segments).map_err(|problem| MaskError {
            path: (*path).to_owned(),
            problem,
        })?;
        replace_field(&mut updated, &segments, replacement).map_err(|problem| MaskError {
            path: (*path).to_owned(),
            problem,
        })?;
    }
    Ok(updated)
}

/// The patch's value at the camelCase `segments` (looking up both spellings of
/// each field), normalised to camelCase; `None` when absent or `null`.
fn masked_value(patch: &Value, segments: &[String]) -> Result<Option<Value>, MaskProblem> {
    let mut current = patch;
    let mut walked = String::new();
    for segment in segments {
        let object = match current {
            Value::Object(object) => object,
            Value::Null => return Ok(None),
            _ => return Err(MaskProblem::NotAnObject(display_path(&walked))),
        };
        walked = join_path(&walked, segment);
        match field_in_either_spelling(object, segment, &walked)? {
            Some(value) => current = value,
            None => return Ok(None),
        }
    }
    if current.is_null() {
        return Ok(None);
    }
    let leaf = segments.last().map_or("", String::as_str);
    camel_case_field(leaf, current, &walked)
        .map(Some)
        .map_err(|DuplicateField { path }| MaskProblem::DuplicateField(path))
}

/// Looks `camel_name` up in `object` under its camelCase or snake_case spelling.
fn field_in_either_spelling<'a>(
    object: &'a Map<String, Value>,
    camel_name: &str,
    path: &str,
) -> Result<Option<&'a Value>, MaskProblem> {
    let mut matches = object
        .iter()
        .filter(|(key, _)| snake_to_camel(key) == camel_name)
        .map(|(_, value)| value);
    let first = matches.next();
    if matches.next().is_some() {
        return Err(MaskProblem::DuplicateField(path.to_owned()));
    }
    Ok(first)
}

/// Sets (or with `None`, removes) the field at camelCase `segments` in `target`,
/// creating missing parent objects only when there is something to set.
fn replace_field(
    target: &mut Value,
    segments: &[String],
    replacement: Option<Value>,
) -> Result<(), MaskProblem> {
    let Some((leaf, parents)) = segments.split_last() else {
        return Ok(());
    };
    let mut current = target;
    let mut walked = String::new();
    for segment in parents {
        let object = as_object_for_update(current, &walked, replacement.is_some())?;
        let Some(object) = object else {
            return Ok(());
        };
        walked = join_path(&walked, segment);
        remove_other_spellings(object, segment);
        if !object.contains_key(segment) {
            if replacement.is_none() {
                return Ok(());
            }
            object.insert(segment.clone(), Value::Object(Map::new()));
        }
        current = object
            .get_mut(segment)
            .ok_or_else(|| MaskProblem::NotAnObject(walked.clone()))?;
    }
    let Some(object) = as_object_for_update(current, &walked, replacement.is_some())? else {
        return Ok(());
    };
    remove_other_spellings(object, leaf);
    match replacement {
        Some(value) => {
            object.insert(leaf.clone(), value);
        }
        None => {
            object.shift_remove(leaf);
        }
    }
    Ok(())
}

/// The object at `value`; a `null` becomes an empty object when something is
/// to be set below it, and means "nothing to clear" otherwise.
fn as_object_for_update<'a>(
    value: &'a mut Value,
    path: &str,
    setting: bool,
) -> Result<Option<&'a mut Map<String, Value>>, MaskProblem> {
    if value.is_null() {
        if !setting {
            return Ok(None);
        }
        *value = Value::Object(Map::new());
    }
    match value {
        Value::Object(object) => Ok(Some(object)),
        _ => Err(MaskProblem::NotAnObject(display_path(path))),
    }
}

/// Drops snake_case spellings of `camel_name` so that only one spelling remains.
fn remove_other_spellings(object: &mut Map<String, Value>, camel_name: &str) {
    object.retain(|key, _| key == camel_name || snake_to_camel(key) != camel_name);
}

fn display_path(path: &str) -> String {
    if path.is_empty() {
        "the cluster".to_owned()
    } else {
        path.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn live_cluster() -> Value {
        json!({
            "name": "projects/p/locations/r/modelDevelopmentClusters/c1",
            "displayName": "Research",
            "labels": {"team": "ml"},
            "nodePools": [
                {"id": "login", "scalingSpec": {"minNodeCount": "1", "maxNodeCount": "1"}},
                {"id": "cpu", "scalingSpec": {"minNodeCount": "0", "maxNodeCount": "4"}}
            ],
            "orchestratorSpec": {"slurmSpec": {
                "homeDirectoryStorage": "projects/p/locations/z/instances/home",
                "loginNodePoolId": "login",
                "partitions": [{"id": "cpu", "nodePoolIds": ["cpu"]}],
                "prologBashScripts": ["echo a"]
            }},
            "clusterStatus": {"state": "RUNNING"}
        })
    }

    #[test]
    fn node_pools_are_replaced_whole_and_a_missing_pool_is_deleted() {
        let patch = json!({"nodePools": [{"id": "login", "scalingSpec": {"minNodeCount": 1, "maxNodeCount": 2}}]});
        let updated = apply_update_mask(&live_cluster(), &patch, &["node_pools"]).unwrap();
        assert_eq!(updated["nodePools"], patch["nodePools"]);
        assert_eq!(updated["labels"], json!({"team": "ml"}));
        assert_eq!(updated["clusterStatus"], json!({"state": "RUNNING"}));
    }

    #[test]
    fn snake_case_patch_is_normalised_but_label_keys_are_kept() {
        let patch = json!({
            "labels": {"cost_center": "x_y"},
            "node_pools": [{"id": "cpu", "machine_spec": {"machine_type": "n2"}, "labels": {"pool_key": "v"}}]
        });
        let updated =
            apply_update_mask(&live_cluster(), &patch, &["labels", "node_pools"]).unwrap();
        assert_eq!(updated["labels"], json!({"cost_center": "x_y"}));
        assert_eq!(
            updated["nodePools"],
            json!([{"id": "cpu", "machineSpec": {"machineType": "n2"}, "labels": {"pool_key": "v"}}])
        );
    }

    #[test]
    fn nested_snake_case_path_is_found_in_a_snake_case_patch() {
        let patch = json!({"orchestrator_spec": {"slurm_spec": {"login_node_pool_id": "cpu"}}});
        let mask = ["orchestrator_spec.slurm_spec.login_node_pool_id"];
        let updated = apply_update_mask(&live_cluster(), &patch, &mask).unwrap();
        assert_eq!(
            updated["orchestratorSpec"]["slurmSpec"]["loginNodePoolId"],
            "cpu"
        );
        assert_eq!(
            updated["orchestratorSpec"]["slurmSpec"]["partitions"],
            live_cluster()["orchestratorSpec"]["slurmSpec"]["partitions"]
        );
    }

    #[test]
    fn a_masked_field_absent_from_the_patch_is_cleared() {
        let mask = ["orchestrator_spec.slurm_spec.prolog_bash_scripts", "labels"];
        let updated = apply_update_mask(&live_cluster(), &json!({}), &mask).unwrap();
        assert!(
            updated["orchestratorSpec"]["slurmSpec"]
                .get("prologBashScripts")
                .is_none()
        );
        assert!(updated.get("labels").is_none());
        assert_eq!(
            updated["orchestratorSpec"]["slurmSpec"]["loginNodePoolId"],
            "login"
        );
    }

    #[test]
    fn null_in_the_patch_clears_the_field() {
        let updated =
            apply_update_mask(&live_cluster(), &json!({"labels": null}), &["labels"]).unwrap();
        assert!(updated.get("labels").is_none());
    }

    #[test]
    fn unmasked_fields_of_the_patch_are_ignored() {
        let patch = json!({"displayName": "Other", "labels": {"a": "b"}});
        let updated = apply_update_mask(&live_cluster(), &patch, &["labels"]).unwrap();
        assert_eq!(updated["displayName"], "Research");
    }

    #[test]
    fn missing_parents_are_created_when_setting() {
        let patch = json!({"orchestratorSpec": {"slurmSpec": {"epilogBashScripts": ["echo z"]}}});
        let mask = ["orchestrator_spec.slurm_spec.epilog_bash_scripts"];
        let updated = apply_update_mask(&json!({"name": "x"}), &patch, &mask).unwrap();
        assert_eq!(
            updated,
            json!({"name": "x", "orchestratorSpec": {"slurmSpec": {"epilogBashScripts": ["echo z"]}}})
        );
    }

    #[test]
    fn clearing_below_a_missing_parent_changes_nothing() {
        let mask = ["orchestrator_spec.slurm_spec.partitions"];
        let updated = apply_update_mask(&json!({"name": "x"}), &json!({}), &mask).unwrap();
        assert_eq!(updated, json!({"name": "x"}));
    }

    #[test]
    fn snake_case_spelling_in_the_live_value_is_replaced_not_duplicated() {
        let live = json!({"node_pools": [{"id": "a"}]});
        let updated =
            apply_update_mask(&live, &json!({"nodePools": [{"id": "b"}]}), &["node_pools"])
                .unwrap();
        assert_eq!(updated, json!({"nodePools": [{"id": "b"}]}));
    }

    #[test]
    fn key_order_of_the_live_cluster_is_kept() {
        let updated = apply_update_mask(&live_cluster(), &json!({}), &["labels"]).unwrap();
        let keys: Vec<&String> = updated.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "name",
                "displayName",
                "nodePools",
                "orchestratorSpec",
                "clusterStatus"
            ]
        );
    }

    #[test]
    fn a_path_outside_the_allowed_list_is_named() {
        let error =
            apply_update_mask(&live_cluster(), &json!({}), &["labels", "network"]).unwrap_err();
        assert_eq!(error.path, "network");
        assert_eq!(error.problem, MaskProblem::NotAllowed);
        assert!(
            error
                .to_string()
                .starts_with("update mask path `network` is not updatable")
        );
    }

    #[test]
    fn camel_case_mask_paths_are_not_accepted() {
        let error = apply_update_mask(&live_cluster(), &json!({}), &["nodePools"]).unwrap_err();
        assert_eq!(error.path, "nodePools");
    }

    #[test]
    fn a_non_object_on_the_way_is_an_error() {
        let patch = json!({"orchestratorSpec": "slurm"});
        let mask = ["orchestrator_spec.slurm_spec.partitions"];
        let error = apply_update_mask(&live_cluster(), &patch, &mask).unwrap_err();
        assert_eq!(
            error.problem,
            MaskProblem::NotAnObject("orchestratorSpec".to_owned())
        );
        let live = json!({"orchestratorSpec": []});
        let patch = json!({"orchestratorSpec": {"slurmSpec": {"partitions": []}}});
        let error = apply_update_mask(&live, &patch, &mask).unwrap_err();
        assert_eq!(
            error.problem,
            MaskProblem::NotAnObject("orchestratorSpec".to_owned())
        );
    }

    #[test]
    fn a_patch_that_is_not_an_object_is_an_error() {
        let error = apply_update_mask(&live_cluster(), &json!([1]), &["labels"]).unwrap_err();
        assert_eq!(
            error.problem,
            MaskProblem::NotAnObject("the cluster".to_owned())
        );
    }

    #[test]
    fn both_spellings_in_the_patch_are_an_error() {
        let patch = json!({"node_pools": [], "nodePools": []});
        let error = apply_update_mask(&live_cluster(), &patch, &["node_pools"]).unwrap_err();
        assert_eq!(
            error.problem,
            MaskProblem::DuplicateField("nodePools".to_owned())
        );
    }

    /// A small JSON value for generated clusters.
    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<i64>().prop_map(Value::from),
            "[a-z_]{0,6}".prop_map(Value::from),
            prop::collection::vec("[a-z]{1,4}".prop_map(Value::from), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,3}(_[a-z]{1,3})?", "[a-z]{0,3}", 0..3).prop_map(
                |map| Value::Object(map.into_iter().map(|(k, v)| (k, Value::from(v))).collect())
            ),
        ]
    }

    /// A cluster-shaped object with an optional value at each allowed path
    /// plus an unrelated field.
    fn cluster_shape() -> impl Strategy<Value = Value> {
        (
            prop::collection::vec(prop::option::of(leaf()), ALLOWED_PATHS.len()),
            leaf(),
        )
            .prop_map(|(values, other)| {
                let mut cluster = json!({"runtimeSpec": other});
                for (path, value) in ALLOWED_PATHS.iter().zip(values) {
                    if let Some(value) = value {
                        let segments: Vec<String> = path.split('.').map(snake_to_camel).collect();
                        replace_field(&mut cluster, &segments, Some(value)).unwrap();
                    }
                }
                cluster
            })
    }

    fn field_at<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
        path.split('.')
            .map(snake_to_camel)
            .try_fold(value, |current, segment| current.get(&segment))
            .filter(|found| !found.is_null())
    }

    proptest! {
        #[test]
        fn masked_paths_take_the_patch_value_and_the_rest_is_kept(
            live in cluster_shape(),
            patch in cluster_shape(),
            chosen in prop::collection::vec(any::<bool>(), ALLOWED_PATHS.len()),
        ) {
            let mask: Vec<&str> = ALLOWED_PATHS.iter().zip(&chosen).filter(|(_, on)| **on).map(|(p, _)| *p).collect();
            let updated = apply_update_mask(&live, &patch, &mask).unwrap();
            prop_assert_eq!(&updated["runtimeSpec"], &live["runtimeSpec"]);
            for path in ALLOWED_PATHS {
                let expected = if mask.contains(&path) {
                    let leaf_name = snake_to_camel(path.rsplit('.').next().unwrap_or(path));
                    field_at(&patch, path).map(|value| camel_case_field(&leaf_name, value, path).unwrap())
                } else {
                    field_at(&live, path).cloned()
                };
                prop_assert_eq!(field_at(&updated, path).cloned(), expected, "path {}", path);
            }
            let again = apply_update_mask(&updated, &patch, &mask).unwrap();
            prop_assert_eq!(again, updated);
        }
    }
}
