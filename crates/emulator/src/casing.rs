//! Field-name spelling. Request bodies may use the proto's snake_case names or
//! lowerCamelCase; the emulator stores and answers lowerCamelCase only. Keys
//! inside map fields (`labels`, every `config`) are user data and are never
//! rewritten.

use serde_json::{Map, Value};

/// Fields whose value is a map from user-chosen keys to values.
const MAP_FIELDS: [&str; 2] = ["labels", "config"];

/// Two spellings of one field were given in the same object.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("field `{path}` is given twice, in snake_case and in lowerCamelCase")]
pub(crate) struct DuplicateField {
    pub(crate) path: String,
}

/// `node_pools` → `nodePools`; a name already in lowerCamelCase is unchanged.
pub(crate) fn snake_to_camel(name: &str) -> String {
    let mut camel = String::with_capacity(name.len());
    let mut upper_next = false;
    for character in name.chars() {
        if character == '_' && !camel.is_empty() {
            upper_next = true;
        } else if upper_next {
            camel.extend(character.to_uppercase());
            upper_next = false;
        } else {
            camel.push(character);
        }
    }
    camel
}

/// Whether a field (by its lowerCamelCase name) holds a user-keyed map.
pub(crate) fn is_map_field(camel_name: &str) -> bool {
    MAP_FIELDS.contains(&camel_name)
}

/// Rewrites every object key of `value` to lowerCamelCase, except the keys of
/// map fields. `path` names `value` in error messages.
pub(crate) fn camel_case_keys(value: &Value, path: &str) -> Result<Value, DuplicateField> {
    match value {
        Value::Object(object) => camel_case_object(object, path).map(Value::Object),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(index, item)| camel_case_keys(item, &format!("{path}[{index}]")))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        scalar => Ok(scalar.clone()),
    }
}

/// Normalises the value of the field `camel_name`: a map field is copied as
/// it is, anything else has its keys rewritten.
pub(crate) fn camel_case_field(
    camel_name: &str,
    value: &Value,
    path: &str,
) -> Result<Value, DuplicateField> {
    if is_map_field(camel_name) {
        Ok(value.clone())
    } else {
        camel_case_keys(value, path)
    }
}

fn camel_case_object(
    object: &Map<String, Value>,
    path: &str,
) -> Result<Map<String, Value>, DuplicateField> {
    let mut rewritten = Map::with_capacity(object.len());
    for (key, value) in object {
        let camel_key = snake_to_camel(key);
        let field_path = join_path(path, &camel_key);
        if rewritten.contains_key(&camel_key) {
            return Err(DuplicateField { path: field_path });
        }
        let camel_value = camel_case_field(&camel_key, value, &field_path)?;
        rewritten.insert(camel_key, camel_value);
    }
    Ok(rewritten)
}

/// `a` + `b` → `a.b`; an empty prefix gives `b`.
pub(crate) fn join_path(prefix: &str, field: &str) -> String {
    if prefix.is_empty() {
        field.to_owned()
    } else {
        format!("{prefix}.{field}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn snake_case_names_become_lower_camel_case() {
        assert_eq!(snake_to_camel("node_pools"), "nodePools");
        assert_eq!(snake_to_camel("boot_disk_size_gb"), "bootDiskSizeGb");
        assert_eq!(snake_to_camel("nodePools"), "nodePools");
        assert_eq!(snake_to_camel("@type"), "@type");
    }

    #[test]
    fn keys_are_rewritten_recursively_but_not_inside_maps() {
        let body = json!({
            "node_pools": [{"machine_spec": {"machine_type": "n2"}, "labels": {"cost_center": "a_b"}}],
            "orchestrator_spec": {"slurm_spec": {"config": {"Max_Job": "1"}}}
        });
        let rewritten = camel_case_keys(&body, "").unwrap();
        assert_eq!(
            rewritten,
            json!({
                "nodePools": [{"machineSpec": {"machineType": "n2"}, "labels": {"cost_center": "a_b"}}],
                "orchestratorSpec": {"slurmSpec": {"config": {"Max_Job": "1"}}}
            })
        );
    }

    #[test]
    fn both_spellings_of_one_field_are_rejected_with_the_path() {
        let body = json!({"network": {"sub_network": "a", "subNetwork": "b"}});
        let error = camel_case_keys(&body, "").unwrap_err();
        assert_eq!(error.path, "network.subNetwork");
    }
}
