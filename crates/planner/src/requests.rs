//! The exact REST requests of a plan: paths, query parameters and lowerCamelCase JSON bodies.
//!
//! A PATCH body is the complete cluster as it should be after the update, as the product
//! documentation shows it: the live cluster without its output-only fields, with the values
//! of the masked paths replaced by the desired ones; `updateMask` names what changes. Masked
//! repeated fields are replaced whole by the service, so the `node_pools` and `partitions`
//! lists sent are the complete desired lists, each element's unset fields filled from the live
//! element with the same key, and a masked message (`scheduling`, `accounting`,
//! `lustre_export_config`) is the live one overlaid with what the configuration sets: nothing
//! the configuration leaves unset (server defaults, fields this version does not know) is reset
//! by omission. Every body carries the ownership label
//! (except a release's, which drops it), durations in protobuf form, and both node counts of
//! every scaling spec.

use clusterform_model::duration;
use clusterform_model::fields::{self, FieldAccess, FieldKind, UpdateMaskPath, camel_case};
use clusterform_model::rest::{ClusterRequest, UpdateMask};
use clusterform_model::{Cluster, ClusterName, STACK_LABEL, UpdateMode};
use serde_json::{Map, Value};

use crate::field_index;
use crate::ignore::find_element;

/// `POST …/modelDevelopmentClusters?modelDevelopmentClusterId=ID` with the desired cluster.
pub(crate) fn create(name: &ClusterName, desired: &Value, stack: &str) -> ClusterRequest {
    let mut body = desired.clone();
    if let Some(object) = body.as_object_mut() {
        let labels = object
            .entry("labels")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(labels) = labels.as_object_mut() {
            labels.insert(STACK_LABEL.to_owned(), Value::from(stack));
        }
    }
    canonicalise(&mut body);
    ClusterRequest::Create {
        name: name.clone(),
        body,
    }
}

/// `PATCH …/ID?updateMask=…&updateMode=…` carrying the complete cluster after the update.
pub(crate) fn update(
    name: &ClusterName,
    mask: &[UpdateMaskPath],
    mode: UpdateMode,
    desired: &Value,
    live: &Value,
    stack: &str,
) -> ClusterRequest {
    let mut body = writable(live);
    for path in mask {
        let pointer = json_pointer(*path);
        let wanted = desired.pointer(&pointer).cloned().unwrap_or(Value::Null);
        let current = live.pointer(&pointer);
        let value = match path {
            UpdateMaskPath::Labels => with_stack_label(wanted, stack),
            UpdateMaskPath::NodePools | UpdateMaskPath::Partitions | UpdateMaskPath::NodeSets => {
                filled_from_live(path.as_str(), &wanted, current)
            }
            UpdateMaskPath::Accounting
            | UpdateMaskPath::Scheduling
            | UpdateMaskPath::LustreExportConfig => match current {
                Some(current) => merged(path.as_str(), current, &wanted),
                None => wanted,
            },
            UpdateMaskPath::DisplayName
            | UpdateMaskPath::LoginNodePoolId
            | UpdateMaskPath::PrologBashScripts
            | UpdateMaskPath::EpilogBashScripts
            | UpdateMaskPath::DefaultPartitionId
            | UpdateMaskPath::SlurmConfig => wanted,
        };
        set_at(&mut body, &pointer, value);
    }
    canonicalise(&mut body);
    patch(name, mask, mode, body)
}

/// The `labels` PATCH of a `removed` block: the live cluster with its ownership label dropped,
/// in `USER_ONLY` mode so that the service refreshes nothing else.
pub(crate) fn release(name: &ClusterName, live: &Value) -> ClusterRequest {
    let mut body = writable(live);
    if let Some(labels) = body.get_mut("labels").and_then(Value::as_object_mut) {
        labels.remove(STACK_LABEL);
    }
    labels_only(name, body)
}

/// The `labels` PATCH of `clusterform import`: the live cluster with this stack's ownership
/// label added, in `USER_ONLY` mode so that taking ownership refreshes nothing else.
pub fn adopt(name: &ClusterName, live: &Cluster, stack: &str) -> ClusterRequest {
    let live = serde_json::to_value(live).unwrap_or_default();
    let mut body = writable(&live);
    if let Some(object) = body.as_object_mut() {
        let labels = object.remove("labels").unwrap_or(Value::Null);
        object.insert("labels".to_owned(), with_stack_label(labels, stack));
    }
    labels_only(name, body)
}

fn labels_only(name: &ClusterName, mut body: Value) -> ClusterRequest {
    canonicalise(&mut body);
    patch(name, &[UpdateMaskPath::Labels], UpdateMode::UserOnly, body)
}

/// The live cluster without the output-only fields the service sets itself.
fn writable(live: &Value) -> Value {
    let mut body = live.clone();
    if let Some(object) = body.as_object_mut() {
        for child in field_index::children("") {
            if child.spec.access == FieldAccess::OutputOnly {
                object.remove(&child.json_name);
            }
        }
    }
    body
}

fn patch(
    name: &ClusterName,
    mask: &[UpdateMaskPath],
    mode: UpdateMode,
    body: Value,
) -> ClusterRequest {
    ClusterRequest::Update {
        name: name.clone(),
        mask: UpdateMask::new(mask.to_vec()),
        mode,
        body,
    }
}

/// `DELETE …/ID`, without a body.
pub(crate) fn delete(name: &ClusterName) -> ClusterRequest {
    ClusterRequest::Delete { name: name.clone() }
}

/// `orchestrator_spec.slurm_spec.partitions` → `/orchestratorSpec/slurmSpec/partitions`.
fn json_pointer(path: UpdateMaskPath) -> String {
    path.as_str()
        .split('.')
        .map(|segment| format!("/{}", camel_case(segment)))
        .collect()
}

fn set_at(body: &mut Value, pointer: &str, value: Value) {
    let mut current = body;
    let segments: Vec<&str> = pointer.trim_start_matches('/').split('/').collect();
    let Some((last, parents)) = segments.split_last() else {
        return;
    };
    for segment in parents {
        let Some(object) = current.as_object_mut() else {
            return;
        };
        current = object
            .entry(*segment)
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if let Some(object) = current.as_object_mut() {
        object.insert((*last).to_owned(), value);
    }
}

fn with_stack_label(labels: Value, stack: &str) -> Value {
    let mut labels = match labels {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    labels.insert(STACK_LABEL.to_owned(), Value::from(stack));
    Value::Object(labels)
}

/// The desired keyed list, each element completed with the live element of the same key.
fn filled_from_live(list_path: &str, wanted: &Value, live: Option<&Value>) -> Value {
    let Some(FieldKind::KeyedList(key_field)) = fields::lookup(list_path).map(|s| s.kind) else {
        return wanted.clone();
    };
    let key_json = camel_case(key_field);
    let element_path = format!("{list_path}[]");
    let items = wanted.as_array().map_or(&[][..], Vec::as_slice);
    let filled = items
        .iter()
        .map(|item| {
            let key = item.get(&key_json).and_then(Value::as_str);
            match key
                .zip(live)
                .and_then(|(key, live)| find_element(live, &key_json, key))
            {
                Some(live_item) => merged(&element_path, live_item, item),
                None => item.clone(),
            }
        })
        .collect();
    Value::Array(filled)
}

/// A live value a PATCH sends back for a field the configuration leaves unset.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Carried {
    /// Where, as plans show paths: `node_pools[cpu].node_image`.
    pub path: String,
    /// The field table's path: `node_pools[].node_image`.
    pub generic: &'static str,
    /// What is sent.
    pub value: Value,
}

/// The values a `node_pools` PATCH carries from the live cluster into pools the configuration
/// declares, for fields their declaration leaves unset (what the service filled in: `nodeImage`,
/// a boot disk's defaults, …). Sending
/// back a service-filled value may pin it: an unset `node_image` follows the default image,
/// a set one keeps the pool on that image (*Create cluster*).
pub(crate) fn carried_from_live(desired: &Value, request: &ClusterRequest) -> Vec<Carried> {
    let ClusterRequest::Update { body, mask, .. } = request else {
        return Vec::new();
    };
    if !mask.paths().contains(&UpdateMaskPath::NodePools) {
        return Vec::new();
    }
    let declared = desired.get("nodePools").and_then(Value::as_array);
    let sent = body.get("nodePools").and_then(Value::as_array);
    let mut carried = Vec::new();
    for pool in sent.into_iter().flatten() {
        let Some(id) = pool.get("id").and_then(Value::as_str) else {
            continue;
        };
        let Some(wanted) = declared
            .into_iter()
            .flatten()
            .find(|p| p.get("id").and_then(Value::as_str) == Some(id))
        else {
            continue;
        };
        let path = format!("node_pools[{id}]");
        unset_in("node_pools[]", &path, pool, wanted, &mut carried);
    }
    carried
}

/// The leaves of `sent` (a message at the table path `parent`, shown as `shown`) that
/// `wanted` leaves unset.
fn unset_in(parent: &str, shown: &str, sent: &Value, wanted: &Value, carried: &mut Vec<Carried>) {
    for child in field_index::children(parent) {
        let Some(value) = sent.get(&child.json_name).filter(|v| !v.is_null()) else {
            continue;
        };
        let path = format!("{shown}.{}", child.spec.name());
        let declared = wanted.get(&child.json_name).filter(|v| !v.is_null());
        match declared {
            _ if child.spec.kind == FieldKind::Message => {
                let nothing = Value::Object(Map::new());
                let inner = declared.unwrap_or(&nothing);
                unset_in(child.spec.path, &path, value, inner, carried);
            }
            Some(_) => {}
            None if child.is_key => {}
            None => carried.push(Carried {
                path,
                generic: child.spec.path,
                value: value.clone(),
            }),
        }
    }
}

/// `live` overlaid with what `desired` sets; nested messages merge, every other field
/// (lists, maps, scalars) is taken whole from `desired`.
fn merged(parent: &str, live: &Value, desired: &Value) -> Value {
    let (Some(live_object), Some(desired_object)) = (live.as_object(), desired.as_object()) else {
        return desired.clone();
    };
    let mut out = live_object.clone();
    for (key, wanted) in desired_object {
        let child = field_index::children(parent)
            .iter()
            .find(|c| c.json_name == *key);
        let value = match (child, out.get(key)) {
            (Some(child), Some(current)) if child.spec.kind == FieldKind::Message => {
                merged(child.spec.path, current, wanted)
            }
            _ => wanted.clone(),
        };
        out.insert(key.clone(), value);
    }
    Value::Object(out)
}

/// Durations in protobuf form, and both node counts in every scaling spec (the API reads an
/// absent count as 0, so a count is never left to chance).
fn canonicalise(body: &mut Value) {
    canonicalise_message("", body);
}

fn canonicalise_message(parent: &str, value: &mut Value) {
    let Some(object) = value.as_object_mut() else {
        return;
    };
    if parent == "node_pools[].scaling_spec" {
        for count in ["minNodeCount", "maxNodeCount"] {
            object.entry(count).or_insert_with(|| Value::from(0));
        }
    }
    for child in field_index::children(parent) {
        let spec = child.spec;
        let Some(field) = object.get_mut(&child.json_name) else {
            continue;
        };
        match spec.kind {
            FieldKind::Duration => {
                if let Some(seconds) = field.as_str().and_then(|text| duration::parse(text).ok()) {
                    *field = Value::from(seconds.to_proto());
                }
            }
            FieldKind::Message => canonicalise_message(&child.members, field),
            FieldKind::KeyedList(_) => {
                for item in field.as_array_mut().into_iter().flatten() {
                    canonicalise_message(&child.members, item);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn address() -> ClusterName {
        ClusterName::new("my-proj", "us-central1", "c1").unwrap()
    }

    #[test]
    fn pools_are_sent_complete_and_filled_from_live() {
        let desired = json!({"nodePools": [{"id": "cpu", "scalingSpec": {"maxNodeCount": 8}}, {"id": "new", "zone": "z"}]});
        let live = json!({"nodePools": [
            {"id": "gone"},
            {"id": "cpu", "scalingSpec": {"maxNodeCount": "4"}, "bootDisk": {"bootDiskType": "pd-ssd"}, "futureField": 1}
        ]});
        let request = update(
            &address(),
            &[UpdateMaskPath::NodePools],
            UpdateMode::UserOnly,
            &desired,
            &live,
            "s",
        );
        assert_eq!(
            request.body().unwrap(),
            &json!({"nodePools": [
                {"id": "cpu", "scalingSpec": {"maxNodeCount": 8, "minNodeCount": 0}, "bootDisk": {"bootDiskType": "pd-ssd"}, "futureField": 1},
                {"id": "new", "zone": "z"}
            ]})
        );
        assert_eq!(
            request.path(),
            "/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters/c1"
        );
        assert_eq!(
            request.query()[0],
            ("updateMask".to_owned(), "node_pools".to_owned())
        );
    }

    #[test]
    fn labels_keep_the_ownership_label_and_scripts_nest() {
        let desired = json!({"labels": {"a": "1"}, "orchestratorSpec": {"slurmSpec": {"prologBashScripts": ["x"]}}});
        let mask = [UpdateMaskPath::Labels, UpdateMaskPath::PrologBashScripts];
        let request = update(
            &address(),
            &mask,
            UpdateMode::UserAndService,
            &desired,
            &json!({}),
            "s",
        );
        assert_eq!(
            request.body().unwrap(),
            &json!({"labels": {"a": "1", "clusterform-stack": "s"},
                   "orchestratorSpec": {"slurmSpec": {"prologBashScripts": ["x"]}}})
        );
        assert_eq!(
            request.query()[0].1,
            "labels,orchestrator_spec.slurm_spec.prolog_bash_scripts"
        );
    }

    #[test]
    fn create_adds_the_label_and_canonical_durations() {
        let desired = json!({"nodePools": [{"id": "g", "flexStartMaxDuration": "7d", "scalingSpec": {"maxNodeCount": 2}}]});
        let request = create(&address(), &desired, "s");
        assert_eq!(
            request.query(),
            [("modelDevelopmentClusterId".to_owned(), "c1".to_owned())]
        );
        assert_eq!(
            request.body().unwrap(),
            &json!({"nodePools": [{"id": "g", "flexStartMaxDuration": "604800s", "scalingSpec": {"maxNodeCount": 2, "minNodeCount": 0}}],
                   "labels": {"clusterform-stack": "s"}})
        );
        assert_eq!(delete(&address()).body(), None);
    }

    /// The planner compares with a live cluster encoded through `Cluster::writable`: it must
    /// hold exactly what `writable` keeps of the whole cluster. (Not in the same order:
    /// `writable` moves fields as it removes others, so a PATCH body is built from the whole.)
    #[test]
    fn the_writable_view_encodes_what_writable_keeps() {
        let live: Cluster = serde_json::from_value(json!({
            "name": "projects/my-proj/locations/us-central1/modelDevelopmentClusters/c1",
            "displayName": "d",
            "labels": {"team": "ml", "clusterform-stack": "s"},
            "network": {"network": "n", "subnetwork": "s"},
            "nodePools": [{"id": "cpu", "scalingSpec": {"maxNodeCount": 2}, "nodeImage": "i"}],
            "orchestratorSpec": {"slurmSpec": {"loginNodePoolId": "cpu"}},
            "runtimeSpec": {"serviceAccount": "sa"},
            "lustreExportConfig": {"bucket": "b"},
            "createTime": "2025-01-01T00:00:00Z",
            "updateTime": "2025-01-02T00:00:00Z",
            "startTime": "2025-01-03T00:00:00Z",
            "clusterStatus": {"state": "RUNNING"},
            "clusterEvents": [{"description": "created"}],
            "runtime": {"xmanager": {}},
            "satisfiesPzs": true
        }))
        .unwrap();
        let whole = serde_json::to_value(&live).unwrap();
        let view = serde_json::to_value(live.writable()).unwrap();
        assert_eq!(view, writable(&whole));
        assert!(view.get("satisfiesPzs").is_some() && view.get("lustreExportConfig").is_some());
    }

    #[test]
    fn adopting_adds_the_label_to_the_writable_live_cluster_user_only() {
        let live: Cluster = serde_json::from_value(json!({
            "name": "projects/my-proj/locations/us-central1/modelDevelopmentClusters/c1",
            "createTime": "2025-01-01T00:00:00Z",
            "labels": {"team": "ml"},
            "nodePools": [{"id": "cpu", "scalingSpec": {"maxNodeCount": 2}}]
        }))
        .unwrap();
        let ClusterRequest::Update {
            name,
            mask,
            mode,
            body,
        } = adopt(&address(), &live, "s")
        else {
            panic!("adopting is an update");
        };
        assert_eq!(name, address());
        assert_eq!(mask.to_string(), "labels");
        assert_eq!(mode, UpdateMode::UserOnly);
        assert_eq!(
            body,
            json!({"labels": {"team": "ml", "clusterform-stack": "s"},
                   "nodePools": [{"id": "cpu", "scalingSpec": {"maxNodeCount": 2, "minNodeCount": 0}}]})
        );
    }
}
