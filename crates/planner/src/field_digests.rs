//! The digest of each field of a cluster, by path: what the applied record keeps of the cluster
//! an apply left, so that the next plan can tell, field by field, what changed since outside
//! clusterform ([`crate::drift`]).
//!
//! The executor takes them from the cluster the operation returned, and the planner from the
//! cluster the refresh read: the service's spelling both times, so equal values have equal
//! digests, and a pool running the alternative clusterform fell back to holds that
//! alternative's values in both. A map (labels, a Slurm `config`) has one entry per key (the
//! ownership label left out), a keyed list's element one entry of its own (its presence) beside
//! those of its fields, and a list whose order is part of its value one entry for the order.

use std::borrow::Cow;
use std::collections::BTreeMap;

use clusterform_model::fields::FieldKind;
use clusterform_model::paths::FieldPath;
use clusterform_model::{Cluster, STACK_LABEL};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use crate::diff::ORDERED_KEYED_LISTS;
use crate::field_index;

/// The digest of each field of a cluster, by the field's path in the plan's spelling
/// (`labels.team`, `node_pools[cpu].scaling_spec.max_node_count`, `node_pools[cpu]`).
pub type FieldDigests = BTreeMap<String, String>;

/// Hex digits kept of each field's SHA-256: 64 bits tell a changed value from the recorded
/// one as surely as the whole digest would, in a quarter of the record's bytes.
const DIGEST_HEX_DIGITS: usize = 16;

/// The digest of each writable field `cluster` sets (output-only fields have none).
pub fn field_digests(cluster: &Cluster) -> FieldDigests {
    serde_json::to_value(cluster.writable())
        .map(|json| digests_of(&json))
        .unwrap_or_default()
}

/// [`field_digests`] of a cluster already encoded as JSON.
pub(crate) fn digests_of(cluster: &Value) -> FieldDigests {
    fields_of(cluster)
        .into_iter()
        .map(|(path, value)| (path.to_string(), digest(&value)))
        .collect()
}

/// Each field of `cluster` with its value, as [`FieldDigests`] names them.
pub(crate) fn fields_of(cluster: &Value) -> Vec<(FieldPath, Cow<'_, Value>)> {
    let mut out = Vec::new();
    if let Some(cluster) = cluster.as_object() {
        walk("", &FieldPath::default(), cluster, &mut out);
    }
    out
}

fn walk<'v>(
    parent: &str,
    at: &FieldPath,
    object: &'v Map<String, Value>,
    out: &mut Vec<(FieldPath, Cow<'v, Value>)>,
) {
    for (child, value) in field_index::set_fields(parent, object) {
        let spec = child.spec;
        let path = at.child(spec.name());
        match (spec.kind, value, &child.key_json) {
            (FieldKind::Message, Value::Object(inner), _) => {
                walk(&child.members, &path, inner, out);
            }
            (FieldKind::KeyedList(_), Value::Array(items), Some(key_json)) => {
                let mut keys = Vec::new();
                for (key, inner) in field_index::keyed_elements(items, key_json) {
                    let element = path.element(key);
                    out.push((element.clone(), Cow::Owned(Value::from(key))));
                    walk(&child.members, &element, inner, out);
                    keys.push(key);
                }
                if ORDERED_KEYED_LISTS.contains(&spec.path) {
                    out.push((path, Cow::Owned(Value::from(keys))));
                }
            }
            (FieldKind::StringMap | FieldKind::SlurmConfig, Value::Object(map), _) => {
                let labels = spec.path == "labels";
                for (key, value) in map {
                    if !(labels && key == STACK_LABEL) {
                        out.push((path.child(key), Cow::Borrowed(value)));
                    }
                }
            }
            _ => out.push((path, Cow::Borrowed(value))),
        }
    }
}

/// The first [`DIGEST_HEX_DIGITS`] hex digits of the SHA-256 of `value`'s canonical JSON.
fn digest(value: &Value) -> String {
    let mut canonical = String::new();
    write_canonical(value, &mut canonical);
    let mut hex: String = Sha256::digest(canonical.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    hex.truncate(DIGEST_HEX_DIGITS);
    hex
}

/// Writes `value` as compact JSON with every object's keys in byte order.
pub(crate) fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(object) => {
            let sorted: BTreeMap<&String, &Value> = object.iter().collect();
            out.push('{');
            for (index, (key, value)) in sorted.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push(':');
                write_canonical(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn paths(cluster: &Value) -> Vec<String> {
        digests_of(cluster).into_keys().collect()
    }

    #[test]
    fn maps_are_told_key_by_key_and_elements_have_an_entry_of_their_own() {
        let cluster = json!({
            "displayName": "x",
            "labels": {"team": "ml", STACK_LABEL: "prod"},
            "nodePools": [{"id": "cpu", "machineSpec": {"machineType": "n2-standard-8"}}],
            "name": "projects/p/locations/r/clusters/x",
        });
        assert_eq!(
            paths(&cluster),
            [
                "display_name",
                "labels.team",
                "node_pools[cpu]",
                "node_pools[cpu].machine_spec.machine_type",
            ]
        );
    }

    #[test]
    fn the_order_of_partitions_is_a_field_and_equal_values_have_equal_digests() {
        let cluster = |first: &str, second: &str| {
            json!({"orchestratorSpec": {"slurmSpec": {"partitions": [
                {"id": first, "nodePoolIds": ["cpu"]},
                {"id": second, "nodePoolIds": ["cpu"]},
            ]}}})
        };
        let ab = digests_of(&cluster("a", "b"));
        let ba = digests_of(&cluster("b", "a"));
        let order = "orchestrator_spec.slurm_spec.partitions";
        assert_ne!(ab[order], ba[order]);
        let element = "orchestrator_spec.slurm_spec.partitions[a].node_pool_ids";
        assert_eq!(ab[element], ba[element]);
        assert_eq!(ab[element].len(), DIGEST_HEX_DIGITS);
    }
}
