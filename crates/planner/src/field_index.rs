//! A read-once index of the model's field table for the hot paths of planning: the children
//! of each message with their JSON names, so a walk over 1,000 clusters does not rescan and
//! re-spell the table for every message it enters.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use clusterform_model::fields::{self, FieldAccess, FieldKind, FieldSpec, camel_case};
use serde_json::{Map, Value};

/// One field of a message.
#[derive(Debug)]
pub(crate) struct Child {
    /// The table row.
    pub spec: &'static FieldSpec,
    /// The lowerCamelCase key in JSON.
    pub json_name: String,
    /// The field is the key of the list element it belongs to (it is the block label).
    pub is_key: bool,
    /// Where this field's own fields are indexed: its path for a message, `path[]` for the
    /// elements of a keyed list.
    pub members: String,
    /// For a keyed list, the JSON name of its elements' key.
    pub key_json: Option<String>,
}

/// The fields of the message at `parent` (`""` for the cluster, `node_pools[]` for a pool).
/// (A handful of short keys: an ordered map finds one with a few comparisons, where hashing
/// the key cost more, asked for every message of every cluster.)
pub(crate) fn children(parent: &str) -> &'static [Child] {
    static INDEX: OnceLock<BTreeMap<&'static str, Vec<Child>>> = OnceLock::new();
    let index = INDEX.get_or_init(build);
    index.get(parent).map_or(&[], Vec::as_slice)
}

fn build() -> BTreeMap<&'static str, Vec<Child>> {
    let mut index: BTreeMap<&'static str, Vec<Child>> = BTreeMap::new();
    for spec in fields::FIELDS {
        let parent = spec.parent().unwrap_or("");
        let (members, key_json) = match spec.kind {
            FieldKind::KeyedList(key_field) => {
                (format!("{}[]", spec.path), Some(camel_case(key_field)))
            }
            _ => (spec.path.to_owned(), None),
        };
        index.entry(parent).or_default().push(Child {
            spec,
            json_name: camel_case(spec.name()),
            is_key: is_key_of(parent, spec),
            members,
            key_json,
        });
    }
    index
}

/// The writable fields `object`, a message at `parent`, sets (not null), with their values;
/// the key of a list element is left out (it names the element).
pub(crate) fn set_fields<'v>(
    parent: &str,
    object: &'v Map<String, Value>,
) -> impl Iterator<Item = (&'static Child, &'v Value)> {
    children(parent).iter().filter_map(move |child| {
        if child.spec.access == FieldAccess::OutputOnly || child.is_key {
            return None;
        }
        let value = member(object, &child.json_name).filter(|v| !v.is_null())?;
        Some((child, value))
    })
}

/// The elements of a keyed list whose key is named `key_json` in JSON, each with its key; an
/// element without a key, or that is no object, is left out.
pub(crate) fn keyed_elements<'v, 'k>(
    items: &'v [Value],
    key_json: &'k str,
) -> impl Iterator<Item = (&'v str, &'v Map<String, Value>)> + use<'v, 'k> {
    items
        .iter()
        .filter_map(move |item| Some((element_key(item, key_json)?, item.as_object()?)))
}

/// The key of an element of a keyed list, whose key is named `key_json` in JSON.
pub(crate) fn element_key<'v>(item: &'v Value, key_json: &str) -> Option<&'v str> {
    item.as_object()
        .and_then(|element| member(element, key_json))
        .and_then(Value::as_str)
}

/// The member called `name` of a message. A message has a few dozen members at most, and
/// comparing their names is cheaper than hashing `name`: serde_json's ordered map hashes every
/// lookup with SipHash, and a plan looks up every field of the table in every cluster.
pub(crate) fn member<'m>(message: &'m Map<String, Value>, name: &str) -> Option<&'m Value> {
    message
        .iter()
        .find(|(key, _)| key.as_str() == name)
        .map(|(_, value)| value)
}

fn is_key_of(parent: &str, spec: &FieldSpec) -> bool {
    let Some(list) = parent.strip_suffix("[]") else {
        return false;
    };
    matches!(fields::lookup(list).map(|l| l.kind), Some(FieldKind::KeyedList(key)) if key == spec.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_is_found_by_its_whole_name() {
        let json = serde_json::json!({"zone": "a", "zoneName": "b", "id": null});
        let message = json.as_object().unwrap();
        assert_eq!(member(message, "zoneName"), Some(&Value::from("b")));
        assert_eq!(member(message, "zone"), Some(&Value::from("a")));
        assert_eq!(member(message, "id"), Some(&Value::Null));
        assert_eq!(member(message, "zon"), None);
    }

    #[test]
    fn indexes_children_with_json_names_and_keys() {
        let pool: Vec<&str> = children("node_pools[]")
            .iter()
            .map(|c| c.json_name.as_str())
            .collect();
        assert!(pool.contains(&"machineSpec") && pool.contains(&"enablePublicIps"));
        assert!(
            children("node_pools[]")
                .iter()
                .any(|c| c.is_key && c.json_name == "id")
        );
        assert!(!children("").iter().any(|c| c.is_key));
        assert!(children("nonsense").is_empty());
        let pools = children("")
            .iter()
            .find(|c| c.json_name == "nodePools")
            .unwrap();
        assert_eq!(
            (pools.members.as_str(), pools.key_json.as_deref()),
            ("node_pools[]", Some("id"))
        );
        let network = children("")
            .iter()
            .find(|c| c.json_name == "network")
            .unwrap();
        assert_eq!(
            (network.members.as_str(), network.key_json.as_deref()),
            ("network", None)
        );
    }
}
