//! Field paths as the plan writes them: snake_case segments joined by `.`, with the element of a
//! keyed list named by its key in brackets (`node_pools[cpu].scaling_spec.max_node_count`).
//! Diffs, `ignore_changes`, sensitivity checks and the text renderer all share this spelling;
//! the segments and their parser are the model's ([`clusterform_model::paths`]).

pub(crate) use clusterform_model::paths::{Segment, Selector, generic, parse};

/// Appends a field name to a path.
pub(crate) fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// Selects an element of the keyed list at `path`.
pub(crate) fn element(path: &str, key: &str) -> String {
    format!("{path}[{key}]")
}

/// The block name of one element of a keyed list, as written in the configuration
/// (`node_pools` → `node_pool`, `partitions` → `partition`).
pub(crate) fn block_name(list: &str) -> &str {
    list.strip_suffix('s').unwrap_or(list)
}

/// Whether `path` is `prefix` or lies inside it (`node_pools[cpu].zone` inside `node_pools[cpu]`).
pub(crate) fn is_within(path: &str, prefix: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_respects_segment_boundaries() {
        assert!(is_within("node_pools[cpu].zone", "node_pools[cpu]"));
        assert!(is_within("labels", "labels"));
        assert!(!is_within("node_pools[cpu2].zone", "node_pools[cpu]"));
        assert!(!is_within("labels_x", "labels"));
    }
}
