//! The field-by-field comparison of a desired cluster with a live one, both as the model's JSON
//! (lowerCamelCase, integers as numbers), guided by the field table.
//!
//! Rules (docs/planning.md, "Comparison"): a field the desired cluster leaves unset is not
//! compared; output-only fields never are; a live field that is absent equals the zero value
//! of its type (proto3 JSON omits `0`, `false`, `""`, `[]`, `{}`); durations compare by their
//! length in seconds; keyed lists (node pools, partitions, node sets) match elements by key,
//! and the partitions' order is part of their value; the ownership label is invisible.

use std::borrow::Cow;
use std::collections::BTreeMap;

use clusterform_model::STACK_LABEL;
use clusterform_model::duration;
use clusterform_model::fields::{
    FieldAccess, FieldKind, FieldSpec, ImpactClass, slurm_parameter_key,
};
use serde_json::{Map, Value};

use crate::field_index::{self, Child, element_key, member};
use crate::plan::{FieldChange, Impact};
use clusterform_model::paths::{self, FieldPath};

/// Keyed lists whose order is part of their value: without `default_partition_id` the first
/// partition is the default one.
pub(crate) const ORDERED_KEYED_LISTS: &[&str] = &["orchestrator_spec.slurm_spec.partitions"];

/// The table path of the node pool list, whose elements give pool impacts their pool.
const NODE_POOLS: &str = "node_pools";

/// The outcome of a comparison.
#[derive(Debug, Default)]
pub(crate) struct Diff {
    /// Every difference, in field-table order.
    pub changes: Vec<FieldChange>,
    /// Per block present on both sides, the number of attributes set and equal.
    pub unchanged: BTreeMap<String, usize>,
}

/// Where in the cluster a walk is: a chain of borrowed steps, spelled as a [`FieldPath`] only
/// for a change or a block's count (building every place's path up front was a tenth of a
/// large plan's comparison).
#[derive(Debug, Clone, Copy)]
struct Place<'p> {
    step: Step<'p>,
    /// The node pool this place is in.
    pool: Option<&'p str>,
}

#[derive(Debug, Clone, Copy)]
enum Step<'p> {
    /// The cluster itself.
    Cluster,
    /// A field of the place before.
    Field(&'p Place<'p>, &'static str),
    /// The element with this key of the keyed list at the place before.
    Element(&'p Place<'p>, &'p str),
}

impl<'p> Place<'p> {
    const CLUSTER: Place<'static> = Place {
        step: Step::Cluster,
        pool: None,
    };

    fn child(&'p self, name: &'static str) -> Self {
        Self {
            step: Step::Field(self, name),
            pool: self.pool,
        }
    }

    fn element(&'p self, list: &FieldSpec, key: &'p str) -> Self {
        Self {
            step: Step::Element(self, key),
            pool: if list.path == NODE_POOLS {
                Some(key)
            } else {
                self.pool
            },
        }
    }

    /// Display path with selectors (`node_pools[cpu].scaling_spec`).
    fn path(&self) -> FieldPath {
        match self.step {
            Step::Cluster => FieldPath::default(),
            Step::Field(parent, name) => parent.path().child(name),
            Step::Element(parent, key) => parent.path().element(key),
        }
    }

    /// The text of [`Self::path`], without building its segments.
    fn text(&self) -> String {
        let mut out = String::with_capacity(64);
        self.write_text(&mut out);
        out
    }

    fn write_text(&self, out: &mut String) {
        match self.step {
            Step::Cluster => {}
            Step::Field(parent, name) => {
                parent.write_text(out);
                paths::push_child(out, name);
            }
            Step::Element(parent, key) => {
                parent.write_text(out);
                paths::push_element(out, key);
            }
        }
    }

    fn impact(&self, class: ImpactClass) -> Impact {
        let pool_scoped = matches!(
            class,
            ImpactClass::ResizesPool
                | ImpactClass::RecreatesNodes
                | ImpactClass::AddsPool
                | ImpactClass::DeletesPool
        );
        Impact {
            class,
            pool: self.pool.filter(|_| pool_scoped).map(str::to_owned),
            inferred: false,
        }
    }
}

/// Compares a desired cluster with the live one.
pub(crate) fn compare(desired: &Value, live: &Value) -> Diff {
    let mut diff = Diff::default();
    if let Some(desired) = desired.as_object() {
        diff.message("", &Place::CLUSTER, desired, live.as_object());
    }
    diff
}

/// Every set field of a cluster that does not exist yet, as additions.
pub(crate) fn creation(desired: &Value) -> Vec<FieldChange> {
    whole_cluster(desired, ImpactClass::AddsPool, |value| (None, Some(value)))
}

/// Every set field of the cluster a replacement creates, as additions, for a replacement whose
/// live cluster is too broken to compare with: each field comes with the replacement (so its
/// pools count as replaced, not added, in the GPUs a change moves).
pub(crate) fn recreation(desired: &Value) -> Vec<FieldChange> {
    whole_cluster(desired, ImpactClass::ReplacesCluster, |value| {
        (None, Some(value))
    })
}

/// Every field of a live cluster that is about to be deleted, as removals.
pub(crate) fn deletion(live: &Value) -> Vec<FieldChange> {
    whole_cluster(live, ImpactClass::DeletesPool, |value| (Some(value), None))
}

/// One change per leaf of a cluster that appears or disappears whole; `sides` places the value
/// before or after.
fn whole_cluster(
    cluster: &Value,
    pool_class: ImpactClass,
    sides: impl Fn(Value) -> (Option<Value>, Option<Value>),
) -> Vec<FieldChange> {
    let mut out = Vec::new();
    if let Some(cluster) = cluster.as_object() {
        leaves("", &Place::CLUSTER, cluster, &mut |place, value| {
            let class = if place.pool.is_some() {
                pool_class
            } else {
                ImpactClass::Immediate
            };
            let (before, after) = sides(value.clone());
            out.push(FieldChange {
                path: place.path(),
                before,
                after,
                forces_replacement: false,
                sensitive: false,
                impact: place.impact(class),
            });
        });
    }
    out
}

impl Diff {
    fn message(
        &mut self,
        parent: &str,
        at: &Place<'_>,
        desired: &Map<String, Value>,
        live: Option<&Map<String, Value>>,
    ) {
        let mut equal = 0;
        for (child, wanted) in field_index::set_fields(parent, desired) {
            let spec = child.spec;
            let current = live
                .and_then(|l| member(l, &child.json_name))
                .filter(|v| !v.is_null());
            match (spec.kind, wanted, &child.key_json) {
                (FieldKind::Message, Value::Object(wanted), _) => {
                    self.message(
                        &child.members,
                        &at.child(spec.name()),
                        wanted,
                        current.and_then(Value::as_object),
                    );
                }
                (FieldKind::KeyedList(_), Value::Array(wanted), Some(key_json)) => {
                    let list = KeyedList {
                        child,
                        key_json,
                        place: at.child(spec.name()),
                    };
                    self.keyed_list(&list, wanted, current);
                }
                _ => equal += usize::from(self.leaf(spec, at, wanted, current)),
            }
        }
        // Every block that exists on both sides is recorded, even with nothing equal in it, so
        // that the renderer can tell an existing block from a new one.
        if live.is_some() || equal > 0 {
            *self.unchanged.entry(at.text()).or_default() += equal;
        }
    }

    /// Compares one attribute of `block`: `true` when it is equal, else the change is recorded
    /// (its place is spelled only then).
    fn leaf(
        &mut self,
        spec: &'static FieldSpec,
        block: &Place<'_>,
        wanted: &Value,
        current: Option<&Value>,
    ) -> bool {
        let is_labels = spec.path == "labels";
        if is_labels && labels_equal(wanted, current) {
            return true;
        }
        let current: Option<Cow<'_, Value>> = if is_labels {
            current.map(|labels| Cow::Owned(without_stack_label(labels)))
        } else if spec.kind == FieldKind::SlurmConfig {
            current.map(|live| Cow::Owned(respelled(wanted, live)))
        } else {
            current.map(Cow::Borrowed)
        };
        if equal(spec.kind, wanted, current.as_deref()) {
            return true;
        }
        self.changes.push(changed(
            spec,
            &block.child(spec.name()),
            current.map(Cow::into_owned),
            Some(wanted.clone()),
        ));
        false
    }

    fn keyed_list(&mut self, list: &KeyedList<'_>, wanted: &[Value], current: Option<&Value>) {
        let spec = list.child.spec;
        let live_items: &[Value] = current.and_then(Value::as_array).map_or(&[], Vec::as_slice);
        let key_of = |item| element_key(item, list.key_json);
        for item in wanted {
            let Some(key) = key_of(item) else { continue };
            let element = list.place.element(spec, key);
            match live_items.iter().find(|l| key_of(l) == Some(key)) {
                Some(live_item) => {
                    if let Some(item) = item.as_object() {
                        self.message(&list.child.members, &element, item, live_item.as_object());
                    }
                }
                None => self.whole_element(list, &element, item, Side::Added),
            }
        }
        let wanted_keys: Vec<&str> = wanted.iter().filter_map(key_of).collect();
        for live_item in live_items {
            let Some(key) = key_of(live_item) else {
                continue;
            };
            if !wanted_keys.contains(&key) {
                let element = list.place.element(spec, key);
                self.whole_element(list, &element, live_item, Side::Removed);
            }
        }
        if ORDERED_KEYED_LISTS.contains(&spec.path) {
            let live_keys: Vec<&str> = live_items.iter().filter_map(key_of).collect();
            self.order(spec, &list.place, &wanted_keys, &live_keys);
        }
    }

    /// Records a reordering of the elements both sides have, as the list of keys.
    fn order(
        &mut self,
        spec: &'static FieldSpec,
        place: &Place<'_>,
        wanted: &[&str],
        live: &[&str],
    ) {
        let common_wanted: Vec<&str> = wanted
            .iter()
            .copied()
            .filter(|k| live.contains(k))
            .collect();
        let common_live: Vec<&str> = live
            .iter()
            .copied()
            .filter(|k| wanted.contains(k))
            .collect();
        if common_wanted != common_live {
            self.changes.push(changed(
                spec,
                place,
                Some(Value::from(live.to_vec())),
                Some(Value::from(wanted.to_vec())),
            ));
        }
    }

    fn whole_element(
        &mut self,
        list: &KeyedList<'_>,
        element: &Place<'_>,
        item: &Value,
        side: Side,
    ) {
        let spec = list.child.spec;
        let class = match (spec.path == NODE_POOLS, side) {
            (true, Side::Added) => ImpactClass::AddsPool,
            (true, Side::Removed) => ImpactClass::DeletesPool,
            (false, _) => spec.impact.unwrap_or(ImpactClass::ReplacesCluster),
        };
        let forces_replacement = spec.access == FieldAccess::Immutable;
        let mut push = |path: FieldPath, value: &Value| {
            let (before, after) = match side {
                Side::Added => (None, Some(value.clone())),
                Side::Removed => (Some(value.clone()), None),
            };
            self.changes.push(FieldChange {
                path,
                before,
                after,
                forces_replacement,
                sensitive: false,
                impact: element.impact(class),
            });
        };
        let mut any = false;
        if let Some(object) = item.as_object() {
            leaves(&list.child.members, element, object, &mut |place, value| {
                any = true;
                push(place.path(), value);
            });
        }
        if !any {
            push(element.path(), item);
        }
    }
}

/// A keyed list being compared: its index entry, its elements' key and its place.
struct KeyedList<'p> {
    child: &'static Child,
    key_json: &'static str,
    place: Place<'p>,
}

#[derive(Debug, Clone, Copy)]
enum Side {
    Added,
    Removed,
}

fn changed(
    spec: &FieldSpec,
    place: &Place<'_>,
    before: Option<Value>,
    after: Option<Value>,
) -> FieldChange {
    let class = spec.impact.unwrap_or(ImpactClass::ReplacesCluster);
    FieldChange {
        path: place.path(),
        before,
        after,
        forces_replacement: spec.access == FieldAccess::Immutable,
        sensitive: false,
        impact: Impact {
            inferred: spec.impact_inferred,
            ..place.impact(class)
        },
    }
}

/// Calls `found` with every set leaf field below a message, with its place.
fn leaves(
    parent: &str,
    at: &Place<'_>,
    object: &Map<String, Value>,
    found: &mut dyn FnMut(&Place<'_>, &Value),
) {
    for (child, value) in field_index::set_fields(parent, object) {
        let spec = child.spec;
        let place = at.child(spec.name());
        match (spec.kind, value, &child.key_json) {
            (FieldKind::Message, Value::Object(inner), _) => {
                leaves(&child.members, &place, inner, found);
            }
            (FieldKind::KeyedList(_), Value::Array(items), Some(key_json)) => {
                for (key, inner) in field_index::keyed_elements(items, key_json) {
                    leaves(&child.members, &place.element(spec, key), inner, found);
                }
            }
            _ => found(&place, value),
        }
    }
}

/// The live labels as the user sees them: without the ownership label.
fn without_stack_label(labels: &Value) -> Value {
    let mut labels = labels.clone();
    if let Some(map) = labels.as_object_mut() {
        map.remove(STACK_LABEL);
    }
    labels
}

/// Whether the desired labels are exactly the live ones without the ownership label, decided
/// without copying the live labels (which [`without_stack_label`] does for a change). `false`
/// only means "not shown equal here": the caller then compares the copy.
fn labels_equal(wanted: &Value, live: Option<&Value>) -> bool {
    let (Some(wanted), Some(live)) = (wanted.as_object(), live.and_then(Value::as_object)) else {
        return false;
    };
    let owned = usize::from(live.contains_key(STACK_LABEL));
    wanted.len() + owned == live.len()
        && wanted
            .iter()
            .all(|(key, value)| key != STACK_LABEL && live.get(key) == Some(value))
}

/// Whether a desired value equals the live one after normalisation.
fn equal(kind: FieldKind, wanted: &Value, current: Option<&Value>) -> bool {
    let zero;
    let current = match current {
        Some(current) => current,
        None => match zero_value(kind) {
            Some(value) => {
                zero = value;
                &zero
            }
            None => return false,
        },
    };
    match kind {
        FieldKind::Duration => match (wanted.as_str(), current.as_str()) {
            (Some(a), Some(b)) => match (duration::parse(a), duration::parse(b)) {
                (Ok(a), Ok(b)) => a == b,
                _ => a == b,
            },
            _ => wanted == current,
        },
        FieldKind::Integer => integer(wanted).is_some() && integer(wanted) == integer(current),
        FieldKind::SlurmConfig => match (slurm_parameters(wanted), slurm_parameters(current)) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        },
        _ => wanted == current,
    }
}

/// A Slurm configuration map as the service reads it: each parameter under its
/// case-and-underscore-free key, each value as `slurm.conf` text. `None` when it is not a map
/// of scalars, or names one parameter twice (such a map equals nothing).
fn slurm_parameters(map: &Value) -> Option<BTreeMap<String, String>> {
    let map = map.as_object()?;
    let mut parameters = BTreeMap::new();
    for (key, value) in map {
        let text = match value {
            Value::String(text) => text.clone(),
            Value::Number(_) | Value::Bool(_) => value.to_string(),
            _ => return None,
        };
        if parameters.insert(slurm_parameter_key(key), text).is_some() {
            return None;
        }
    }
    Some(parameters)
}

/// The live Slurm configuration map with each parameter spelt as the desired map spells it,
/// so that a plan shows only the parameters whose values change.
fn respelled(wanted: &Value, live: &Value) -> Value {
    let (Some(wanted), Some(live)) = (wanted.as_object(), live.as_object()) else {
        return live.clone();
    };
    let spellings: BTreeMap<String, &String> = wanted
        .keys()
        .map(|key| (slurm_parameter_key(key), key))
        .collect();
    let mut out = Map::new();
    for (key, value) in live {
        let spelt = spellings
            .get(&slurm_parameter_key(key))
            .map_or_else(|| key.clone(), |k| (*k).clone());
        out.insert(spelt, value.clone());
    }
    Value::Object(out)
}

/// An integer from a number or a decimal string.
fn integer(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// What proto3 JSON leaves out: the value an absent field has.
fn zero_value(kind: FieldKind) -> Option<Value> {
    match kind {
        FieldKind::String | FieldKind::Enum(_) => Some(Value::from("")),
        FieldKind::Integer => Some(Value::from(0)),
        FieldKind::Bool => Some(Value::Bool(false)),
        FieldKind::Duration => Some(Value::from("0s")),
        FieldKind::StringList | FieldKind::EnumList(_) | FieldKind::KeyedList(_) => {
            Some(Value::Array(Vec::new()))
        }
        FieldKind::StringMap | FieldKind::SlurmConfig => Some(Value::Object(Map::new())),
        FieldKind::Message | FieldKind::Timestamp | FieldKind::Json => None,
    }
}

#[cfg(test)]
mod tests {
    use clusterform_model::fields;
    use serde_json::json;

    use super::*;

    fn paths_of(diff: &Diff) -> Vec<&str> {
        diff.changes.iter().map(|c| c.path.as_str()).collect()
    }

    #[test]
    fn a_place_is_spelled_as_its_field_path() {
        let pools = fields::lookup("node_pools").unwrap();
        let cluster = Place::CLUSTER;
        let list = cluster.child("node_pools");
        let pool = list.element(pools, "gpu");
        let scaling = pool.child("scaling_spec");
        let leaf = scaling.child("max_node_count");
        let expected = FieldPath::default()
            .child("node_pools")
            .element("gpu")
            .child("scaling_spec")
            .child("max_node_count");
        assert_eq!(leaf.path(), expected);
        assert_eq!(leaf.text(), expected.as_str());
        assert_eq!(leaf.pool, Some("gpu"));
        assert_eq!(cluster.text(), "");
    }

    #[test]
    fn unset_fields_and_server_defaults_are_not_compared() {
        let desired = json!({"nodePools": [{"id": "cpu", "zone": "z"}]});
        let live = json!({"nodePools": [{"id": "cpu", "zone": "z", "bootDisk": {"bootDiskType": "pd-ssd"}, "nodeImage": "img"}],
                          "network": {"subnetwork": "s"}, "updateTime": "t"});
        let diff = compare(&desired, &live);
        assert!(diff.changes.is_empty(), "{:?}", diff.changes);
        assert_eq!(diff.unchanged.get("node_pools[cpu]"), Some(&1));
    }

    #[test]
    fn pools_match_by_id_in_any_order() {
        let desired = json!({"nodePools": [{"id": "a", "zone": "z1"}, {"id": "b", "zone": "z2"}]});
        let live = json!({"nodePools": [{"id": "b", "zone": "z2"}, {"id": "a", "zone": "z1"}]});
        assert!(compare(&desired, &live).changes.is_empty());
    }

    #[test]
    fn absent_live_fields_equal_zero_values_and_strings_equal_integers() {
        let desired = json!({"nodePools": [{"id": "a", "enablePublicIps": false, "filestores": [],
                                            "scalingSpec": {"minNodeCount": 0, "maxNodeCount": 8},
                                            "flexStartMaxDuration": "7d"}]});
        let live = json!({"nodePools": [{"id": "a", "scalingSpec": {"maxNodeCount": "8"}, "flexStartMaxDuration": "604800s"}]});
        assert!(compare(&desired, &live).changes.is_empty());
    }

    #[test]
    fn ownership_label_is_invisible() {
        let desired = json!({"labels": {"team": "ml"}});
        let live = json!({"labels": {"team": "ml", "clusterform-stack": "s"}});
        assert!(compare(&desired, &live).changes.is_empty());
    }

    #[test]
    fn labels_differ_by_any_key_or_value_but_the_ownership_label() {
        let live = json!({"labels": {"a": "1", "clusterform-stack": "s", "b": "2"}});
        for (wanted, changed) in [
            (json!({"b": "2", "a": "1"}), false),
            (json!({"a": "1"}), true),
            (json!({"a": "1", "b": "3"}), true),
            (json!({"a": "1", "b": "2", "c": "3"}), true),
            (json!({"a": "1", "b": "2", "clusterform-stack": "s"}), true),
        ] {
            let diff = compare(&json!({ "labels": wanted }), &live);
            assert_eq!(!diff.changes.is_empty(), changed, "{wanted}");
            let unchanged = diff.unchanged.get("").copied();
            assert_eq!(unchanged, Some(usize::from(!changed)), "{wanted}");
        }
        let unlabelled = compare(&json!({"labels": {}}), &json!({}));
        assert!(unlabelled.changes.is_empty());
    }

    #[test]
    fn added_and_removed_pools_are_listed_by_leaf_with_pool_impacts() {
        let desired = json!({"nodePools": [{"id": "new", "zone": "z"}]});
        let live = json!({"nodePools": [{"id": "old", "machineSpec": {"machineType": "n2"}}]});
        let diff = compare(&desired, &live);
        assert_eq!(
            paths_of(&diff),
            [
                "node_pools[new].zone",
                "node_pools[old].machine_spec.machine_type"
            ]
        );
        assert_eq!(diff.changes[0].impact.class, ImpactClass::AddsPool);
        assert_eq!(diff.changes[1].impact.class, ImpactClass::DeletesPool);
        assert_eq!(diff.changes[1].impact.pool.as_deref(), Some("old"));
        assert!(!diff.changes[1].forces_replacement);
    }

    #[test]
    fn partition_order_is_part_of_the_value() {
        let desired =
            json!({"orchestratorSpec": {"slurmSpec": {"partitions": [{"id": "b"}, {"id": "a"}]}}});
        let live =
            json!({"orchestratorSpec": {"slurmSpec": {"partitions": [{"id": "a"}, {"id": "b"}]}}});
        let diff = compare(&desired, &live);
        assert_eq!(paths_of(&diff), ["orchestrator_spec.slurm_spec.partitions"]);
        assert_eq!(diff.changes[0].after, Some(json!(["b", "a"])));
    }

    fn slurm_config(config: &Value) -> Value {
        json!({"orchestratorSpec": {"slurmSpec": {"config": config}}})
    }

    #[test]
    fn slurm_parameters_compare_without_case_and_underscores_and_values_as_text() {
        let live = slurm_config(&json!({"defmempercpu": "1024", "PreemptMode": "SUSPEND,GANG"}));
        let desired =
            slurm_config(&json!({"def_mem_per_cpu": 1024, "preemptmode": "SUSPEND,GANG"}));
        assert!(compare(&desired, &live).changes.is_empty());
        let desired =
            slurm_config(&json!({"DefMemPerCPU": "2048", "preempt_mode": "SUSPEND,GANG"}));
        let diff = compare(&desired, &live);
        assert_eq!(paths_of(&diff), ["orchestrator_spec.slurm_spec.config"]);
        assert_eq!(
            diff.changes[0].before,
            Some(json!({"DefMemPerCPU": "1024", "preempt_mode": "SUSPEND,GANG"})),
            "the live map is shown in the configuration's spelling"
        );
        assert!(!diff.changes[0].forces_replacement);
        let nodes = json!({"orchestratorSpec": {"slurmSpec": {
            "partitions": [{"id": "a", "config": {"MaxTime": "1:00:00"}}],
            "nodeSets": [{"nodePoolId": "gpu", "config": {"Weight": "10"}}]}}});
        let spelt = json!({"orchestratorSpec": {"slurmSpec": {
            "partitions": [{"id": "a", "config": {"max_time": "1:00:00"}}],
            "nodeSets": [{"nodePoolId": "gpu", "config": {"weight": 10}}]}}});
        assert!(compare(&spelt, &nodes).changes.is_empty());
    }

    #[test]
    fn a_map_naming_one_parameter_twice_equals_nothing() {
        let twice = slurm_config(&json!({"DefMemPerCPU": "1", "def_mem_per_cpu": "1"}));
        let live = slurm_config(&json!({"defmempercpu": "1"}));
        assert_eq!(compare(&twice, &live).changes.len(), 1);
    }

    #[test]
    fn slurm_maps_and_renames_update_in_place() {
        let desired = json!({"displayName": "new", "orchestratorSpec": {"slurmSpec": {
            "config": {"A": "1"}, "defaultPartitionId": "b",
            "nodeSets": [{"nodePoolId": "gpu", "config": {"Weight": "1"}}]}},
            "lustreExportConfig": {"destinationBucket": "b2"}});
        let live = json!({"displayName": "old", "orchestratorSpec": {"slurmSpec": {
            "config": {"A": "2"}, "defaultPartitionId": "a",
            "nodeSets": [{"nodePoolId": "gpu", "config": {"Weight": "2"}}]}},
            "lustreExportConfig": {"destinationBucket": "b1"}});
        let diff = compare(&desired, &live);
        assert_eq!(diff.changes.len(), 5, "{:?}", diff.changes);
        assert!(diff.changes.iter().all(|c| !c.forces_replacement));
    }

    #[test]
    fn immutable_changes_force_replacement() {
        let desired = json!({"network": {"network": "new"}, "nodePools": [{"id": "a", "machineSpec": {"machineType": "n2"}}]});
        let live = json!({"network": {"network": "old"}, "nodePools": [{"id": "a", "machineSpec": {"machineType": "a3"}}]});
        let diff = compare(&desired, &live);
        assert!(diff.changes.iter().all(|c| c.forces_replacement));
        assert!(
            diff.changes
                .iter()
                .all(|c| c.impact.class == ImpactClass::ReplacesCluster)
        );
    }
}
