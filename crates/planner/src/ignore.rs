//! `lifecycle.ignore_changes`: reading the paths as users write them and taking them out of the
//! comparison.
//!
//! Users write paths the way the configuration reads: `labels`, `node_pool.cpu.scaling_spec`,
//! `orchestrator_spec.slurm_spec.partition.debug`, or with the plan's own spelling
//! `node_pools[cpu].zone`; `*` or `[]` stands for every element. An ignored field is removed
//! from the desired cluster before diffing, which makes it "unset": it is not compared, and a
//! `node_pools` PATCH fills it from the live pool, so the live value is kept. An ignored element
//! (`node_pool.cpu`) is replaced by its live counterpart.

use clusterform_model::fields::{self, FieldAccess, FieldKind, camel_case};
use serde_json::Value;

use crate::paths::{self, Segment, Selector};

/// An `ignore_changes` entry that does not name a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IgnorePathError {
    /// What is wrong.
    pub reason: String,
}

/// Reads one entry into the plan's path spelling.
pub(crate) fn normalise(path: &str) -> Result<Vec<Segment>, IgnorePathError> {
    let raw = paths::parse(path).map_err(|e| IgnorePathError {
        reason: format!("cannot be read: {e}"),
    })?;
    let mut out: Vec<Segment> = Vec::with_capacity(raw.len());
    let mut rest = raw.into_iter();
    while let Some(segment) = rest.next() {
        let list = format!("{}s", segment.name);
        if is_keyed_list(&out, &list) {
            let selector = match segment.selector {
                Some(selector) => selector,
                None => match rest.next() {
                    Some(key) if key.selector.is_none() => selector_of(&key.name),
                    _ => {
                        return Err(IgnorePathError {
                            reason: format!(
                                "needs the {} label after `{}`",
                                segment.name, segment.name
                            ),
                        });
                    }
                },
            };
            out.push(Segment {
                name: list,
                selector: Some(selector),
            });
        } else {
            out.push(segment);
        }
    }
    check_names_a_field(&out)?;
    Ok(out)
}

fn selector_of(key: &str) -> Selector {
    if key == "*" {
        Selector::Any
    } else {
        Selector::Key(key.to_owned())
    }
}

fn is_keyed_list(prefix: &[Segment], list: &str) -> bool {
    let mut candidate = prefix.to_vec();
    candidate.push(Segment {
        name: list.to_owned(),
        selector: None,
    });
    fields::lookup(&paths::generic(&candidate))
        .is_some_and(|spec| matches!(spec.kind, FieldKind::KeyedList(_)))
}

fn check_names_a_field(segments: &[Segment]) -> Result<(), IgnorePathError> {
    let generic = paths::generic(segments);
    let field_path = generic.strip_suffix("[]").unwrap_or(&generic);
    match fields::lookup(field_path) {
        None => Err(IgnorePathError {
            reason: format!("names no field (read as `{generic}`)"),
        }),
        Some(spec) if spec.access == FieldAccess::OutputOnly => Err(IgnorePathError {
            reason: "names an output-only field, which is never compared".to_owned(),
        }),
        Some(spec) => match (segments.last().and_then(|s| s.selector.as_ref()), spec.kind) {
            (Some(_), FieldKind::KeyedList(_)) | (None, _) => Ok(()),
            (Some(_), _) => Err(IgnorePathError {
                reason: format!(
                    "selects an element of `{}`, which is not a list of blocks",
                    spec.path
                ),
            }),
        },
    }
}

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
    use serde_json::json;

    use super::*;

    fn spelled(path: &str) -> String {
        normalise(path)
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(".")
    }

    #[test]
    fn reads_the_configuration_spellings() {
        assert_eq!(spelled("labels"), "labels");
        assert_eq!(
            spelled("node_pool.cpu.scaling_spec"),
            "node_pools[cpu].scaling_spec"
        );
        assert_eq!(spelled("node_pools[cpu].zone"), "node_pools[cpu].zone");
        assert_eq!(spelled("node_pool.*.zone"), "node_pools[].zone");
        assert_eq!(
            spelled("orchestrator_spec.slurm_spec.partition.debug"),
            "orchestrator_spec.slurm_spec.partitions[debug]"
        );
        assert_eq!(
            spelled("orchestrator_spec.slurm_spec.partitions"),
            "orchestrator_spec.slurm_spec.partitions"
        );
    }

    #[test]
    fn rejects_paths_that_name_no_field() {
        for bad in [
            "nonsense",
            "node_pool",
            "node_pool.cpu.nonsense",
            "update_time",
            "labels[x]",
        ] {
            assert!(normalise(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn ignored_field_is_removed_and_ignored_element_restored() {
        let mut desired = json!({
            "labels": {"a": "1"},
            "nodePools": [{"id": "cpu", "zone": "z1", "scalingSpec": {"maxNodeCount": 4}}, {"id": "gpu"}]
        });
        let live = json!({"nodePools": [{"id": "gpu", "zone": "z9"}, {"id": "old", "zone": "z2"}]});
        apply(&mut desired, &live, &normalise("labels").unwrap());
        apply(
            &mut desired,
            &live,
            &normalise("node_pool.cpu.scaling_spec").unwrap(),
        );
        apply(&mut desired, &live, &normalise("node_pool.gpu").unwrap());
        apply(&mut desired, &live, &normalise("node_pool.old").unwrap());
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
