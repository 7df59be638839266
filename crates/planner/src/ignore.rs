//! `lifecycle.ignore_changes`: taking the paths out of the comparison.
//!
//! The configuration has read and checked the paths users write
//! ([`clusterform_model::paths::IgnorePath`]). An ignored field is removed
//! from the desired cluster before diffing, which makes it "unset": it is not compared, and a
//! `node_pools` PATCH fills it from the live pool, so the live value is kept. An ignored element
//! (`node_pool.cpu`) is replaced by its live counterpart.

use clusterform_model::fields::{self, FieldKind, camel_case};
use serde_json::Value;

use clusterform_model::paths::{self, Segment, Selector};

/// Removes one ignored path from the desired cluster JSON, using the live cluster JSON to
/// restore ignored list elements.
pub(crate) fn apply(desired: &mut Value, live: &Value, segments: &[Segment]) {
    apply_at(desired, Some(live), "", segments);
}

fn apply_at(desired: &mut Value, live: Option<&Value>, parent: &str, segments: &[Segment]) {
    let Some((segment, rest)) = segments.split_first() else {
        return;
    };
    let Some(object) = desired.as_object_mut() else {
        return;
    };
    let key = camel_case(&segment.name);
    let field_path = paths::child(parent, &segment.name);
    let live_field = live.and_then(|l| l.get(&key));
    let Some(selector) = &segment.selector else {
        if rest.is_empty() {
            object.remove(&key);
        } else if let Some(child) = object.get_mut(&key) {
            apply_at(child, live_field, &field_path, rest);
        }
        return;
    };
    let key_field = match fields::lookup(&field_path).map(|spec| spec.kind) {
        Some(FieldKind::KeyedList(key_field)) => camel_case(key_field),
        _ => return,
    };
    if rest.is_empty() {
        match selector {
            Selector::Any => {
                object.remove(&key);
            }
            Selector::Key(wanted) => {
                if let Some(items) = object.get_mut(&key).and_then(Value::as_array_mut) {
                    restore_live_element(items, live_field, &key_field, wanted);
                }
            }
        }
        return;
    }
    let Some(items) = object.get_mut(&key).and_then(Value::as_array_mut) else {
        return;
    };
    let element_path = format!("{field_path}[]");
    for item in items {
        let Some(item_key) = item
            .get(&key_field)
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            continue;
        };
        if matches!(selector, Selector::Key(wanted) if *wanted != item_key) {
            continue;
        }
        let live_item = live_field.and_then(|l| find_element(l, &key_field, &item_key));
        apply_at(item, live_item, &element_path, rest);
    }
}

/// The element with this key in a JSON list.
pub(crate) fn find_element<'a>(list: &'a Value, key_field: &str, key: &str) -> Option<&'a Value> {
    list.as_array()?
        .iter()
        .find(|item| item.get(key_field).and_then(Value::as_str) == Some(key))
}

fn restore_live_element(items: &mut Vec<Value>, live: Option<&Value>, key_field: &str, key: &str) {
    let Some(live_item) = live.and_then(|l| find_element(l, key_field, key)) else {
        return;
    };
    let position = items
        .iter()
        .position(|item| item.get(key_field).and_then(Value::as_str) == Some(key));
    match position {
        Some(index) => items[index] = live_item.clone(),
        None => items.push(live_item.clone()),
    }
}

#[cfg(test)]
mod tests {
    use clusterform_model::paths::IgnorePath;
    use serde_json::json;

    use super::*;

    fn ignored(path: &str) -> Vec<Segment> {
        path.parse::<IgnorePath>().unwrap().segments().to_vec()
    }

    #[test]
    fn ignored_field_is_removed_and_ignored_element_restored() {
        let mut desired = json!({
            "labels": {"a": "1"},
            "nodePools": [{"id": "cpu", "zone": "z1", "scalingSpec": {"maxNodeCount": 4}}, {"id": "gpu"}]
        });
        let live = json!({"nodePools": [{"id": "gpu", "zone": "z9"}, {"id": "old", "zone": "z2"}]});
        apply(&mut desired, &live, &ignored("labels"));
        apply(&mut desired, &live, &ignored("node_pool.cpu.scaling_spec"));
        apply(&mut desired, &live, &ignored("node_pool.gpu"));
        apply(&mut desired, &live, &ignored("node_pool.old"));
        assert_eq!(
            desired,
            json!({"nodePools": [
                {"id": "cpu", "zone": "z1"},
                {"id": "gpu", "zone": "z9"},
                {"id": "old", "zone": "z2"}
            ]})
        );
    }
}
